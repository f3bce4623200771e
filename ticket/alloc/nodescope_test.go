package alloc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// clusterRepl is one replicated state shared by several Services, each
// standing for a node: Propose applies at once (every node "applies" in
// the same instant) and moves a SchemaClock like raftstore's FSM. cut
// makes one node's proposals fail as a node cut off from the quorum.
type clusterRepl struct {
	mu       sync.Mutex
	st       *ticket.MemStore
	epoch    atomic.Uint64
	reserves int
}

func (c *clusterRepl) propose(cmds []model.Command) ([]model.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		if cmds[i].Op == model.OpReserve {
			c.reserves++
		}
		r, err := ticket.Apply(c.st, &cmds[i])
		if err != nil {
			return nil, err
		}
		if ticket.ChangesSchema(cmds[i].Op) {
			c.epoch.Add(1)
		}
		out[i] = r
	}
	return out, nil
}

// reservations counts the OpReserve commands applied so far.
func (c *clusterRepl) reservations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reserves
}

// nodeView is one node's access to the cluster: its Replicator and
// Reader (with the SchemaClock).
type nodeView struct {
	c   *clusterRepl
	cut atomic.Bool
	// stale, when set, is the SchemaEpoch a node reports: one cut off
	// applies nothing, so schema changes made meanwhile do not reach it.
	stale atomic.Pointer[uint64]
}

func (n *nodeView) Propose(_ context.Context, cmds []model.Command) ([]model.Result, error) {
	if n.cut.Load() {
		return nil, fmt.Errorf("cut off: %w", ticket.ErrNoQuorum)
	}
	return n.c.propose(cmds)
}

func (n *nodeView) View(fn func(ticket.Store) error) error {
	n.c.mu.Lock()
	defer n.c.mu.Unlock()
	return fn(n.c.st)
}

func (n *nodeView) SchemaEpoch() uint64 {
	if e := n.stale.Load(); e != nil {
		return *e
	}
	return n.c.epoch.Load()
}

const nodeComment = "ticketd:cache=100,scope=node"

// nodeCluster starts nodes Services over one state with a node-scoped
// table flickr.T holding the stub "a". Node 0 leads.
func nodeCluster(t *testing.T, nodes int) (*clusterRepl, []*Service, []*nodeView, []*fakeLead) {
	t.Helper()
	c := &clusterRepl{st: ticket.NewMemStore()}
	var svcs []*Service
	var views []*nodeView
	var leads []*fakeLead
	for i := range nodes {
		v := &nodeView{c: c}
		lead := &fakeLead{term: 1, leader: i == 0}
		svc := NewService(v, v, Config{Leadership: lead}, nil)
		t.Cleanup(svc.Close)
		svcs, views, leads = append(svcs, svc), append(views, v), append(leads, lead)
	}
	def := tickets64("flickr", "T")
	def.Comment = nodeComment
	def.Cache = 100
	ctx := context.Background()
	for _, cmd := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: def}, replace("a")} {
		if r, err := svcs[0].Exec(ctx, &cmd); err != nil || r.Err != nil {
			t.Fatalf("%v: %v %v", &cmd, err, r.Err)
		}
	}
	return c, svcs, views, leads
}

func TestNodeScopeOption(t *testing.T) {
	for comment, want := range map[string]bool{
		"ticketd:cache=1000,scope=node":   true,
		"ticketd:cache=1000, scope=node":  true,
		"TICKETD:SCOPE=NODE":              true,
		"x ticketd:cache=5 scope=node":    true,
		"ticketd:cache=1000":              false,
		"ticketd:cache=1000,scope=global": false,
		"scope=node":                      false, // not ticketd's part of the comment
		"":                                false,
	} {
		if got := ticket.NodeScope(comment); got != want {
			t.Errorf("NodeScope(%q) = %v, want %v", comment, got, want)
		}
	}
}

