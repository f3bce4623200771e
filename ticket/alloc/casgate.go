package alloc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Compare-and-set UPDATEs on the leader: a row lock's queue, for Tinyid.
//
// Tinyid moves a segment with an optimistic loop inside a transaction:
// SELECT the row, UPDATE ... WHERE id = ? AND max_id = ? AND version = ?,
// again if no row matched (three tries), then COMMIT. On InnoDB the
// winner's UPDATE holds the row lock until its COMMIT is durable; the
// others, who read the row before that, queue on the lock and learn they
// lost one at a time, each just after a commit, so each retries alone
// and wins (measured, 16 clients: every fetch won at its second attempt).
// Through Raft without help, the losers of one commit all learn it at
// the next, retry together, read the same row and lose together again:
// a third of the fetches gave up.
//
// So the leader keeps, per row, what the lock queue does. It counts the
// row-table writes it has proposed and not seen applied: per row for
// UPDATEs of one row by its whole primary key, per table for the table's
// other writes. A compare-and-set
// (an UPDATE of one row by primary key whose WHERE says more than the
// key) that finds nothing ahead of it goes on at once; otherwise it
// waits in the row's queue. Going on, it reads the row as a read of the
// same moment would (WaitRead: every acknowledged write applied, this
// node still leading): if its WHERE matches nothing and warned of
// nothing, it would match nothing in the log either (nothing is in flight
// ahead of it), and it is answered at once, 0 rows matched, without an
// entry; otherwise it is proposed. When a write of the row applies, the
// queue's head goes on; when a head is answered "nothing matched", the
// next waits for the next write of the row to apply, or a grace
// (casGrace, casGraceFar through a follower), so that the loser's retry,
// which has now read the winner's row, finds nothing ahead of it. No answer differs from what the log would give;
// only when it comes.
//
// Correctness does not rest on the counts. An UPDATE that matches nothing
// changes nothing, so answering it from a read that sees every write
// acknowledged before it (WaitRead) is what the log would answer at that
// moment, whatever else is in flight; the counts only choose the moment,
// so that the read comes after the writes ahead of it. That is also why
// forwarded batches are counted but not queued, and ticket tables' writes
// not at all.

const (
	// casGrace is how long a row's queue waits after answering a lost
	// compare-and-set before it lets the next one go on, unless a write
	// of the row applies first: time for the loser's client to read the
	// row again and retry.
	casGrace = 5 * time.Millisecond
	// casGraceFar is casGrace for a loser whose client is on a
	// follower: its retry's SELECT asks this node for the read index
	// and waits for the follower to apply it (p50 5.5 ms, p90 7.6 ms
	// measured, three nodes on one 2-core machine, 16 clients), and
	// its UPDATE comes forwarded.
	casGraceFar = 20 * time.Millisecond
	// casWait bounds a compare-and-set's wait in the queue. Past it the
	// UPDATE is proposed as any other, and the log decides.
	casWait = time.Second
)

// ReadWaiter is the read barrier the leader takes before answering a
// compare-and-set from its own state.
type ReadWaiter interface {
	// WaitRead waits until the local state holds every write
	// acknowledged before the call, confirming that this node still
	// leads when it does.
	WaitRead(ctx context.Context) error
}

// rowRef names one row of a table by its clustering key.
type rowRef struct {
	db, table, pk string
}

// rowQueue is one row's writes in flight and compare-and-sets waiting.
type rowQueue struct {
	busy    int // writes of the row in flight (a compare-and-set going on included)
	waiters []chan struct{}
	// grace: the row is kept for owner, the session whose
	// compare-and-set lost last, until it retries or casGrace passes
	// (graceGen tells the timer of that grace from a later one's).
	grace    bool
	graceGen uint64
	owner    uint64
}

// inFlight counts the leader's row-table writes between proposal and
// apply, and queues compare-and-sets behind them.
type inFlight struct {
	mu     sync.Mutex
	rows   map[rowRef]*rowQueue
	tables map[tableKey]int
	// grace, graceFar and wait are casGrace, casGraceFar and casWait
	// (tests change them).
	grace, graceFar, wait time.Duration
}

func newInFlight() *inFlight {
	return &inFlight{rows: map[rowRef]*rowQueue{}, tables: map[tableKey]int{}, grace: casGrace, graceFar: casGraceFar, wait: casWait}
}

