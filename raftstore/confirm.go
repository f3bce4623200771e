package raftstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/raftport"
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
//
// A quorum needs only some followers (one of two in a three-node
// cluster), but Raft's round sends a heartbeat to every one, and each
// costs its follower a wake-up: at 64 Redis clients with key blocks, the
// two followers' heartbeats were a fifth of the CPU the cluster spent
// per INCR. So a node that can send heartbeats itself (beat) sends one,
// in the term being confirmed, to just as many voters as the quorum
// needs, those that answered last (the live ones), and starts Raft's
// round for every follower only if no quorum answered within
// beatFallback (25 ms). The rule is the same for both: a vote is a
// reply in the term to a send numbered after the check began; and the
// node checks that it still leads that term once the votes are in
// (Raft's round did that in its loop), so a node that stepped down
// meanwhile, or voted in a later term, confirms nothing.

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
// sent after it began, and r still leads term once they have. The
// heartbeats that bring those answers are beat's, to as many voters as
// the quorum needs, then (after beat.fallback, or at once when beat is
// nil) r.VerifyLeader's, to every follower. It fails as soon as Raft's
// own check fails, a follower reports a newer term, r no longer leads
// term, or lost is closed (this node stopped leading; nil if the caller
// has no such signal).
func confirmFresh(ctx context.Context, r *raft.Raft, l *replyLog, self raft.ServerID, term uint64, lost <-chan struct{}, beat *beater) error {
	err := awaitFresh(ctx, r, l, self, term, lost, beat)
	if err == nil && (r.State() != raft.Leader || r.CurrentTerm() != term) {
		// The votes are in; this node must still lead the term they were
		// given in: no other leader can have had both.
		return errNotLeader
	}
	return err
}

// awaitFresh waits for confirmFresh's votes.
func awaitFresh(ctx context.Context, r *raft.Raft, l *replyLog, self raft.ServerID, term uint64, lost <-chan struct{}, beat *beater) error {
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
	var (
		raftDone <-chan error
		fallback <-chan time.Time
		poll     *time.Timer // while Raft's round is not running: see below
		polled   <-chan time.Time
	)
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	if beat != nil && need > 0 {
		for _, s := range l.latest(c, self, need) {
			go beat.send(s)
		}
		t := time.NewTimer(beat.fallback)
		defer t.Stop()
		fallback = t.C
		poll = time.NewTimer(statePoll)
		polled = poll.C
	} else {
		raftDone = verifyAsync(r)
	}
	// Registering after the sends loses nothing: the first check below
	// reads every note made before.
	w := l.wait(mark)
	defer l.unwait(w)
	for {
		ok, err := l.fresh(c, self, mark, term, need)
		if err != nil || ok {
			return err
		}
		select {
		case <-fallback:
			// The voters beat chose did not answer in time (stopped, cut
			// off, slow): every follower gets Raft's round.
			fallback = nil
			raftDone = verifyAsync(r)
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
			// lost may miss a step-down (the watcher drops observations
			// when it lags), so Raft's state is looked at now and then,
			// as Raft's own round did until here.
			raftDone = nil
			if poll == nil {
				poll = time.NewTimer(statePoll)
				polled = poll.C
			}
		case <-polled:
			if r.State() != raft.Leader || r.CurrentTerm() != term {
				return errNotLeader
			}
			poll.Reset(statePoll)
		case <-lost:
			return errNotLeader
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// statePoll is how often confirmFresh looks at Raft's state while it
// waits for fresh replies and Raft's own round is not running.
const statePoll = 50 * time.Millisecond

// beater sends confirmFresh's own heartbeats: send sends one to a
// voter, and fallback is how long confirmFresh waits for the voters they
// went to before it starts Raft's round for every follower.
type beater struct {
	send     func(raft.Server)
	fallback time.Duration
}

// beatFallback is a node's beater.fallback.
const beatFallback = 25 * time.Millisecond

// latest is the n voters of c other than self whose latest reply in
// their request's term came last: live ones, a stopped or cut-off voter
// falls behind as soon as another answers.
func (l *replyLog) latest(c raft.Configuration, self raft.ServerID, n int) []raft.Server {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []raft.Server
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter && s.ID != self {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b raft.Server) int { return cmp.Compare(l.peers[b.ID].seq, l.peers[a.ID].seq) })
	return out[:min(n, len(out))]
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
	*raftport.Transport
	replies *replyLog
}

func (t *countedTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return t.replies.appendEntries(id, args, resp, func() error {
		return t.Transport.AppendEntries(id, target, args, resp)
	})
}