// TestNodeScopeUniquePerNodeIncreasing: three nodes serve concurrent
// sessions from their own blocks; every id is unique across the nodes,
// every session's ids and every node's serial ids strictly increase, and
// Raft sees one reservation per block, not a command per id.
func TestNodeScopeUniquePerNodeIncreasing(t *testing.T) {
	c, svcs, _, leads := nodeCluster(t, 3)
	const sessions, perSession = 4, 300
	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, len(svcs)*sessions)
	for n, svc := range svcs {
		for range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var last uint64
				for range perSession {
					id, err := next(t, svc, "a")
					if err != nil {
						errs <- err
						return
					}
					if id <= last {
						errs <- fmt.Errorf("node %d session: id %d after %d", n, id, last)
						return
					}
					last = id
					mu.Lock()
					if m, dup := seen[id]; dup {
						errs <- fmt.Errorf("id %d from node %d and node %d", id, m, n)
					}
					seen[id] = n
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != len(svcs)*sessions*perSession {
		t.Fatalf("%d ids", len(seen))
	}
	// 3,600 ids in blocks of 100: at least 36 reservations, and none
	// beyond them but each node's last block, cut short when the
	// sessions stop, and the one it took ahead.
	if n := c.reservations(); n < 36 || n > 42 {
		t.Fatalf("%d reservations for 3600 ids in blocks of 100 on 3 nodes", n)
	}
	for i, l := range leads {
		if l.verifies != 0 {
			t.Fatalf("node %d ran %d VerifyLeader rounds: node scope needs none", i, l.verifies)
		}
	}
	// Serial calls on one node go up even across its block boundaries.
	var last uint64
	for range 250 {
		id, err := next(t, svcs[1], "a")
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			t.Fatalf("node 1: id %d after %d", id, last)
		}
		last = id
	}
}

// TestNodeScopeRestartNeverReusesBlock: a node's next run (a new Service
// over the same state) starts from a new block, above everything the
// previous run served or held.
func TestNodeScopeRestartNeverReusesBlock(t *testing.T) {
	c, svcs, views, _ := nodeCluster(t, 2)
	first, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	// The old Service is left alone (the test's cleanup closes it): a
	// process that dies does not close anything either.
	again := NewService(views[1], views[1], Config{Leadership: &fakeLead{term: 1}}, nil)
	defer again.Close()
	id, err := next(t, again, "a")
	if err != nil {
		t.Fatal(err)
	}
	// The first run held first..first+99.
	if id < first+100 {
		t.Fatalf("restarted node served %d from the old run's block starting at %d", id, first)
	}
	if n := c.reservations(); n != 2 {
		t.Fatalf("%d reservations, want one per run", n)
	}
}

// TestNodeScopeRaftAllocationKeepsNodeOrder: a REPLACE of a new stub goes
// through Raft and takes an id above the node's block; the node's next
// answers must not go back into the block.
func TestNodeScopeRaftAllocationKeepsNodeOrder(t *testing.T) {
	_, svcs, _, _ := nodeCluster(t, 2)
	a, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := next(t, svcs[1], "b") // no row yet: through Raft
	if err != nil {
		t.Fatal(err)
	}
	if b <= a+99 {
		t.Fatalf("new stub got %d inside the block from %d", b, a)
	}
	for _, stub := range []string{"a", "b"} {
		id, err := next(t, svcs[1], stub)
		if err != nil {
			t.Fatal(err)
		}
		if id <= b {
			t.Fatalf("REPLACE %q on the same node: %d after %d", stub, id, b)
		}
		b = id
	}
}

// TestNodeScopeAlterToGlobal: ALTER TABLE ... COMMENT through the leader
// (where a follower's DDL also runs, forwarded) switches the table to
// global scope; another node drops its block once it applies the change
// (its SchemaClock moves), and its next id comes from above the counter.
func TestNodeScopeAlterToGlobal(t *testing.T) {
	c, svcs, _, leads := nodeCluster(t, 3)
	if _, err := next(t, svcs[1], "a"); err != nil {
		t.Fatal(err)
	}
	alter := model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasComment: true, Comment: "ticketd:cache=100",
		HasCache: true, Cache: 100}
	if r, err := svcs[0].Exec(context.Background(), &alter); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	tb, _ := c.st.Table("flickr", "T")
	counter := tb.AutoInc
	id, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	if id < counter {
		t.Fatalf("node 1 served %d from its block after the ALTER to global (counter %d)", id, counter)
	}
	// The leader now serves the table from its global range, with
	// leadership confirmed.
	if _, err := next(t, svcs[0], "a"); err != nil {
		t.Fatal(err)
	}
	if leads[0].verifies == 0 {
		t.Fatal("global scope after ALTER: the leader served without VerifyLeader")
	}
}

