package alloc

import (
	"context"
	"sync"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// The parts the five allocation caches share (DESIGN §4f): the leader's
// table ranges (reserve.go), sequence caches (sequence_cache.go) and key
// blocks (keys_reserve.go), bound to a term; this node's node-scoped
// table blocks and sequence ranges (nodescope.go), bound to the
// SchemaClock. Each keeps its entries in an entries map; each entry
// embeds a slot (its lock, the generation every drop moves, the refill
// in flight) and a termSlot or an epochSlot. What a command through Raft
// drops of them is overtake.go's one rule.

// proposeFunc sends a cache's own command through Raft (the batcher's
// cacheExec: exempt from the overtaking rule).
type proposeFunc func(ctx context.Context, c *model.Command) (model.Result, error)

// entries is one cache's entries by name, each made on first use. A
// sync.Map: an entry is made once and read by every allocation, from
// many sessions at once.
type entries[K comparable, E any] struct{ m sync.Map }

// get is k's entry, made if it is new.
func (es *entries[K, E]) get(k K) *E {
	if e, ok := es.m.Load(k); ok {
		return e.(*E)
	}
	e, _ := es.m.LoadOrStore(k, new(E))
	return e.(*E)
}

// lookup is k's entry, or nil if it was never made.
func (es *entries[K, E]) lookup(k K) *E {
	if e, ok := es.m.Load(k); ok {
		return e.(*E)
	}
	return nil
}

// each calls fn with every entry.
func (es *entries[K, E]) each(fn func(*E)) {
	es.m.Range(func(_, e any) bool {
		fn(e.(*E))
		return true
	})
}

// slot is what every cache entry holds besides its values.
type slot struct {
	mu sync.Mutex
	// gen counts drops: a refill or load begun before a drop must not
	// install its result.
	gen uint64
	// refilling is the refill in flight, which requests that find the
	// entry empty wait for instead of taking their own.
	refilling *refill
}

// refill is a refill in flight. Requests that wait for it may share its
// replication failure (the node-scoped caches do: each taking its own
// turn after a failed one would add up the waits past the statement
// timeout, and a cut-off node's clients must hear 1290 within it).
type refill struct {
	done chan struct{} // closed when it ends
	err  error         // set before done is closed
}

// wait waits for rf to end: failed is the refill's replication failure,
// err the context's if it ended first.
func (rf *refill) wait(ctx context.Context) (failed, err error) {
	select {
	case <-rf.done:
		return rf.err, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// begin marks a refill in flight and returns it with the generation it
// began in. e.mu is held.
func (e *slot) begin() (*refill, uint64) {
	rf := &refill{done: make(chan struct{})}
	e.refilling = rf
	return rf, e.gen
}

// end ends rf with its replication failure, if any. e.mu is held.
func (e *slot) end(rf *refill, err error) {
	e.refilling = nil
	rf.err = err
	close(rf.done)
}

// through proposes c, a refill of e, called with e.mu held: the lock is
// released across the round trip (concurrent requests wait on
// e.refilling) and held again on return. fresh is false when a drop
// came meanwhile: the result is burnt, as it may lie below values
// returned through Raft since.
func (e *slot) through(ctx context.Context, propose proposeFunc, c *model.Command) (r model.Result, err error, fresh bool) {
	rf, gen := e.begin()
	e.mu.Unlock()
	r, err = propose(ctx, c)
	e.mu.Lock()
	e.end(rf, err)
	return r, err, e.gen == gen
}

// termSlot is a leader's cache entry: what it holds belongs to the term
// that reserved it, is dropped, never reused, when the term or
// leadership changes, and is answered only after a quorum round started
// after the value was taken (verifier).
type termSlot struct {
	slot
	term  uint64
	valid bool // the entry holds values of term
}

// stale reports whether e holds another term's values, and forgets
// them if so. e.mu is held.
func (e *termSlot) stale(term uint64) bool {
	if e.term == term {
		return false
	}
	e.valid = false
	return true
}

// drop burns what e holds. e.mu is held.
func (e *termSlot) drop() {
	e.valid = false
	e.gen++
}

// leads reports whether this node still leads term, after a refill.
func leads(lead Leadership, term uint64) bool {
	t, leader := lead.LeaderTerm()
	return leader && t == term
}

// epochSlot is a node-scoped cache entry: loaded as of a SchemaClock
// epoch, and dropped when the node applies a schema change after it.
type epochSlot struct {
	slot
	loaded bool
	epoch  uint64
}

// expired reports whether e must be loaded as of epoch ep: never
// loaded, dropped, or the schema changed since. A loaded entry that
// expires is burnt. Concurrent requests then load under the same gen,
// and the first to finish installs (a gen per loader would let them
// burn each other's loads for ever). e.mu is held.
func (e *epochSlot) expired(ep uint64) bool {
	if e.loaded && e.epoch >= ep {
		return false
	}
	if e.loaded {
		e.loaded = false
		e.gen++
	}
	return true
}

// install reports whether a load begun at gen may install, and marks e
// loaded as of ep if so. e.mu is held.
func (e *epochSlot) install(gen, ep uint64) bool {
	if e.gen != gen || e.loaded {
		return false
	}
	e.loaded, e.epoch = true, ep
	return true
}

// drop burns e and forgets what it loaded. e.mu is held.
func (e *epochSlot) drop() {
	e.loaded = false
	e.gen++
}

// schemaClock is read's SchemaClock; without one (tests) every epoch is
// 0, which is only right when nothing else changes the schema.
type schemaClock struct{ c ticket.SchemaClock }

func clockOf(read ticket.Reader) schemaClock {
	c, _ := read.(ticket.SchemaClock)
	return schemaClock{c}
}

func (sc schemaClock) epoch() uint64 {
	if sc.c == nil {
		return 0
	}
	return sc.c.SchemaEpoch()
}

// observeRefill tells obs how a table's refill of size ids ended: its
// replication failure, its statement error, or nil.
func observeRefill(obs Observer, size uint64, r model.Result, err error) {
	if err == nil && r.Err != nil {
		obs.ReservationRefilled(size, r.Err)
		return
	}
	obs.ReservationRefilled(size, err)
}
