package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// Leadership handover: a leader that is about to stop (or is asked to)
// gives leadership to another voter instead of letting the cluster notice
// its absence, which costs an election timeout and every batch in flight.
//
// The order matters for clients. First the leader stops starting entries
// of its own (proposeLocal answers errNotLeader, which every caller
// retries) and waits for the entries already started to commit, so that
// no client is told "may have been committed" (ErrLeadershipLost) for a
// batch that was only unlucky. Then Raft's LeadershipTransfer brings the
// target up to date and tells it to stand for election at once
// (TimeoutNow). The batches that waited meanwhile find a follower and go
// to the new leader.

// ErrNoTransferTarget: there is no other voter to hand leadership to (a
// single-node cluster, or every other member is a non-voter).
var ErrNoTransferTarget = errors.New("raftstore: no other voter to hand leadership to")

// handoverDrain bounds the wait for entries already started before the
// transfer begins: they commit within a round trip unless the cluster has
// no quorum, in which case the transfer would not succeed either.
const handoverDrain = 2 * time.Second

// TransferLeadership hands leadership to the voter named to, or, with to
// empty, to the most up-to-date other voter, and returns the new leader's
// id. Called on a follower it asks the leader to do it. It fails with
// ErrUnknownMember for a to that is not a voter, ErrNoTransferTarget when
// there is nobody to hand over to, and wraps ticket.ErrNoQuorum when no
// leader could be reached or the transfer did not complete in time.
func (n *Node) TransferLeadership(ctx context.Context, to string) (string, error) {
	deadline := n.deadline(ctx)
	var last error
	for {
		if n.isClosed() {
			return "", ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		var (
			leader string
			err    error
		)
		if n.raft.State() == raft.Leader {
			leader, err = n.transferLocal(ctx, to, deadline)
		} else if laddr, lid := n.raft.LeaderWithID(); laddr != "" && lid != n.id {
			leader, err = n.fwd.transfer(ctx, string(laddr), deadline, to)
		} else {
			err = ErrNoLeader
		}
		if err == nil {
			return leader, nil
		}
		// Only what certainly went nowhere is tried again: a transfer
		// that may have happened is not repeated (it would move
		// leadership a second time).
		if !errors.Is(err, errNotLeader) && !errors.Is(err, ErrNoLeader) && !errors.Is(err, errNotSent) {
			return "", err
		}
		last = err
		if !n.pause(ctx, deadline) {
			return "", fmt.Errorf("raftstore: leadership transfer: %w (last: %v)", ticket.ErrNoQuorum, last)
		}
	}
}

// HandOver transfers leadership to the most up-to-date other voter if
// this node leads, and returns the new leader's id; it does nothing (and
// returns "") when this node does not lead or is the only voter. It is the
// first step of a planned stop.
func (n *Node) HandOver(ctx context.Context) (string, error) {
	if n.raft.State() != raft.Leader {
		return "", nil
	}
	leader, err := n.transferLocal(ctx, "", n.deadline(ctx))
	if errors.Is(err, ErrNoTransferTarget) || errors.Is(err, errNotLeader) {
		return "", nil
	}
	return leader, err
}

// transferLocal carries out a transfer on the leader.
func (n *Node) transferLocal(ctx context.Context, to string, deadline time.Time) (string, error) {
	targets, err := n.transferTargets(to)
	if err != nil {
		return "", err
	}
	if !n.handingOver.CompareAndSwap(false, true) {
		return "", fmt.Errorf("raftstore: leadership transfer: %w: a transfer is already under way", ticket.ErrNoQuorum)
	}
	defer n.handingOver.Store(false)
	start := time.Now()
	// Entries already started commit first (see the comment at the top).
	drainBy := start.Add(handoverDrain)
	if deadline.Before(drainBy) {
		drainBy = deadline
	}
	if !drainStarted(n.applying.Load, drainBy, time.Now, time.Sleep) {
		n.log.Warn("leadership transfer: entries started before it are still in flight after the drain wait; transferring anyway (they may end with ErrLeadershipLost)",
			"in_flight", n.applying.Load(), "waited", time.Since(start).Round(time.Millisecond))
	}
	if n.raft.State() != raft.Leader {
		return "", fmt.Errorf("raftstore: leadership transfer: %w", errNotLeader)
	}
	term := n.raft.CurrentTerm()
	var errs []error
	// With no target named, Raft picks the voter with the most of the log;
	// should that one fail (it stopped a moment ago), each other voter is
	// tried by name.
	tries := []*raft.Server{nil}
	if to != "" {
		tries = nil
	}
	for i := range targets {
		tries = append(tries, &targets[i])
	}
	done := false
	for _, t := range tries {
		if time.Now().After(deadline) || n.raft.State() != raft.Leader {
			break
		}
		var f raft.Future
		if t == nil {
			f = n.raft.LeadershipTransfer()
		} else {
			f = n.raft.LeadershipTransferToServer(t.ID, t.Address)
		}
		err := n.await(ctx, f, deadline)
		if err == nil {
			done = true
			break
		}
		name := "most up-to-date voter"
		if t != nil {
			name = string(t.ID)
		}
		n.log.Info("leadership transfer failed", "to", name, "err", err)
		errs = append(errs, fmt.Errorf("to %s: %w", name, err))
	}
	// Raft reports success once this node has stepped down; the new
	// leader is known here with its first heartbeat, which comes within
	// an election or not at all (the others stop too: a whole cluster
	// stopped at once), so the wait for it ends after two election
	// timeouts rather than at the caller's deadline.
	settle := time.Now().Add(2 * n.cfg.ElectionTimeout)
	if deadline.Before(settle) {
		settle = deadline
	}
	for {
		laddr, lid := n.raft.LeaderWithID()
		if laddr != "" && lid != n.id && n.raft.CurrentTerm() > term {
			n.log.Info("leadership handed over", "to", lid, "took", time.Since(start).Round(time.Millisecond))
			return string(lid), nil
		}
		if !done && n.raft.State() == raft.Leader && n.raft.CurrentTerm() == term {
			return "", fmt.Errorf("raftstore: leadership transfer: %w: %w", ticket.ErrNoQuorum, errors.Join(errs...))
		}
		// A 2 ms step: this wait is measured in round trips. A step that
		// ends at settle still gives the loop one more look.
		if !n.sleep(ctx, settle, 2*time.Millisecond) {
			return "", fmt.Errorf("raftstore: leadership transfer: %w: no new leader known two election timeouts after stepping down (%w)", ticket.ErrUncertain, errors.Join(errs...))
		}
	}
}

// drainStarted waits until no entry this node started is on its way any
// more (applying returns 0) or until by, whichever comes first, and
// reports whether they all finished. clock and nap are time.Now and
// time.Sleep but for tests, which check the bound on a clock of their own.
func drainStarted(applying func() int64, by time.Time, clock func() time.Time, nap func(time.Duration)) bool {
	for applying() > 0 {
		if !clock().Before(by) {
			return false
		}
		nap(drainStep)
	}
	return true
}

// drainStep is how often drainStarted looks: the wait is measured in
// round trips.
const drainStep = 200 * time.Microsecond

// transferTargets lists the voters leadership may go to: the one named,
// or every voter but this node.
func (n *Node) transferTargets(to string) ([]raft.Server, error) {
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, fmt.Errorf("raftstore: configuration: %w", err)
	}
	var out []raft.Server
	for _, s := range cf.Configuration().Servers {
		if s.ID == n.id || s.Suffrage != raft.Voter {
			continue
		}
		if to == "" || s.ID == raft.ServerID(to) {
			out = append(out, s)
		}
	}
	switch {
	case to == string(n.id):
		return nil, fmt.Errorf("%w: %q already leads", ErrMemberConflict, to)
	case to != "" && len(out) == 0:
		return nil, fmt.Errorf("%w: %q is not a voter (members: %s)", ErrUnknownMember, to, memberIDs(cf.Configuration()))
	case len(out) == 0:
		return nil, ErrNoTransferTarget
	}
	return out, nil
}
