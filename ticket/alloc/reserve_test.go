package alloc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// localRepl applies batches straight to a MemStore: replication without
// Raft, for testing the Service.
type localRepl struct {
	mu       sync.Mutex
	st       *ticket.MemStore
	reserves int
	keyOps   map[model.KeyOp]int // key commands committed, by op
}

func (l *localRepl) Propose(_ context.Context, cmds []model.Command) ([]model.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		if cmds[i].Op == model.OpReserve {
			l.reserves++
		}
		if k := cmds[i].Key; k != nil {
			if l.keyOps == nil {
				l.keyOps = map[model.KeyOp]int{}
			}
			l.keyOps[k.Op]++
		}
		r, err := ticket.Apply(l.st, &cmds[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (l *localRepl) View(fn func(ticket.Store) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fn(l.st)
}

// fakeLead is a leadership that tests move between terms.
type fakeLead struct {
	mu        sync.Mutex
	term      uint64
	leader    bool
	verifyErr error
	verifies  int
}

func (f *fakeLead) LeaderTerm() (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.term, f.leader
}

func (f *fakeLead) VerifyLeader(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verifies++
	if !f.leader {
		return f.term, ticket.ErrNoQuorum
	}
	return f.term, f.verifyErr
}

func (f *fakeLead) set(term uint64, leader bool, verifyErr error) {
	f.mu.Lock()
	f.term, f.leader, f.verifyErr = term, leader, verifyErr
	f.mu.Unlock()
}

func cachedService(t *testing.T, cache uint64) (*Service, *localRepl, *fakeLead) {
	t.Helper()
	repl := &localRepl{st: ticket.NewMemStore()}
	lead := &fakeLead{term: 1, leader: true}
	svc := NewService(repl, repl, Config{Cache: cache, Leadership: lead}, nil)
	t.Cleanup(svc.Close)
	ctx := context.Background()
	for _, c := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: tickets64("flickr", "T")}} {
		if r, err := svc.Exec(ctx, &c); err != nil || r.Err != nil {
			t.Fatalf("%v: %v %v", &c, err, r.Err)
		}
	}
	return svc, repl, lead
}

func next(t *testing.T, svc *Service, stubs ...string) (uint64, error) {
	t.Helper()
	c := replace(stubs...)
	r, err := svc.Exec(context.Background(), &c)
	if err == nil && r.Err != nil {
		err = r.Err
	}
	return r.InsertID, err
}

func TestReservationServesFromMemory(t *testing.T) {
	svc, repl, _ := cachedService(t, 100)
	var last uint64
	for i := 0; i < 250; i++ {
		id, err := next(t, svc, "a")
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			t.Fatalf("id %d after %d", id, last)
		}
		last = id
	}
	// The first REPLACE creates the row through Raft; the rest come from
	// ranges of 100.
	if repl.reserves < 2 || repl.reserves > 4 {
		t.Fatalf("%d reservations for 250 ids with cache 100", repl.reserves)
	}
	tb, _ := repl.st.Table("flickr", "T")
	if tb.AutoInc <= last {
		t.Fatalf("committed counter %d not above the last id served %d", tb.AutoInc, last)
	}
	// A multi-row REPLACE answers as MySQL does: affected 2 per existing row.
	c := replace("a", "a", "a")
	r, err := svc.Exec(context.Background(), &c)
	if err != nil || r.Affected != 6 || r.InsertID != last+1 {
		t.Fatalf("multi-row from range: %+v %v (last %d)", r, err, last)
	}
}

func TestReservationDroppedOnTermChange(t *testing.T) {
	svc, repl, lead := cachedService(t, 1000)
	if _, err := next(t, svc, "a"); err != nil {
		t.Fatal(err)
	}
	a, _ := next(t, svc, "a")
	// Another leader (term 2) took over and allocated through Raft, then
	// this node leads again in term 3: its old range must not be reused.
	lead.set(2, false, nil)
	other := replace("a")
	repl.Propose(context.Background(), []model.Command{{Op: model.OpReserve, DB: "flickr", Table: "T", Count: 1000}, other})
	tb, _ := repl.st.Table("flickr", "T")
	otherMax := tb.AutoInc - 1
	if _, err := next(t, svc, "a"); err != nil {
		t.Fatalf("follower path: %v", err) // not leader: through Raft
	}
	lead.set(3, true, nil)
	b, err := next(t, svc, "a")
	if err != nil {
		t.Fatal(err)
	}
	if b <= otherMax || b <= a {
		t.Fatalf("id %d after the other leader's %d: an old range was reused", b, otherMax)
	}
}

func TestReservationRefusesWhenVerifyFails(t *testing.T) {
	svc, _, lead := cachedService(t, 1000)
	next(t, svc, "a")
	a, err := next(t, svc, "a")
	if err != nil {
		t.Fatal(err)
	}
	lead.set(1, true, ticket.ErrNoQuorum)
	if id, err := next(t, svc, "a"); !errors.Is(err, ticket.ErrNoQuorum) || id != 0 {
		t.Fatalf("deposed leader answered %d, %v", id, err)
	}
	lead.set(1, true, nil)
	b, err := next(t, svc, "a")
	if err != nil || b <= a+1 {
		t.Fatalf("after a failed verify: %d %v; the burnt id %d must not come back", b, err, a+1)
	}
}

