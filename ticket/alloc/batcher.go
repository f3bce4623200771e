package alloc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// request is one command waiting for its batch. Requests are pooled: the
// hot path of a ticket server is one of these per REPLACE.
type request struct {
	cmd  *model.Command
	res  model.Result
	err  error
	done chan struct{}
	// state moves from queued to taken (by a worker) or to abandoned (by
	// a caller whose context ended first): an abandoned request was never
	// proposed, and its caller can say so.
	state atomic.Int32
}

const (
	queued int32 = iota
	taken
	abandoned
)

// batcher is the group commit: concurrent Exec calls queue their commands,
// and each of a fixed set of workers takes everything queued (up to
// maxBatch) as one proposal. While the workers' proposals are in flight the
// queue fills, so under load batches grow by themselves and a proposal
// costs one Raft round trip however many connections wait on it. A fixed
// worker set keeps the hot path free of per-request goroutines.
type batcher struct {
	repl     ticket.Replicator
	queue    chan *request
	maxBatch int
	pool     sync.Pool
	wg       sync.WaitGroup
	stop     chan struct{}
	// leading reports whether this node proposes itself (nil: always).
	// A leader takes a batch only with one of leaderSlots: its proposals
	// are Raft entries, and under load fewer, larger ones cost less. A
	// follower's batches are forwarded and merge into the leader's queue,
	// so every worker forwards and a client never waits for a free one.
	leading     func() bool
	leaderSlots chan struct{}
	obs         Observer
	// workers is the size of the worker set; forwarding counts those in
	// a proposal taken without a leader slot (while this node followed,
	// so forwarded to the leader of the time). See execMany.
	workers    int
	forwarding atomic.Int32
	// overtake, if set, drops the caches a command can overtake: called
	// before the command is queued and after it is answered, for every
	// command that is not a cache's own (overtake.go).
	overtake func(c *model.Command, from origin)
}

func newBatcher(repl ticket.Replicator, workers, leaderSlots, maxBatch int, leading func() bool, obs Observer) *batcher {
	b := &batcher{
		repl:        repl,
		queue:       make(chan *request, 4*maxBatch),
		maxBatch:    maxBatch,
		stop:        make(chan struct{}),
		leading:     leading,
		leaderSlots: make(chan struct{}, leaderSlots),
		obs:         obs,
		workers:     workers,
	}
	b.pool.New = func() any { return &request{done: make(chan struct{}, 1)} }
	b.wg.Add(workers)
	for range workers {
		go b.work()
	}
	return b
}

// exec proposes one command and waits for its result, dropping the
// caches it can overtake before and after (overtake.go).
func (b *batcher) exec(ctx context.Context, c *model.Command, from origin) (model.Result, error) {
	if from == fromCache || b.overtake == nil {
		return b.queued(ctx, c)
	}
	b.overtake(c, from)
	r, err := b.queued(ctx, c)
	b.overtake(c, from)
	return r, err
}

// cacheExec is exec of a cache's own command (fromCache): the
// caches' propose functions.
func (b *batcher) cacheExec(ctx context.Context, c *model.Command) (model.Result, error) {
	return b.queued(ctx, c)
}

// overtakeAll is overtake of each of cmds.
func (b *batcher) overtakeAll(cmds []*model.Command, from origin) {
	if from == fromCache || b.overtake == nil {
		return
	}
	for _, c := range cmds {
		b.overtake(c, from)
	}
}

// queued proposes one command through the queue and waits for its result.
func (b *batcher) queued(ctx context.Context, c *model.Command) (model.Result, error) {
	r := b.pool.Get().(*request)
	r.cmd = c
	select {
	case b.queue <- r:
	case <-ctx.Done():
		b.pool.Put(r)
		return model.Result{}, ctx.Err()
	case <-b.stop:
		b.pool.Put(r)
		return model.Result{}, ErrClosed
	}
	select {
	case <-r.done:
		res, err := r.res, r.err
		r.cmd, r.res, r.err = nil, model.Result{}, nil
		r.state.Store(queued)
		b.pool.Put(r)
		return res, err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			// No worker took it: nothing was proposed.
			return model.Result{}, fmt.Errorf("ticket: waited for a batch slot: %w: %w", ticket.ErrNoQuorum, ctx.Err())
		}
		// The worker owns r; it is garbage once the worker is done with
		// it. Whatever the batch did, this caller reports failure, so an
		// id it may have taken is never handed out.
		return model.Result{}, fmt.Errorf("ticket: %w: %w", ticket.ErrUncertain, ctx.Err())
	}
}

