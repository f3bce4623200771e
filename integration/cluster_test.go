package integration

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// TestClusterSmoke checks that StartCluster brings up a real three-node
// cluster that agrees on a leader, and that every node, leader or
// follower, hands out ids from the one linearizable counter (followers
// forward to the leader). The fault tests build on exactly this.
func TestClusterSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := harness.StartCluster(ctx, t, 3)
	leader, err := c.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %s", leader.ID())

	// Allocation through every node. A node answers DDL from its own
	// applied state, so wait until every node has applied the leader's
	// log before connecting to the new database through them.
	createDB(t, ctx, leader, "cluster")
	if err := c.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	h := history.New()
	conns := make(map[string]*sql.Conn)
	for _, n := range c.Nodes {
		conns[n.ID()] = pinConn(t, ctx, openDB(t, n.DSN("cluster")))
	}
	for i := range 60 {
		n := c.Nodes[i%len(c.Nodes)]
		p := h.Begin(n.ID(), i%len(c.Nodes))
		r, err := conns[n.ID()].ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
		var id int64
		if err == nil {
			id, err = r.LastInsertId()
		}
		h.End(p, uint64(id), err)
		if err != nil {
			t.Fatalf("allocation %d via %s: %v", i, n.ID(), err)
		}
		if uint64(id) != uint64(i+1) {
			t.Errorf("allocation %d via %s: id %d, want %d", i, n.ID(), id, i+1)
		}
	}
	if vs := h.Check(); len(vs) > 0 {
		t.Error(history.Report(vs, 10))
	}

	// Read-your-writes through a follower: DDL it forwarded to the
	// leader must be visible on the same connection's next statement.
	for _, n := range c.Nodes {
		if n == leader {
			continue
		}
		fc := pinConn(t, ctx, openDB(t, n.DSN("")))
		mustExec(t, ctx, fc, "CREATE DATABASE via_"+n.ID())
		if _, err := fc.ExecContext(ctx, "USE via_"+n.ID()); err != nil {
			t.Errorf("follower %s: USE right after its own CREATE DATABASE: %v", n.ID(), err)
		}
	}
	if err := c.Stop(); err != nil {
		t.Errorf("clean cluster stop: %v", err)
	}
}
