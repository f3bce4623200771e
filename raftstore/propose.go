package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/ticket/model"
)

// The propose path: a batch becomes one Raft entry on the leader, reached
// directly or through forwarding. Every failure says which of two things
// the client may be told:
//
// Nothing was written (ticket.ErrNoQuorum; the batch was certainly not
// committed):
//   - the node closed, or the context ended, before an attempt;
//   - no leader was known, or each node tried said it was not the leader
//     (errNotLeader, ErrNoLeader), until the deadline, or no leader has
//     been known for longer than an election timeout (NoLeaderError);
//   - a forwarded request never reached the leader whole (errNotSent),
//     until the deadline;
//   - Raft did not take the entry into its queue in time
//     (raft.ErrEnqueueTimeout), or the deadline had passed;
//   - the leader answered the same for a forwarded batch.
//
// The outcome is unknown (ticket.ErrUncertain; the batch may have been
// committed, and it is never retried):
//   - leadership was lost, or Raft shut down, with the entry queued;
//   - the wait for Raft's answer ended first (context, deadline plus
//     forwardGrace, Close);
//   - a forwarded request was sent and then the connection was lost, the
//     leader changed, or no answer came;
//   - the entry committed but its results were not usable.
//
// errNotLeader, errNotSent and ErrNoLeader mean the batch went nowhere:
// propose tries again until the deadline, then reports ErrNoQuorum.

// errNotLeader marks an operation that was certainly not committed because
// the node it reached is not the leader: it may be retried elsewhere.
var errNotLeader = errors.New("raftstore: not the leader")

// Propose commits cmds as one Raft entry and returns their results
// (ticket.Replicator). On a follower the batch goes to the leader. Errors
// wrap ticket.ErrNoQuorum when the batch was certainly not committed (no
// leader before the deadline, queue timeout, node closed) and
// ticket.ErrUncertain when it may have been (leadership lost, connection
// to the leader lost, context ended while waiting): a batch that may have
// committed is never retried.
func (n *Node) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	if refused := n.refusals(ctx, cmds); refused != nil {
		return n.proposeSome(ctx, cmds, refused)
	}
	// The row parts go in the encoding every member reads.
	data := logformat.AppendBatch(make([]byte, 0, 8+24*len(cmds)), cmds, logformat.FormatAt(n.fsm.ClusterVersion()))
	deadline := n.deadline(ctx)
	res, index, err := n.propose(ctx, deadline, data)
	err = n.withStorage(err)
	if err == nil && changesSchema(cmds) {
		// A session that created a database through a follower expects to
		// USE it next; the follower's own state must have caught up with
		// the entry first. Allocations need no wait: their results are all
		// the client sees.
		n.waitApplied(ctx, deadline, index)
	}
	if err == nil && len(res) != len(cmds) {
		return nil, fmt.Errorf("raftstore: %w: %d results for %d commands", ticket.ErrUncertain, len(res), len(cmds))
	}
	for i := range res {
		res[i].Index = index
	}
	return res, err
}

// refusals returns, for a batch that holds commands this node must not
// write into the log, each command's refusal (nil for the others); nil
// when every command may go. A refused command is answered with a
// statement error and nothing of it is committed.
func (n *Node) refusals(ctx context.Context, cmds []model.Command) []*model.Error {
	var refused []*model.Error
	for i := range cmds {
		e := n.refusal(ctx, &cmds[i])
		if e == nil {
			continue
		}
		if refused == nil {
			refused = make([]*model.Error, len(cmds))
		}
		refused[i] = e
	}
	return refused
}

// refusal says why c must not be proposed, or nil.
func (n *Node) refusal(ctx context.Context, c *model.Command) *model.Error {
	if err := logformat.CheckCommand(c); err != nil {
		// No statement's encoder writes one; the entry would fail on
		// every replica.
		return model.NewError(model.CodeUnknown, "%v", err)
	}
	// Below this build's version the cluster may hold members that
	// cannot apply c. At it, nothing this build writes is too new.
	if cluster := n.fsm.ClusterVersion(); cluster < CommandVersion {
		if need := logformat.Version(c); need > cluster {
			return n.versionGate(ctx, c, need)
		}
	}
	return nil
}

// proposeSome proposes the commands of cmds that refused does not refuse
// and answers the others with their refusal.
func (n *Node) proposeSome(ctx context.Context, cmds []model.Command, refused []*model.Error) ([]model.Result, error) {
	var rest []model.Command
	for i := range cmds {
		if refused[i] == nil {
			rest = append(rest, cmds[i])
		}
	}
	res := make([]model.Result, len(cmds))
	if len(rest) > 0 {
		got, err := n.Propose(ctx, rest)
		if err != nil {
			return nil, err
		}
		j := 0
		for i := range res {
			if refused[i] == nil {
				res[i] = got[j]
				j++
			}
		}
	}
	for i, e := range refused {
		if e != nil {
			res[i] = model.Result{Err: e}
		}
	}
	return res, nil
}

// propose commits an encoded batch here or through the leader, and
// returns the results and the entry's log index.
func (n *Node) propose(ctx context.Context, deadline time.Time, data []byte) ([]model.Result, uint64, error) {
	var last error
	for {
		if n.isClosed() {
			return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, err)
		}
		if n.raft.State() == raft.Leader {
			res, index, err := n.proposeLocal(ctx, deadline, data)
			if !errors.Is(err, errNotLeader) {
				return res, index, err
			}
			last = err
		} else if changed, addr, id := n.currentLeader(); addr != "" && id != n.id {
			start := time.Now()
			w := &leaderWatch{changed: changed, handedOver: func() bool {
				laddr, lid := n.raft.LeaderWithID()
				return lid != "" && lid != id && laddr != addr
			}}
			res, index, err := n.fwd.propose(ctx, string(addr), deadline, data, w, alloc.CASOwner(ctx))
			n.cfg.Observer.Forwarded(time.Since(start), err)
			if !errors.Is(err, errNotLeader) && !errors.Is(err, errNotSent) {
				return res, index, err
			}
			last = err
		} else if nl := n.leaderless(); nl != nil {
			// Long enough without a leader that waiting for one only
			// makes the client wait: refuse now (issue 34).
			return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, nl)
		} else {
			last = ErrNoLeader
		}
		if !n.pause(ctx, deadline) {
			return nil, 0, fmt.Errorf("raftstore: propose: %w (last: %v)", ticket.ErrNoQuorum, last)
		}
	}
}