// writeScope is what a row-table write may change: one row, or its
// table.
type writeScope struct {
	row   rowRef
	isRow bool
	table tableKey
}

func (f *inFlight) add(s writeScope) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.isRow {
		f.queue(s.row).busy++
	} else {
		f.tables[s.table]++
	}
}

// done ends a write that add (or acquire) counted. lost says it was a
// compare-and-set of owner answered "nothing matched" without an entry,
// far that the owner's client is on a follower.
func (f *inFlight) done(s writeScope, lost bool, owner uint64, far bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !s.isRow {
		if f.tables[s.table]--; f.tables[s.table] <= 0 {
			delete(f.tables, s.table)
			f.releaseAll()
		}
		return
	}
	q := f.rows[s.row]
	q.busy--
	switch {
	case q.busy > 0:
	case lost:
		// Keep the row for the loser's retry (see acquire).
		q.grace, q.owner = true, owner
		q.graceGen++
		gen := q.graceGen
		grace := f.grace
		if far {
			grace = f.graceFar
		}
		time.AfterFunc(grace, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if q.graceGen == gen && q.grace {
				q.grace, q.owner = false, 0
				f.release(s.row)
			}
		})
	default:
		f.release(s.row)
	}
}

func (f *inFlight) queue(r rowRef) *rowQueue {
	q := f.rows[r]
	if q == nil {
		q = &rowQueue{}
		f.rows[r] = q
	}
	return q
}

// clear reports whether nothing a compare-and-set of r reads is in
// flight. f.mu is held.
func (f *inFlight) clear(r rowRef, q *rowQueue) bool {
	return q.busy == 0 && f.tables[tableKey{r.db, r.table}] == 0
}

// release lets the head of r's queue go on when nothing is ahead of it,
// and forgets an idle row. f.mu is held.
func (f *inFlight) release(r rowRef) {
	q := f.rows[r]
	if q == nil {
		return
	}
	if len(q.waiters) > 0 && !q.grace && f.clear(r, q) {
		q.busy++
		close(q.waiters[0])
		q.waiters = q.waiters[1:]
	}
	if q.busy == 0 && len(q.waiters) == 0 && !q.grace {
		delete(f.rows, r)
	}
}

// releaseAll is release of every row with a queue. f.mu is held.
func (f *inFlight) releaseAll() {
	for r, q := range f.rows {
		if len(q.waiters) > 0 {
			f.release(r)
		}
	}
}

// acquire counts owner's compare-and-set of r in flight, at once when
// nothing it reads is and the row is not kept for another session, else
// when its turn in r's queue comes (casWait and ctx bound the wait). It
// reports whether it went on with nothing ahead. Owner 0 is a session
// the leader cannot tell from others (a forward from an older build).
func (f *inFlight) acquire(ctx context.Context, r rowRef, owner uint64) bool {
	f.mu.Lock()
	q := f.queue(r)
	if f.clear(r, q) && (!q.grace || q.owner == owner) {
		q.busy++
		q.grace, q.owner = false, 0
		f.mu.Unlock()
		return true
	}
	turn := make(chan struct{})
	q.waiters = append(q.waiters, turn)
	f.mu.Unlock()
	timer := time.NewTimer(f.wait)
	defer timer.Stop()
	select {
	case <-turn:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-turn:
		return true // released meanwhile: counted already
	default:
	}
	for i, w := range q.waiters {
		if w == turn {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			break
		}
	}
	q.busy++
	return false
}

// scopeOf is what the row-table write c may change on t, the table it
// names (nil: none found), and whether c is a compare-and-set of one row.
func scopeOf(c *model.Command, t *model.Table) (s writeScope, cas bool) {
	s.table = tableKey{c.DB, c.Table}
	if c.Op != model.OpUpdate || t == nil || t.Def.Rows == nil || c.Rows == nil || !c.Rows.Engine || c.Rows.Filter == nil {
		return s, false
	}
	a := rowengine.ApplyAccess(t, c.Rows.Filter, c.Rows.OrderBy, c.Rows.HasLimit, rowengine.StatementNow(c))
	if !a.Point || a.Index != rowengine.ClusterIndex {
		return s, false
	}
	s.row, s.isRow = rowRef{c.DB, c.Table, a.Lo}, true
	pk := 0
	for _, k := range t.Def.Rows.Keys {
		if k.Primary {
			pk = len(k.Cols)
		}
	}
	var buf [8]*model.RowExpr
	return s, len(rowengine.Conjuncts(c.Rows.Filter, buf[:0])) > pk
}

