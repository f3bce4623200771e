package raftstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// testConfig is tuned for loopback on a small shared machine: fast enough
// for elections in a few hundred milliseconds, slow enough that a busy
// scheduler does not cause spurious ones.
func testConfig(id, dir string, ln net.Listener) Config {
	return Config{
		NodeID:             id,
		Listener:           ln,
		DataDir:            dir,
		HeartbeatTimeout:   500 * time.Millisecond,
		ElectionTimeout:    500 * time.Millisecond,
		LeaderLeaseTimeout: 250 * time.Millisecond,
		CommitTimeout:      5 * time.Millisecond,
		ApplyTimeout:       3 * time.Second,
		TransportTimeout:   2 * time.Second,
		Logger:             testLogger(),
	}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func openNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func propose(t testing.TB, n *Node, cmds ...model.Command) []model.Result {
	t.Helper()
	rs, err := n.Propose(ctxT(t, 5*time.Second), cmds)
	if err != nil {
		t.Fatalf("propose on %s: %v", n.ID(), err)
	}
	return rs
}

// proposeRetry retries a proposal that failed for replication reasons
// only: on a loaded machine a leader can lose its lease mid-test, which is
// the system working. Callers must tolerate burnt ids.
func proposeRetry(t testing.TB, n *Node, cmds ...model.Command) []model.Result {
	t.Helper()
	for i := 0; ; i++ {
		rs, err := n.Propose(ctxT(t, 5*time.Second), cmds)
		if err == nil {
			return rs
		}
		if i == 5 || !(errors.Is(err, ticket.ErrNoQuorum) || errors.Is(err, ticket.ErrUncertain)) {
			t.Fatalf("propose on %s: %v", n.ID(), err)
		}
		t.Logf("propose on %s: retrying after %v", n.ID(), err)
		// A node without a leader refuses at once: the next try waits
		// for one (five immediate tries were all refused within 100 ms
		// of a lease lost under load).
		if err := n.WaitReady(ctxT(t, untilDeadline(t))); err != nil {
			t.Fatalf("propose on %s: no leader to retry with: %v", n.ID(), err)
		}
	}
}

// setupCmds creates flickr.Tickets64, idempotently so that it can be
// retried.
func setupCmds() []model.Command {
	db, tb := createDB("flickr"), createTickets("flickr", "Tickets64")
	db.IfExists, tb.IfExists = true, true
	return []model.Command{db, tb}
}

func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSingleNodeRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("n1", dir, nil)
	cfg.RaftAddr = "127.0.0.1:0"
	n := openNode(t, cfg)
	must(t, n.WaitReady(ctxT(t, 5*time.Second)))
	if !n.IsLeader() {
		t.Fatal("single node is not leader")
	}
	rs := propose(t, n, createDB("flickr"), createTickets("flickr", "Tickets64"), replaceCmd("flickr", "Tickets64", "a"))
	if rs[2].InsertID != 1 || rs[2].Err != nil {
		t.Fatalf("first id: %+v", rs[2])
	}
	st := n.Status()
	if st.State != "Leader" || st.LeaderID != "n1" || st.Term == 0 || len(st.Members) != 1 || !st.Members[0].Leader || st.StateIndex == 0 {
		t.Fatalf("status %+v", st)
	}
	if _, err := json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if rs, err := n.Propose(context.Background(), nil); rs != nil || err != nil {
		t.Fatalf("empty batch: %v %v", rs, err)
	}
	must(t, n.Close())
	if _, err := n.Propose(context.Background(), []model.Command{replaceCmd("flickr", "Tickets64", "a")}); !errors.Is(err, ErrClosed) || !errors.Is(err, ticket.ErrNoQuorum) {
		t.Fatalf("propose after close: %v", err)
	}

	// Reopen the same directory (on a new port: the address is only the
	// bootstrap's business, and a restart must not bootstrap again).
	cfg.RaftAddr = "127.0.0.1:0"
	n2 := openNode(t, cfg)
	must(t, n2.WaitReady(ctxT(t, 5*time.Second)))
	if v := autoInc(t, n2, "flickr", "Tickets64"); v != 2 {
		t.Fatalf("auto_increment after restart %d, want 2", v)
	}
	if rs := propose(t, n2, replaceCmd("flickr", "Tickets64", "a")); rs[0].InsertID != 2 {
		t.Fatalf("id after restart %d, want 2", rs[0].InsertID)
	}
}

