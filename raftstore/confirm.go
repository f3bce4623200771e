package raftstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Leadership confirmed only by replies to requests sent after the check
// began.
//
// hashicorp/raft v1.7.3's VerifyLeader is not that. Raft.verifyLeader
// (raft.go) registers the check in every follower's notify set and kicks
// its heartbeat goroutine; from then on, any reply that replication.go
// handles for that follower votes for the check: heartbeat() calls
// notifyAll(resp.Success) after any AppendEntries that returned,
// replicateTo() and pipelineDecode() call notifyAll(true) through
// updateLastAppended on a success, sendLatestSnapshot() on a success.
// Nothing compares when the request was sent with when the check was
// registered. So the reply to a request sent, and answered by the
// follower, before the check began (the heartbeat in flight when it was
// registered) confirms it. Such a reply only says the follower was in
// this term when it answered, which may be before the reader arrived:
// since then the follower may have voted for another node that has
// committed and acknowledged writes. Raft relies on the leader lease
// (checkLeaderLease) to have stepped down by then, a guess on timers and
// on the main goroutine running; a leader whose process was stopped
// (SIGSTOP, a VM pause) or whose main loop was blocked (a disk write)
// across the others' election does not run the check, and the stale reply
// itself renews the lease (setLastContact is when a reply is received).
// TestStaleReplyConfirms shows a quorum confirmed that way after another
// leader acknowledged a write.
//
// replyLog numbers every AppendEntries this node sends and notes, per
// peer, the latest number whose reply carried the request's own term: the
// follower was in that term when it answered, which was after the send.
// confirmFresh takes the current number before it asks Raft, and
// counts only peers that answered a later send. Raft's own verdict still
// ends a check early when a follower reports a newer term or the node
// steps down.

// replyLog numbers AppendEntries sends and keeps, per peer, what the
// latest answered one proved. Its zero value is not ready: newReplyLog.
type replyLog struct {
	sent atomic.Uint64

	mu      sync.Mutex
	peers   map[raft.ServerID]peerReply
	waiters map[*replyWaiter]struct{}
}

// peerReply is the latest send to one peer answered in the request's
// term (seq, term), and the highest newer term a reply reported.
type peerReply struct {
	seq, term uint64
	newer     uint64
}

// replyWaiter is a check waiting for replies to sends numbered above
// mark: wake gets a token when one comes (or a newer term), so that a
// reply to an older send wakes nobody.
type replyWaiter struct {
	mark uint64
	wake chan struct{}
}

func newReplyLog() *replyLog {
	return &replyLog{peers: map[raft.ServerID]peerReply{}, waiters: map[*replyWaiter]struct{}{}}
}

// appendEntries numbers one AppendEntries, sends it with send and notes
// its reply.
func (l *replyLog) appendEntries(id raft.ServerID, req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse, send func() error) error {
	seq := l.sent.Add(1)
	if err := send(); err != nil {
		return err
	}
	l.note(id, seq, req.Term, resp.Term)
	return nil
}

// note records that the send numbered seq, in reqTerm, to peer id was
// answered in respTerm.
func (l *replyLog) note(id raft.ServerID, seq, reqTerm, respTerm uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.peers[id]
	newer := false
	switch {
	case respTerm == reqTerm && seq > p.seq:
		p.seq, p.term = seq, reqTerm
	case respTerm > reqTerm && respTerm > p.newer:
		p.newer, newer = respTerm, true
	default:
		return
	}
	l.peers[id] = p
	for w := range l.waiters {
		if newer || seq > w.mark {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// mark is the number of the latest send so far: a send numbered above it
// left after the call.
func (l *replyLog) mark() uint64 { return l.sent.Load() }

// wait registers a waiter for replies to sends numbered above mark;
// unwait removes it.
func (l *replyLog) wait(mark uint64) *replyWaiter {
	w := &replyWaiter{mark: mark, wake: make(chan struct{}, 1)}
	l.mu.Lock()
	l.waiters[w] = struct{}{}
	l.mu.Unlock()
	return w
}

func (l *replyLog) unwait(w *replyWaiter) {
	l.mu.Lock()
	delete(l.waiters, w)
	l.mu.Unlock()
}

// errDeposed is a follower answering with a newer term than the one
// being confirmed.
var errDeposed = errors.New("raftstore: a follower is in a newer term")

// fresh reports whether need voters of c other than self answered, in
// term, a send numbered above mark. It fails when one reported a newer
// term.
func (l *replyLog) fresh(c raft.Configuration, self raft.ServerID, mark, term uint64, need int) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range c.Servers {
		if s.Suffrage != raft.Voter || s.ID == self {
			continue
		}
		p := l.peers[s.ID]
		if p.newer > term {
			return false, fmt.Errorf("%w: %s is in term %d", errDeposed, s.ID, p.newer)
		}
		if p.term == term && p.seq > mark {
			n++
		}
	}
	return n >= need, nil
}

// confirmFresh returns nil once a quorum of c's voters, self
// included when it is one, is known to have been in term after the call
// began: every other voter counted answered, in term, an AppendEntries
// sent after it began. It asks r.VerifyLeader for the heartbeats that
// bring those answers, and fails as soon as Raft's own check fails, a
// follower reports a newer term, or lost is closed (this node stopped
// leading; nil if the caller has no such signal).
func confirmFresh(ctx context.Context, r *raft.Raft, l *replyLog, self raft.ServerID, term uint64, lost <-chan struct{}) error {
	mark := l.mark()
	cf := r.GetConfiguration()
	if err := cf.Error(); err != nil {
		return err
	}
	c := cf.Configuration()
	voters, selfVotes := 0, 0
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter {
			voters++
			if s.ID == self {
				selfVotes = 1
			}
		}
	}
	need := voters/2 + 1 - selfVotes
	raftDone := verifyAsync(r)
	// Registering after Raft's round is queued loses nothing: the first
	// check below reads every note made before.
	w := l.wait(mark)
	defer l.unwait(w)
	for {
		ok, err := l.fresh(c, self, mark, term, need)
		if err != nil || ok {
			return err
		}
		select {
		case <-w.wake:
		case err := <-raftDone:
			if err != nil {
				return err
			}
			// Raft counted its quorum, perhaps with replies to requests
			// sent before the check. The heartbeats it triggered are
			// bringing later ones: a follower whose reply was in flight
			// got its next heartbeat as soon as that reply was in.
			// Another round of Raft's would only queue one more
			// heartbeat behind each, which the next check would then
			// wait for. A newer term, a step-down or ctx end the wait.
			raftDone = nil
		case <-lost:
			return errNotLeader
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// verifyAsync starts a round of Raft's VerifyLeader, which sends a
// heartbeat to every follower, and delivers its verdict.
func verifyAsync(r *raft.Raft) <-chan error {
	f := r.VerifyLeader()
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	return done
}

// countedTransport is Raft's transport with every AppendEntries numbered
// and its reply noted in replies (confirmFresh).
type countedTransport struct {
	*patientTransport
	replies *replyLog
}

func (t *countedTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return t.replies.appendEntries(id, args, resp, func() error {
		return t.patientTransport.AppendEntries(id, target, args, resp)
	})
}
