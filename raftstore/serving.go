package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// ErrRemoved: this node is no longer a member of its cluster's
// configuration. Its state stops at its removal and nothing it answers
// would be current, so it answers nothing until it is restarted with an
// empty data directory and joined again.
var ErrRemoved = errors.New("raftstore: this node was removed from the cluster")

// A node answers statements from its local state only when that state is
// not behind what the node itself had accepted, nor, on a follower,
// behind what the leader had committed when the node asked. Three facts
// decide it, each kept up to date in the background so that the check
// per statement is a few atomic loads:
//
//   - caughtUp: once after start, the node was Ready. Until then the state
//     file may hold nothing (it is rebuilt from the snapshot and log at
//     start) while the log that will fill it waits for a leader.
//   - leaderTerm: a leader answers from its state only in a term in which
//     a Barrier has gone through, because entries committed by earlier
//     leaders are applied only after the new leader's first entry commits.
//   - removed: the latest configuration no longer lists this node.

// Serving reports why the local state may not answer a statement now, or
// nil. It does not block.
func (n *Node) Serving() error {
	if n.removed.Load() {
		return ErrRemoved
	}
	if n.raft.State() == raft.Shutdown {
		// A leader that committed its own removal shuts Raft down.
		return ErrClosed
	}
	if !n.caughtUp.Load() {
		return fmt.Errorf("%w: catching up with the log after start (%s)", ErrNotCaughtUp, n.replayProgress())
	}
	if n.raft.State() == raft.Leader && n.leaderTerm.Load() != n.raft.CurrentTerm() {
		return fmt.Errorf("%w: new leader applying its predecessors' entries (%s)", ErrNotCaughtUp, n.replayProgress())
	}
	return nil
}

// WaitServing waits until the local state may answer a statement, or ctx
// ends. Its errors wrap ticket.ErrNoQuorum (nothing was done; retry), and
// ErrRemoved or ErrClosed when waiting cannot help.
func (n *Node) WaitServing(ctx context.Context) error {
	err := n.Serving()
	if err == nil {
		return nil
	}
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if n.isClosed() {
			err = ErrClosed
		}
		if errors.Is(err, ErrRemoved) || errors.Is(err, ErrClosed) {
			return fmt.Errorf("%w: %w", ticket.ErrNoQuorum, err)
		}
		if nl := n.leaderless(); nl != nil && errors.Is(err, ErrNotCaughtUp) {
			// Catching up needs a leader, and none has been known for
			// an election timeout: fail fast, as Propose does.
			return fmt.Errorf("%w: %w (%w)", ticket.ErrNoQuorum, err, nl)
		}
		select {
		case <-ctx.Done():
			return n.withStorage(fmt.Errorf("%w: %w (%w)", ticket.ErrNoQuorum, err, ctx.Err()))
		case <-t.C:
		}
		if err = n.Serving(); err == nil {
			return nil
		}
	}
}

// Applied reports whether the local state holds the entry at index (and
// every command entry before it). It does not block.
func (n *Node) Applied(index uint64) bool { return n.stateIncludes(index) }

// nudgeAfter is how long WaitApplied waits for the local state before it
// nudges the leader: under load the next entry brings the commit index
// within a commit interval anyway, and a nudge costs a log entry.
const nudgeAfter = 2 * time.Millisecond