// TestRestartFromSnapshot compacts the log, then loses the state file:
// the node must rebuild it from the snapshot and the log after it.
func TestRestartFromSnapshot(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("StateNoSync=%v", noSync), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig("n1", dir, nil)
			cfg.RaftAddr = "127.0.0.1:0"
			cfg.StateNoSync = noSync
			rebootEveryStart(&cfg) // unsynced: the file goes at the next start
			cfg.TrailingLogs = 2
			n := openNode(t, cfg)
			must(t, n.WaitReady(ctxT(t, 5*time.Second)))
			propose(t, n, createDB("flickr"), createTickets("flickr", "Tickets64"))
			for range 5 {
				propose(t, n, replaceCmd("flickr", "Tickets64", "a"))
			}
			must(t, n.Snapshot())
			for range 3 {
				propose(t, n, replaceCmd("flickr", "Tickets64", "a"))
			}
			must(t, n.Close())
			if !noSync {
				must(t, os.Remove(filepath.Join(dir, "state.db")))
			}

			cfg.RaftAddr = "127.0.0.1:0"
			n2 := openNode(t, cfg)
			must(t, n2.WaitReady(ctxT(t, 5*time.Second)))
			waitFor(t, "log replay", 5*time.Second, func() bool { return autoInc(t, n2, "flickr", "Tickets64") >= 9 })
			if v := autoInc(t, n2, "flickr", "Tickets64"); v != 9 {
				t.Fatalf("auto_increment %d, want 9", v)
			}
			if rs := propose(t, n2, replaceCmd("flickr", "Tickets64", "a")); rs[0].InsertID != 9 {
				t.Fatalf("id %d, want 9", rs[0].InsertID)
			}
		})
	}
}

type cluster struct {
	t     testing.TB
	nodes map[string]*Node
	cfgs  map[string]Config
}

