package schemes

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/history"
)

// Node is one server clients can connect to: its name (recorded in the
// history, e.g. a ticketd node id) and a go-sql-driver DSN.
type Node struct {
	Name string
	DSN  string
}

// Target is what a workload runs against: one server (MariaDB, a single
// ticketd) or the nodes of a cluster.
type Target struct {
	Name  string
	Nodes []Node
}

// DSN returns a go-sql-driver DSN for root (no password) at addr, set up
// the way the schemes' Java stacks use Connector/J: parameters
// interpolated into the query text on the client (Connector/J's default,
// useServerPrepStmts=false), so the server sees the same COM_QUERY
// strings; bounded dial and I/O so that a dead or paused node turns into
// an error rather than a stuck client.
func DSN(addr, db string) string {
	return fmt.Sprintf("root@tcp(%s)/%s?timeout=5s&readTimeout=20s&writeTimeout=20s&interpolateParams=true", addr, db)
}

// Config is one workload: Clients clients of Scheme, each on its own
// connection, each making Ops allocations (0: until the context ends).
type Config struct {
	Scheme  Scheme
	Clients int
	Ops     int
	// FirstClient numbers the clients from here, so that several Runs
	// recording into one history have distinct client ids.
	FirstClient int
	// Step is LeafDynamic's step; default 1000.
	Step int64
	// MaxAttempts is Tinyid's Constants.RETRY; default 3.
	MaxAttempts int
	// Failover moves a client to the next node after an error, as a
	// driver with a host list or a load balancer would; without it a
	// client reconnects to its own node (client i starts on node i mod
	// len(Nodes)), which is what fault tests need to measure each node.
	Failover bool
	// Backoff is the pause after a failed allocation: a refusing node
	// answers fast and a tight loop would only burn the CPU the others
	// need. Default 50ms.
	Backoff time.Duration
	// OpTimeout bounds one allocation; default 30s.
	OpTimeout time.Duration
	// Logger gets connection-level events at debug level; default
	// slog.Default().
	Logger *slog.Logger
}

// Stats is what a Run did.
type Stats struct {
	Scheme   Scheme
	Clients  int
	OK       int
	Failed   int
	IDs      uint64 // ids handed out by the successful allocations
	Retries  int    // lost compare-and-set attempts (Tinyid)
	Errors   map[string]int
	Samples  []string // the first error of each class
	Elapsed  time.Duration
	P50, P99 time.Duration // latency of successful allocations
	// ConnFails counts connection attempts that failed (not allocations).
	ConnFails int
}

// PerSec is successful allocations per second.
func (s *Stats) PerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.OK) / s.Elapsed.Seconds()
}

