package faults

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// Server error codes a refused allocation may carry (DESIGN §4): 1290 no
// leader with a quorum (nothing written), 1105 outcome unknown (no id
// handed out).
const (
	errNoQuorum  = 1290
	errUncertain = 1105
)

// errClass sorts an allocation's error: "1290" and "1105" are the
// server's refusals, "conn" a connection the client lost (a killed node),
// anything else is unexpected and fails the test.
func errClass(err error) string {
	if err == nil {
		return ""
	}
	if c, ok := redisErrClass(err); ok {
		return c
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if me.Number == errNoQuorum || me.Number == errUncertain {
			return fmt.Sprint(me.Number)
		}
		// Any other server error during a fault (1146 unknown table
		// from a node serving before it caught up, say) is a bug.
		return "other: " + err.Error()
	}
	var ne net.Error
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) ||
		errors.Is(err, context.DeadlineExceeded) {
		return "conn"
	}
	return "other: " + err.Error()
}

// workload runs MySQL clients against nodes and records every allocation
// in a history. Each client holds one pinned connection (reconnecting
// when it breaks), allocates with REPLACE and takes the id from the OK
// packet, and every fourth time reads SELECT LAST_INSERT_ID() on the same
// connection and compares.
type workload struct {
	t  testing.TB
	h  *history.History
	db string

	stop    chan struct{}
	wg      sync.WaitGroup
	clients atomic.Int32
	// nodeScoped: the table is node-scoped, so ids are unique
	// cluster-wide but increasing only within each node's answers.
	nodeScoped bool
	// redis: the clients INCR a key over the Redis protocol instead
	// (redis_test.go).
	redis bool

	mu        sync.Mutex
	classes   map[string]int // error class -> count
	mismatch  []string       // LAST_INSERT_ID() disagreeing with the OK packet
	unexpectd []string       // first few unexpected errors
	connFails int            // connection attempts that failed (not operations)
	stopped   map[string]bool
}

func newWorkload(t testing.TB, db string) *workload {
	w := &workload{
		t: t, h: history.New(), db: db, stop: make(chan struct{}),
		classes: map[string]int{}, stopped: map[string]bool{},
	}
	t.Cleanup(w.halt)
	return w
}

// run starts conns clients on node n.
func (w *workload) run(n *harness.Node, conns int) {
	for range conns {
		id := int(w.clients.Add(1))
		w.wg.Add(1)
		if w.redis {
			go w.redisClient(n, id)
			continue
		}
		go w.client(n, id)
	}
}

// halt stops every client and waits for them.
func (w *workload) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

// stopNode makes the clients of node id stop (a removed node).
func (w *workload) stopNode(id string) {
	w.mu.Lock()
	w.stopped[id] = true
	w.mu.Unlock()
}