// startCluster opens three nodes bootstrapped with a static peer list on
// listeners made beforehand, so that the addresses are known.
func startCluster(t testing.TB, opts ...func(*Config)) *cluster {
	c := &cluster{t: t, nodes: map[string]*Node{}, cfgs: map[string]Config{}}
	ids := []string{"n1", "n2", "n3"}
	lns := map[string]net.Listener{}
	var peers []Peer
	for _, id := range ids {
		lns[id] = listen(t)
		peers = append(peers, Peer{ID: id, Addr: lns[id].Addr().String()})
	}
	for _, id := range ids {
		cfg := testConfig(id, t.TempDir(), lns[id])
		cfg.Peers = peers
		for _, o := range opts {
			o(&cfg)
		}
		c.cfgs[id] = cfg
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, id := range ids {
		wg.Go(func() {
			n := openNode(t, c.cfgs[id])
			mu.Lock()
			c.nodes[id] = n
			mu.Unlock()
		})
	}
	wg.Wait()
	return c
}

// leader waits until the running nodes agree on a leader and returns it.
func (c *cluster) leader() *Node {
	c.t.Helper()
	var l *Node
	waitFor(c.t, "a leader", 10*time.Second, func() bool {
		l = nil
		for _, n := range c.nodes {
			if n.IsLeader() {
				l = n
			}
		}
		if l == nil {
			return false
		}
		for _, n := range c.nodes {
			if id, _ := n.Leader(); id != l.ID() {
				return false
			}
		}
		return true
	})
	return l
}

func (c *cluster) follower() *Node {
	for _, n := range c.nodes {
		if !n.IsLeader() {
			return n
		}
	}
	c.t.Fatal("no follower")
	return nil
}

// agree waits until every running node's state shows the same
// auto_increment and returns it.
func (c *cluster) agree() uint64 {
	c.t.Helper()
	var v uint64
	waitFor(c.t, "the nodes to agree", 10*time.Second, func() bool {
		first := true
		for _, n := range c.nodes {
			a := autoInc(c.t, n, "flickr", "Tickets64")
			if first {
				v, first = a, false
			} else if a != v {
				return false
			}
		}
		return true
	})
	return v
}

func TestCluster(t *testing.T) {
	c := startCluster(t)
	leader := c.leader()
	f := c.follower()

	// Through a follower: forwarded to the leader, committed everywhere.
	rs := proposeRetry(t, f, append(setupCmds(), replaceCmd("flickr", "Tickets64", "a"))...)
	first := rs[2].InsertID
	if first == 0 || rs[2].Err != nil {
		t.Fatalf("first REPLACE: %+v", rs[2])
	}
	if v := c.agree(); v <= first {
		t.Fatalf("auto_increment %d after id %d", v, first)
	}

	// Many batches in flight at once through all nodes share the
	// forwarding connections; every id is distinct. A leader losing its
	// lease on a loaded machine fails some batches, with one of the two
	// replication errors and never with a duplicate.
	var (
		mu     sync.Mutex
		ids    []uint64
		failed int
		wg     sync.WaitGroup
		errs   = make(chan error, 64)
	)
	for _, n := range c.nodes {
		for range 8 {
			wg.Go(func() {
				for range 5 {
					rs, err := n.Propose(context.Background(), []model.Command{
						replaceCmd("flickr", "Tickets64", "a"), replaceCmd("flickr", "Tickets64", "b"),
					})
					mu.Lock()
					if err == nil {
						ids = append(ids, rs[0].InsertID, rs[1].InsertID)
					} else {
						failed++
					}
					mu.Unlock()
					if err != nil && !errors.Is(err, ticket.ErrNoQuorum) && !errors.Is(err, ticket.ErrUncertain) {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if failed > 60 {
		t.Fatalf("%d of 120 batches failed", failed)
	}
	if failed > 0 {
		t.Logf("%d of 120 batches failed under load", failed)
	}
	slices.Sort(ids)
	if n := len(ids); len(slices.Compact(ids)) != n || ids[0] <= first {
		t.Fatalf("duplicate or stale ids: %d ids, %d distinct, lowest %d", n, len(slices.Compact(ids)), ids[0])
	}
	top := ids[len(ids)-1]
	if v := c.agree(); v <= top {
		t.Fatalf("auto_increment %d not above id %d", v, top)
	}

	// The leader goes away; the other two elect a new one and proposals
	// resume, above every id handed out so far.
	old := leader.ID()
	must(t, leader.Close())
	delete(c.nodes, old)
	if c.leader().ID() == old {
		t.Fatal("closed leader still leads")
	}
	for _, n := range c.nodes {
		rs := proposeRetry(t, n, replaceCmd("flickr", "Tickets64", "a"))
		if rs[0].InsertID <= top {
			t.Fatalf("id %d after failover is not above %d", rs[0].InsertID, top)
		}
		top = rs[0].InsertID
	}
	want := c.agree()

	// The old leader restarts from its directory and catches up.
	cfg := c.cfgs[old]
	// The port was just released; another process may hold it for a
	// moment on a busy machine.
	var ln net.Listener
	var err error
	for try := 0; try < 50; try++ {
		if ln, err = net.Listen("tcp", cfg.Listener.Addr().String()); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("cannot rebind %s: %v", cfg.Listener.Addr(), err)
	}
	cfg.Listener = ln
	c.nodes[old] = openNode(t, cfg)
	if v := c.agree(); v != want {
		t.Fatalf("auto_increment %d after restart, want %d", v, want)
	}
	l := c.leader()
	if st := c.nodes[old].Status(); len(st.Members) != 3 || st.LeaderID != l.ID() {
		t.Fatalf("restarted node status %+v", st)
	}
}

func TestNoQuorum(t *testing.T) {
	c := startCluster(t)
	proposeRetry(t, c.leader(), setupCmds()...)
	leader := c.leader()
	for id, n := range c.nodes {
		if n != leader {
			must(t, n.Close())
			delete(c.nodes, id)
		}
	}
	// The leader either steps down before the entry is queued (nothing
	// committed) or during (outcome unknown); either way no ids.
	_, err := leader.Propose(ctxT(t, 2*time.Second), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
	if !errors.Is(err, ticket.ErrNoQuorum) && !errors.Is(err, ticket.ErrUncertain) {
		t.Fatalf("propose without quorum: %v", err)
	}
	waitFor(t, "step down", 5*time.Second, func() bool { return !leader.IsLeader() })
	if err := leader.Ready(); err == nil {
		t.Fatal("ready without a quorum")
	}
	start := time.Now()
	_, err = leader.Propose(ctxT(t, 500*time.Millisecond), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
	if !errors.Is(err, ticket.ErrNoQuorum) {
		t.Fatalf("propose on a lone follower: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("propose took %v past its deadline", d)
	}
}

// TestNoQuorumRefusesAtOnce: a node that has known no leader for longer
// than an election timeout refuses a proposal at once with a
// NoLeaderError (saying since when), instead of retrying until the
// proposal's deadline (issue 34: every statement waited 3.4-4.0 s). The
// context here has no deadline and ApplyTimeout is a minute: only the
// fail-fast answers with a NoLeaderError, and without it the call would
// take that minute. Once a leader is back the next proposal succeeds.
func TestNoQuorumRefusesAtOnce(t *testing.T) {
	c := startCluster(t, func(cfg *Config) { cfg.ApplyTimeout = time.Minute })
	proposeRetry(t, c.leader(), setupCmds()...)
	survivor := c.follower()
	for id, n := range c.nodes {
		if n != survivor {
			must(t, n.Close())
			delete(c.nodes, id)
		}
	}
	waitFor(t, "no leader", 10*time.Second, func() bool { id, _ := survivor.Leader(); return id == "" })
	lost := time.Now()
	for i := range 3 {
		_, err := survivor.Propose(context.Background(), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
		var nl *NoLeaderError
		if !errors.Is(err, ticket.ErrNoQuorum) || !errors.As(err, &nl) {
			t.Fatalf("proposal %d without a leader: %v; want ErrNoQuorum with a NoLeaderError", i, err)
		}
		// The observation of the loss reaches the watcher a moment after
		// Raft's leader is read as empty.
		if nl.Since.After(lost.Add(leaderSeenTick)) || !strings.Contains(err.Error(), "no leader known since") {
			t.Fatalf("proposal %d: leaderless since %v, but the leader was lost by %v: %v", i, nl.Since, lost, err)
		}
	}
	if _, err := survivor.ReadIndex(ctxT(t, 5*time.Second)); !errors.As(err, new(*NoLeaderError)) {
		t.Fatalf("read index without a leader: %v; want a NoLeaderError", err)
	}
	// A member comes back: the survivor's first proposal once it knows
	// the leader goes through.
	for id, cfg := range c.cfgs {
		if id == survivor.ID() {
			continue
		}
		ln, err := net.Listen("tcp", cfg.Listener.Addr().String())
		must(t, err)
		cfg.Listener = ln
		c.nodes[id] = openNode(t, cfg)
		break
	}
	waitFor(t, "a new leader", 20*time.Second, func() bool { id, _ := survivor.Leader(); return id != "" })
	if _, err := survivor.Propose(ctxT(t, 10*time.Second), []model.Command{replaceCmd("flickr", "Tickets64", "a")}); err != nil {
		t.Fatalf("first proposal once a leader is known: %v", err)
	}
}

func TestMembership(t *testing.T) {
	ln1 := listen(t)
	n1 := openNode(t, testConfig("n1", t.TempDir(), ln1))
	must(t, n1.WaitReady(ctxT(t, 5*time.Second)))
	propose(t, n1, append(setupCmds(), replaceCmd("flickr", "Tickets64", "a"))...)

	joiner := func(id string) *Node {
		cfg := testConfig(id, t.TempDir(), listen(t))
		cfg.NoBootstrap = true
		return openNode(t, cfg)
	}
	n2, n3 := joiner("n2"), joiner("n3")
	if n2.Ready() == nil {
		t.Fatal("unjoined node ready")
	}
	must(t, n1.Join(ctxT(t, 5*time.Second), "n2", n2.Addr()))
	// Joining again is a no-op; joining through a follower is forwarded.
	must(t, n1.Join(ctxT(t, 5*time.Second), "n2", n2.Addr()))
	waitFor(t, "n2 to know the leader", 5*time.Second, func() bool { id, _ := n2.Leader(); return id == "n1" })
	must(t, n2.Join(ctxT(t, 5*time.Second), "n3", n3.Addr()))
	must(t, n3.WaitReady(ctxT(t, 5*time.Second)))

	c := &cluster{t: t, nodes: map[string]*Node{"n1": n1, "n2": n2, "n3": n3}}
	if v := c.agree(); v != 2 {
		t.Fatalf("auto_increment %d on the joined nodes, want 2", v)
	}
	id := proposeRetry(t, n3, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID
	if id < 2 {
		t.Fatalf("id via joined node %d", id)
	}
	c.agree()
	if st := n3.Status(); len(st.Members) != 3 {
		t.Fatalf("members %+v", st.Members)
	}

	// A member's id at another address, or a member's address under
	// another id, is refused (through a follower too), and nothing moves.
	for _, tc := range []struct {
		on       *Node
		id, addr string
	}{
		{n1, "n2", "127.0.0.1:1"}, {n3, "n2", "127.0.0.1:1"}, {n2, "evil", n3.Addr()},
	} {
		if err := tc.on.Join(ctxT(t, 5*time.Second), tc.id, tc.addr); !errors.Is(err, ErrMemberConflict) {
			t.Fatalf("join %s at %s through %s: %v, want ErrMemberConflict", tc.id, tc.addr, tc.on.ID(), err)
		}
	}
	if err := n3.Remove(ctxT(t, 5*time.Second), "n9"); !errors.Is(err, ErrUnknownMember) {
		t.Fatalf("remove of an unknown id through a follower: %v, want ErrUnknownMember", err)
	}
	for _, m := range n1.Status().Members {
		if want := map[string]string{"n1": n1.Addr(), "n2": n2.Addr(), "n3": n3.Addr()}[m.ID]; m.Addr != want || !m.Voter {
			t.Fatalf("after refused changes, member %+v (want at %s)", m, want)
		}
	}

	// Remove through a follower; removing again is refused.
	must(t, n2.Remove(ctxT(t, 5*time.Second), "n3"))
	if err := n1.Remove(ctxT(t, 5*time.Second), "n3"); !errors.Is(err, ErrUnknownMember) {
		t.Fatalf("second remove: %v, want ErrUnknownMember", err)
	}
	waitFor(t, "n1 to drop n3", 5*time.Second, func() bool { return len(n1.Status().Members) == 2 })
	// The removed node learns it (the leader sends it the entry that
	// removes it) and answers nothing from its state any more.
	waitFor(t, "n3 to know it was removed", 5*time.Second, func() bool { return errors.Is(n3.Serving(), ErrRemoved) })
	if err := n3.Ready(); !errors.Is(err, ErrRemoved) {
		t.Fatalf("removed node Ready: %v", err)
	}
	if err := n3.WaitServing(ctxT(t, time.Second)); !errors.Is(err, ErrRemoved) || !errors.Is(err, ticket.ErrNoQuorum) {
		t.Fatalf("removed node WaitServing: %v", err)
	}
	delete(c.nodes, "n3")
	if next := proposeRetry(t, n2, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID; next <= id {
		t.Fatalf("id after removal %d, not above %d", next, id)
	}
}

func TestParsePeers(t *testing.T) {
	ps, err := ParsePeers(" n1=127.0.0.1:7306, n2=host:7307,")
	if err != nil || !slices.Equal(ps, []Peer{{"n1", "127.0.0.1:7306"}, {"n2", "host:7307"}}) {
		t.Fatalf("%v %v", ps, err)
	}
	for _, bad := range []string{"n1", "=h:1", "n1=h", "n1=h:1,n1=h:2"} {
		if _, err := ParsePeers(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no id":        {DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0"},
		"no dir":       {NodeID: "n1", RaftAddr: "127.0.0.1:0"},
		"not in peers": {NodeID: "n1", DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", Peers: []Peer{{"n2", "127.0.0.1:1"}}},
	} {
		if n, err := Open(cfg); err == nil {
			n.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestVerifyLeader(t *testing.T) {
	cfg := testConfig("n1", t.TempDir(), listen(t))
	n := openNode(t, cfg)
	must(t, n.WaitReady(ctxT(t, 5*time.Second)))
	term, err := n.VerifyLeader(ctxT(t, time.Second))
	if err != nil || term == 0 || term != n.Status().Term {
		t.Fatalf("term %d, err %v", term, err)
	}
	must(t, n.Close())
	if _, err := n.VerifyLeader(context.Background()); !errors.Is(err, ticket.ErrNoQuorum) {
		t.Fatalf("after close: %v", err)
	}
}

// benchPropose measures batches of 64 REPLACEs proposed through n by
// parallel callers (each a group-commit worker, in ticket's terms).
func benchPropose(b *testing.B, n *Node) {
	proposeRetry(b, n, setupCmds()...)
	cmds := formattest.ReplaceBatch(64)
	for i := range cmds {
		cmds[i].DB, cmds[i].Table = "flickr", "Tickets64"
	}
	var failed atomic.Int64
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := n.Propose(context.Background(), cmds)
			switch {
			case errors.Is(err, ticket.ErrNoQuorum), errors.Is(err, ticket.ErrUncertain):
				failed.Add(1) // a leader change on a busy machine
			case err != nil:
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*len(cmds))/b.Elapsed().Seconds(), "tickets/s")
	b.ReportMetric(float64(failed.Load()), "failed")
}

func BenchmarkProposeSingleNode(b *testing.B) {
	n := openNode(b, testConfig("n1", b.TempDir(), listen(b)))
	must(b, n.WaitReady(ctxT(b, 5*time.Second)))
	benchPropose(b, n)
}

func BenchmarkProposeViaFollower(b *testing.B) {
	c := startCluster(b)
	c.leader()
	benchPropose(b, c.follower())
}

// benchLatency proposes one REPLACE at a time: the commit latency a lone
// connection sees (p50 in the report; ns/op is the mean).
func benchLatency(b *testing.B, n *Node) {
	proposeRetry(b, n, setupCmds()...)
	cmds := []model.Command{replaceCmd("flickr", "Tickets64", "a")}
	lat := make([]time.Duration, 0, 1024)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := n.Propose(context.Background(), cmds); err != nil && !errors.Is(err, ticket.ErrUncertain) && !errors.Is(err, ticket.ErrNoQuorum) {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// stateSync runs a benchmark with the state file fsynced (the default)
// and with StateNoSync.
func stateSync(b *testing.B, run func(b *testing.B, opt func(*Config))) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("StateNoSync=%v", noSync), func(b *testing.B) {
			run(b, func(c *Config) { c.StateNoSync = noSync })
		})
	}
}

func BenchmarkLatencySingleNode(b *testing.B) {
	stateSync(b, func(b *testing.B, opt func(*Config)) {
		cfg := testConfig("n1", b.TempDir(), listen(b))
		opt(&cfg)
		n := openNode(b, cfg)
		must(b, n.WaitReady(ctxT(b, 5*time.Second)))
		benchLatency(b, n)
	})
}

func BenchmarkLatencyClusterLeader(b *testing.B) {
	stateSync(b, func(b *testing.B, opt func(*Config)) {
		c := startCluster(b, opt)
		benchLatency(b, c.leader())
	})
}

func BenchmarkLatencyClusterFollower(b *testing.B) {
	stateSync(b, func(b *testing.B, opt func(*Config)) {
		c := startCluster(b, opt)
		c.leader()
		benchLatency(b, c.follower())
	})
}

// TestFollowerReadyAsksLeader: a follower is ready once it has applied
// what the leader had committed when asked (its own commit index may lag
// far behind the leader's).
func TestFollowerReadyAsksLeader(t *testing.T) {
	c := startCluster(t)
	l := c.leader()
	proposeRetry(t, l, createDB("flickr"), createTickets("flickr", "Tickets64"))
	for range 20 {
		proposeRetry(t, l, replaceCmd("flickr", "Tickets64", "a"))
	}
	// A follower in step is ready, unless leadership changes under it:
	// then "not ready" is the right answer (it asked a node that had
	// stepped down), seen once under -race on a loaded machine. Only a
	// refusal within one term fails the test.
	for attempt := 0; ; attempt++ {
		term := l.raft.CurrentTerm()
		f := c.follower()
		// The leader's commit index before Ready asks: entries it commits
		// meanwhile (the members' version announcements) may be applied
		// after Ready answered.
		commit := l.raft.CommitIndex()
		err := f.Ready()
		if err == nil {
			// Not f.raft.AppliedIndex(): Raft sets it only after handing a
			// batch to the FSM, so the FSM may have applied an entry that
			// Raft's counter does not show yet (seen once in CI: 26 < 27).
			if !f.stateIncludes(commit) {
				t.Fatalf("ready with state at %d (raft applied %d) below the leader's commit %d when Ready was called",
					f.fsm.AppliedIndex(), f.raft.AppliedIndex(), commit)
			}
			return
		}
		if l.raft.CurrentTerm() == term && l.raft.State().String() == "Leader" || attempt == 3 {
			t.Fatalf("follower in step not ready (leader %s still leads term %d): %v", l.id, term, err)
		}
		t.Logf("leadership changed during Ready (term %d -> %d): %v", term, l.raft.CurrentTerm(), err)
		l = c.leader()
	}
}

// cutListener is a listener whose node can be cut off: cut closes every
// connection it accepted and closes new ones at once until heal.
type cutListener struct {
	net.Listener
	mu    sync.Mutex
	isCut bool
	conns []net.Conn
}

func (l *cutListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.isCut {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns = append(l.conns, c)
		l.mu.Unlock()
		return c, nil
	}
}

func (l *cutListener) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.isCut = true
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

func (l *cutListener) heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.isCut = false
}

// TestRemovedWhileCutOffLearnsIt: Raft makes one attempt to bring a
// removed server the entry that removes it, and stops replicating to it
// after one AppendEntries however far behind it is. A server cut off
// while the cluster moved on, and removed meanwhile, never gets the
// entry; the leader tells it (fwdRemoved), so it refuses statements as
// removed rather than waiting for a leader for ever.
func TestRemovedWhileCutOffLearnsIt(t *testing.T) {
	cfg := func(id string, ln net.Listener, join bool) Config {
		c := testConfig(id, t.TempDir(), ln)
		c.MaxAppendEntries = 2 // a few entries behind is more than one AppendEntries
		c.NoBootstrap = join
		return c
	}
	n1 := openNode(t, cfg("n1", listen(t), false))
	must(t, n1.WaitReady(ctxT(t, 5*time.Second)))
	propose(t, n1, append(setupCmds(), replaceCmd("flickr", "Tickets64", "a"))...)
	cl := &cutListener{Listener: listen(t)}
	n2, n3 := openNode(t, cfg("n2", listen(t), true)), openNode(t, cfg("n3", cl, true))
	must(t, n1.Join(ctxT(t, 5*time.Second), "n2", n2.Addr()))
	must(t, n1.Join(ctxT(t, 5*time.Second), "n3", n3.Addr()))
	must(t, n3.WaitReady(ctxT(t, 5*time.Second)))

	cl.cut()
	for range 10 {
		propose(t, n1, replaceCmd("flickr", "Tickets64", "a"))
	}
	must(t, n1.Remove(ctxT(t, 5*time.Second), "n3"))
	cl.heal()
	waitFor(t, "n3 to know it was removed", 5*time.Second, func() bool { return errors.Is(n3.Serving(), ErrRemoved) })
}

// TestRejoinUnderRemovedIDServes: the leader's fwdRemoved messages to a
// removed server may reach a new process started at its address under
// its id with an empty data directory, to join again (the manual's
// recipe). That process must not take them for itself.
func TestRejoinUnderRemovedIDServes(t *testing.T) {
	cfg := func(id string, ln net.Listener, join bool) Config {
		c := testConfig(id, t.TempDir(), ln)
		c.NoBootstrap = join
		return c
	}
	n1 := openNode(t, cfg("n1", listen(t), false))
	must(t, n1.WaitReady(ctxT(t, 5*time.Second)))
	propose(t, n1, append(setupCmds(), replaceCmd("flickr", "Tickets64", "a"))...)
	cl := &cutListener{Listener: listen(t)}
	addr := cl.Addr().String()
	n2, n3 := openNode(t, cfg("n2", listen(t), true)), openNode(t, cfg("n3", cl, true))
	must(t, n1.Join(ctxT(t, 5*time.Second), "n2", n2.Addr()))
	must(t, n1.Join(ctxT(t, 5*time.Second), "n3", n3.Addr()))
	must(t, n3.WaitReady(ctxT(t, 5*time.Second)))

	// n3 dies with its disk, cut off first so that the leader keeps
	// telling its address that it was removed.
	cl.cut()
	must(t, n1.Remove(ctxT(t, 5*time.Second), "n3"))
	n3.Close()
	fresh := openNode(t, cfg("n3", listenAt(t, addr), true))
	time.Sleep(500 * time.Millisecond) // the leader's messages arrive meanwhile
	must(t, n1.Join(ctxT(t, 5*time.Second), "n3", addr))
	must(t, fresh.WaitReady(ctxT(t, 5*time.Second)))
	waitFor(t, "the rejoined n3 to serve", 5*time.Second, func() bool { return fresh.Serving() == nil })
}