// TestNodeScopeCutOffFinishesBlock: a node whose proposals fail serves
// the rest of its committed block, then refuses with ErrNoQuorum; healed,
// it takes a new block above the others' ids.
func TestNodeScopeCutOffFinishesBlock(t *testing.T) {
	_, svcs, views, _ := nodeCluster(t, 2)
	first, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	views[1].cut.Store(true)
	served := 1
	var last uint64
	for {
		id, err := next(t, svcs[1], "a")
		if errors.Is(err, ticket.ErrNoQuorum) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		served++
		last = id
	}
	if served != 100 || last != first+99 {
		t.Fatalf("cut-off node served %d ids up to %d from its block at %d, want all 100", served, last, first)
	}
	other, err := next(t, svcs[0], "a")
	if err != nil {
		t.Fatal(err)
	}
	views[1].cut.Store(false)
	id, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	if id <= last || id <= other {
		t.Fatalf("healed node: %d after its %d and the other node's %d", id, last, other)
	}
}

// TestNodeScopeDropRecreateWhileCutOff: a node cut off with a block
// keeps serving it for the table it knows, while the majority drops the
// table and creates it again. The new table's ids start above every id
// the old one reserved (the drop's high-water mark counts blocks taken,
// not ids handed out), so the two never meet.
func TestNodeScopeDropRecreateWhileCutOff(t *testing.T) {
	c, svcs, views, _ := nodeCluster(t, 2)
	ctx := context.Background()
	seen := map[uint64]string{}
	take := func(node int, what string) (uint64, error) {
		id, err := next(t, svcs[node], "a")
		if err == nil {
			if prev, dup := seen[id]; dup {
				t.Fatalf("id %d served twice: %s and %s", id, prev, what)
			}
			seen[id] = what
		}
		return id, err
	}
	if _, err := take(1, "node 1 before the cut"); err != nil {
		t.Fatal(err)
	}
	ep := c.epoch.Load()
	views[1].stale.Store(&ep)
	views[1].cut.Store(true)

	def := tickets64("flickr", "T")
	def.Comment, def.Cache = nodeComment, 100
	for _, cmd := range []model.Command{{Op: model.OpDropTable, DB: "flickr", Table: "T"}, {Op: model.OpCreateTable, Def: def}, replace("a")} {
		if r, err := svcs[0].Exec(ctx, &cmd); err != nil || r.Err != nil {
			t.Fatalf("%v: %v %v", &cmd, err, r.Err)
		}
	}
	var fresh []uint64
	for i := 0; i < 150; i++ {
		id, err := take(0, "node 0 after re-create")
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, id)
	}
	cutServed := 0
	for {
		_, err := take(1, "node 1 cut off")
		if errors.Is(err, ticket.ErrNoQuorum) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		cutServed++
	}
	if cutServed == 0 {
		t.Fatal("the cut-off node served nothing from its block: the test shows nothing")
	}
	t.Logf("cut-off node served %d ids of the dropped table; the new table began at %d", cutServed, fresh[0])
}

// TestNodeScopeIncrementOffset: multi-row REPLACE takes consecutive ids
// of the session's auto_increment_increment/offset from one block, and a
// statement larger than the block takes a block that holds it.
func TestNodeScopeIncrementOffset(t *testing.T) {
	_, svcs, _, _ := nodeCluster(t, 2)
	ctx := context.Background()
	for _, rows := range []int{3, 60} {
		stubs := make([]string, rows)
		for i := range stubs {
			stubs[i] = "a"
		}
		c := replace(stubs...)
		c.Increment, c.Offset = 5, 3
		r, err := svcs[1].Exec(ctx, &c)
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
		if r.InsertID%5 != 3 || r.Affected != uint64(2*rows) || r.LastID != r.InsertID {
			t.Fatalf("%d rows: %+v", rows, r)
		}
	}
	// A new block, one statement: the two statements above were served
	// without going through Raft (the Raft path would set Index).
	id1, _ := next(t, svcs[1], "a")
	id2, _ := next(t, svcs[1], "a")
	if id2 != id1+1 {
		t.Fatalf("increment 1 again: %d then %d", id1, id2)
	}
}

