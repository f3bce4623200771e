//go:build bench

package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/ticket/snowflake"
)

// TestBenchSnowflake is the worker-id leases' bench row (issue 26): the
// protocol's statements (ticket/snowflake.Statements, lease 10 s, guard
// 2 s) at 1,000 workers over 64 connections, against MariaDB InnoDB
// (durable, ../shared/bench/mariadb-ticketdb.sh) and ticketd (one node and
// three) in one run:
//
//   - claim: 1,000 workers claim one of 1,024 free slots at once (reclaim
//     miss, claim, read back): claims/s over the burst, latency per claim;
//   - renew: the 1,000 holders renew every second for the run: renewal
//     latency and renewals/s (a renewal that finds the slot lost counts
//     as an error);
//   - churn: 64 workers release and claim under fresh instance names in
//     a loop (reclaim miss, claim, release): claims/s.
//
// TICKETD_BENCH_DURATION sets the renew and churn phases' length
// (default 5s).
func TestBenchSnowflake(t *testing.T) {
	dur := benchDuration(t, "TICKETD_BENCH_DURATION", 5*time.Second)
	benchDir := benchScriptDir(t)
	ctx := context.Background()
	var rows []sfBenchRow
	maria := startBenchMariaDB(t, benchDir)
	rows = append(rows, benchSnowflake(ctx, t, "MariaDB InnoDB", []string{maria}, dur)...)
	for _, nodes := range []int{1, 3} {
		addrs, _, _ := startBenchTicketd(ctx, t, nodes, nil, "")
		rows = append(rows, benchSnowflake(ctx, t, fmt.Sprintf("ticketd %d node(s)", nodes), addrs, dur)...)
	}
	base := map[string]float64{}
	var b strings.Builder
	fmt.Fprintf(&b, "\nmake bench, Snowflake worker-id leases: 1,000 workers on 1,024 slots over 64 connections; renew and churn %s each\n\n", dur)
	fmt.Fprintf(&b, "| target | phase | ops | ops/s | p50 ms | p99 ms | errors | × MariaDB |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if strings.HasPrefix(r.target, "MariaDB") {
			base[r.phase] = r.perSec
		}
		ratio := ""
		if m := base[r.phase]; m > 0 && !strings.HasPrefix(r.target, "MariaDB") {
			ratio = fmt.Sprintf("%.1f", r.perSec/m)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.2f | %.2f | %s | %s |\n", r.target, r.phase, r.ops, r.perSec,
			float64(r.p50)/1e6, float64(r.p99)/1e6, r.errs, ratio)
	}
	fmt.Print(b.String())
	writeBenchOut(t, b.String())
}

type sfBenchRow struct {
	target, phase string
	ops           int
	perSec        float64
	p50, p99      time.Duration
	errs          string
}

// sfErrs counts errors by MySQL number (or "conn", "lost").
type sfErrs struct {
	mu sync.Mutex
	m  map[string]int
}

func (e *sfErrs) add(err error) {
	var me *mysql.MySQLError
	k := "conn"
	if errors.As(err, &me) {
		k = fmt.Sprint(me.Number)
	} else if errors.Is(err, snowflake.ErrSlotLost) {
		k = "lost"
	} else if errors.Is(err, snowflake.ErrNoSlot) {
		k = "noslot"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]int{}
	}
	e.m[k]++
}

