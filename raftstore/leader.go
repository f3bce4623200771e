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
	n.quietTerm.Store(n.raft.CurrentTerm())
	go func() {
		defer n.raft.DeregisterObserver(obs)
		tick := time.NewTicker(leaderSeenTick)
		defer tick.Stop()
		for {
			select {
			case o := <-ch:
				n.leaderSeen.Store(time.Now().UnixNano())
				n.noteCampaign()
				if lo := o.Data.(raft.LeaderObservation); lo.LeaderID == n.id {
					go n.confirmLeadership(n.raft.CurrentTerm())
				}
				n.lmu.Lock()
				close(n.leaderGen)
				n.leaderGen = make(chan struct{})
				n.lmu.Unlock()
			case <-tick.C:
				n.noteCampaign()
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

// noteCampaign keeps leaderSeen, campaignSince and electionSeen current
// (watchLeader, on every leader observation and every tick): a known
// leader refreshes leaderSeen and ends a campaign; a node without one
// that stands as a candidate starts one, once, and notes when the term
// rises.
func (n *Node) noteCampaign() {
	term := n.raft.CurrentTerm()
	if _, id := n.raft.LeaderWithID(); id != "" {
		n.leaderSeen.Store(time.Now().UnixNano())
		n.campaignSince.Store(0)
		n.quietTerm.Store(term)
		n.electionSeen.Store(0)
		return
	}
	if term > n.quietTerm.Load() {
		n.quietTerm.Store(term)
		n.electionSeen.Store(time.Now().UnixNano())
	}
	if n.raft.State() == raft.Candidate {
		n.campaignSince.CompareAndSwap(0, time.Now().UnixNano())
	}
}

// leaderless returns a NoLeaderError when no leader is known and this
// node has stood as a candidate for longer than an election timeout
// without one appearing, else nil. An election with a quorum ends well
// within an election timeout of its start: so past it, the node most
// likely has no quorum, and a statement that waits until its deadline
// only makes its client wait. The clock starts at the campaign, not at
// the loss of the leader: a follower's own timer fires anywhere in [1, 2)
// heartbeat timeouts after its last contact (Raft randomizes it), and a
// node that has just started knows no leader until its first election,
// which on a lone node ends a moment after that timer; counted from the
// start, a lone node's restart refused a client that came in the few
// milliseconds between one election timeout and its election
// (TestRestartSingleNodeAtOnce, make test 00:39 on 2026-11-28). A node
// that never campaigns (not a voter of its configuration) refuses once no
// leader has been known for noCampaignTimeouts election timeouts.
//
// A split vote is not a lost quorum. A term rises only in an election
// (this node's, or another's it hears of from a peer it reaches), and
// with Raft's pre-vote a candidate holds one only once a quorum granted
// its pre-vote: so a risen term says a quorum took part, and that nobody
// has won yet. The candidates retry after one to two heartbeat timeouts (Raft's
// own election timeout, see raftConfig), past the election timeout when
// the two are equal: counted from the campaign alone, a restarted cluster
// whose three timers fired together (a stall on a loaded machine) refused
// at n1 before the retry (TestClusterRestartWaitsForItsElection under load;
// a SIGSTOP of the test process past every first timer, every time).
// So from the latest rise the node waits for that retry (two heartbeat
// timeouts at most) and its election (an election timeout). A node cut
// off from the quorum never wins a pre-vote, its term stays, and it
// refuses as before. A node that has campaigned is judged by its
// campaign alone: the bound of one that never did, counted from its
// start, came first after a stalled split vote. The first statement
// after a leader appears goes to it.
func (n *Node) leaderless() *NoLeaderError {
	if _, id := n.raft.LeaderWithID(); id != "" {
		return nil
	}
	since := time.Unix(0, n.leaderSeen.Load())
	if cs := n.campaignSince.Load(); cs != 0 {
		from, limit := cs, n.cfg.ElectionTimeout
		if es := n.electionSeen.Load(); es != 0 {
			from, limit = max(cs, es), n.cfg.ElectionTimeout+2*n.cfg.HeartbeatTimeout
		}
		if time.Since(time.Unix(0, from)) > limit {
			return &NoLeaderError{Since: since}
		}
		return nil
	}
	if time.Since(since) > noCampaignTimeouts*n.cfg.ElectionTimeout {
		return &NoLeaderError{Since: since}
	}
	return nil
}

// noCampaignTimeouts bounds, in election timeouts, how long a node that
// does not campaign waits for a leader before it refuses: past a follower's
// longest timer (two) and an election (one).
const noCampaignTimeouts = 3

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
	err = confirmFresh(ctx, n.raft, n.replies, n.id, term, n.leaderChanged(), n.heartbeat(term))
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

// heartbeat sends peers Raft's heartbeat of term (hashicorp/raft's
// replication.go heartbeat: the term and the leader, no entries), through
// the counted transport, for confirmFresh: the reply is noted there.
func (n *Node) heartbeat(term uint64) *beater {
	self := n.trans.EncodePeer(n.id, n.trans.LocalAddr())
	return &beater{fallback: beatFallback, send: func(peer raft.Server) {
		req := heartbeatRequest(n.protocol, n.id, self, term)
		var resp raft.AppendEntriesResponse
		if err := n.counted.AppendEntries(peer.ID, peer.Address, req, &resp); err != nil {
			n.log.Debug("confirmation heartbeat", "peer", peer.ID, "err", err)
		}
	}}
}

// heartbeatRequest is the heartbeat of term from the node id whose
// encoded address is self.
func heartbeatRequest(protocol raft.ProtocolVersion, id raft.ServerID, self []byte, term uint64) *raft.AppendEntriesRequest {
	return &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: protocol, ID: []byte(id), Addr: self},
		Term:      term,
		Leader:    self,
	}
}