// WaitApplied waits until the local state holds the entry at index, or
// ctx ends: a session that wrote through a follower reads its own write.
// A follower that has waited nudgeAfter asks the leader for a barrier
// entry, which tells it the commit index; without it an idle cluster
// tells it only after CommitTimeout (measured, Leaf's UPDATE then SELECT
// at one connection through a follower: p50 18.6 ms, 54 segments/s).
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	start := time.Now()
	for !n.stateIncludes(index) {
		if time.Since(start) >= nudgeAfter {
			n.nudgeLeader()
		}
		if n.isClosed() {
			return fmt.Errorf("%w: %w", ticket.ErrNoQuorum, ErrClosed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w: state at %d, waiting for %d (%w)", ticket.ErrNoQuorum, ErrNotCaughtUp,
				n.fsm.AppliedIndex(), index, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// syncState waits until the local state holds every entry the cluster had
// committed when it was called: a leader's own commit index once its
// term's Barrier went through, a follower's leader's.
func (n *Node) syncState(ctx context.Context) error {
	if err := n.WaitServing(ctx); err != nil {
		return err
	}
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return ErrNoLeader
	}
	target := n.raft.CommitIndex()
	if id != n.id {
		lc, err := n.fwd.commitIndex(ctx, string(addr), n.deadline(ctx))
		if err != nil {
			return fmt.Errorf("%w: asking leader %s: %w", ErrNotCaughtUp, id, err)
		}
		target = max(target, lc)
	}
	return n.WaitApplied(ctx, target)
}

// catchUp sets caughtUp once the node is first Ready.
func (n *Node) catchUp() {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if n.Ready() == nil {
			n.caughtUp.Store(true)
			n.log.Info("state caught up; serving", "state_index", n.fsm.AppliedIndex(), "applied_index", n.raft.AppliedIndex())
			return
		}
		select {
		case <-t.C:
		case <-n.closed:
			return
		}
	}
}

// confirmLeadership runs a Barrier in a term this node leads and, once it
// has gone through, marks the term as one whose state is complete: every
// entry before the barrier, earlier leaders' included, is then in the
// state file. The barrier completes only after the FSM has applied every
// entry before it, which after a restart or on a lagging new leader can
// take far longer than any statement deadline (a replay of a large log):
// so it waits for the barrier for as long as the node leads the term, and
// issues a new one only when Raft failed the last (not queued in time,
// leadership lost and regained). Giving up on a deadline once left a node
// that led its term unready for good (issue 22).
func (n *Node) confirmLeadership(term uint64) {
	for n.leads(term) {
		err := n.awaitLeading(n.raft.Barrier(n.cfg.ApplyTimeout), term)
		if err == nil {
			if n.raft.CurrentTerm() == term {
				n.leaderTerm.Store(term)
			}
			return
		}
		n.log.Debug("barrier of a new term failed; retrying while this node leads", "term", term, "err", err)
		select {
		case <-time.After(barrierRetry):
		case <-n.closed:
			return
		}
	}
}

// barrierRetry is the pause before a failed barrier is issued again.
const barrierRetry = 20 * time.Millisecond

// leads reports whether this node still leads term and is open.
func (n *Node) leads(term uint64) bool {
	return n.raft.State() == raft.Leader && n.raft.CurrentTerm() == term && !n.isClosed()
}

// awaitLeading waits for f until it completes, the node stops leading
// term, or the node closes; there is no deadline, because the wait ends
// with the term anyway.
func (n *Node) awaitLeading(f raft.Future, term uint64) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-n.closed:
			return ErrClosed
		case <-tick.C:
			if !n.leads(term) {
				return fmt.Errorf("%w: no longer leading term %d", errGaveUp, term)
			}
		}
	}
}

// replayProgress says how far the state is: the index it holds and the
// last index of the node's log, which a new leader must apply first.
func (n *Node) replayProgress() string {
	return fmt.Sprintf("state at index %d of %d", n.fsm.AppliedIndex(), n.raft.LastIndex())
}

// watchMembership keeps removed current by reading the configuration
// every interval.
func (n *Node) watchMembership(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f := n.raft.GetConfiguration()
		if f.Error() == nil {
			c := f.Configuration()
			n.lone.Store(loneVoterOf(c, n.id))
			member := serverOf(c, string(n.id)) != nil
			if member {
				n.memberSeen.Store(true)
			}
			// Removed only once it has been a member (wasMember: seen
			// here, or in a committed entry the FSM was handed, or it
			// resumed from state of its own), or when the leader said
			// so (fwdRemoved).
			removed := len(c.Servers) > 0 && !member && n.wasMember() || n.toldRemoved.Load()
			if removed != n.removed.Swap(removed) && removed {
				n.log.Warn("this node is no longer in the cluster's configuration: refusing every statement; restart it with an empty data directory and --join to serve again")
			}
		}
		select {
		case <-t.C:
		case <-n.closed:
			return
		}
	}
}

// stateIncludes reports whether the state file holds every command entry
// up to index: Raft has handed the FSM everything up to index, and the
// last command at or below index is applied. Raft's own applied index
// alone is not enough (it moves when entries are queued to the FSM, not
// when the FSM has applied them), and the FSM's alone never reaches an
// index that holds a no-op, barrier or configuration entry.
func (n *Node) stateIncludes(index uint64) bool {
	applied := n.fsm.AppliedIndex()
	if applied >= index {
		return true
	}
	if n.raft.AppliedIndex() < index {
		return false
	}
	var l raft.Log
	for i := index; i > applied; i-- {
		if err := n.logs.GetLog(i, &l); err != nil {
			// Compacted: a snapshot at or above i exists here, taken from
			// (or installed into) this state, so the state has it.
			return errors.Is(err, raft.ErrLogNotFound)
		}
		if l.Type == raft.LogCommand {
			return n.fsm.AppliedIndex() >= i
		}
	}
	return true
}