func TestRaftAllocationDropsRange(t *testing.T) {
	svc, _, _ := cachedService(t, 1000)
	next(t, svc, "a")
	a, _ := next(t, svc, "a")
	// A new stub goes through Raft (it needs a row) and gets an id above
	// the range; the range must not serve below it afterwards.
	b, err := next(t, svc, "b")
	if err != nil || b <= a {
		t.Fatalf("new stub: %d %v", b, err)
	}
	c, err := next(t, svc, "a")
	if err != nil || c <= b {
		t.Fatalf("id %d after the Raft-path id %d", c, b)
	}
}

// TestReservationConcurrent runs allocations from many goroutines while
// terms change and checks the history: unique ids, and each id above
// every id returned before its call.
func TestReservationConcurrent(t *testing.T) {
	svc, _, lead := cachedService(t, 50)
	next(t, svc, "a")
	type op struct {
		call, ret time.Time
		id        uint64
	}
	var mu sync.Mutex
	var ops []op
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 16; g++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				call := time.Now()
				id, err := next(t, svc, "a")
				ret := time.Now()
				if err == nil {
					mu.Lock()
					ops = append(ops, op{call, ret, id})
					mu.Unlock()
				}
			}
		})
	}
	for term := uint64(2); term < 40; term++ {
		time.Sleep(2 * time.Millisecond)
		lead.set(term, term%3 != 0, nil)
	}
	lead.set(100, true, nil)
	time.Sleep(5 * time.Millisecond)
	close(stop)
	wg.Wait()
	seen := map[uint64]bool{}
	for _, o := range ops {
		if seen[o.id] {
			t.Fatalf("duplicate id %d", o.id)
		}
		seen[o.id] = true
	}
	byCall := slices.Clone(ops)
	slices.SortFunc(byCall, func(a, b op) int { return a.call.Compare(b.call) })
	byRet := slices.Clone(ops)
	slices.SortFunc(byRet, func(a, b op) int { return a.ret.Compare(b.ret) })
	var maxBefore op
	j := 0
	for _, o := range byCall {
		for ; j < len(byRet) && byRet[j].ret.Before(o.call); j++ {
			if byRet[j].id > maxBefore.id {
				maxBefore = byRet[j]
			}
		}
		if o.id <= maxBefore.id {
			t.Fatalf("id %d (called %v) not above id %d returned earlier (%v)", o.id, o.call, maxBefore.id, maxBefore.ret)
		}
	}
	if len(ops) < 100 {
		t.Fatalf("only %d allocations succeeded", len(ops))
	}
}

// TestExecBatch runs a follower's batch on the leader: REPLACEs of an
// existing stub come from the range, a new stub goes through Raft, and
// every id is unique.
func TestExecBatch(t *testing.T) {
	svc, _, _ := cachedService(t, 100)
	first, err := next(t, svc, "a")
	if err != nil {
		t.Fatal(err)
	}
	cmds := []model.Command{replace("a"), replace("b"), replace("a", "a")}
	res, err := svc.ExecBatch(context.Background(), cmds)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{first: true}
	for i, r := range res {
		if r.Err != nil || r.InsertID == 0 {
			t.Fatalf("command %d: %+v", i, r)
		}
		for id := r.InsertID; id < r.InsertID+uint64(len(cmds[i].Values)); id++ {
			if seen[id] {
				t.Fatalf("id %d twice", id)
			}
			seen[id] = true
		}
	}
	if res[1].Affected != 1 || res[2].Affected != 4 {
		t.Fatalf("affected rows %d (new stub) and %d (two existing), want 1 and 4", res[1].Affected, res[2].Affected)
	}
}

// TestReservationAtTypeMax: a range that ends at 2^64-1 hands that id out
// once, then the table is exhausted (167), never wrapping to 1.
func TestReservationAtTypeMax(t *testing.T) {
	svc, _, _ := cachedService(t, 100)
	ctx := context.Background()
	next(t, svc, "a")
	alter := model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasAutoInc: true, AutoInc: ^uint64(0) - 2}
	if r, err := svc.Exec(ctx, &alter); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	var got []uint64
	for range 5 {
		id, err := next(t, svc, "a")
		if err != nil {
			var e *model.Error
			if !errors.As(err, &e) || e.Code != mysqlerr.CodeAutoincRange {
				t.Fatalf("after %v: %v, want error 167", got, err)
			}
			continue
		}
		got = append(got, id)
	}
	want := []uint64{^uint64(0) - 2, ^uint64(0) - 1, ^uint64(0)}
	if !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v and then 167", got, want)
	}
}

// TestReservationLargeIncrement: a multi-row REPLACE whose ids, at the
// session's increment, span more than the cache gets a range that holds
// them (a range of only max(cache, 2n) never did, and the request
// reserved range after range until its context ended).
func TestReservationLargeIncrement(t *testing.T) {
	svc, _, _ := cachedService(t, 100)
	if _, err := next(t, svc, "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := replace("a", "a", "a")
	c.Increment, c.Offset = 1000, 7
	r, err := svc.Exec(ctx, &c)
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if r.InsertID%1000 != 7 || r.Affected != 6 {
		t.Fatalf("%+v", r)
	}
}
