package raftstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// What this node knows of the leader: who it is, whether it is this node,
// and a channel that announces a change, so that forwards to an old
// leader stop waiting at once.

// Leader returns the leader's ID and address, empty if none is known.
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// IsLeader reports whether this node believes it is the leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// LeaderTerm reports the current term and whether this node leads it.
func (n *Node) LeaderTerm() (uint64, bool) {
	term := n.raft.CurrentTerm()
	return term, n.raft.State() == raft.Leader && n.raft.CurrentTerm() == term
}

// leaderChanged returns a channel closed at the next change of leader.
func (n *Node) leaderChanged() <-chan struct{} {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	return n.leaderGen
}

// watchLeader follows Raft's leader observations until the node closes.
// It also keeps leaderSeen current: every observation is a change of
// leader, so a leader was known until that moment (or is known now), and
// a tick refreshes it while one stays known. Observations are dropped
// when the channel is full; the tick covers them too.
func (n *Node) watchLeader() {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(obs)
	n.leaderSeen.Store(time.Now().UnixNano())
	go func() {
		defer n.raft.DeregisterObserver(obs)
		tick := time.NewTicker(leaderSeenTick)
		defer tick.Stop()
		for {
			select {
			case o := <-ch:
				n.leaderSeen.Store(time.Now().UnixNano())
				if lo := o.Data.(raft.LeaderObservation); lo.LeaderID == n.id {
					go n.confirmLeadership(n.raft.CurrentTerm())
				}
				n.lmu.Lock()
				close(n.leaderGen)
				n.leaderGen = make(chan struct{})
				n.lmu.Unlock()
			case <-tick.C:
				if _, id := n.raft.LeaderWithID(); id != "" {
					n.leaderSeen.Store(time.Now().UnixNano())
				}
			case <-n.closed:
				return
			}
		}
	}()
}

// leaderSeenTick is how often watchLeader notes that a leader is still
// known; leaderless times are that much too long at most.
const leaderSeenTick = 50 * time.Millisecond

// NoLeaderError is a refusal because no leader has been known here for
// longer than an election timeout: the node fails fast rather than make
// every statement wait for a leader that an election would have produced
// by now (no quorum: the others are down or cut off). It wraps
// ErrNoLeader.
type NoLeaderError struct {
	// Since is when this node last knew a leader (or started).
	Since time.Time
}

func (e *NoLeaderError) Error() string {
	return fmt.Sprintf("raftstore: no leader known since %s (%v)", e.Since.UTC().Format("15:04:05.000"),
		time.Since(e.Since).Round(100*time.Millisecond))
}

func (e *NoLeaderError) Unwrap() error { return ErrNoLeader }

// NoLeaderSince is e.Since: the wire layer says it in its refusal.
func (e *NoLeaderError) NoLeaderSince() time.Time { return e.Since }

// leaderless returns a NoLeaderError when no leader is known and none has
// been for longer than an election timeout, else nil. A leader dies, a
// follower stops calling it leader a heartbeat timeout later, and an
// election with a quorum ends well within an election timeout after
// that (two, with a split vote): so past it, the node most likely has no
// quorum, and a statement that waits until its deadline only makes its
// client wait. The first statement after a leader appears goes to it.
func (n *Node) leaderless() *NoLeaderError {
	if _, id := n.raft.LeaderWithID(); id != "" {
		return nil
	}
	since := time.Unix(0, n.leaderSeen.Load())
	if time.Since(since) <= n.cfg.ElectionTimeout {
		return nil
	}
	return &NoLeaderError{Since: since}
}

// currentLeader returns the leader with the channel that announces its
// change, taken first so that no change can slip in between.
func (n *Node) currentLeader() (<-chan struct{}, raft.ServerAddress, raft.ServerID) {
	changed := n.leaderChanged()
	addr, id := n.raft.LeaderWithID()
	return changed, addr, id
}

// VerifyLeader confirms with a quorum that this node still leads, and
// returns the term it leads in: state kept in memory on behalf of a term
// (range reservations) must be dropped when the term changes. Every vote
// counted comes from a follower that answered, in that term, a request
// sent after the call began (confirmFresh; Raft's own VerifyLeader
// also counts replies to requests sent before, see confirm.go), so no
// other leader can have acknowledged a write before the call. Concurrent
// callers may share heartbeats.
func (n *Node) VerifyLeader(ctx context.Context) (term uint64, err error) {
	term = n.raft.CurrentTerm()
	if n.raft.State() != raft.Leader {
		return term, fmt.Errorf("raftstore: verify leader: %w: %w", ticket.ErrNoQuorum, errNotLeader)
	}
	if n.loneVoter() {
		// Nobody else can vote, so nobody else can lead: Raft would
		// answer the same, but only after the leader loop has finished
		// whatever it is doing (writing a batch to disk), which holds
		// every concurrent reader back and releases them together.
		return term, nil
	}
	err = confirmFresh(ctx, n.raft, n.replies, n.id, term, n.leaderChanged())
	if err == nil && n.raft.CurrentTerm() != term {
		err = errors.New("term changed")
	}
	if err != nil {
		return term, fmt.Errorf("raftstore: verify leader: %w: %w", ticket.ErrNoQuorum, err)
	}
	return term, nil
}

// loneVoter reports whether this node is the only voter of the latest
// configuration it knows (committed or not: a voter being added counts).
func (n *Node) loneVoter() bool {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	return loneVoterOf(cf.Configuration(), n.id)
}

// loneVoterOf reports whether id is the only voter of c.
func loneVoterOf(c raft.Configuration, id raft.ServerID) bool {
	voters := 0
	me := false
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter {
			voters++
			me = me || s.ID == id
		}
	}
	return voters == 1 && me
}

// WaitLeader waits until a leader is known and returns its ID.
func (n *Node) WaitLeader(ctx context.Context) (string, error) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if _, id := n.raft.LeaderWithID(); id != "" {
			return string(id), nil
		}
		if n.isClosed() {
			return "", ErrClosed
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("raftstore: wait leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}
