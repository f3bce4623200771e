package raftstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// TestTransferLeadership hands leadership around a loaded cluster: asked
// on a follower (forwarded to the leader), to the most up-to-date voter
// and to a named one. Proposals from every node go on throughout; none
// may fail, because the leader lets the entries it started commit before
// it hands over and the others wait for the new leader.
func TestTransferLeadership(t *testing.T) {
	c := startCluster(t)
	old := c.leader()
	proposeRetry(t, c.follower(), setupCmds()...)

	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		ok     atomic.Int64
		lastID = map[string]uint64{}
	)
	for _, n := range c.nodes {
		for range 4 {
			wg.Go(func() {
				for !stop.Load() {
					rs, err := n.Propose(ctxT(t, 5*time.Second), []ticket.Command{replaceCmd("flickr", "Tickets64", "a")})
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						ok.Add(1)
						lastID[n.ID()] = max(lastID[n.ID()], rs[0].InsertID)
					}
					mu.Unlock()
				}
			})
		}
	}
	defer func() { stop.Store(true); wg.Wait() }()
	waitFor(t, "load", 5*time.Second, func() bool { return ok.Load() > 100 })

	// Asked on a follower, to whoever is most up to date.
	var asker *Node
	for _, n := range c.nodes {
		if n != old {
			asker = n
			break
		}
	}
	start := time.Now()
	got, err := asker.TransferLeadership(ctxT(t, 5*time.Second), "")
	if err != nil {
		t.Fatalf("transfer asked on follower %s: %v", asker.ID(), err)
	}
	if got == old.ID() || got == "" {
		t.Fatalf("transfer reported new leader %q, old was %s", got, old.ID())
	}
	took := time.Since(start)
	t.Logf("handed over %s -> %s in %v", old.ID(), got, took.Round(time.Millisecond))
	if took >= handoverDrain {
		// The leader stops starting entries before it waits for those
		// in flight; without that the wait never ends under load.
		t.Errorf("handover took %v: the entries in flight never drained (limit %v)", took, handoverDrain)
	}
	if l := c.leader(); l.ID() != got {
		t.Fatalf("leader is %s, transfer said %s", l.ID(), got)
	}
	before := ok.Load()
	waitFor(t, "allocations under the new leader", 5*time.Second, func() bool { return ok.Load() > before+100 })

	// Back, by name, asked on the old leader (now a follower).
	if got, err := old.TransferLeadership(ctxT(t, 5*time.Second), old.ID()); err != nil || got != old.ID() {
		t.Fatalf("transfer back to %s: got %q, %v", old.ID(), got, err)
	}
	before = ok.Load()
	waitFor(t, "allocations after the transfer back", 5*time.Second, func() bool { return ok.Load() > before+100 })
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("%d of %d proposals failed during the transfers, first: %v", len(errs), int(ok.Load())+len(errs), errs[0])
	}

	// Refusals: nothing changes.
	if _, err := old.TransferLeadership(ctxT(t, 5*time.Second), "nobody"); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("transfer to an unknown id: %v, want ErrUnknownMember", err)
	}
	if _, err := asker.TransferLeadership(ctxT(t, 5*time.Second), old.ID()); !errors.Is(err, ErrMemberConflict) {
		t.Errorf("transfer to the leader itself: %v, want ErrMemberConflict", err)
	}
	if got, err := asker.HandOver(context.Background()); err != nil || got != "" {
		t.Errorf("HandOver on a follower: %q, %v; want nothing done", got, err)
	}
	if l := c.leader(); l != old {
		t.Errorf("leader moved to %s after refused transfers", l.ID())
	}
}

// TestTransferLeadershipAlone: a single voter has nobody to hand over to;
// HandOver, the first step of a stop, then does nothing.
func TestTransferLeadershipAlone(t *testing.T) {
	n := openNode(t, testConfig("n1", t.TempDir(), listen(t)))
	waitFor(t, "leader", 10*time.Second, n.IsLeader)
	if _, err := n.TransferLeadership(ctxT(t, 5*time.Second), ""); !errors.Is(err, ErrNoTransferTarget) {
		t.Errorf("transfer on a single node: %v, want ErrNoTransferTarget", err)
	}
	if got, err := n.HandOver(context.Background()); err != nil || got != "" {
		t.Errorf("HandOver on a single node: %q, %v", got, err)
	}
}

// TestHandOverWhenAllStop: a leader stopped together with the rest of its
// cluster (every node got SIGTERM at once) hands over to a voter that
// stops right after it accepted; nobody else will lead, and the handover
// must end within a few election timeouts, not at the stop's whole
// deadline (it held the last node of a stopped cluster for
// --shutdown-timeout, 20 s, and the test harness killed it after 15).
func TestHandOverWhenAllStop(t *testing.T) {
	c := startCluster(t)
	l := c.leader()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		to  string
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		to, err := l.HandOver(ctx)
		done <- result{to, err}
	}()
	// The others stop the moment the leader steps down, as they do when
	// the whole cluster is stopped at once.
	for l.raft.State() == raft.Leader && time.Since(start) < 10*time.Second {
		time.Sleep(100 * time.Microsecond)
	}
	for _, n := range c.nodes {
		if n != l {
			must(t, n.Close())
		}
	}
	r := <-done
	took := time.Since(start)
	t.Logf("handover with the others stopping: %q, %v after %v", r.to, r.err, took.Round(time.Millisecond))
	if limit := 10 * c.cfgs[l.ID()].ElectionTimeout; took > limit {
		t.Errorf("handover took %v with nobody left to take over; want it to end within %v", took, limit)
	}
}
