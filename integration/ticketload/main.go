// Command ticketload is ticketd's load tool: the Flickr ticket workload
// (REPLACE INTO Tickets64 (stub) VALUES ('a') + SELECT LAST_INSERT_ID() on
// one connection) or SELECT 1, from many connections, against any MySQL
// server. It reports tickets (or queries) per second and latency
// percentiles per ticket, and fails if an id is not above the previous one
// on its connection (as ../shared/bench/ticket.lua does).
//
// With -scheme it runs an ID scheme's client instead (integration/schemes:
// leaf, leaf-dynamic, tinyid, tinyid-autocommit, uidgen, nextval,
// nextval-nocache, ticket), reports fetches per second and Tinyid's lost
// compare-and-sets, and checks the whole history (no id twice, strictly
// increasing in real time); -setup creates the scheme's tables first.
// -scheme snowflake runs -conns generators of ticket/snowflake (worker-id
// leases) against one or more DSNs (comma-separated, tried in turn), each
// claiming a slot, renewing it and issuing ids, optionally with a clock
// set back at random (-rollback), and appends every claim and id to -out
// for integration/history's CheckSnowflake (snowflake.go).
//
// It lives in integration/, next to the benchmarks that run it (make bench
// without sysbench), because it uses the test tree's history checker and
// scheme clients: it is a test tool, not shipped, and the commands under
// cmd/ import nothing from integration/ (cmd/ticketd TestNoTestTreeImports).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/integration/schemes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ticketload:", err)
		os.Exit(1)
	}
}