// TestNodeScopePrefetchDroppedWithBlock: past half of its block a node
// takes the next block ahead; an allocation through Raft from the node
// burns that spare too, or the node would go back below the Raft id once
// its block ran out.
func TestNodeScopePrefetchDroppedWithBlock(t *testing.T) {
	c, svcs, _, _ := nodeCluster(t, 2)
	var last uint64
	for range 60 {
		id, err := next(t, svcs[1], "a")
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	for deadline := time.Now().Add(5 * time.Second); c.reservations() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no block taken ahead after 60 of 100 ids")
		}
	}
	b, err := next(t, svcs[1], "b") // through Raft, above both blocks
	if err != nil {
		t.Fatal(err)
	}
	if b <= last+140 {
		t.Fatalf("Raft id %d not above the spare block (last id served %d)", b, last)
	}
	last = b
	for i := range 300 {
		id, err := next(t, svcs[1], "a")
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			t.Fatalf("id %d (#%d) after %d: a burnt block served", id, i, last)
		}
		last = id
	}
}

// TestNodeScopeSequence: a sequence with CACHE 100 and COMMENT
// 'ticketd:scope=node' is served by each node from its own ranges:
// unique across nodes, increasing within each, one Raft command per
// range; SETVAL from a node is followed by that node's next NEXTVAL at
// once, and by another node's once it applies it.
func TestNodeScopeSequence(t *testing.T) {
	c, svcs, _, _ := nodeCluster(t, 3)
	ctx := context.Background()
	def, _, err := ticket.NewSequenceDef("flickr", "s", "", []model.SeqOption{{Kind: model.SeqCache, Value: 100}})
	if err != nil {
		t.Fatal(err)
	}
	def.Comment = "ticketd:scope=node"
	if r, err := svcs[0].Exec(ctx, &model.Command{Op: model.OpCreateSeq, DB: "flickr", Table: "s", Def: def}); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if !strings.Contains(ticket.CreateSequenceStatement(def), " COMMENT='ticketd:scope=node'") {
		t.Fatalf("SHOW CREATE SEQUENCE: %s", ticket.CreateSequenceStatement(def))
	}
	nextval := func(svc *Service) int64 {
		t.Helper()
		r, err := svc.Exec(ctx, &model.Command{Op: model.OpSeqNext, DB: "flickr", Table: "s", Seq: &model.SeqCommand{Count: 1}})
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
		return int64(r.First)
	}
	seen := map[int64]int{}
	last := make([]int64, len(svcs))
	for range 150 {
		for n, svc := range svcs {
			v := nextval(svc)
			if m, dup := seen[v]; dup {
				t.Fatalf("value %d from node %d and node %d", v, m, n)
			}
			if v <= last[n] {
				t.Fatalf("node %d: %d after %d", n, v, last[n])
			}
			seen[v], last[n] = n, v
		}
	}
	st, _ := c.st.Table("flickr", "s")
	// 450 values in ranges of 100: each node took two, so the state's
	// next value is 601 and the leader proposed no NEXTVAL of its own.
	if st.Def.Seq.Next != 601 {
		t.Fatalf("sequence's next value %d after 450 NEXTVALs on 3 nodes in ranges of 100, want 601", st.Def.Seq.Next)
	}
	if r, err := svcs[1].Exec(ctx, &model.Command{Op: model.OpSetVal, DB: "flickr", Table: "s", Seq: &model.SeqCommand{Value: 5000}}); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	for _, n := range []int{1, 2} {
		if v := nextval(svcs[n]); v <= 5000 {
			t.Fatalf("node %d: NEXTVAL %d after SETVAL(s, 5000)", n, v)
		}
	}
}

