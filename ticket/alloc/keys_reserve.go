package alloc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// keyBlocks serve INCR (and INCRBY by a positive step) from a block of
// values the leader reserved through Raft (Config.KeyCache), as
// reservations serve REPLACE from a table's range, under the same three
// rules: a block belongs to the term that reserved it and is dropped on
// any change of term or leadership; every answer waits for a quorum
// round started after its value was taken (the shared verifier); any
// other write of the key through Raft drops the block before and after.
// What it gives up: values skipped at every leadership change, restart or
// other write of the key (gaps, never a repeat), and GET shows the end of
// the block, not the last value answered.
type keyBlocks struct {
	lead     Leadership
	propose  proposeFunc
	read     ticket.Reader
	size     int64
	verifier *verifier
	keys     entries[keyID, keyBlock]
}

// keyID names one key of one Redis database.
type keyID struct {
	db   uint8
	name string
}

// keyBlock is one key's block: values next..last are the leader's, in
// the term (termSlot) that reserved them.
type keyBlock struct {
	termSlot
	next, last int64
}

func newKeyBlocks(lead Leadership, size int64, v *verifier, read ticket.Reader, propose proposeFunc) *keyBlocks {
	return &keyBlocks{lead: lead, propose: propose, read: read, size: size, verifier: v}
}

// expiring reports whether the local state shows the key with an expiry.
// Such a key gets no block (keyReserve answers nil, DESIGN §4e): asking
// Raft for one anyway cost every INCR of a day key a second entry (4,000
// entries for 2,000 INCRs, 2,249 INCR/s against 3,642 without
// --redis-cache, one node, one client). The local state may lag the
// log; it only decides whether to ask, and keyReserve still decides.
func (kb *keyBlocks) expiring(id keyID) bool {
	has := false
	_ = kb.read.View(func(st ticket.Store) error {
		v, ok, err := st.Key(id.db, id.name)
		has = err == nil && ok && v.ExpireAt != 0
		return nil
	})
	return has
}

// eligible reports an INCR or INCRBY by a positive step no larger than a
// block.
func (kb *keyBlocks) eligible(c *model.Command) bool {
	k := c.Key
	return c.Op == model.OpKeys && k != nil && k.Op == model.KeyIncr && k.Delta > 0 && k.Delta <= kb.size && len(k.Keys) == 1
}

// reset invalidates every key's block (a restore).
func (kb *keyBlocks) reset() {
	kb.keys.each(func(e *keyBlock) {
		e.mu.Lock()
		e.drop()
		e.mu.Unlock()
	})
}

// drop invalidates the blocks of the keys a command through Raft writes.
func (kb *keyBlocks) drop(c *model.Command) {
	if c.Op != model.OpKeys || c.Key == nil {
		return
	}
	for _, name := range c.Key.Keys {
		if e := kb.keys.lookup(keyID{c.Key.DB, name}); e != nil {
			e.mu.Lock()
			e.drop()
			e.mu.Unlock()
		}
	}
}

// assign takes the value for an eligible c from its key's block. ok is
// false when c must go through Raft (not the leader, or the key cannot
// have a block); otherwise the reply is the client's once confirm
// succeeds (or is an error reply of the refill, such as not an integer).
func (kb *keyBlocks) assign(ctx context.Context, c *model.Command) (r model.KeyReply, term uint64, ok bool, err error) {
	term, leader := kb.lead.LeaderTerm()
	if !leader {
		return model.KeyReply{}, 0, false, nil
	}
	k := c.Key
	e := kb.keys.get(keyID{k.DB, k.Keys[0]})
	for {
		if err := ctx.Err(); err != nil {
			return model.KeyReply{}, 0, true, fmt.Errorf("ticket: waited for a key block: %w: %w", ticket.ErrNoQuorum, err)
		}
		e.mu.Lock()
		e.stale(term)
		if e.valid && e.next <= e.last-k.Delta+1 {
			v := e.next + k.Delta - 1
			e.next = v + 1
			e.mu.Unlock()
			return model.KeyReply{Kind: model.ReplyInt, Int: v}, term, true, nil
		}
		if rf := e.refilling; rf != nil {
			e.mu.Unlock()
			if _, err := rf.wait(ctx); err != nil {
				return model.KeyReply{}, 0, true, fmt.Errorf("ticket: waited for a key block: %w: %w", ticket.ErrNoQuorum, err)
			}
			continue
		}
		if kb.expiring(keyID{k.DB, k.Keys[0]}) {
			e.mu.Unlock()
			return model.KeyReply{}, term, false, nil
		}
		reply, reserved, err := kb.refill(ctx, e, c, term)
		if err != nil || !reserved {
			// Not reservable (an expiry): through Raft, ok false; an error
			// reply (not an integer, overflow) is the client's answer.
			return reply, term, reply.Kind == model.ReplyErr, err
		}
	}
}

