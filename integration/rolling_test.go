package integration

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// rollingClients allocate through HAProxy during the rolling restart.
const rollingClients = 8

// rollingDrain is the nodes' --drain-time: the shipped haproxy.cfg marks
// a node down after three failed checks, the first within inter (1s),
// then fastinter (500ms) apart: 2s at most, plus margin.
const rollingDrain = "2500ms"

// TestRollingRestart restarts every node of a three-node cluster in turn
// (SIGTERM, start again on the same data, wait until HAProxy has it UP)
// while clients allocate through the shipped HAProxy configuration, as an
// operator's rolling restart or upgrade would. The clients are
// applications with a connection pool (database/sql, go-sql-driver with
// rejectReadOnly=true, its failover setting): they must see no error at
// all, and the history no duplicate and no id out of order. It prints the
// longest cluster-wide gap (no allocation returned anywhere) per restart;
// DESIGN §6's target is 0.3 s.
func TestRollingRestart(t *testing.T) {
	haproxy := haproxyBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()

	c := harness.StartCluster(ctx, t, 3, harness.Options{Args: []string{"--drain-time", rollingDrain}})
	leader, err := c.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	createDB(t, ctx, leader, "roll")
	if err := c.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	hp := startHAProxy(ctx, t, haproxy, c)
	allUp := map[string]string{"n1": "UP", "n2": "UP", "n3": "UP"}
	if err := hp.waitStatus(ctx, 15*time.Second, allUp); err != nil {
		t.Fatal(err)
	}

	mysql.SetLogger(log.New(io.Discard, "", 0))
	defer mysql.SetLogger(log.New(os.Stderr, "[mysql] ", log.Ldate|log.Ltime|log.Lshortfile))
	l := &poolLoad{h: history.New(), stop: make(chan struct{}),
		dsn: harness.DSN(hp.mysqlAddr, "roll", "rejectReadOnly=true", "readTimeout=15s", "writeTimeout=15s")}
	for i := range rollingClients {
		l.wg.Add(1)
		go l.client(i)
	}
	defer l.halt()
	if err := waitEveryClient(l.h, rollingClients, time.Time{}, 20*time.Second); err != nil {
		t.Fatalf("before the restarts: %v", err)
	}
	time.Sleep(time.Second)

	// Leadership on demand, asked on a follower, to the other follower:
	// `ticketd leader-transfer`, as an operator would before maintenance.
	var asked, target *harness.Node
	for _, n := range c.Nodes {
		switch {
		case n == leader:
		case asked == nil:
			asked = n
		default:
			target = n
		}
	}
	if cur, err := c.Leader(ctx, 10*time.Second); err != nil || cur != leader {
		t.Fatalf("leader moved before the transfer: %v %v", cur, err)
	}
	transferAt := time.Now()
	out, err := exec.CommandContext(ctx, harness.Binary(t), "leader-transfer", "--addr", asked.HTTPAddr(), "--to", target.ID()).CombinedOutput()
	if err != nil {
		t.Fatalf("ticketd leader-transfer: %v\n%s", err, out)
	}
	if cur, err := c.Leader(ctx, 10*time.Second); err != nil || cur != target {
		t.Fatalf("after leader-transfer --to %s: leader %v, %v (%s)", target.ID(), cur, err, out)
	}
	time.Sleep(time.Second)
	transferGap := longestGap(l.h.Ops(), transferAt, time.Now())
	t.Logf("leader-transfer %s -> %s: %s; longest cluster-wide gap %v", leader.ID(), target.ID(), strings.TrimSpace(string(out)), transferGap.Round(time.Millisecond))

	type restart struct {
		node              string
		wasLeader         bool
		from, down, ready time.Time
		up                time.Time
	}
	var rs []restart
	for _, n := range c.Nodes {
		cur, err := c.Leader(ctx, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := restart{node: n.ID(), wasLeader: cur == n, from: time.Now()}
		if err := n.Stop(); err != nil {
			t.Fatalf("stopping %s: %v", n.ID(), err)
		}
		r.down = time.Now()
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := n.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		r.ready = time.Now()
		if err := hp.waitStatus(ctx, 15*time.Second, allUp); err != nil {
			t.Fatalf("after restarting %s: %v", n.ID(), err)
		}
		r.up = time.Now()
		rs = append(rs, r)
		// HAProxy sends the restarted node new connections only; let the
		// pools settle before the next one goes.
		time.Sleep(500 * time.Millisecond)
	}
	end := time.Now()
	time.Sleep(500 * time.Millisecond)
	l.halt()

	ops := l.h.Ops()
	if vs := history.Check(ops); len(vs) > 0 {
		t.Errorf("history of %d operations: %s", len(ops), history.Report(vs, 20))
	}
	ok, failed := l.h.Counts()
	if failed > 0 {
		errs := map[string]int{}
		var when []string
		for _, o := range ops {
			if !o.OK() {
				errs[o.Err.Error()]++
				// Where in the restarts it failed: the cause is found
				// from that and the nodes' logs.
				at := "before the leader-transfer"
				if !o.Call.Before(transferAt) {
					at = fmt.Sprintf("sent %v after the leader-transfer began, answered after %v",
						o.Call.Sub(transferAt).Round(time.Millisecond), o.Return.Sub(o.Call).Round(time.Millisecond))
				}
				for _, r := range rs {
					if !o.Call.Before(r.from) {
						at = fmt.Sprintf("sent %v after %s (leader %v) was told to stop, answered after %v",
							o.Call.Sub(r.from).Round(time.Millisecond), r.node, r.wasLeader, o.Return.Sub(o.Call).Round(time.Millisecond))
					}
				}
				when = append(when, at)
			}
		}
		t.Errorf("%d of %d client statements failed during the rolling restart: %v\n%s", failed, ok+failed, errs, strings.Join(when, "\n"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rolling restart through HAProxy, %d pooled clients, %d ids:\n", rollingClients, ok)
	fmt.Fprintf(&b, "  %-4s %-7s %10s %10s %10s %12s %12s\n", "node", "leader", "stop", "to ready", "to UP", "longest gap", "slowest stmt")
	worst := time.Duration(0)
	for i, r := range rs {
		until := end
		if i+1 < len(rs) {
			until = rs[i+1].from
		}
		gap := longestGap(ops, r.from, until)
		worst = max(worst, gap)
		fmt.Fprintf(&b, "  %-4s %-7v %10v %10v %10v %12v %12v\n", r.node, r.wasLeader,
			r.down.Sub(r.from).Round(time.Millisecond), r.ready.Sub(r.down).Round(time.Millisecond),
			r.up.Sub(r.ready).Round(time.Millisecond), gap.Round(time.Millisecond), slowest(ops, r.from, until).Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "  longest cluster-wide gap %v (target 0.3s)", worst.Round(time.Millisecond))
	if st, err := hp.servers(ctx, "wredis"); err == nil {
		fmt.Fprintf(&b, "; HAProxy redispatches per node %v", st)
	}
	t.Log(b.String())
	if !rs[0].wasLeader && !rs[1].wasLeader && !rs[2].wasLeader {
		t.Error("no restarted node was the leader at its stop: the handover was not exercised")
	}
}

// longestGap is the longest time between two successful allocations
// returning, anywhere, in [from, until).
func longestGap(ops []history.Op, from, until time.Time) time.Duration {
	var rets []time.Time
	for _, o := range ops {
		if o.OK() && !o.Return.Before(from) && o.Return.Before(until) {
			rets = append(rets, o.Return)
		}
	}
	sort.Slice(rets, func(i, j int) bool { return rets[i].Before(rets[j]) })
	var gap time.Duration
	for i := 1; i < len(rets); i++ {
		gap = max(gap, rets[i].Sub(rets[i-1]))
	}
	if len(rets) == 0 {
		return until.Sub(from)
	}
	return gap
}

// slowest is the longest statement called in [from, until).
func slowest(ops []history.Op, from, until time.Time) time.Duration {
	var d time.Duration
	for _, o := range ops {
		if !o.Call.Before(from) && o.Call.Before(until) {
			d = max(d, o.Return.Sub(o.Call))
		}
	}
	return d
}

// poolLoad is clients allocating as applications do: each through its own
// database/sql pool, which takes a connection per statement and replaces
// broken ones itself.
type poolLoad struct {
	h    *history.History
	dsn  string
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func (l *poolLoad) halt() {
	l.once.Do(func() {
		close(l.stop)
		l.wg.Wait()
	})
}

func (l *poolLoad) client(id int) {
	defer l.wg.Done()
	db, err := sql.Open("mysql", l.dsn)
	if err != nil {
		l.h.Add(history.Op{Client: id, Err: err})
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		p := l.h.Begin("haproxy", id)
		r, err := db.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
		var got int64
		if err == nil {
			got, err = r.LastInsertId()
		}
		cancel()
		l.h.End(p, uint64(got), err)
		if err != nil {
			// Not part of the expected run (the test fails on any error);
			// no busy loop meanwhile.
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// waitEveryClient waits until each of a load's clients (clients of them,
// recorded in h) has had an allocation called at or after since succeed,
// or bound passes. The rolling restart and the HAProxy test ask it of
// their own loads after each disruption.
func waitEveryClient(h *history.History, clients int, since time.Time, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		done := map[int]bool{}
		var lastErr error
		for _, o := range h.Ops() {
			if o.Call.Before(since) {
				continue
			}
			if o.OK() {
				done[o.Client] = true
			} else {
				lastErr = o.Err
			}
		}
		if len(done) == clients {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d clients got an id within %v (last error: %v)", len(done), clients, bound, lastErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