// ErrorSummary renders the error classes, "1290:3 conn:2".
func (s *Stats) ErrorSummary() string {
	var parts []string
	for k, v := range s.Errors {
		parts = append(parts, fmt.Sprintf("%s:%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// Unexpected returns a sample error of every class not in allowed.
func (s *Stats) Unexpected(allowed ...string) []string {
	var out []string
	for _, e := range s.Samples {
		class, _, _ := strings.Cut(e, ": ")
		if !slices.Contains(allowed, class) {
			out = append(out, e)
		}
	}
	return out
}

// Error classes (Class).
const (
	ClassConn     = "conn"     // the connection broke or timed out: outcome unknown
	ClassConflict = "conflict" // Tinyid lost every compare-and-set
	ClassMismatch = "mismatch" // the server contradicted itself
	ClassOther    = "other"
)

// Class sorts an allocation error: "" for nil, the MySQL error number
// for a server error ("1290", "1213"), or one of the Class constants.
func Class(err error) string {
	if err == nil {
		return ""
	}
	var me *mysql.MySQLError
	var ne net.Error
	switch {
	case errors.Is(err, ErrConflict):
		return ClassConflict
	case errors.Is(err, ErrMismatch):
		return ClassMismatch
	case errors.As(err, &me):
		return fmt.Sprint(me.Number)
	case errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne),
		errors.Is(err, context.DeadlineExceeded):
		return ClassConn
	}
	return ClassOther
}

// Run runs cfg against tgt until every client has made cfg.Ops
// allocations or ctx ends, recording each allocation (its call and
// return times, its node, and the ids [lo, hi] it handed out, or its
// error) in every history of hs: typically the scheme's own, and perhaps
// one a fault test watches for availability. Allocation errors are data,
// counted in Stats; Run's error is for a workload that cannot run at all.
func Run(ctx context.Context, tgt Target, cfg Config, hs ...*history.History) (*Stats, error) {
	if len(tgt.Nodes) == 0 {
		return nil, errors.New("schemes: target has no nodes")
	}
	if cfg.Clients <= 0 {
		return nil, errors.New("schemes: no clients")
	}
	if !slices.Contains(All(), cfg.Scheme) && cfg.Scheme != leafNoTx {
		return nil, fmt.Errorf("schemes: unknown scheme %q", cfg.Scheme)
	}
	cfg.Step = cmp.Or(cfg.Step, 1000)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 3)
	cfg.Backoff = cmp.Or(cfg.Backoff, 50*time.Millisecond)
	cfg.OpTimeout = cmp.Or(cfg.OpTimeout, 30*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger.With("scheme", cfg.Scheme, "target", tgt.Name)
	dbs := make([]*sql.DB, len(tgt.Nodes))
	for i, n := range tgt.Nodes {
		db, err := sql.Open("mysql", n.DSN)
		if err != nil {
			return nil, fmt.Errorf("schemes: node %s: %w", n.Name, err)
		}
		defer db.Close()
		db.SetMaxOpenConns(cfg.Clients)
		db.SetMaxIdleConns(cfg.Clients)
		dbs[i] = db
	}
	r := &runner{cfg: cfg, tgt: tgt, dbs: dbs, hs: hs, log: log,
		stats: &Stats{Scheme: cfg.Scheme, Clients: cfg.Clients, Errors: map[string]int{}}}
	start := time.Now()
	var wg sync.WaitGroup
	lat := make([][]time.Duration, cfg.Clients)
	for i := range cfg.Clients {
		wg.Go(func() { lat[i] = r.client(ctx, cfg.FirstClient+i, i%len(tgt.Nodes)) })
	}
	wg.Wait()
	st := r.stats
	st.Elapsed = time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		st.P50, st.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return st, nil
}

type runner struct {
	cfg Config
	tgt Target
	dbs []*sql.DB
	hs  []*history.History
	log *slog.Logger

	mu    sync.Mutex
	stats *Stats
}

// client runs one scheme client starting on node, and returns the
// latencies of its successful allocations.
func (r *runner) client(ctx context.Context, id, node int) []time.Duration {
	cl := &client{scheme: r.cfg.Scheme, id: id, step: r.cfg.Step, maxAttempts: r.cfg.MaxAttempts}
	var lat []time.Duration
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	next := func() {
		if r.cfg.Failover {
			node = (node + 1) % len(r.dbs)
		}
	}
	for done := 0; r.cfg.Ops == 0 || done < r.cfg.Ops; {
		if ctx.Err() != nil {
			return lat
		}
		if conn == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			c, err := r.dbs[node].Conn(cctx)
			cancel()
			if err != nil {
				r.mu.Lock()
				r.stats.ConnFails++
				r.mu.Unlock()
				r.log.Debug("connect failed", "node", r.tgt.Nodes[node].Name, "client", id, "err", err)
				next()
				sleep(ctx, r.cfg.Backoff)
				continue
			}
			conn = c
		}
		// An allocation in flight when the workload stops is let
		// finish: cutting it off would only add a failed operation.
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.OpTimeout)
		call := time.Now()
		res, err := cl.fetch(octx, conn)
		ret := time.Now()
		cancel()
		done++
		op := history.Op{Call: call, Return: ret, ID: res.lo, Hi: res.hi, Node: r.tgt.Nodes[node].Name, Client: id, Err: err}
		if err == nil && res.lo == res.hi {
			op.Hi = 0 // one id: recorded as a plain id, as tickets are
		}
		for _, h := range r.hs {
			h.Add(op)
		}
		r.record(res, err)
		if err == nil {
			lat = append(lat, ret.Sub(call))
			continue
		}
		class := Class(err)
		var se errSession
		// A broken or doubtful session is replaced; after a server's
		// refusal the session is fine (the client rolled back), unless
		// the client is to move on to another node.
		if class == ClassConn || class == ClassOther || errors.As(err, &se) || r.cfg.Failover {
			conn.Close()
			conn = nil
			next()
		}
		sleep(ctx, r.cfg.Backoff)
	}
	return lat
}

// record counts one allocation's outcome.
func (r *runner) record(res result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Retries += res.retries
	if err == nil {
		s.OK++
		s.IDs += res.hi - res.lo + 1
		return
	}
	s.Failed++
	class := Class(err)
	if s.Errors[class] == 0 {
		s.Samples = append(s.Samples, class+": "+err.Error())
	}
	s.Errors[class]++
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