// refill reserves a block through Raft. It is called with e.mu held and
// returns with it released.
func (kb *keyBlocks) refill(ctx context.Context, e *keyBlock, c *model.Command, term uint64) (model.KeyReply, bool, error) {
	k := c.Key
	r, err, fresh := e.through(ctx, kb.propose, &model.Command{Op: model.OpKeys, Key: &model.KeyCommand{Op: model.KeyReserve, DB: k.DB, Keys: k.Keys, Delta: kb.size}})
	defer e.mu.Unlock()
	switch {
	case err != nil:
		e.valid = false
		return model.KeyReply{}, false, err
	case r.Err != nil:
		e.valid = false
		return model.KeyReply{}, false, r.Err
	case r.Key == nil:
		e.valid = false
		return model.KeyReply{}, false, fmt.Errorf("ticket: no reply to a key reservation: %w", ticket.ErrUncertain)
	case r.Key.Kind != model.ReplyInt:
		e.valid = false
		return *r.Key, false, nil
	case !leads(kb.lead, term):
		e.valid = false
		return model.KeyReply{}, false, fmt.Errorf("ticket: key block reserved in a lost term: %w", ticket.ErrUncertain)
	case !fresh:
		// Another write of the key went through Raft meanwhile: the
		// block is burnt, and the caller takes a new one.
		e.valid = false
		return model.KeyReply{}, true, nil
	}
	e.next, e.last, e.term, e.valid = r.Key.Int-kb.size+1, r.Key.Int, term, true
	return model.KeyReply{}, true, nil
}

// confirm waits for a quorum round that started after the value was
// taken, in the term that reserved it.
func (kb *keyBlocks) confirm(ctx context.Context, c *model.Command, term uint64) error {
	vterm, err := kb.verifier.verify(ctx)
	if err == nil && vterm == term {
		return nil
	}
	kb.drop(c)
	if err == nil {
		return fmt.Errorf("ticket: leadership moved to term %d: %w", vterm, ticket.ErrUncertain)
	}
	// No quorum answered in time (or the context ended first): the
	// value was taken, and is burnt whether this node still leads or
	// not.
	if errors.Is(err, ticket.ErrUncertain) {
		return err
	}
	return fmt.Errorf("ticket: leadership not confirmed: %w: %w", ticket.ErrUncertain, err)
}

// execKeys runs a key command: from its key's block when it can, else
// through Raft, where the batcher drops the key's block before and after
// (a value taken through Raft is above the block; overtake.go).
func (s *Service) execKeys(ctx context.Context, c *model.Command) (model.Result, error) {
	if s.kb == nil {
		return s.b.exec(ctx, c, fromSession)
	}
	if s.kb.eligible(c) {
		r, term, ok, err := s.kb.assign(ctx, c)
		if ok {
			if err == nil && r.Kind != model.ReplyErr {
				err = s.kb.confirm(ctx, c, term)
			}
			if err != nil {
				return model.Result{}, err
			}
			return model.Result{Key: &r}, nil
		}
		if err != nil {
			return model.Result{}, err
		}
	}
	return s.b.exec(ctx, c, fromSession)
}

