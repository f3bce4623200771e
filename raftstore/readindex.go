package raftstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// Reads that see every acknowledged write (DESIGN §4a). A write is
// acknowledged once committed, so a state that holds the leader's commit
// index as it stood at some moment after a read began holds every write
// acknowledged before the read: the read index. The leader takes its
// commit index and then confirms with a quorum that it still leads (a
// deposed leader that has not noticed would otherwise answer from a past
// it alone still holds): VerifyLeader, which counts only followers that
// answered requests sent after the index was taken (confirm.go); a
// follower asks the leader for that index. Then the node waits until its
// own state holds it.
//
// Concurrent readers share rounds: a round that starts while others are
// under way serves everyone who arrived before it started, so that a
// burst of reads costs one quorum round on the leader and one request per
// follower, not one each. A reader never joins a round that started
// before it arrived: that round's index may miss a write acknowledged
// between its start and the reader's arrival. A leader that is the only
// voter of its latest configuration asks nobody, so each reader runs its
// own round there, without waiting on another goroutine.

// ReadIndex returns an index such that a state holding it reflects every
// write acknowledged, by any node, before the call.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	if err := n.WaitServing(ctx); err != nil {
		return 0, err
	}
	if n.raft.State() == raft.Leader && n.loneVoter() {
		// A lone voter's round asks nobody (VerifyLeader): the reader
		// runs its own, fresh by construction, instead of handing it to
		// the rounds' goroutine and sleeping until it ends (a park and a
		// wake-up per read, more than the round itself).
		return n.leaderReadIndex(ctx)
	}
	return n.reads.do(ctx, n.readIndexRound)
}

// WaitRead waits until the local state reflects every write acknowledged
// before the call. Its errors wrap ticket.ErrNoQuorum.
func (n *Node) WaitRead(ctx context.Context) error {
	idx, err := n.ReadIndex(ctx)
	if err != nil {
		return err
	}
	return n.WaitApplied(ctx, idx)
}

// readIndexRound is one round: this node's commit index confirmed by a
// quorum when it leads, the leader's when it follows.
func (n *Node) readIndexRound() (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ApplyTimeout)
	defer cancel()
	if n.raft.State() == raft.Leader {
		return n.leaderReadIndex(ctx)
	}
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		if nl := n.leaderless(); nl != nil {
			return 0, fmt.Errorf("raftstore: read index: %w", nl)
		}
		return 0, fmt.Errorf("raftstore: read index: %w", ErrNoLeader)
	}
	idx, err := n.fwd.commitIndex(ctx, string(addr), n.deadline(ctx))
	if err != nil {
		return 0, fmt.Errorf("raftstore: read index from leader %s: %w", id, err)
	}
	return idx, nil
}

// leaderReadIndex is the leader's read index: its commit index, taken
// before a quorum confirms its leadership, in a term whose barrier went
// through (before it, the commit index may stop short of entries an
// earlier leader had acknowledged).
func (n *Node) leaderReadIndex(ctx context.Context) (uint64, error) {
	term := n.raft.CurrentTerm()
	if n.leaderTerm.Load() != term {
		return 0, fmt.Errorf("raftstore: read index: %w: new leader applying its predecessors' entries", ErrNotCaughtUp)
	}
	idx := n.raft.CommitIndex()
	if _, err := n.VerifyLeader(ctx); err != nil {
		return 0, err
	}
	if n.raft.CurrentTerm() != term {
		return 0, fmt.Errorf("raftstore: read index: %w: term changed", errNotLeader)
	}
	return idx, nil
}

// readRounds runs one round at a time; callers that arrive meanwhile wait
// for the next, which starts when the current one ends.
type readRounds struct {
	mu      sync.Mutex
	running bool
	next    *readRound
}

type readRound struct {
	done chan struct{}
	idx  uint64
	err  error
}

func (r *readRounds) do(ctx context.Context, round func() (uint64, error)) (uint64, error) {
	r.mu.Lock()
	if r.next == nil {
		r.next = &readRound{done: make(chan struct{})}
	}
	rd := r.next
	if !r.running {
		r.running, r.next = true, nil
		go r.run(rd, round)
	}
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.idx, rd.err
	case <-ctx.Done():
		return 0, fmt.Errorf("raftstore: read index: %w", ctx.Err())
	}
}

func (r *readRounds) run(rd *readRound, round func() (uint64, error)) {
	for rd != nil {
		rd.idx, rd.err = round()
		close(rd.done)
		r.mu.Lock()
		rd, r.next = r.next, nil
		if rd == nil {
			r.running = false
		}
		r.mu.Unlock()
	}
}
