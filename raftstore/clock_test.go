package raftstore

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket/model"
)

// insertedAt applies one WORKER_NODE insert appended at at and returns
// the MODIFIED it stored (NOW()).
func insertedAt(t *testing.T, f *FSM, idx uint64, at time.Time) string {
	t.Helper()
	l := entry(idx, workerInsert("ids", 1, int(idx)))
	l.AppendedAt = at
	rs := applyOK(t, f, l)
	if rs[0].Err != nil || len(rs[0].Images) != 1 {
		t.Fatalf("insert at %d: %+v", idx, rs[0])
	}
	return rs[0].Images[0][5].S
}

// TestFSMClockNeverGoesBack: from the entry that raises the cluster to
// clockVersion, NOW() is the later of the entry's AppendedAt and the
// latest applied; before it, the entry's AppendedAt as older builds
// apply it. The clock survives a checkpoint and reopen, and a snapshot
// restored into another replica.
func TestFSMClockNeverGoesBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	const layout = "2006-01-02 15:04:05"
	want := func(got string, n int) {
		t.Helper()
		if w := sec(n).Format(layout); got != w {
			t.Fatalf("NOW() = %s, want %s", got, w)
		}
	}
	applyOK(t, f, entry(1, createDB("ids"), model.Command{Op: model.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: workerDef("ids")}))
	want(insertedAt(t, f, 2, sec(10)), 10)
	// Version 3: a leader with a slower clock moves NOW() back.
	want(insertedAt(t, f, 3, sec(5)), 5)
	if !f.Clock().IsZero() {
		t.Fatalf("clock %v before version %d", f.Clock(), clockVersion)
	}
	raise := entry(4, model.Command{Op: model.OpSetGlobal, Name: clusterVersionGlobal, Value: clockVersion})
	raise.AppendedAt = sec(6)
	applyOK(t, f, raise)
	if !f.Clock().Equal(sec(6)) {
		t.Fatalf("clock %v after the raise at %v", f.Clock(), sec(6))
	}
	want(insertedAt(t, f, 5, sec(3)), 6)
	want(insertedAt(t, f, 6, sec(20)), 20)
	want(insertedAt(t, f, 7, sec(19)), 20)
	// An entry without AppendedAt (zero time) reads the clock too.
	want(insertedAt(t, f, 8, time.Time{}), 20)

	// A snapshot, restored into a replica of another history.
	snap, err := f.Snapshot()
	must(t, err)
	var buf bufSink
	must(t, snap.Persist(&buf))
	snap.Release()
	g := openTestFSM(t, "")
	must(t, g.Restore(readCloser{bytes.NewReader(buf.Bytes())}))
	want(insertedAt(t, g, 9, sec(1)), 20)

	// Checkpoint, reopen.
	must(t, f.Close())
	f = openTestFSM(t, path)
	want(insertedAt(t, f, 9, sec(2)), 20)
	want(insertedAt(t, f, 10, sec(21)), 21)
}

// TestClockLeadersDisagree: three nodes, n1's clock an hour ahead of the
// others'. Rows written while n1 leads read n1's time; after leadership
// moves to a node an hour behind it, NOW() stands at the highest time
// applied instead of going back, on every replica alike.
func TestClockLeadersDisagree(t *testing.T) {
	const ahead = time.Hour
	c := startCluster(t, func(cfg *Config) {
		if cfg.NodeID == "n1" {
			cfg.appendClock = func(at time.Time) time.Time { return at.Add(ahead) }
		}
	})
	l := c.leader()
	waitFor(t, "cluster version", 10*time.Second, func() bool { return l.ClusterVersion() >= clockVersion })
	if l.ID() != "n1" {
		_, err := l.TransferLeadership(ctxT(t, 5*time.Second), "n1")
		must(t, err)
	}
	n1 := c.leader()
	if n1.ID() != "n1" {
		t.Fatalf("leader %s, want n1", n1.ID())
	}
	proposeRetry(t, n1, createDB("ids"), model.Command{Op: model.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: workerDef("ids")})
	rs := proposeRetry(t, n1, workerInsert("ids", 1, 1))
	first, err := time.Parse("2006-01-02 15:04:05", rs[0].Images[0][5].S)
	must(t, err)
	if first.Before(time.Now().Add(ahead / 2)) {
		t.Fatalf("NOW() under n1 is %v: the skewed clock did not stamp it", first)
	}
	_, err = n1.TransferLeadership(ctxT(t, 5*time.Second), "n2")
	must(t, err)
	n2 := c.leader()
	if n2.ID() != "n2" {
		t.Fatalf("leader %s, want n2", n2.ID())
	}
	var last string
	for i := range 5 {
		rs := proposeRetry(t, n2, workerInsert("ids", 1, 2+i))
		got := rs[0].Images[0][5].S
		if got < first.Format("2006-01-02 15:04:05") || got < last {
			t.Fatalf("NOW() under n2 is %s, below %v applied under n1: the clock went back", got, first)
		}
		last = got
	}
	// Every replica holds the same clock.
	waitFor(t, "replicas to apply", 5*time.Second, func() bool {
		a := c.nodes["n1"].fsm.Clock()
		return a.Equal(c.nodes["n2"].fsm.Clock()) && a.Equal(c.nodes["n3"].fsm.Clock()) &&
			c.nodes["n3"].fsm.AppliedIndex() == n2.fsm.AppliedIndex()
	})
	if clk := n2.fsm.Clock(); clk.Format("2006-01-02 15:04:05") != last || clk.Before(first) {
		t.Fatalf("replicated clock %v, last NOW() %s, first %v", clk, last, first)
	}
}

