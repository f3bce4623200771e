package alloc

import (
	"context"
	"fmt"
	"strings"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// Leadership is what range reservation needs from replication: whether
// this node leads, in which term, and a quorum's confirmation of it.
type Leadership interface {
	// LeaderTerm reports the current term and whether this node leads it.
	LeaderTerm() (term uint64, leader bool)
	// VerifyLeader confirms with a quorum, started after the call, that
	// this node still leads; it returns the term it leads.
	VerifyLeader(ctx context.Context) (term uint64, err error)
}

// reservations serve REPLACE on tables with a cache (range reservation,
// DESIGN §4): the leader commits "ids First..Last are mine" through Raft
// once, then hands them out from memory. Three rules keep ids unique and
// strictly increasing in real time:
//
//   - a range belongs to the term that reserved it and is dropped, never
//     reused, when the term or leadership changes;
//   - every answer waits for a quorum round that started after its ids
//     were assigned (VerifyLeader), so a deposed leader cannot answer;
//   - any allocation of the table through Raft drops the range first:
//     that allocation takes ids above the range, and later ids from the
//     range would go backwards.
//
// The table's row (stub → id) is not rewritten for ids served from a
// range; it holds the last id written through Raft.
type reservations struct {
	lead     Leadership
	read     ticket.Reader
	propose  proposeFunc
	defCache uint64
	verifier verifier
	tables   entries[tableKey, reservation]
	obs      Observer
}

// reservation is one table's range, valid in its term.
type reservation struct {
	termSlot
	next uint64 // lowest id position not handed out
	last uint64 // last reserved id; next > last means empty
	// noCache marks a table without a cache in term; no range is kept.
	noCache bool
	def     model.TableDef
	stubs   map[string]bool // folded stubs with a row: REPLACE of them affects 2
}

func newReservations(lead Leadership, read ticket.Reader, defCache uint64, propose proposeFunc) *reservations {
	return &reservations{
		lead: lead, read: read, propose: propose, defCache: defCache,
		verifier: verifier{lead: lead}, obs: nopObserver{},
	}
}

// tableKey names a table without building a string on the hot path.
type tableKey struct{ db, table string }

// drop invalidates a table's range before an allocation through Raft.
func (rs *reservations) drop(db, table string) {
	if e := rs.tables.lookup(tableKey{db, table}); e != nil {
		e.mu.Lock()
		e.drop()
		e.mu.Unlock()
	}
}

// reset forgets every table's range and settings, after DDL.
func (rs *reservations) reset() {
	rs.tables.each(func(e *reservation) {
		e.mu.Lock()
		e.drop()
		e.noCache = false
		e.mu.Unlock()
	})
}

// eligible reports whether c is a plain REPLACE of existing stubs, the
// only statement served from a range.
func eligible(c *model.Command) bool {
	if c.Op != model.OpInsert || !c.Replace || c.OnDup != nil || c.Ignore || len(c.Values) == 0 {
		return false
	}
	return len(c.Columns) == 1
}

// assign takes ids for c from the table's range. ok is false when c must
// go through Raft instead (the caller drops the range first). The ids are
// not the client's until confirm succeeds.
func (rs *reservations) assign(ctx context.Context, c *model.Command) (ids []uint64, term uint64, ok bool, err error) {
	term, leader := rs.lead.LeaderTerm()
	if !leader {
		return nil, 0, false, nil
	}
	e := rs.tables.get(tableKey{c.DB, c.Table})
	n := uint64(len(c.Values))
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, true, err
		}
		e.mu.Lock()
		if e.stale(term) {
			e.noCache = false
		}
		if e.noCache {
			e.mu.Unlock()
			return nil, 0, false, nil
		}
		if !e.valid && e.refilling == nil {
			// Load the definition and rows once per range, outside the
			// hot path.
			gen := e.gen
			e.mu.Unlock()
			rs.load(e, c, term, gen)
			continue
		}
		if e.valid {
			if !rs.fits(e, c) {
				e.mu.Unlock()
				return nil, 0, false, nil
			}
			if ids = take(&e.next, &e.last, n, c.Increment, c.Offset); ids != nil {
				e.mu.Unlock()
				return ids, term, true, nil
			}
		}
		if rf := e.refilling; rf != nil {
			e.mu.Unlock()
			if _, err := rf.wait(ctx); err != nil {
				return nil, 0, true, err
			}
			continue
		}
		if err := rs.refill(ctx, e, c, term, refillSize(rs.cacheSize(&e.def), n, c.Increment)); err != nil {
			return nil, 0, true, err
		}
	}
}

// refill reserves a new range through Raft. It is called with e.mu held
// and returns with it released; the lock is not held across the round
// trip, and concurrent requests wait on e.refilling instead.
func (rs *reservations) refill(ctx context.Context, e *reservation, c *model.Command, term, size uint64) error {
	r, err, fresh := e.through(ctx, rs.propose, &model.Command{Op: model.OpReserve, DB: c.DB, Table: c.Table, Count: size})
	defer e.mu.Unlock()
	observeRefill(rs.obs, size, r, err)
	switch {
	case err != nil:
		return err
	case r.Err != nil:
		e.valid = false
		return r.Err
	case !leads(rs.lead, term):
		e.valid = false
		return fmt.Errorf("ticket: range reserved in a lost term: %w", ticket.ErrUncertain)
	case !fresh:
		// An allocation through Raft ran meanwhile and may have taken ids
		// above this range: the range is burnt, and the caller retries.
		e.valid = false
		return nil
	}
	e.next, e.last, e.term, e.valid = r.First, r.Last, term, true
	return nil
}