// kickLoneVoter makes a node that is the only voter of its configuration
// stand for election at once instead of after a heartbeat timeout: after a
// restart nobody else can lead, and until it leads it cannot apply its
// own log. Raft has no call for it, but ReloadConfig with a shorter
// heartbeat timeout than the one in force wakes a follower's timer at once
// (hashicorp/raft v1.7.3's ReloadConfig notifies followerNotifyCh, and
// runFollower sets its timer to fire now), and with no leader ever heard
// from, the timer starts an election. The timeout cannot go below the
// leader lease (ValidateConfig), which the defaults make equal to it
// (--leader-lease 500ms, heartbeat timeout half of --election-timeout 1s):
// so it is first raised by a millisecond and then set back, the setting
// back being the shortening that wakes the timer. Lowering it to the lease,
// as this did before, did nothing at the defaults: a restarted single
// node waited 0.5-1 s for its election, and a client refused as
// leaderless in that wait (TestRestartSingleNodeAtOnce, make test
// 2026-11-28 00:39).
func (n *Node) kickLoneVoter() {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	servers := f.Configuration().Servers
	if len(servers) != 1 || servers[0].ID != n.id || servers[0].Suffrage != raft.Voter {
		return
	}
	rc := n.raft.ReloadableConfig()
	raised := rc
	raised.HeartbeatTimeout += time.Millisecond
	raised.ElectionTimeout = max(raised.ElectionTimeout, raised.HeartbeatTimeout)
	if err := n.raft.ReloadConfig(raised); err != nil {
		n.log.Debug("lone voter: could not shorten the first election", "err", err)
		return
	}
	if err := n.raft.ReloadConfig(rc); err != nil {
		n.log.Error("lone voter: could not restore the heartbeat timeout", "err", err)
	}
}

// Ready returns nil when the node can serve: it is a member, knows a
// leader, and its state holds every entry committed when it asked. A
// leader asks itself through a Barrier in its term (see
// confirmLeadership); a follower asks the leader for its commit index and
// waits up to a second to get there. Otherwise it says why (ErrNoLeader,
// ErrNotCaughtUp, ErrRemoved, ErrClosed, ErrFSMFailed).
func (n *Node) Ready() error {
	if err := n.FatalErr(); err != nil {
		return err
	}
	if err := n.StorageErr(); err != nil {
		return err
	}
	if n.isClosed() || n.raft.State() == raft.Shutdown {
		return ErrClosed
	}
	if n.removed.Load() {
		return ErrRemoved
	}
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return ErrNoLeader
	}
	if id == n.id {
		if n.leaderTerm.Load() != n.raft.CurrentTerm() {
			return fmt.Errorf("%w: new leader applying its predecessors' entries (%s)", ErrNotCaughtUp, n.replayProgress())
		}
		return nil
	}
	// A follower's own commit index can lag far behind the leader's (just
	// restarted, or waiting for a snapshot): ask the leader.
	deadline := time.Now().Add(readyTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	lc, err := n.fwd.commitIndex(ctx, string(addr), deadline)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotCaughtUp, err)
	}
	// Under load the leader commits all the time: what counts is reaching
	// what it had committed when asked, which a follower in step does
	// within a commit interval.
	for !n.stateIncludes(lc) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: state at %d, raft applied %d, leader's commit %d", ErrNotCaughtUp,
				n.fsm.AppliedIndex(), n.raft.AppliedIndex(), lc)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// readyTimeout bounds Ready's question to the leader.
const readyTimeout = time.Second

// WaitReady waits until Ready returns nil or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		err := n.Ready()
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrClosed) || errors.Is(err, ErrFSMFailed) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("raftstore: wait ready: %w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// nudgeLeader asks the leader, in the background, for a barrier entry;
// one nudge at a time per node, and none from the leader itself.
func (n *Node) nudgeLeader() {
	if !n.nudging.CompareAndSwap(false, true) {
		return
	}
	addr, id := n.raft.LeaderWithID()
	if id == "" || id == n.id {
		n.nudging.Store(false)
		return
	}
	go func() {
		defer n.nudging.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ApplyTimeout)
		defer cancel()
		if _, _, err := n.fwd.call(ctx, string(addr), time.Now().Add(n.cfg.ApplyTimeout), fwdNudge, nil, nil); err != nil {
			n.log.Debug("nudge leader", "leader", id, "err", err)
		}
	}()
}