// changesSchema reports commands whose effect later statements read from
// the local state (databases, tables, global variables).
func changesSchema(cmds []model.Command) bool {
	for i := range cmds {
		switch cmds[i].Op {
		case model.OpInsert, model.OpUpdate, model.OpReserve, model.OpDelete, model.OpSeqNext, model.OpKeys:
			// Row changes, NEXTVAL and Redis key writes: the results are
			// what the client sees, and a session's later read waits for
			// its own last write anyway (wire's session.view; a Redis
			// read waits for a read index). Waiting here cost a
			// follower's NEXTVAL a commit interval, 10-20 ms, and a
			// follower's INCR 5 ms (redis-benchmark -c 1: p50 5.7 ms
			// against 1.0 ms on the leader).
		default:
			return true
		}
	}
	return false
}

// waitApplied waits, until the deadline at most, for the local state to
// include the entry at index (WaitApplied, which nudges the leader).
// Missing the deadline is not an error: the entry is committed, only this
// replica's view lags.
func (n *Node) waitApplied(ctx context.Context, deadline time.Time, index uint64) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	_ = n.WaitApplied(ctx, index)
}

// proposeLocal applies an encoded batch on this node, which believes it
// leads.
func (n *Node) proposeLocal(ctx context.Context, deadline time.Time, data []byte) ([]model.Result, uint64, error) {
	timeout := time.Until(deadline)
	if timeout <= 0 {
		return nil, 0, fmt.Errorf("raftstore: propose: %w: deadline passed", ticket.ErrNoQuorum)
	}
	// Counted before the check, so that a handover that sets the flag and
	// then sees no entry counted cannot miss this one.
	n.applying.Add(1)
	defer n.applying.Add(-1)
	if n.handingOver.Load() {
		return nil, 0, fmt.Errorf("raftstore: propose: %w: handing leadership over", errNotLeader)
	}
	f := n.raft.Apply(data, timeout)
	err := n.await(ctx, f, deadline)
	if errors.Is(err, errGaveUp) {
		return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrUncertain, err)
	}
	if err != nil {
		return nil, 0, applyError(err)
	}
	switch r := f.Response().(type) {
	case *appliedEntry:
		return r.take(), f.Index(), nil
	case error:
		return nil, 0, fmt.Errorf("raftstore: propose: %w: committed but not applied: %w", ticket.ErrUncertain, r)
	default:
		return nil, 0, fmt.Errorf("raftstore: propose: %w: unexpected response %T", ticket.ErrUncertain, r)
	}
}

// errGaveUp marks a wait for a Raft future that ended without its answer.
var errGaveUp = errors.New("raftstore: gave up waiting for Raft")

// await waits for a Raft future, but not forever: Raft resolves it when
// the entry commits or leadership is lost, except when Raft shuts down
// under it (a leader that committed its own removal loses the batch in
// flight, and its future is never answered; a worker stuck on it would
// hold up the process's shutdown). The wait also ends with ctx, past the
// deadline plus the forwarding grace, or when the node closes.
func (n *Node) await(ctx context.Context, f raft.Future, deadline time.Time) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	limit := time.NewTimer(time.Until(deadline) + forwardGrace)
	defer limit.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", errGaveUp, ctx.Err())
		case <-limit.C:
			return fmt.Errorf("%w: no answer by the deadline", errGaveUp)
		case <-n.closed:
			return fmt.Errorf("%w: %w", errGaveUp, ErrClosed)
		case <-tick.C:
			if n.raft.State() == raft.Shutdown {
				select {
				case err := <-done:
					return err
				case <-time.After(100 * time.Millisecond):
				}
				return fmt.Errorf("%w: raft shut down", errGaveUp)
			}
		}
	}
}

// applyError sorts a Raft Apply failure into "not committed" and "may have
// been committed".
func applyError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", errNotLeader, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, err)
	default:
		// ErrLeadershipLost, ErrAbortedByRestore, ErrRaftShutdown (which
		// Raft also returns for entries already queued).
		return fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrUncertain, err)
	}
}

// deadline is the time a call gives up: the context's, or ApplyTimeout.
func (n *Node) deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(n.cfg.ApplyTimeout)
}

// pause waits before retrying; false when the deadline, the context or
// Close ends the call. A step that ends at the deadline is false too: the
// retry loops give up there rather than try once more.
func (n *Node) pause(ctx context.Context, deadline time.Time) bool {
	return n.sleep(ctx, deadline, 20*time.Millisecond) && time.Now().Before(deadline)
}

// sleep waits step, or until deadline if that is sooner. It is true when
// that time has passed, even if it ended at the deadline, and false at
// once when the deadline has already passed or when the context or Close
// ends the wait. It serves pause (retry loops, which stop at the deadline)
// and the hand-over's settle wait (which looks once more at the end).
func (n *Node) sleep(ctx context.Context, deadline time.Time, step time.Duration) bool {
	d := min(time.Until(deadline), step)
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-n.closed:
		return false
	}
}