// TestClockMixedVersions: while a member runs command version 3, NOW()
// is each entry's leader time on every replica alike, even backwards
// (what version 3 applies); once that member is upgraded and the leader
// raises the cluster's version, every replica starts the clock at the
// same entry and holds the same one, and NOW() no longer goes back.
func TestClockMixedVersions(t *testing.T) {
	const ahead = time.Hour
	c := startCluster(t, func(cfg *Config) {
		switch cfg.NodeID {
		case "n1":
			cfg.appendClock = func(at time.Time) time.Time { return at.Add(ahead) }
		case "n3":
			cfg.commandVersion = 3
		}
	})
	lead := func(id string) *Node {
		t.Helper()
		l := c.leader()
		if l.ID() != id {
			_, err := l.TransferLeadership(ctxT(t, 5*time.Second), id)
			must(t, err)
			l = c.leader()
		}
		if l.ID() != id {
			t.Fatalf("leader %s, want %s", l.ID(), id)
		}
		return l
	}
	insert := func(n *Node, i int) string {
		t.Helper()
		return proposeRetry(t, n, workerInsert("ids", 1, i))[0].Images[0][5].S
	}
	waitFor(t, "every member's version announced", 10*time.Second, func() bool {
		v := statusVersions(c.nodes["n1"])
		return len(v) == 3 && v["n3"] == 3
	})
	n1 := lead("n1")
	proposeRetry(t, n1, createDB("ids"), model.Command{Op: model.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: formattest.LegacyDef(workerDef("ids"))})
	a := insert(n1, 1)
	b := insert(lead("n2"), 2)
	if b >= a {
		t.Fatalf("version 3: NOW() %s under n2 after %s under n1 an hour ahead; want it to go back as version 3 applies", b, a)
	}
	for id, n := range c.nodes {
		if n.ClusterVersion() != 3 || !n.fsm.Clock().IsZero() {
			t.Fatalf("%s: cluster version %d, clock %v in a mixed cluster", id, n.ClusterVersion(), n.fsm.Clock())
		}
	}

	// Upgrade n3.
	addr3 := c.nodes["n3"].Addr()
	must(t, c.nodes["n3"].Close())
	cfg := c.cfgs["n3"]
	cfg.Listener, cfg.RaftAddr, cfg.commandVersion = nil, addr3, CommandVersion
	n3, err := Open(cfg)
	must(t, err)
	t.Cleanup(func() { n3.Close() })
	c.nodes["n3"] = n3
	waitFor(t, "the cluster's version to rise and the clocks to agree", 15*time.Second, func() bool {
		var clk time.Time
		for _, n := range c.nodes {
			if n.ClusterVersion() != CommandVersion || n.fsm.Clock().IsZero() ||
				!clk.IsZero() && !clk.Equal(n.fsm.Clock()) {
				return false
			}
			clk = n.fsm.Clock()
		}
		return true
	})
	d := insert(lead("n1"), 3)
	e := insert(lead("n2"), 4)
	if e < d {
		t.Fatalf("after the upgrade: NOW() %s under n2 after %s under n1: the clock went back", e, d)
	}
	waitFor(t, "the replicas to agree", 5*time.Second, func() bool {
		x := c.nodes["n1"].fsm.Clock()
		return x.Equal(c.nodes["n2"].fsm.Clock()) && x.Equal(c.nodes["n3"].fsm.Clock())
	})
}