// confirm waits for a quorum round that started after the ids were
// assigned, and checks it was in the term that reserved them.
func (rs *reservations) confirm(ctx context.Context, c *model.Command, term uint64) error {
	vterm, err := rs.verifier.verify(ctx)
	if err == nil && vterm == term {
		return nil
	}
	rs.drop(c.DB, c.Table)
	if err == nil {
		err = fmt.Errorf("ticket: leadership moved to term %d: %w", vterm, ticket.ErrUncertain)
	}
	return err
}

// served is the answer to a REPLACE served from a range: every stub had a
// row, so each row counts twice (delete and insert), as in MySQL.
func served(ids []uint64) model.Result {
	return model.Result{InsertID: ids[0], SetLastID: true, LastID: ids[0], Affected: 2 * uint64(len(ids))}
}

// take assigns n ids from the range next..last under the session's
// increment and offset, moving next past them, or returns nil (range left
// as it was) when they do not fit. Global ranges and node blocks share it.
func take(next, last *uint64, n, inc, off uint64) []uint64 {
	ids := make([]uint64, 0, n)
	pos := *next
	for range n {
		v, ok := model.NextID(pos, inc, off)
		if !ok || v > *last || len(ids) > 0 && v <= ids[len(ids)-1] {
			return nil
		}
		ids = append(ids, v)
		pos = v + 1
	}
	if l := ids[len(ids)-1]; l == ^uint64(0) {
		// pos wrapped to 0: leave the range empty instead, so that the
		// next request refills and meets the exhausted counter (167).
		*next, *last = l, l-1
		return ids
	}
	*next = pos
	return ids
}

// refillSize is the ids a refill reserves for a request of n ids: the
// cache, or enough for n ids at the session's increment wherever the
// range starts (a smaller range could never hold them, and the request
// would refill forever).
func refillSize(cache, n, inc uint64) uint64 {
	inc = max(inc, 1)
	need := (n + 1) * inc
	if need/inc != n+1 {
		need = ^uint64(0)
	}
	return max(cache, 2*n, need)
}

// fits checks c against the table as loaded: a REPLACE naming only the
// stub column, of stubs that already have rows (the answer, affected 2
// per row, depends on it) and fit the column.
func (rs *reservations) fits(e *reservation, c *model.Command) bool {
	return rs.cacheSize(&e.def) > 1 && fitsStubs(&e.def, e.stubs, c)
}

// fitsStubs is fits without the cache: c names only def's stub column,
// and every stub has a row in stubs and fits the column.
func fitsStubs(def *model.TableDef, stubs map[string]bool, c *model.Command) bool {
	if def.StubCol == "" || !strings.EqualFold(c.Columns[0], def.StubCol) {
		return false
	}
	for _, row := range c.Values {
		if len(row) != 1 || row[0].Kind != model.ValString {
			return false
		}
		if def.StubLen > 0 && len([]rune(row[0].Str)) > def.StubLen {
			return false
		}
		if !stubs[foldStub(row[0].Str)] {
			return false
		}
	}
	return true
}

func (rs *reservations) cacheSize(d *model.TableDef) uint64 {
	if d.Cache > 0 {
		return d.Cache
	}
	return rs.defCache
}

// load reads the table's definition and stubs into e, or marks the
// table as not using a cache in this term.
func (rs *reservations) load(e *reservation, c *model.Command, term, gen uint64) {
	t, err := readTable(rs.read, c.DB, c.Table)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen != gen || e.valid || e.refilling != nil {
		return
	}
	e.term = term
	if err != nil || t == nil || rs.cacheSize(&t.Def) <= 1 || !t.Def.AutoInc || t.Def.Rows != nil || ticket.NodeScope(t.Def.Comment) {
		// Node-scoped tables are served by every node's own blocks
		// (nodescope.go), never from the leader's global range.
		e.noCache = true
		return
	}
	stubs := stubSet(t.Rows)
	// An empty range: the first request refills it.
	e.def, e.stubs, e.valid, e.next, e.last = t.Def, stubs, true, 1, 0
}

func foldStub(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }

// stubSet is the set of a ticket table's stubs, folded by foldStub, that
// the leader's reservations and the node-scoped blocks load alike:
// fitsStubs serves a REPLACE from either only when each of its stubs
// already has a row.
func stubSet(rows []model.Row) map[string]bool {
	stubs := make(map[string]bool, len(rows))
	for _, r := range rows {
		stubs[foldStub(r.Stub)] = true
	}
	return stubs
}

// readTable is db.table as this node's state holds it, for the caches'
// loads (reservations, node-scoped blocks and ranges, the leader's
// sequence caches), which read it before they take their entry's lock
// and then check that no drop came in between.
func readTable(read ticket.Reader, db, table string) (*model.Table, error) {
	var t *model.Table
	err := read.View(func(s ticket.Store) (err error) {
		t, err = s.Table(db, table)
		return err
	})
	return t, err
}