// Report is one run's outcome.
type Report struct {
	Workload string        `json:"workload"`
	Conns    int           `json:"conns"`
	Ops      int           `json:"ops"`
	Errors   int           `json:"errors"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	PerSec   float64       `json:"per_sec"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	FirstErr string        `json:"first_error,omitempty"`
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ticketload", flag.ContinueOnError)
	dsn := fs.String("dsn", "root@tcp(127.0.0.1:3306)/flickr", "go-sql-driver DSN")
	conns := fs.Int("conns", 16, "concurrent connections")
	dur := fs.Duration("duration", 10*time.Second, "how long to run")
	workload := fs.String("workload", "ticket", "ticket or select1")
	table := fs.String("table", "Tickets64", "ticket table")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	scheme := fs.String("scheme", "", "run an ID scheme's clients instead: leaf, leaf-dynamic, tinyid, tinyid-autocommit, uidgen, nextval, nextval-nocache, ticket, snowflake")
	setup := fs.Bool("setup", false, "with -scheme: create the scheme's tables (and seed rows) first")
	var sf snowflakeFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scheme == "snowflake" {
		return runSnowflake(ctx, out, &sf, *dsn, *conns, *dur, *setup, *asJSON)
	}
	if *scheme != "" {
		return runScheme(ctx, out, schemes.Scheme(*scheme), *dsn, *conns, *dur, *setup, *asJSON)
	}
	var stmts []string
	switch *workload {
	case "ticket":
		stmts = []string{"REPLACE INTO " + *table + " (stub) VALUES ('a')", "SELECT LAST_INSERT_ID()"}
	case "select1":
		stmts = []string{"SELECT 1"}
	default:
		return fmt.Errorf("unknown workload %q", *workload)
	}
	db, err := sql.Open("mysql", *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(*conns)
	db.SetMaxIdleConns(*conns)
	r, err := load(ctx, db, *conns, *dur, stmts)
	if err != nil {
		return err
	}
	r.Workload = *workload
	if *asJSON {
		return json.NewEncoder(out).Encode(r)
	}
	fmt.Fprintf(out, "%s conns=%d ops=%d errors=%d per_sec=%.0f p50=%.3fms p99=%.3fms\n",
		r.Workload, r.Conns, r.Ops, r.Errors, r.PerSec, ms(r.P50), ms(r.P99))
	if r.FirstErr != "" {
		fmt.Fprintln(out, "first error:", r.FirstErr)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// errNotIncreasing marks an id not above the previous one on a connection.
var errNotIncreasing = errors.New("id not above the previous one on this connection")

func load(ctx context.Context, db *sql.DB, conns int, dur time.Duration, stmts []string) (*Report, error) {
	// Open every connection before the clock starts.
	cs := make([]*sql.Conn, conns)
	for i := range cs {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
		defer c.Close()
		cs[i] = c
	}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	lat := make([][]time.Duration, conns)
	errs := make([]int, conns)
	var firstErr sync.Once
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range cs {
		wg.Go(func() {
			var last uint64
			for ctx.Err() == nil {
				t0 := time.Now()
				err := one(ctx, c, stmts, &last)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs[i]++
					firstErr.Do(func() { first = err })
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	r := &Report{Conns: conns, Elapsed: elapsed}
	for i := range lat {
		all = append(all, lat[i]...)
		r.Errors += errs[i]
	}
	slices.Sort(all)
	r.Ops = len(all)
	r.PerSec = float64(r.Ops) / elapsed.Seconds()
	if len(all) > 0 {
		r.P50 = all[len(all)/2]
		r.P99 = all[len(all)*99/100]
	}
	if first != nil {
		r.FirstErr = first.Error()
	}
	return r, nil
}

// one runs a ticket (or a SELECT 1) on one connection.
func one(ctx context.Context, c *sql.Conn, stmts []string, last *uint64) error {
	if len(stmts) == 1 {
		var n int
		return c.QueryRowContext(ctx, stmts[0]).Scan(&n)
	}
	if _, err := c.ExecContext(ctx, stmts[0]); err != nil {
		return err
	}
	var id uint64
	if err := c.QueryRowContext(ctx, stmts[1]).Scan(&id); err != nil {
		return err
	}
	if id <= *last {
		return fmt.Errorf("%w: %d after %d", errNotIncreasing, id, *last)
	}
	*last = id
	return nil
}

// SchemeReport is one -scheme run's outcome.
type SchemeReport struct {
	Scheme     string         `json:"scheme"`
	Conns      int            `json:"conns"`
	OK         int            `json:"ok"`
	Failed     int            `json:"failed"`
	Errors     map[string]int `json:"errors"`
	LostCAS    int            `json:"lost_cas"`
	IDs        uint64         `json:"ids"`
	Elapsed    time.Duration  `json:"elapsed_ns"`
	PerSec     float64        `json:"per_sec"`
	P50        time.Duration  `json:"p50_ns"`
	P99        time.Duration  `json:"p99_ns"`
	Violations int            `json:"violations"`
	FirstErr   []string       `json:"first_errors,omitempty"`
}

// runScheme runs conns clients of scheme against dsn for dur.
func runScheme(ctx context.Context, out io.Writer, scheme schemes.Scheme, dsn string, conns int, dur time.Duration, setup, asJSON bool) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("-dsn: %w", err)
	}
	// The schemes' Java stacks send parameters inside the query text
	// (Connector/J's default); so do their clients here.
	cfg.InterpolateParams = true
	dsn = cfg.FormatDSN()
	if setup {
		if err := schemes.Setup(ctx, dsn, scheme); err != nil {
			return err
		}
	}
	h := history.New()
	rctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	st, err := schemes.Run(rctx, schemes.Target{Name: cfg.Addr, Nodes: []schemes.Node{{Name: cfg.Addr, DSN: dsn}}},
		schemes.Config{Scheme: scheme, Clients: conns}, h)
	if err != nil {
		return err
	}
	vs := h.Check()
	r := SchemeReport{Scheme: string(scheme), Conns: conns, OK: st.OK, Failed: st.Failed, Errors: st.Errors,
		LostCAS: st.Retries, IDs: st.IDs, Elapsed: st.Elapsed, PerSec: st.PerSec(), P50: st.P50, P99: st.P99,
		Violations: len(vs), FirstErr: st.Samples}
	if asJSON {
		if err := json.NewEncoder(out).Encode(r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s conns=%d fetches=%d failed=%d [%s] lost_cas=%d per_sec=%.0f p50=%.3fms p99=%.3fms\n",
			r.Scheme, r.Conns, r.OK, r.Failed, st.ErrorSummary(), r.LostCAS, r.PerSec, ms(r.P50), ms(r.P99))
		for _, e := range r.FirstErr {
			fmt.Fprintln(out, "first error:", e)
		}
	}
	if len(vs) > 0 {
		return fmt.Errorf("history: %s", history.Report(vs, 5))
	}
	return nil
}

// percentile is the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p int) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100]
}