// matchesNothing reports whether the row UPDATE c would match no row of
// st and warn of nothing: then applying it changes nothing and answers
// Result{} (rowengine.UpdateMatchesNothing). Only the engine's own form
// is answered so; an older build's is proposed.
func matchesNothing(st ticket.Store, c *model.Command) bool {
	t, err := st.Table(c.DB, c.Table)
	if err != nil || t == nil || t.Def.Rows == nil || c.Rows.Assigns == nil || c.Rows.Filter == nil {
		return false
	}
	return rowengine.UpdateMatchesNothing(st, t, c)
}

// leads reports whether this node leads now.
func (s *Service) leads() bool {
	_, l := s.lead.LeaderTerm()
	return l
}

// tracks reports whether the leader counts c in flight: a write of a row
// table in the engine's form (a ticket table's has no Rows; an older
// build's row command is left out, which costs only the wait).
func (s *Service) tracks(c *model.Command) bool {
	switch c.Op {
	case model.OpInsert, model.OpUpdate, model.OpDelete:
		return s.flight != nil && c.Rows != nil && s.leads()
	}
	return false
}

// scope is scopeOf c on the table it names in the local state.
func (s *Service) scope(c *model.Command) (writeScope, bool) {
	var t *model.Table
	if c.Op == model.OpUpdate && c.Rows != nil && c.Rows.Engine {
		_ = s.read.View(func(st ticket.Store) error {
			t, _ = st.Table(c.DB, c.Table)
			return nil
		})
	}
	return scopeOf(c, t)
}

// tracked proposes c, which tracks, counting it in flight while it
// runs. A compare-and-set of one row takes its turn in the row's queue
// and is answered from the state when it matches nothing.
func (s *Service) tracked(ctx context.Context, c *model.Command, owner uint64, far bool, from origin) (model.Result, error) {
	scope, cas := s.scope(c)
	if !cas {
		s.flight.add(scope)
		defer s.flight.done(scope, false, 0, false)
		return s.b.exec(ctx, c, from)
	}
	lost := false
	defer func() {
		s.flight.done(scope, lost, owner, far)
		s.obs.CompareAndSet(lost)
	}()
	if s.flight.acquire(ctx, scope.row, owner) && s.readWait.WaitRead(ctx) == nil {
		_ = s.read.View(func(st ticket.Store) error {
			lost = matchesNothing(st, c)
			return nil
		})
		if lost {
			return model.Result{}, nil
		}
	}
	return s.b.exec(ctx, c, from)
}

// forwardsAlone reports whether this node, following, forwards c in a
// batch of its own: a compare-and-set, which the leader then queues for
// its row without holding back other sessions' answers.
func (s *Service) forwardsAlone(c *model.Command) bool {
	if s.flight == nil || c.Op != model.OpUpdate || c.Rows == nil || !c.Rows.Engine || s.leads() {
		return false
	}
	_, cas := s.scope(c)
	return cas
}

// alone proposes c in a batch of its own, naming owner to the leader.
func (s *Service) alone(ctx context.Context, c *model.Command, owner uint64) (model.Result, error) {
	res, err := s.b.direct(WithCASOwner(ctx, owner), []*model.Command{c}, fromSession)
	if err != nil {
		return model.Result{}, err
	}
	if len(res) != 1 {
		return model.Result{}, fmt.Errorf("ticket: %d results for 1 command: %w", len(res), ticket.ErrUncertain)
	}
	return res[0], nil
}

type casOwnerKey struct{}

// WithCASOwner returns ctx naming owner, the session whose compare-and-set
// a proposal carries: a follower's Replicator forwards it with the batch,
// and the leader's forward handler puts it back into the context it
// gives ExecBatch.
func WithCASOwner(ctx context.Context, owner uint64) context.Context {
	if owner == 0 {
		return ctx
	}
	return context.WithValue(ctx, casOwnerKey{}, owner)
}

// CASOwner is the owner WithCASOwner put into ctx, or 0.
func CASOwner(ctx context.Context) uint64 {
	o, _ := ctx.Value(casOwnerKey{}).(uint64)
	return o
}