func (e *sfErrs) String() string {
	var parts []string
	for k, n := range e.m {
		parts = append(parts, fmt.Sprintf("%s×%d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

type sfLat struct {
	mu sync.Mutex
	ds []time.Duration
}

func (l *sfLat) add(d time.Duration) {
	l.mu.Lock()
	l.ds = append(l.ds, d)
	l.mu.Unlock()
}

func (l *sfLat) row(target, phase string, el time.Duration, errs *sfErrs) sfBenchRow {
	r := sfBenchRow{target: target, phase: phase, ops: len(l.ds), errs: errs.String()}
	if len(l.ds) > 0 {
		slices.Sort(l.ds)
		r.p50, r.p99 = l.ds[len(l.ds)/2], l.ds[len(l.ds)*99/100]
		r.perSec = float64(len(l.ds)) / el.Seconds()
	}
	return r
}

func benchSnowflake(ctx context.Context, t *testing.T, target string, addrs []string, dur time.Duration) []sfBenchRow {
	const workers, conns = 1000, 64
	admin, err := sql.Open("mysql", harness.DSN(addrs[0], ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE sfb"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", harness.DSN(addrs[len(addrs)-1], "sfb", "interpolateParams=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := snowflake.Setup(ctx, db, "", "bench", 10); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	st := snowflake.Statements("snowflake_slots", 10*time.Second, 2*time.Second)
	type held struct {
		id, epoch int64
		name      string
	}
	// claim runs the protocol's claim for name: the reclaim (a miss here),
	// the claim, the read back.
	claim := func(name string) (held, error) {
		h := held{name: name}
		res, err := db.ExecContext(ctx, st["reclaim"], "bench", name)
		if err != nil {
			return h, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if res, err = db.ExecContext(ctx, st["claim"], name, "bench"); err != nil {
				return h, err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return h, snowflake.ErrNoSlot
			}
		}
		if h.id, err = res.LastInsertId(); err != nil {
			return h, err
		}
		var slot int
		var holder, prev string
		var prevMs int64
		err = db.QueryRowContext(ctx, st["read"], h.id).Scan(&slot, &holder, &h.epoch, &prev, &prevMs)
		return h, err
	}
	var rows []sfBenchRow

	// claim: 1,000 at once.
	var lat sfLat
	var errs sfErrs
	hs := make([]held, workers)
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		wg.Go(func() {
			t0 := time.Now()
			h, err := claim(fmt.Sprintf("w%04d", i))
			if err != nil {
				errs.add(err)
				return
			}
			lat.add(time.Since(t0))
			hs[i], ok[i] = h, true
		})
	}
	wg.Wait()
	rows = append(rows, lat.row(target, "claim ×1,000 at once", time.Since(start), &errs))

	// renew: every holder once a second.
	lat, errs = sfLat{}, sfErrs{}
	rctx, cancel := context.WithTimeout(ctx, dur)
	start = time.Now()
	for i := range workers {
		if !ok[i] {
			continue
		}
		h := hs[i]
		wg.Go(func() {
			// Spread the first renewals over the first second.
			tick := time.NewTimer(time.Duration(i) * time.Second / workers)
			defer tick.Stop()
			for {
				select {
				case <-rctx.Done():
					return
				case <-tick.C:
				}
				tick.Reset(time.Second)
				t0 := time.Now()
				res, err := db.ExecContext(rctx, st["renew"], time.Now().UnixMilli(), h.id, h.name, h.epoch)
				if rctx.Err() != nil {
					return
				}
				if err == nil {
					if n, _ := res.RowsAffected(); n != 1 {
						err = snowflake.ErrSlotLost
					}
				}
				if err != nil {
					errs.add(err)
					continue
				}
				lat.add(time.Since(t0))
			}
		})
	}
	wg.Wait()
	cancel()
	rows = append(rows, lat.row(target, "renew ×1,000 every 1 s", time.Since(start), &errs))

	// Free the slots (a release each), then churn.
	for i := range workers {
		if ok[i] {
			if _, err := db.ExecContext(ctx, st["release"], 0, hs[i].id, hs[i].name, hs[i].epoch); err != nil {
				t.Fatalf("%s: release: %v", target, err)
			}
		}
	}
	lat, errs = sfLat{}, sfErrs{}
	rctx, cancel = context.WithTimeout(ctx, dur)
	start = time.Now()
	for w := range conns {
		wg.Go(func() {
			for i := 0; rctx.Err() == nil; i++ {
				t0 := time.Now()
				h, err := claim(fmt.Sprintf("c%02d-%d", w, i))
				if rctx.Err() != nil {
					return
				}
				if err != nil {
					errs.add(err)
					continue
				}
				lat.add(time.Since(t0))
				if _, err := db.ExecContext(rctx, st["release"], 0, h.id, h.name, h.epoch); err != nil && rctx.Err() == nil {
					errs.add(err)
				}
			}
		})
	}
	wg.Wait()
	cancel()
	rows = append(rows, lat.row(target, "churn: claim + release, 64 workers", time.Since(start), &errs))
	return rows
}