func (w *workload) halted(node string) bool {
	select {
	case <-w.stop:
		return true
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped[node]
}

// sleep waits d or until the workload stops.
func (w *workload) sleep(d time.Duration) {
	select {
	case <-w.stop:
	case <-time.After(d):
	}
}

func (w *workload) client(n *harness.Node, id int) {
	defer w.wg.Done()
	// readTimeout turns a server that never answers into an error
	// rather than a stuck client (the latency check reports the op).
	db, err := sql.Open("mysql", harness.DSN(n.MySQLAddr(), w.db, "readTimeout=20s", "writeTimeout=20s"))
	if err != nil {
		w.t.Errorf("sql.Open: %v", err)
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for i := 0; !w.halted(n.ID()); i++ {
		if conn == nil {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			conn, err = db.Conn(cctx)
			cancel()
			if err != nil {
				conn = nil
				w.mu.Lock()
				w.connFails++
				w.mu.Unlock()
				w.sleep(100 * time.Millisecond)
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		p := w.h.Begin(n.ID(), id)
		r, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
		var got int64
		if err == nil {
			got, err = r.LastInsertId()
		}
		w.h.End(p, uint64(got), err)
		if err == nil && i%4 == 3 {
			var lii int64
			qerr := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&lii)
			switch {
			case qerr == nil && lii != got:
				w.mu.Lock()
				w.mismatch = append(w.mismatch, fmt.Sprintf("node %s client %d: OK packet id %d, SELECT LAST_INSERT_ID() %d", n.ID(), id, got, lii))
				w.mu.Unlock()
			case qerr != nil && errClass(qerr) != "conn" && errClass(qerr) != "1290":
				// 1290: a node that is not serving (removed, or a new
				// leader still applying its predecessors' entries)
				// refuses every statement, this one too.
				w.mu.Lock()
				if len(w.unexpectd) < 10 {
					w.unexpectd = append(w.unexpectd, fmt.Sprintf("node %s client %d: SELECT LAST_INSERT_ID(): %v", n.ID(), id, qerr))
				}
				w.mu.Unlock()
				fallthrough
			case qerr != nil:
				conn.Close() // a fault cut the session: the value is gone
				conn = nil
			}
		}
		cancel()
		if err != nil {
			cl := errClass(err)
			w.mu.Lock()
			w.classes[cl]++
			if strings.HasPrefix(cl, "other") && len(w.unexpectd) < 10 {
				w.unexpectd = append(w.unexpectd, fmt.Sprintf("node %s client %d: %v", n.ID(), id, err))
			}
			w.mu.Unlock()
			if cl == "conn" || strings.HasPrefix(cl, "other") {
				conn.Close()
				conn = nil
			}
			// Back off a little: a refusing node answers fast, and a
			// tight loop would only burn the CPU the others need.
			w.sleep(50 * time.Millisecond)
		}
	}
}

// checkClean fails the test on unexpected errors, LAST_INSERT_ID()
// mismatches and history violations.
func (w *workload) checkClean(t testing.TB) {
	t.Helper()
	w.mu.Lock()
	unexpected, mismatch := append([]string(nil), w.unexpectd...), append([]string(nil), w.mismatch...)
	w.mu.Unlock()
	for _, u := range unexpected {
		t.Errorf("unexpected allocation error (not 1290, 1105 or a lost connection): %s", u)
	}
	for _, m := range mismatch {
		t.Errorf("LAST_INSERT_ID() disagrees with the OK packet: %s", m)
	}
	if vs := w.check(); len(vs) > 0 {
		t.Errorf("history: %s", history.Report(vs, 20))
	}
}

// check checks the history against the table's guarantee: global order,
// or per-node order for a node-scoped table.
func (w *workload) check() []history.Violation {
	if w.nodeScoped {
		return w.h.CheckNodeScoped()
	}
	return w.h.Check()
}

// errorClasses returns "1290:12 1105:3 conn:40".
func (w *workload) errorClasses() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s []string
	for k, v := range w.classes {
		s = append(s, fmt.Sprintf("%s:%d", k, v))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// firstOK returns when node first completed a successful allocation that
// it started at or after from.
func firstOK(ops iter.Seq[history.Op], node string, from time.Time) (time.Time, bool) {
	var best time.Time
	for o := range ops {
		if o.Node == node && o.OK() && !o.Call.Before(from) && (best.IsZero() || o.Return.Before(best)) {
			best = o.Return
		}
	}
	return best, !best.IsZero()
}

// waitServing waits until every node in ns has completed an allocation
// started at or after from, at most bound past from, and returns the
// longest of their delays. Clients keep running throughout; this only
// watches the history, reading each operation once however long it
// polls.
func waitServing(w *workload, ns []*harness.Node, from time.Time, bound time.Duration) (time.Duration, error) {
	first := map[string]time.Time{} // node -> earliest return of an ok call made from from
	next := 0
	for {
		for i, o := range w.h.From(next) {
			next = i + 1
			if o.OK() && !o.Call.Before(from) {
				if at, ok := first[o.Node]; !ok || o.Return.Before(at) {
					first[o.Node] = o.Return
				}
			}
		}
		var worst time.Duration
		var missing []string
		for _, n := range ns {
			at, ok := first[n.ID()]
			if !ok {
				missing = append(missing, n.ID())
				continue
			}
			worst = max(worst, at.Sub(from))
		}
		if len(missing) == 0 {
			return worst, nil
		}
		if time.Since(from) > bound {
			return 0, fmt.Errorf("nodes %v completed no allocation started in the %v after %s (errors so far: %s)",
				missing, bound, from.Format("15:04:05.000"), w.errorClasses())
		}
		w.sleep(20 * time.Millisecond)
		select {
		case <-w.stop:
			return 0, errors.New("workload stopped")
		default:
		}
	}
}

// longestGap is the longest stretch within [from, to] during which some
// node of ns completed no successful allocation: the worst unavailability
// any client of those nodes saw.
func longestGap(ops iter.Seq[history.Op], ns []*harness.Node, from, to time.Time) time.Duration {
	var worst time.Duration
	for _, n := range ns {
		var rets []time.Time
		for o := range ops {
			if o.Node == n.ID() && o.OK() && o.Return.After(from) && o.Return.Before(to) {
				rets = append(rets, o.Return)
			}
		}
		sort.Slice(rets, func(i, j int) bool { return rets[i].Before(rets[j]) })
		prev := from
		for _, r := range append(rets, to) {
			worst = max(worst, r.Sub(prev))
			prev = r
		}
	}
	return worst
}

// worstWait is the longest call among those made in [from, to) that have
// returned, skipping node skip's (a paused node's clients wait for
// SIGCONT by design), or only node only's when given. It returns the
// wait and the node of that call.
func worstWait(ops iter.Seq[history.Op], from, to time.Time, skip string, only ...string) (time.Duration, string) {
	var worst time.Duration
	var on string
	for o := range ops {
		if o.Call.Before(from) || !o.Call.Before(to) || o.Node == skip || (len(only) > 0 && o.Node != only[0]) {
			continue
		}
		if d := o.Return.Sub(o.Call); d > worst {
			worst, on = d, o.Node
		}
	}
	return worst, on
}

// refusals checks the minority's answers: every allocation a node of ns
// started after cut and finished before heal must have failed, with a
// server error (1290 or 1105) since the node itself is up. It returns
// how many there were. With a node-scoped table (blockIDs > 0) a node
// may first finish the blocks committed to it: at most blockIDs ids
// (the rest of its block and the one it took ahead), all returned
// before its first refusal; served counts them.
func refusals(t testing.TB, ops iter.Seq[history.Op], ns []*harness.Node, cut, heal time.Time, blockIDs int) (count, served int) {
	t.Helper()
	for _, n := range ns {
		var firstRefusal time.Time
		if blockIDs > 0 {
			for o := range ops {
				if o.Node == n.ID() && !o.Call.Before(cut) && o.Return.Before(heal) && !o.OK() &&
					(firstRefusal.IsZero() || o.Return.Before(firstRefusal)) {
					firstRefusal = o.Return
				}
			}
		}
		nodeServed := 0
		for o := range ops {
			if o.Node != n.ID() || o.Call.Before(cut) || !o.Return.Before(heal) {
				continue
			}
			if blockIDs > 0 && o.OK() && (firstRefusal.IsZero() || !o.Call.After(firstRefusal)) {
				nodeServed++ // from the node's blocks, before it refused
				continue
			}
			if o.OK() {
				t.Errorf("minority node %s handed out id %d while cut off (call %s, return %s; cut %s, heal %s)",
					n.ID(), o.ID, o.Call.Format("15:04:05.000"), o.Return.Format("15:04:05.000"),
					cut.Format("15:04:05.000"), heal.Format("15:04:05.000"))
				continue
			}
			count++
			if c := errClass(o.Err); c != "1290" && c != "1105" {
				t.Errorf("minority node %s refused with %v, want MySQL error 1290 or 1105", n.ID(), o.Err)
			}
		}
		if blockIDs > 0 && nodeServed > blockIDs {
			t.Errorf("cut-off node %s served %d ids of a node-scoped table, more than its blocks can hold (%d)", n.ID(), nodeServed, blockIDs)
		}
		served += nodeServed
	}
	return count, served
}

// pauseWindow is a time a node was SIGSTOPped: its clients' operations
// may legitimately last that long.
type pauseWindow struct {
	node     string
	from, to time.Time
}

// slowOps returns allocations that took longer than hangBound without
// their node having been paused meanwhile: a server that hangs instead
// of answering within its statement timeout.
func slowOps(ops iter.Seq[history.Op], pauses []pauseWindow) []history.Op {
	var out []history.Op
	for o := range ops {
		if o.Return.Sub(o.Call) <= hangBound {
			continue
		}
		paused := false
		for _, p := range pauses {
			if p.node == o.Node && p.from.Before(o.Return) && p.to.After(o.Call) {
				paused = true
			}
		}
		if !paused {
			out = append(out, o)
		}
	}
	return out
}

// maxLatency is the slowest successful allocation.
func maxLatency(ops iter.Seq[history.Op]) time.Duration {
	var m time.Duration
	for o := range ops {
		if o.OK() {
			m = max(m, o.Return.Sub(o.Call))
		}
	}
	return m
}

// dumpHistory writes every operation, one per line in call order, to
// history.txt under TICKETD_TEST_LOG_DIR (next to the node logs the
// harness keeps there), so a failure can be lined up with the logs. It
// does nothing when the variable is unset.
func dumpHistory(t testing.TB, h *history.History) {
	dir := os.Getenv("TICKETD_TEST_LOG_DIR")
	if dir == "" {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	p := filepath.Join(dir, name, "history.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	f, err := os.Create(p)
	if err != nil {
		return
	}
	defer f.Close()
	b := bufio.NewWriter(f)
	for o := range h.ByCall() {
		res := fmt.Sprintf("id=%d", o.ID)
		if !o.OK() {
			res = "err=" + o.Err.Error()
		}
		fmt.Fprintf(b, "%s %s %s client=%d %s\n", o.Call.UTC().Format("15:04:05.000000"),
			o.Return.UTC().Format("15:04:05.000000"), o.Node, o.Client, res)
	}
	if b.Flush() == nil && f.Close() == nil {
		t.Logf("history written to %s", p)
	}
}
