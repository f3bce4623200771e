package alloc

import (
	"cmp"
	"context"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// nodeBlocks serve REPLACE on node-scoped tables ('ticketd:cache=N,
// scope=node', DESIGN §4c). Every node, leader or follower, takes blocks
// of N ids with an OpReserve through Raft (a follower forwards it like
// any batch) and hands them to its own clients from memory, with no
// forwarding and no leader round per statement. The rules:
//
//   - a block is this node's and this process's: it lives in memory only,
//     and the replicated counter has moved past it, so no other node and
//     no later run of this one can be given its ids (unique cluster-wide);
//   - ids are taken from a block in order, and a new block comes from
//     the counter above every earlier one (strictly increasing within
//     this node's answers, so within each of its sessions);
//   - an allocation of the table through Raft from this node drops the
//     block before and after it (as for global ranges): its ids are above
//     the block, and later ids from the block would go backwards;
//   - a schema change applied on this node (SchemaClock) drops the block,
//     so ALTER TABLE ... COMMENT, DROP, restore take effect on each node
//     when it applies them.
//
// Nothing is confirmed with a quorum before answering: the block was
// committed to this node, which is what makes its ids this node's alone.
// A node cut off from the quorum therefore finishes its blocks (the
// current one and the one it took ahead, at most 2N ids) and then
// refuses, as its refill cannot commit.
type nodeBlocks struct {
	read     ticket.Reader
	clock    schemaClock
	propose  proposeFunc
	defCache uint64
	obs      Observer
	tables   entries[tableKey, block]
}

// block is one table's block on this node. Loaded (epochSlot), node,
// def and stubs hold the table as of the epoch.
type block struct {
	epochSlot
	node  bool // the table is node-scoped with a cache above 1
	cache uint64
	def   model.TableDef
	stubs map[string]bool // folded stubs with a row: REPLACE of them affects 2
	// next..last are the ids not handed out yet; next > last means empty.
	next, last uint64
	// spare is the block taken ahead (hasSpare), above next..last: it
	// becomes the block when that runs out.
	spareFirst, spareLast uint64
	hasSpare              bool
}

func newNodeBlocks(read ticket.Reader, defCache uint64, obs Observer, propose proposeFunc) *nodeBlocks {
	return &nodeBlocks{read: read, clock: clockOf(read), propose: propose, defCache: defCache, obs: obs}
}

// assign takes ids for c, an eligible REPLACE, from this node's block of
// its table. ok is false when c must go the way of other tables'
// statements instead: the table is not node-scoped, or c does not fit a
// block (a stub without a row, a value too long), or the counter
// refused a block (its statement error comes from Raft then). With ok,
// a non-nil error is the refill's replication failure; the ids are the
// client's as they are.
func (nb *nodeBlocks) assign(ctx context.Context, c *model.Command) (ids []uint64, ok bool, err error) {
	e := nb.tables.get(tableKey{c.DB, c.Table})
	n := uint64(len(c.Values))
	for {
		ep := nb.clock.epoch()
		e.mu.Lock()
		if e.expired(ep) {
			// Dropped, never loaded, or the schema changed since: the
			// block (if any) is burnt, the definition read again.
			e.node, e.next, e.last, e.hasSpare = false, 1, 0, false
			gen := e.gen
			e.mu.Unlock()
			nb.load(e, c, ep, gen)
			continue
		}
		if !e.node || !fitsStubs(&e.def, e.stubs, c) {
			e.mu.Unlock()
			return nil, false, nil
		}
		if ids = take(&e.next, &e.last, n, c.Increment, c.Offset); ids != nil {
			if e.refilling == nil && !e.hasSpare && (e.next > e.last || e.last-e.next < e.cache-e.cache/10) {
				nb.prefetch(e, c)
			}
			e.mu.Unlock()
			return ids, true, nil
		}
		if e.hasSpare {
			// The spare lies above every id of the block (prefetch), so
			// the node's answers keep going up.
			e.next, e.last, e.hasSpare = e.spareFirst, e.spareLast, false
			e.mu.Unlock()
			continue
		}
		if rf := e.refilling; rf != nil {
			e.mu.Unlock()
			failed, err := rf.wait(ctx)
			if err = cmp.Or(failed, err); err != nil {
				return nil, true, err
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			e.mu.Unlock()
			return nil, true, err
		}
		size := refillSize(e.cache, n, c.Increment)
		r, err, fresh := e.through(ctx, nb.propose, &model.Command{Op: model.OpReserve, DB: c.DB, Table: c.Table, Count: size})
		observeRefill(nb.obs, size, r, err)
		switch {
		case err != nil:
			e.mu.Unlock()
			return nil, true, err
		case r.Err != nil:
			e.mu.Unlock()
			return nil, false, nil
		case fresh:
			e.next, e.last = r.First, r.Last
		}
		// Otherwise an allocation through Raft from this node, or a
		// schema change, came meanwhile: the block is burnt (its ids may
		// be below ones this node has returned since).
		e.mu.Unlock()
	}
}

// tryTake is assign without waiting: the ids of c from the block as it
// is, or nil when that would need a load or a refill (or c belongs
// elsewhere); assign then decides.
func (nb *nodeBlocks) tryTake(c *model.Command) []uint64 {
	e := nb.tables.lookup(tableKey{c.DB, c.Table})
	if e == nil {
		return nil
	}
	ep := nb.clock.epoch()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded || e.epoch < ep || !e.node || !fitsStubs(&e.def, e.stubs, c) {
		return nil
	}
	ids := take(&e.next, &e.last, uint64(len(c.Values)), c.Increment, c.Offset)
	if ids != nil && e.refilling == nil && !e.hasSpare && (e.next > e.last || e.last-e.next < e.cache-e.cache/10) {
		nb.prefetch(e, c)
	}
	return ids
}

// prefetch takes the next block in the background once a tenth of the
// block is handed out (Leaf's double buffer), so that requests seldom
// wait for a Raft round at the block's end: without it every connection
// of a node waited for each refill, which took 25-380 ms on the loaded
// 2-core test machine (3 nodes, 64 connections spread, blocks of 1000,
// about 3 refills per node per second). The caller holds e.mu, and no refill is in flight:
// prefetch is one, so requests that find the block empty wait for it as
// for any refill, and no second reservation of the table runs beside it
// (whose result could come back below the spare). A node therefore holds
// at most two blocks (2N ids) beyond what it has handed out.
func (nb *nodeBlocks) prefetch(e *block, c *model.Command) {
	rf, gen := e.begin()
	size := e.cache
	db, table := c.DB, c.Table
	go func() {
		// The batcher proposes with its own deadline (ApplyTimeout): no
		// statement waits on this one's context.
		r, err := nb.propose(context.Background(), &model.Command{Op: model.OpReserve, DB: db, Table: table, Count: size})
		observeRefill(nb.obs, size, r, err)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.end(rf, err)
		if err != nil || r.Err != nil || e.gen != gen || !e.loaded {
			// Failed, or burnt by a drop meanwhile; requests that find
			// the block empty take their own.
			return
		}
		if e.next > e.last {
			e.next, e.last = r.First, r.Last
		} else {
			e.spareFirst, e.spareLast, e.hasSpare = r.First, r.Last, true
		}
	}()
}

// load reads the table's definition and stubs into e, as of epoch ep or
// later.
func (nb *nodeBlocks) load(e *block, c *model.Command, ep, gen uint64) {
	t, err := readTable(nb.read, c.DB, c.Table)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.install(gen, ep) {
		return
	}
	e.node, e.stubs = false, nil
	if err != nil || t == nil || !t.Def.AutoInc || t.Def.Rows != nil || t.Def.Seq != nil || !ticket.NodeScope(t.Def.Comment) {
		return
	}
	cache := t.Def.Cache
	if cache == 0 {
		cache = nb.defCache
	}
	if cache <= 1 {
		return
	}
	stubs := stubSet(t.Rows)
	e.node, e.cache, e.def, e.stubs = true, cache, t.Def, stubs
}

// drop burns a node-scoped table's block around an allocation of the
// table through Raft from this node. Other tables keep what they loaded:
// an allocation cannot make them node-scoped.
func (nb *nodeBlocks) drop(db, table string) {
	e := nb.tables.lookup(tableKey{db, table})
	if e == nil {
		return
	}
	e.mu.Lock()
	if e.node {
		e.epochSlot.drop()
	}
	e.mu.Unlock()
}

// reset burns every block and forgets every definition, after DDL from
// this node (the SchemaClock covers DDL from the others, and this
// node's own once applied; reset covers Readers without a clock).
func (nb *nodeBlocks) reset() {
	nb.tables.each(func(e *block) {
		e.mu.Lock()
		e.epochSlot.drop()
		e.mu.Unlock()
	})
}

// nodeSeqs serve NEXTVAL of node-scoped sequences (CREATE SEQUENCE ...
// CACHE n COMMENT 'ticketd:scope=node'): as nodeBlocks for tables, every
// node takes ranges of the sequence's CACHE values through Raft (OpSeqNext
// with Count 0, which a follower forwards) and hands them out itself.
// Values are unique cluster-wide (until a CYCLE wraps, as in MariaDB) and
// follow the sequence's direction within each node's answers. SETVAL,
// ALTER SEQUENCE and DROP from this node drop its range before and after
// (Service.dropSeq); from other nodes, when this node applies them
// (SchemaClock). A range is never handed back: SETVAL does not reuse its
// unserved values, as it does the leader's cache's.
type nodeSeqs struct {
	read    ticket.Reader
	clock   schemaClock
	propose proposeFunc
	m       entries[tableKey, nodeSeq]
}

type nodeSeq struct {
	epochSlot
	node bool // node-scoped with CACHE above 1
	// next..end (exclusive) by inc are this node's values, when valid.
	valid          bool
	next, end, inc int64
}

func newNodeSeqs(read ticket.Reader, propose proposeFunc) *nodeSeqs {
	return &nodeSeqs{read: read, clock: clockOf(read), propose: propose}
}

// next answers NEXTVAL from this node's range; ok is false when the
// sequence is not node-scoped.
func (ns *nodeSeqs) next(ctx context.Context, c *model.Command) (model.Result, bool, error) {
	e := ns.m.get(tableKey{c.DB, c.Table})
	for {
		ep := ns.clock.epoch()
		e.mu.Lock()
		if e.expired(ep) {
			e.valid = false
			gen := e.gen
			e.mu.Unlock()
			ns.load(e, c, ep, gen)
			continue
		}
		if !e.node {
			e.mu.Unlock()
			return model.Result{}, false, nil
		}
		if e.valid && ticket.SeqBefore(e.next, e.end, e.inc) {
			v := e.next
			e.next = stepFrom(v, e.inc, e.end)
			e.mu.Unlock()
			return model.Result{First: uint64(v)}, true, nil
		}
		if rf := e.refilling; rf != nil {
			e.mu.Unlock()
			failed, err := rf.wait(ctx)
			if err = cmp.Or(failed, err); err != nil {
				return model.Result{}, true, err
			}
			continue
		}
		r, err, fresh := e.through(ctx, ns.propose, &model.Command{Op: model.OpSeqNext, DB: c.DB, Table: c.Table, Seq: &model.SeqCommand{}})
		switch {
		case err != nil:
			e.mu.Unlock()
			return model.Result{}, true, err
		case r.Err != nil:
			// The sequence ran out, or is gone: the statement's answer.
			e.mu.Unlock()
			return r, true, nil
		case r.Matched == 0:
			// One value, not a range (no range has step 0): a leader of
			// an older build answered the request as a NEXTVAL. The value
			// is this statement's; taking it for a range would repeat it.
			e.mu.Unlock()
			return model.Result{First: r.First}, true, nil
		case fresh:
			e.next, e.end, e.inc, e.valid = int64(r.First), int64(r.Last), int64(r.Matched), true
		}
		e.mu.Unlock()
	}
}

func (ns *nodeSeqs) load(e *nodeSeq, c *model.Command, ep, gen uint64) {
	t, err := readTable(ns.read, c.DB, c.Table)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.install(gen, ep) {
		return
	}
	e.valid = false
	e.node = err == nil && t != nil && t.Def.Seq != nil && t.Def.Seq.Cache > 1 && ticket.NodeScope(t.Def.Comment)
}

// drop burns db.name's range on this node.
func (ns *nodeSeqs) drop(db, name string) {
	if e := ns.m.lookup(tableKey{db, name}); e != nil {
		e.burn()
	}
}

// reset burns every range on this node.
func (ns *nodeSeqs) reset() {
	ns.m.each((*nodeSeq).burn)
}

// burn drops e's range and what it loaded.
func (e *nodeSeq) burn() {
	e.mu.Lock()
	e.epochSlot.drop()
	e.valid = false
	e.mu.Unlock()
}
