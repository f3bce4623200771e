package alloc

import (
	"context"
	"sync"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// seqCaches are the leader's sequence caches (CACHE n > 1): the leader
// commits "the values First..Last are reserved" through Raft (OpSeqNext
// with Count 0, which Apply sizes from the sequence's own CACHE), then
// hands them out from memory. The rules are those of ticket tables'
// range reservation (reserve.go), which they share the VerifyLeader
// rounds with:
//
//   - a cache belongs to the term that reserved it and is dropped, never
//     reused, when the term or leadership changes;
//   - a value from the cache is answered only after a quorum round that
//     started after it was taken (VerifyLeader);
//   - SETVAL, ALTER SEQUENCE, DROP and any DDL drop the cache before they
//     are proposed and again after, so a refill in flight is burnt.
//
// The value that triggered a refill comes straight from the committed
// entry and needs no further confirmation, like any value through Raft.
// Without a cache (NOCACHE, CACHE 1) every NEXTVAL is its own command
// through the batcher: group-committed with the others.
type seqCaches struct {
	lead     Leadership
	read     ticket.Reader
	propose  proposeFunc
	verifier *verifier
	m        entries[tableKey, seqCache]
}

// seqCache is one sequence's cache, valid (termSlot) in its term.
type seqCache struct {
	termSlot
	loaded bool // cached says whether the sequence has a cache, in term
	cached bool
	next   int64 // next value to hand out
	end    int64 // end of the range, exclusive
	inc    int64
	until  int64 // the state's Next when the range was reserved
}

func newSeqCaches(lead Leadership, read ticket.Reader, v *verifier, propose proposeFunc) *seqCaches {
	return &seqCaches{lead: lead, read: read, propose: propose, verifier: v}
}

// drop forgets db.name's cache and reports where it stood, if it was a
// valid cache of the current term: values before free were handed out,
// the rest of the range up to the state's until was not.
func (sc *seqCaches) drop(db, name string) (free, until int64, ok bool) {
	e := sc.m.lookup(tableKey{db, name})
	if e == nil {
		return 0, 0, false
	}
	term, leader := sc.lead.LeaderTerm()
	e.mu.Lock()
	defer e.mu.Unlock()
	ok = e.valid && leader && e.term == term
	free, until = e.next, e.until
	e.drop()
	e.loaded = false
	return free, until, ok
}

// reset forgets every cache, after DDL that may remove or replace
// sequences (DROP TABLE, DROP DATABASE, restore).
func (sc *seqCaches) reset() {
	sc.m.each(func(e *seqCache) {
		e.mu.Lock()
		e.drop()
		e.loaded = false
		e.mu.Unlock()
	})
}

// load learns whether the sequence caches, from the local state.
func (sc *seqCaches) load(e *seqCache, c *model.Command, term, gen uint64) {
	t, err := readTable(sc.read, c.DB, c.Table)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen != gen || e.loaded {
		return
	}
	e.term, e.loaded, e.valid = term, true, false
	// A node-scoped sequence is served by every node's own blocks
	// (nodeSeqs), never from the leader's cache.
	e.cached = err == nil && t != nil && t.Def.Seq != nil && t.Def.Seq.Cache > 1 && !ticket.NodeScope(t.Def.Comment)
}

// next answers NEXTVAL(c.DB.c.Table) on the leader: from the cache, or
// through Raft. ok is false when this node does not lead (the caller
// forwards).
func (sc *seqCaches) next(ctx context.Context, c *model.Command) (model.Result, bool, error) {
	term, leader := sc.lead.LeaderTerm()
	if !leader {
		return model.Result{}, false, nil
	}
	e := sc.m.get(tableKey{c.DB, c.Table})
	for {
		if err := ctx.Err(); err != nil {
			return model.Result{}, true, err
		}
		e.mu.Lock()
		if e.stale(term) {
			e.loaded = false
		}
		if !e.loaded {
			gen := e.gen
			e.mu.Unlock()
			sc.load(e, c, term, gen)
			continue
		}
		if !e.cached {
			e.mu.Unlock()
			r, err := sc.propose(ctx, &model.Command{Op: model.OpSeqNext, DB: c.DB, Table: c.Table, Seq: &model.SeqCommand{Count: 1}})
			return r, true, err
		}
		if e.valid && ticket.SeqBefore(e.next, e.end, e.inc) {
			v := e.next
			e.next = stepFrom(v, e.inc, e.end)
			e.mu.Unlock()
			vterm, err := sc.verifier.verify(ctx)
			if err == nil && vterm != term {
				err = ticket.ErrUncertain
			}
			if err != nil {
				sc.drop(c.DB, c.Table)
				return model.Result{}, true, err
			}
			return model.Result{First: uint64(v)}, true, nil
		}
		if rf := e.refilling; rf != nil {
			e.mu.Unlock()
			if _, err := rf.wait(ctx); err != nil {
				return model.Result{}, true, err
			}
			continue
		}
		r, err, fresh := e.through(ctx, sc.propose, &model.Command{Op: model.OpSeqNext, DB: c.DB, Table: c.Table, Seq: &model.SeqCommand{}})
		if err == nil && r.Err == nil && fresh && e.term == term && leads(sc.lead, term) {
			inc := int64(r.Matched)
			first, end := int64(r.First), int64(r.Last)
			e.next, e.end, e.inc, e.valid = stepFrom(first, inc, end), end, inc, true
			e.until = end
		}
		e.mu.Unlock()
		// The first value is this request's: it was committed through
		// Raft, like any value that never saw a cache.
		return r, true, err
	}
}

// stepFrom is v moved by inc, or end once that would reach or pass it (or
// overflow).
func stepFrom(v, inc, end int64) int64 {
	n := v + inc
	if inc > 0 && n < v || inc < 0 && n > v || !ticket.SeqBefore(n, end, inc) {
		return end
	}
	return n
}

// execSeq runs a sequence command: NEXTVAL from this node's node-scoped
// range or the leader's cache, or through Raft; the others through Raft,
// telling SETVAL where the dropped cache stood. Through Raft, the
// batcher drops the caches a command can overtake, before and after
// (overtake.go): a SETVAL's, and a NEXTVAL's that a node sent before it
// won the election (found by TestSequencesCluster) or a deposed
// leader's forwarded refill, whose first value it answers
// (TestSchemeFaults/01-pause-leader: the paused leader answered 7001,
// then this one 6174.. from its cache). from is fromPeer for another
// node's command (a forwarded batch), which this node's node-scoped
// ranges never serve: its session's values must follow its own node's.
func (s *Service) execSeq(ctx context.Context, c *model.Command, from origin) (model.Result, error) {
	if c.Op == model.OpSeqNext {
		if c.Seq != nil && c.Seq.Count == 0 {
			// A node's block of a node-scoped sequence, forwarded, or the
			// refill of a leader deposed while it waited in the batcher:
			// through Raft as it is (sessions' NEXTVAL asks Count 1).
			return s.b.exec(ctx, c, from)
		}
		if from == fromSession {
			if r, ok, err := s.nseq.next(ctx, c); ok {
				return r, err
			}
		}
		if s.seq != nil {
			if r, ok, err := s.seq.next(ctx, c); ok {
				return r, err
			}
		}
		// Not the leader when asked: the batcher forwards, or proposes
		// itself if this node has become leader meanwhile.
		return s.b.exec(ctx, c, from)
	}
	if c.Op == model.OpSetVal && s.seq != nil {
		if free, until, ok := s.seq.drop(c.DB, c.Table); ok {
			cp := *c
			sq := model.SeqCommand{}
			if c.Seq != nil {
				sq = *c.Seq
			}
			sq.HasFree, sq.Free, sq.Until = true, free, until
			cp.Seq = &sq
			c = &cp
		}
	}
	return s.b.exec(ctx, c, from)
}

// execSeqBatch runs the sequence commands of a forwarded batch, each on
// its own, concurrently: their cache hits share VerifyLeader rounds, and
// the others share proposals in the batcher.
func (s *Service) execSeqBatch(ctx context.Context, cmds []model.Command, idx []int, out []model.Result) error {
	var wg sync.WaitGroup
	errs := make([]error, len(idx))
	for j, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[j] = s.execSeq(ctx, &cmds[i], fromPeer)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
