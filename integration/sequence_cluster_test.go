package integration

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// TestSequencesCluster: concurrent NEXTVAL callers on all three nodes, on a
// CACHE 1000 sequence (served from the leader's cache) and a NOCACHE one
// (every value through Raft), with the leader killed -9 mid-run. Each
// sequence's history must have no duplicate and be strictly increasing in
// real time, and after the killed node is back every node continues above
// every value returned.
func TestSequencesCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c := harness.StartCluster(ctx, t, 3, harness.Options{Args: []string{"--statement-timeout", "2s"}})
	leader, err := c.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	admin := pinConn(t, ctx, openDB(t, leader.DSN("")))
	mustExec(t, ctx, admin, "CREATE DATABASE sq")
	mustExec(t, ctx, admin, "CREATE SEQUENCE sq.cached CACHE 1000")
	mustExec(t, ctx, admin, "CREATE SEQUENCE sq.nocache NOCACHE")
	if err := c.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	seqs := []string{"cached", "nocache"}
	hist := map[string]*history.History{"cached": history.New(), "nocache": history.New()}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var okCount [2]atomic.Int64
	for si, seq := range seqs {
		for ni, n := range c.Nodes {
			for k := range 2 {
				client := ni*2 + k
				wg.Add(1)
				go func() {
					defer wg.Done()
					db, err := sql.Open("mysql", n.DSN("sq", "timeout=2s", "readTimeout=5s", "writeTimeout=5s"))
					if err != nil {
						t.Error(err)
						return
					}
					defer db.Close()
					db.SetMaxOpenConns(1)
					for !stop.Load() {
						p := hist[seq].Begin(n.ID(), client)
						var v int64
						err := db.QueryRowContext(ctx, "SELECT NEXTVAL("+seq+")").Scan(&v)
						hist[seq].End(p, uint64(v), err)
						if err != nil {
							time.Sleep(20 * time.Millisecond)
							continue
						}
						okCount[si].Add(1)
					}
				}()
			}
		}
	}
	time.Sleep(1500 * time.Millisecond)
	t.Logf("killing leader %s", leader.ID())
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := leader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leader.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	for si, seq := range seqs {
		t.Logf("%s: %d values", seq, okCount[si].Load())
		if okCount[si].Load() < 50 {
			t.Errorf("%s: only %d values", seq, okCount[si].Load())
		}
		if vs := hist[seq].Check(); len(vs) > 0 {
			t.Errorf("%s: %s", seq, history.Report(vs, 10))
		}
	}
	// Durable: after the restart, every node's next value is above every
	// value ever returned.
	for _, seq := range seqs {
		var maxSeen uint64
		for _, op := range hist[seq].Ops() {
			if op.OK() && op.ID > maxSeen {
				maxSeen = op.ID
			}
		}
		for _, n := range c.Nodes {
			conn := pinConn(t, ctx, openDB(t, n.DSN("sq")))
			var v uint64
			if err := conn.QueryRowContext(ctx, "SELECT NEXTVAL("+seq+")").Scan(&v); err != nil {
				t.Fatalf("%s via %s after the restart: %v", seq, n.ID(), err)
			}
			if v <= maxSeen {
				t.Errorf("%s via %s after the restart: %d, not above %d", seq, n.ID(), v, maxSeen)
			}
			maxSeen = v
		}
	}
}