// execKeysBatch runs a forwarded batch's key commands (at idx) on the
// leader while keys have blocks. Commands of different keys are
// different sessions' or commute, and run at once, so that those through
// Raft share proposals; those of one key run in the batch's order (a
// follower forwards one connection's pipeline as one batch). A command
// of several keys (DEL a b) makes the whole batch run in order.
func (s *Service) execKeysBatch(ctx context.Context, cmds []model.Command, idx []int, out []model.Result) error {
	var groups [][]int
	byKey := map[keyID]int{}
	for _, i := range idx {
		k := cmds[i].Key
		if k == nil || len(k.Keys) != 1 {
			groups = [][]int{idx}
			break
		}
		id := keyID{k.DB, k.Keys[0]}
		g, ok := byKey[id]
		if !ok {
			g = len(groups)
			byKey[id] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	for g, members := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]*model.Command, len(members))
			for j, i := range members {
				batch[j] = &cmds[i]
			}
			res, cerrs := s.execKeysSeq(ctx, batch, fromPeer)
			for j, i := range members {
				out[i] = res[j]
			}
			for _, err := range cerrs {
				if err != nil {
					errs[g] = err
					break
				}
			}
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

// execKeysSeq runs key commands in their order, each from its key's block
// when it can (one leadership round per term confirms them all, after
// the last was taken) or else through Raft with its key's block dropped
// before and after (overtake.go). Errors are per command.
func (s *Service) execKeysSeq(ctx context.Context, cmds []*model.Command, from origin) ([]model.Result, []error) {
	out := make([]model.Result, len(cmds))
	errs := make([]error, len(cmds))
	type pending struct {
		i    int
		term uint64
	}
	var taken []pending
	for i, c := range cmds {
		if i > 0 && errs[i-1] != nil {
			// Replication failed just before: the rest are refused
			// unsent rather than each waiting out its own failure.
			errs[i] = fmt.Errorf("ticket: an earlier command of the pipeline did not commit: %w", ticket.ErrNoQuorum)
			continue
		}
		if s.kb.eligible(c) {
			r, term, ok, err := s.kb.assign(ctx, c)
			if ok {
				if err != nil {
					errs[i] = err
					continue
				}
				out[i] = model.Result{Key: &r}
				if r.Kind != model.ReplyErr {
					taken = append(taken, pending{i, term})
				}
				continue
			}
			if err != nil {
				errs[i] = err
				continue
			}
		}
		out[i], errs[i] = s.b.exec(ctx, c, from)
	}
	confirmed := map[uint64]error{}
	for _, p := range taken {
		err, done := confirmed[p.term]
		if !done {
			err = s.kb.confirm(ctx, cmds[p.i], p.term)
			confirmed[p.term] = err
		}
		if err != nil {
			out[p.i], errs[p.i] = model.Result{}, err
		}
	}
	return out, errs
}

// ExecKeysOrdered runs one connection's pipelined key writes, answered
// in their order: in one Raft entry (a follower forwards them as one
// batch), or with key reservation in order from the keys' blocks.
// Errors are per command.
func (s *Service) ExecKeysOrdered(ctx context.Context, cmds []*model.Command) ([]model.Result, []error) {
	if s.kb != nil {
		if _, leader := s.kb.lead.LeaderTerm(); leader {
			return s.execKeysSeq(ctx, cmds, fromSession)
		}
	}
	// A follower forwards them as one batch, which the leader runs in
	// order from its blocks (execKeysBatch). But the proposal waits for a
	// leader, and when this node wins the election it proposes the batch
	// itself, as INCRs through Raft above the block it may have reserved
	// meanwhile: direct drops the keys' blocks before and after, as for
	// any other write of them through Raft (overtake.go). Without it, a
	// pipeline sent to a candidate was answered 801..808 and the next one
	// 704..711 from the block (TestRedisFaults/cache, kill -9 of the
	// leader).
	//
	// Bounded by the Replicator's own timeout, as the batcher's
	// proposals are, not by the caller's deadline: a cut-off node then
	// answers its refusal within the time its other clients get theirs.
	res, err := s.b.direct(context.WithoutCancel(ctx), cmds, fromSession)
	if err == nil && len(res) != len(cmds) {
		err = fmt.Errorf("ticket: %d results for %d commands: %w", len(res), len(cmds), ticket.ErrUncertain)
	}
	errs := make([]error, len(cmds))
	if err != nil {
		res = make([]model.Result, len(cmds))
		for i := range errs {
			errs[i] = err
		}
	}
	return res, errs
}
