package alloc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// tinySpec is Tinyid's tiny_id_info, the columns its compare-and-set
// reads.
func tinySpec() *model.TableSpec {
	return &model.TableSpec{DB: "ids", Name: "tiny_id_info", Columns: []model.ColumnSpec{
		{Name: "id", Type: "bigint", NotNull: true},
		{Name: "max_id", Type: "bigint", NotNull: true},
		{Name: "version", Type: "bigint", NotNull: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}}}
}

func colIs(col string, v int64) model.RowExpr {
	val := num(v)
	return model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: col}, {Op: model.EVal, Val: &val}}}
}

// casUpdate is Tinyid's UPDATE: max_id moves to newMax where id, max_id
// and version are as read.
func casUpdate(id, maxID, version, newMax int64) model.Command {
	v := num(newMax)
	filter := model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{
		{Op: model.EAnd, Args: []model.RowExpr{colIs("id", id), colIs("max_id", maxID)}},
		colIs("version", version),
	}}
	one := num(1)
	return model.Command{Op: model.OpUpdate, DB: "ids", Table: "tiny_id_info", Rows: &model.RowsCommand{Engine: true, Filter: &filter,
		Assigns: []model.RowAssign{{Col: "max_id", Expr: model.RowExpr{Op: model.EVal, Val: &v}},
			{Col: "version", Expr: model.RowExpr{Op: model.EAdd, Args: []model.RowExpr{{Op: model.ECol, Col: "version"}, {Op: model.EVal, Val: &one}}}}}}}
}

// countingRepl is localRepl that counts the commands proposed.
type countingRepl struct {
	localRepl
	proposed int
	owner    uint64 // the last proposal's CASOwner
}

func (c *countingRepl) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	c.mu.Lock()
	c.proposed += len(cmds)
	c.owner = CASOwner(ctx)
	c.mu.Unlock()
	return c.localRepl.Propose(ctx, cmds)
}

func (c *countingRepl) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proposed
}

// casObs counts CompareAndSet reports.
type casObs struct {
	nopObserver
	mu             sync.Mutex
	lost, proposed int
}

func (o *casObs) CompareAndSet(lost bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if lost {
		o.lost++
	} else {
		o.proposed++
	}
}

type countingReads struct {
	mu sync.Mutex
	n  int
}

func (r *countingReads) WaitRead(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return nil
}

// TestCASLostAnsweredWithoutEntry: on the leader, a compare-and-set that
// matches nothing is answered from a read barrier and the state, with
// nothing proposed; one that matches, a plain UPDATE by key, and any on a
// follower go through the log, and each answers as the log does.
func TestCASLostAnsweredWithoutEntry(t *testing.T) {
	st := rowStore(t, tinySpec())
	mustApply(t, st, &model.Command{Op: model.OpInsert, DB: "ids", Table: "tiny_id_info", Columns: []string{"id", "max_id", "version"},
		Values: [][]model.Value{{num(1), num(100), num(7)}}})
	repl := &countingRepl{localRepl: localRepl{st: st}}
	lead := &fakeLead{term: 1, leader: true}
	reads := &countingReads{}
	obs := &casObs{}
	svc := NewService(repl, repl, Config{Leadership: lead, Reads: reads, Observer: obs}, nil)
	t.Cleanup(svc.Close)
	ctx := context.Background()

	for _, tc := range []struct {
		name              string
		cmd               model.Command
		leader            bool
		matched, proposed int
		reads             int
	}{
		{"lost", casUpdate(1, 100, 6, 200), true, 0, 0, 1},
		{"no such row", casUpdate(2, 100, 7, 200), true, 0, 0, 1},
		{"won", casUpdate(1, 100, 7, 200), true, 1, 1, 1},
		{"lost on a follower", casUpdate(1, 100, 7, 300), false, 0, 1, 0},
		{"won on a follower", casUpdate(1, 200, 8, 300), false, 1, 1, 0},
	} {
		lead.set(1, tc.leader, nil)
		before, beforeReads := repl.count(), reads.n
		who := ticket.NewSession(1, 1)
		r, err := svc.ExecFor(ctx, who, &tc.cmd)
		if err != nil || r.Err != nil {
			t.Fatalf("%s: %v %v", tc.name, err, r.Err)
		}
		if !tc.leader && repl.owner != who.CASOwner() {
			// Forwarded alone, naming the session for the leader's queue.
			t.Errorf("%s: proposed as owner %d, want the session's %d", tc.name, repl.owner, who.CASOwner())
		}
		if r.Matched != uint64(tc.matched) || repl.count()-before != tc.proposed || reads.n-beforeReads != tc.reads {
			t.Errorf("%s: matched %d, proposed %d, read barriers %d; want %d, %d, %d", tc.name,
				r.Matched, repl.count()-before, reads.n-beforeReads, tc.matched, tc.proposed, tc.reads)
		}
	}
	if obs.lost != 2 || obs.proposed != 1 {
		t.Errorf("reported %d lost, %d proposed; want the leader's 2 and 1", obs.lost, obs.proposed)
	}
	lead.set(1, true, nil)
	// An UPDATE by the key alone cannot lose: it is proposed.
	v := num(5)
	plain := model.Command{Op: model.OpUpdate, DB: "ids", Table: "tiny_id_info", Rows: &model.RowsCommand{Engine: true,
		Filter: func() *model.RowExpr { x := colIs("id", 9); return &x }(), Assigns: []model.RowAssign{{Col: "max_id", Expr: model.RowExpr{Op: model.EVal, Val: &v}}}}}
	before := repl.count()
	if r, err := svc.ExecFor(ctx, nil, &plain); err != nil || r.Err != nil || r.Matched != 0 || repl.count() != before+1 {
		t.Errorf("plain UPDATE of a missing row: %+v %v, proposed %d", r, err, repl.count()-before)
	}
	if got, want := rowText(t, st, "ids", "tiny_id_info"), "1|300|9\n"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
}