// TestNodeScopeTryExec: TryExec answers from a loaded block without
// waiting, in the same order as Exec, and declines what needs a wait or
// another path (no block yet, a new stub, a global table).
func TestNodeScopeTryExec(t *testing.T) {
	_, svcs, _, _ := nodeCluster(t, 2)
	c := replace("a")
	if _, ok := svcs[1].TryExec(&c); ok {
		t.Fatal("TryExec answered before the node had a block")
	}
	first, err := next(t, svcs[1], "a")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := svcs[1].TryExec(&c)
	if !ok || r.InsertID != first+1 || r.LastID != first+1 || r.Affected != 2 {
		t.Fatalf("TryExec after %d: %+v %v", first, r, ok)
	}
	if id, _ := next(t, svcs[1], "a"); id != first+2 {
		t.Fatalf("Exec after TryExec: %d, want %d", id, first+2)
	}
	b := replace("b")
	if _, ok := svcs[1].TryExec(&b); ok {
		t.Fatal("TryExec answered a REPLACE of a stub without a row")
	}
	global, _, _ := cachedService(t, 100)
	if _, err := next(t, global, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := global.TryExec(&c); ok {
		t.Fatal("TryExec answered for a global table")
	}
}

// oldLeader answers a node's range request for a sequence as a leader of
// an earlier build did: one value from its cache, no range (Matched 0).
type oldLeader struct{ *nodeView }

func (o oldLeader) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	out, err := o.nodeView.Propose(ctx, cmds)
	for i := range cmds {
		if err == nil && cmds[i].Op == model.OpSeqNext && out[i].Err == nil {
			out[i] = model.Result{First: out[i].First}
		}
	}
	return out, err
}

// TestNodeScopeSequenceOldLeader: a range request answered with one
// value is that NEXTVAL's answer, never a range to serve again.
func TestNodeScopeSequenceOldLeader(t *testing.T) {
	_, svcs, views, _ := nodeCluster(t, 2)
	ctx := context.Background()
	def, _, err := ticket.NewSequenceDef("flickr", "s", "", []model.SeqOption{{Kind: model.SeqCache, Value: 100}})
	if err != nil {
		t.Fatal(err)
	}
	def.Comment = "ticketd:scope=node"
	if r, err := svcs[0].Exec(ctx, &model.Command{Op: model.OpCreateSeq, DB: "flickr", Table: "s", Def: def}); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	old := oldLeader{views[1]}
	svc := NewService(old, old, Config{Leadership: &fakeLead{term: 1}}, nil)
	t.Cleanup(svc.Close)
	seen := map[uint64]bool{}
	for range 5 {
		r, err := svc.Exec(ctx, &model.Command{Op: model.OpSeqNext, DB: "flickr", Table: "s", Seq: &model.SeqCommand{Count: 1}})
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
		if seen[r.First] {
			t.Fatalf("value %d twice", r.First)
		}
		seen[r.First] = true
	}
}

// TestNodeScopeServerCache: 'ticketd:scope=node' without a size takes the
// server's --cache (Config.Cache) as its block size; without either, the
// table is served through Raft as before.
func TestNodeScopeServerCache(t *testing.T) {
	for _, tc := range []struct {
		cache    uint64
		reserves int
	}{{50, 3}, {0, 0}} {
		c := &clusterRepl{st: ticket.NewMemStore()}
		v := &nodeView{c: c}
		svc := NewService(v, v, Config{Cache: tc.cache, Leadership: &fakeLead{term: 1}}, nil)
		t.Cleanup(svc.Close)
		def := tickets64("flickr", "T")
		def.Comment = "ticketd:scope=node"
		ctx := context.Background()
		for _, cmd := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: def}} {
			if r, err := svc.Exec(ctx, &cmd); err != nil || r.Err != nil {
				t.Fatalf("%v: %v %v", &cmd, err, r.Err)
			}
		}
		var last uint64
		for range 101 {
			id, err := next(t, svc, "a")
			if err != nil || id <= last {
				t.Fatalf("--cache %d: id %d after %d (%v)", tc.cache, id, last, err)
			}
			last = id
		}
		// --cache 50: the first REPLACE through Raft, then 100 ids in
		// blocks of 50, and one more taken ahead.
		if n := c.reservations(); n < tc.reserves-1 || n > tc.reserves {
			t.Fatalf("--cache %d: %d reservations for 101 REPLACEs, want %d-%d", tc.cache, n, tc.reserves-1, tc.reserves)
		}
	}
}