// execMany queues several commands at once and waits for all of them;
// they may land in one proposal or several. The first replication error
// is returned. The caches each command can overtake are dropped before
// and after.
func (b *batcher) execMany(ctx context.Context, cmds []*model.Command, from origin) ([]model.Result, error) {
	b.overtakeAll(cmds, from)
	defer b.overtakeAll(cmds, from)
	if b.leading != nil && int(b.forwarding.Load()) >= b.workers && b.leading() {
		// Every worker is still waiting on a batch it forwarded to the
		// leader before this node took over. That old leader relays
		// what it had not started to this node, here, and answers the
		// workers only then: queued, the relay would wait for a worker
		// and the workers for the relay until their grace ran out (a
		// rolling restart lost 4-5 statements, one per worker, to
		// ErrUncertain when the leader stopped). Proposed directly, it
		// waits for nobody; this node leads, so it proposes itself.
		return b.propose(ctx, cmds)
	}
	reqs := make([]*request, len(cmds))
	for i, c := range cmds {
		reqs[i] = &request{cmd: c, done: make(chan struct{}, 1)}
		select {
		case b.queue <- reqs[i]:
		case <-ctx.Done():
			return nil, fmt.Errorf("ticket: queued %d of %d commands: %w", i, len(cmds), ticket.ErrUncertain)
		case <-b.stop:
			return nil, ErrClosed
		}
	}
	out := make([]model.Result, len(cmds))
	var first error
	for i, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("ticket: %w: %w", ticket.ErrUncertain, ctx.Err())
		}
		out[i] = r.res
		if r.err != nil && first == nil {
			first = r.err
		}
	}
	return out, first
}

// direct proposes cmds as one batch without a worker, dropping the
// caches each can overtake before and after.
func (b *batcher) direct(ctx context.Context, cmds []*model.Command, from origin) ([]model.Result, error) {
	b.overtakeAll(cmds, from)
	defer b.overtakeAll(cmds, from)
	return b.propose(ctx, cmds)
}

// propose proposes cmds as one batch without a worker (direct, execMany).
func (b *batcher) propose(ctx context.Context, cmds []*model.Command) ([]model.Result, error) {
	flat := make([]model.Command, len(cmds))
	for i, c := range cmds {
		flat[i] = *c
	}
	start := time.Now()
	res, err := b.repl.Propose(ctx, flat)
	b.obs.BatchProposed(len(flat), time.Since(start), err)
	// ExecBatch checks the count of results, as it does execMany's.
	return res, err
}

func (b *batcher) work() {
	defer b.wg.Done()
	reqs := make([]*request, 0, b.maxBatch)
	cmds := make([]model.Command, 0, b.maxBatch)
	for {
		slot := b.leading == nil || b.leading()
		if slot {
			select {
			case b.leaderSlots <- struct{}{}:
			case <-b.stop:
				return
			}
		}
		reqs = reqs[:0]
		select {
		case r := <-b.queue:
			if r.state.CompareAndSwap(queued, taken) {
				reqs = append(reqs, r)
			}
		case <-b.stop:
			return
		}
	fill:
		for len(reqs) < b.maxBatch {
			select {
			case r := <-b.queue:
				if r.state.CompareAndSwap(queued, taken) {
					reqs = append(reqs, r)
				}
			default:
				break fill
			}
		}
		if len(reqs) == 0 {
			if slot {
				<-b.leaderSlots
			}
			continue
		}
		cmds = cmds[:0]
		for _, r := range reqs {
			cmds = append(cmds, *r.cmd)
		}
		// Proposals are bounded by the Replicator's own timeout; the
		// batch does not belong to any one caller's context.
		start := time.Now()
		if !slot {
			b.forwarding.Add(1)
		}
		results, err := b.repl.Propose(context.Background(), cmds)
		if !slot {
			b.forwarding.Add(-1)
		}
		b.obs.BatchProposed(len(cmds), time.Since(start), err)
		if slot {
			<-b.leaderSlots
		}
		for i, r := range reqs {
			if err != nil {
				r.err = err
			} else if i < len(results) {
				r.res = results[i]
			} else {
				r.err = ticket.ErrUncertain
			}
			r.done <- struct{}{}
		}
		clear(reqs)
	}
}

func (b *batcher) close() {
	close(b.stop)
	b.wg.Wait()
}