// acquireAsync starts who's compare-and-set of r; its channel says
// whether it went on with nothing ahead.
func acquireAsync(f *inFlight, r rowRef, who uint64) chan bool {
	got := make(chan bool, 1)
	go func() { got <- f.acquire(context.Background(), r, who) }()
	return got
}

// waitTurn checks that the compare-and-set went on (want) or still waits
// (!want) within the time given.
func waitTurn(t *testing.T, name string, got chan bool, want bool, within time.Duration) {
	t.Helper()
	select {
	case ok := <-got:
		if !want {
			t.Fatalf("%s went on (nothing ahead %v), want it to wait", name, ok)
		}
		if !ok {
			t.Fatalf("%s went on past its wait, want its turn", name)
		}
	case <-time.After(within):
		if want {
			t.Fatalf("%s still waits after %v", name, within)
		}
	}
}

// TestCASQueue: a row's compare-and-sets wait for the writes of the row
// in flight, one goes on when one applies, and after a lost one the row
// is kept for the loser's retry until the grace passes.
func TestCASQueue(t *testing.T) {
	f := newInFlight()
	f.grace, f.graceFar = time.Hour, time.Hour
	r := rowRef{"ids", "t", "k1"}
	a, b, c := uint64(1), uint64(2), uint64(3)
	if !f.acquire(context.Background(), r, a) {
		t.Fatal("first compare-and-set of an idle row waited")
	}
	gotB := acquireAsync(f, r, b)
	waitTurn(t, "B behind A in flight", gotB, false, 20*time.Millisecond)
	f.done(writeScope{row: r, isRow: true}, false, a, false) // A applied
	waitTurn(t, "B after A applied", gotB, true, time.Second)
	f.done(writeScope{row: r, isRow: true}, true, b, false) // B lost: answered at once
	gotC := acquireAsync(f, r, c)
	waitTurn(t, "C while the row is kept for B", gotC, false, 20*time.Millisecond)
	if !f.acquire(context.Background(), r, b) {
		t.Fatal("B's retry waited")
	}
	waitTurn(t, "C behind B's retry in flight", gotC, false, 20*time.Millisecond)
	f.done(writeScope{row: r, isRow: true}, false, b, false) // B won
	waitTurn(t, "C after B's retry applied", gotC, true, time.Second)

	// Nobody retries: the next waiter goes on after the grace.
	f.grace = 30 * time.Millisecond
	f.done(writeScope{row: r, isRow: true}, true, c, false) // C lost, and gives up
	gotA := acquireAsync(f, r, a)
	waitTurn(t, "A during C's grace", gotA, false, 10*time.Millisecond)
	waitTurn(t, "A after C's grace", gotA, true, time.Second)
	// A loser on a follower is given longer.
	f.graceFar = 200 * time.Millisecond
	f.done(writeScope{row: r, isRow: true}, true, a, true)
	gotC = acquireAsync(f, r, c)
	waitTurn(t, "C during A's grace through a follower", gotC, false, 100*time.Millisecond)
	waitTurn(t, "C after A's grace through a follower", gotC, true, time.Second)
	f.done(writeScope{row: r, isRow: true}, false, c, false)

	// Other writes of the table hold a compare-and-set back too; past
	// its wait it goes on anyway, reporting that something was ahead.
	tbl := writeScope{table: tableKey{"ids", "t"}}
	f.add(tbl)
	gotB = acquireAsync(f, r, b)
	waitTurn(t, "B behind an INSERT in flight", gotB, false, 20*time.Millisecond)
	f.done(tbl, false, 0, false)
	waitTurn(t, "B after the INSERT applied", gotB, true, time.Second)
	f.done(writeScope{row: r, isRow: true}, false, b, false)
	f.wait = 20 * time.Millisecond
	f.add(tbl)
	if f.acquire(context.Background(), r, b) {
		t.Fatal("B went on with an INSERT in flight, want it past its wait")
	}
	f.done(writeScope{row: r, isRow: true}, false, b, false)
	f.done(tbl, false, 0, false)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rows) != 0 || len(f.tables) != 0 {
		t.Fatalf("idle counts left: rows %v tables %v", f.rows, f.tables)
	}
}
