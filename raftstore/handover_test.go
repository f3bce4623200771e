package raftstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// TestTransferLeadership hands leadership around a loaded cluster: asked
// on a follower (forwarded to the leader), to the most up-to-date voter
// and to a named one. Proposals from every node go on throughout; none
// may fail in a term that a transfer ended, because the leader lets the
// entries it started commit before it hands over and the others wait for
// the new leader.
//
// A term that ended otherwise, by an election nobody asked for, is the
// failure detector at work: on a starved machine (-race, load average 16
// on 2 cores) a leader heard nothing from either follower for longer than
// LeaderLeaseTimeout and stepped down ("failed to contact quorum of
// nodes, stepping down"), once 1.5 s with no log line from any node,
// before any transfer had begun. Its entries in flight then fail, as they
// must (ErrUncertain, then ErrNoQuorum until a leader is elected), and
// the test cannot tell those apart from a handover's by their error: it
// tells them apart by the term they failed in.
func TestTransferLeadership(t *testing.T) {
	c := startCluster(t)
	old := c.leader()
	proposeRetry(t, c.follower(), setupCmds()...)

	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []termFailure
		begun  atomic.Bool // the first transfer has been asked for
		ok     atomic.Int64
		lastID = map[string]uint64{}
	)
	for _, n := range c.nodes {
		for range 4 {
			wg.Go(func() {
				for !stop.Load() {
					from := n.raft.CurrentTerm()
					rs, err := n.Propose(ctxT(t, 5*time.Second), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
					mu.Lock()
					if err != nil {
						errs = append(errs, termFailure{from: from, to: n.raft.CurrentTerm(), beforeTransfers: !begun.Load(), err: err})
					} else {
						ok.Add(1)
						lastID[n.ID()] = max(lastID[n.ID()], rs[0].InsertID)
					}
					mu.Unlock()
					if err != nil {
						// A client that is refused at once ("no
						// leader") waits before it asks again: twelve
						// that did not were refused 48,045 times in
						// one run, starving the election they waited
						// for (5.5 s without a leader).
						time.Sleep(5 * time.Millisecond)
					}
				}
			})
		}
	}
	defer func() { stop.Store(true); wg.Wait() }()
	// Progress is waited for until the test's own deadline: how soon it
	// comes is the scheduler's business (an unasked election under load
	// held it 3 s once); that it comes is the property.
	waitFor(t, "load", untilDeadline(t), func() bool { return ok.Load() > 100 })
	// planned holds the terms the transfers start: the target stands for
	// election in the term after the leader's. (Read after the transfer
	// it was once a later, unplanned term: the forwarded answer took
	// longer than the next lease lapse.)
	planned := map[uint64]bool{}

	// Asked on a follower, to whoever is most up to date. The leader is
	// read again: an unplanned election may have moved it under load.
	old = c.leader()
	var asker *Node
	for _, n := range c.nodes {
		if n != old {
			asker = n
			break
		}
	}
	start := time.Now()
	planned[c.maxTerm()+1] = true
	begun.Store(true)
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
	waitFor(t, "allocations under the new leader", untilDeadline(t), func() bool { return ok.Load() > before+100 })

	// Back, by name, asked on the old leader (now a follower).
	planned[c.maxTerm()+1] = true
	if got, err := old.TransferLeadership(ctxT(t, 5*time.Second), old.ID()); err != nil || got != old.ID() {
		t.Fatalf("transfer back to %s: got %q, %v", old.ID(), got, err)
	}
	before = ok.Load()
	waitFor(t, "allocations after the transfer back", untilDeadline(t), func() bool { return ok.Load() > before+100 })
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	checkTermFailures(t, errs, planned, c.maxTerm(), int(ok.Load()))

	// Refusals: nothing changes. Asked of the leader there is now; the
	// leader is compared only while the term stands (a later term may be
	// a lease lapse).
	l := c.leader()
	term := l.raft.CurrentTerm()
	var f *Node
	for _, n := range c.nodes {
		if n != l {
			f = n
			break
		}
	}
	if _, err := l.TransferLeadership(ctxT(t, 5*time.Second), "nobody"); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("transfer to an unknown id: %v, want ErrUnknownMember", err)
	}
	if _, err := f.TransferLeadership(ctxT(t, 5*time.Second), l.ID()); !errors.Is(err, ErrMemberConflict) {
		t.Errorf("transfer to the leader itself: %v, want ErrMemberConflict", err)
	}
	if got, err := f.HandOver(context.Background()); err != nil || got != "" {
		t.Errorf("HandOver on a follower: %q, %v; want nothing done", got, err)
	}
	if now := c.maxTerm(); now == term {
		if l2 := c.leader(); l2 != l {
			t.Errorf("leader moved from %s to %s in term %d after refused transfers", l.ID(), l2.ID(), term)
		}
	} else {
		// The refusals' errors above already say that no transfer was
		// started (the targets are checked first).
		t.Logf("term %d -> %d during the refusals: an unplanned election; leadership not compared", term, now)
	}
}

// termFailure is a proposal that failed, with the proposing node's term
// when it was made and when it failed, and whether it failed before the
// first transfer was asked for.
type termFailure struct {
	from, to        uint64
	beforeTransfers bool
	err             error
}

// checkTermFailures fails t for every failure attributed to a transfer
// (attributeFailures) and logs those an unplanned election explains.
func checkTermFailures(t *testing.T, errs []termFailure, planned map[uint64]bool, last uint64, ok int) {
	t.Helper()
	bad, excused := attributeFailures(errs, planned, last)
	for i, err := range bad {
		if i == 3 {
			t.Errorf("... and %d more", len(bad)-i)
			break
		}
		t.Errorf("%v (%d failed, %d succeeded)", err, len(errs), ok)
	}
	if len(excused) > 0 {
		t.Logf("%d proposals failed in terms an unplanned election ended (terms %v; planned %v), the failure detector at work on a loaded machine; %d succeeded",
			len(errs)-len(bad), excused, planned, ok)
	}
}

// attributeFailures sorts failed proposals by the election that followed
// them. A failure whose term window [from, to] is followed by, or spans,
// only planned elections (a transfer's) is the handover's fault and is
// returned in bad. A leader that steps down on its own fails its entries
// in flight in its term, to, and an unplanned election (to+1) follows; a
// node that fails fast for want of a leader does so in that term or in a
// later unplanned one (in an unplanned term, while its election went on:
// the window includes from): those are excused, with the unplanned terms
// returned, provided they still say that the entry was not, or may not
// have been, committed. So are those that failed before any transfer was
// asked for (the leader elected at start lost its lease, and the nodes
// failed fast while its successor's elections split). last is the highest
// term reached.
func attributeFailures(errs []termFailure, planned map[uint64]bool, last uint64) (bad []error, excused []uint64) {
	for _, f := range errs {
		var u uint64
		first := f.from + 1
		if errors.Is(f.err, ErrNoLeader) {
			first = f.from // failed fast while the election of its own term went on
		}
		for term := first; term <= min(f.to+1, last); term++ {
			if !planned[term] {
				u = term
				break
			}
		}
		if f.beforeTransfers {
			u = f.to
		}
		switch {
		case u == 0:
			bad = append(bad, fmt.Errorf("proposal failed in terms %d..%d, which only a transfer ended: %w", f.from, f.to, f.err))
		case !errors.Is(f.err, ticket.ErrUncertain) && !errors.Is(f.err, ticket.ErrNoQuorum):
			bad = append(bad, fmt.Errorf("proposal failed in terms %d..%d, before the unplanned election of term %d, with neither ErrUncertain nor ErrNoQuorum: %w", f.from, f.to, u, f.err))
		default:
			excused = append(excused, u)
		}
	}
	return bad, slices.Compact(slices.Sorted(slices.Values(excused)))
}

// TestAttributeFailures: the failures of a handover are never excused,
// those of a leader that stepped down on its own are, if they say so.
func TestAttributeFailures(t *testing.T) {
	lost := fmt.Errorf("%w: leadership lost while committing log", ticket.ErrUncertain)
	planned := map[uint64]bool{5: true, 8: true}
	for _, tc := range []struct {
		name string
		f    termFailure
		bad  bool
	}{
		{"in flight at a transfer", termFailure{4, 4, false, lost}, true},
		{"across the last transfer", termFailure{7, 8, false, lost}, true},
		{"leader stepped down, term 6 unplanned", termFailure{5, 5, false, lost}, false},
		{"no leader, failed fast in the unplanned term", termFailure{6, 6, false, fmt.Errorf("%w: no leader", ticket.ErrNoQuorum)}, false},
		{"in flight at the transfer after it", termFailure{7, 7, false, lost}, true},
		{"an error that claims nothing", termFailure{5, 5, false, errors.New("boom")}, true},
		{"after the last term", termFailure{8, 8, false, lost}, true},
		{"no leader while an unplanned election went on", termFailure{6, 6, false, fmt.Errorf("%w: %w", ticket.ErrNoQuorum, ErrNoLeader)}, false},
		{"no leader in the last transfer's term", termFailure{8, 8, false, fmt.Errorf("%w: %w", ticket.ErrNoQuorum, ErrNoLeader)}, true},
		{"no leader before any transfer", termFailure{4, 4, true, fmt.Errorf("%w: no leader", ticket.ErrNoQuorum)}, false},
		{"before any transfer, claiming nothing", termFailure{4, 4, true, errors.New("boom")}, true},
	} {
		bad, _ := attributeFailures([]termFailure{tc.f}, planned, 8)
		if got := len(bad) > 0; got != tc.bad {
			t.Errorf("%s: bad %v, want %v (%v)", tc.name, got, tc.bad, bad)
		}
	}
}

// untilDeadline is the time left before the test binary's -timeout, less
// a margin for the report: the bound for a wait whose property is that
// something happens, not how soon.
func untilDeadline(t testing.TB) time.Duration {
	dt, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Minute
	}
	d, ok := dt.Deadline()
	if !ok {
		return 10 * time.Minute
	}
	return time.Until(d) - 30*time.Second
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

// maxTerm is the highest Raft term any node of c is in.
func (c *cluster) maxTerm() uint64 {
	var m uint64
	for _, n := range c.nodes {
		m = max(m, n.raft.CurrentTerm())
	}
	return m
}

// TestHandoverDrainBound checks the bound of the wait for entries started
// before a handover (drainStarted), on a clock that moves only when the
// wait sleeps: entries that never finish hold it until handoverDrain (or
// an earlier deadline) and no step longer; entries that finish end it at
// the next look.
func TestHandoverDrainBound(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	run := func(by time.Time, inFlight func(now time.Duration) int64) (bool, time.Duration) {
		now := start
		ok := drainStarted(func() int64 { return inFlight(now.Sub(start)) }, by,
			func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) })
		return ok, now.Sub(start)
	}
	stuck := func(time.Duration) int64 { return 3 }
	for _, tc := range []struct {
		name     string
		by       time.Duration
		inFlight func(time.Duration) int64
		want     bool
		waited   time.Duration // at least this, and less than one step more
	}{
		{"stuck entries: the drain's bound", handoverDrain, stuck, false, handoverDrain},
		{"stuck entries: an earlier deadline", 300 * time.Millisecond, stuck, false, 300 * time.Millisecond},
		{"nothing in flight", handoverDrain, func(time.Duration) int64 { return 0 }, true, 0},
		{"entries finish after 5 ms", handoverDrain, func(d time.Duration) int64 {
			if d < 5*time.Millisecond {
				return 1
			}
			return 0
		}, true, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, waited := run(start.Add(tc.by), tc.inFlight)
			if ok != tc.want || waited < tc.waited || waited >= tc.waited+drainStep {
				t.Errorf("drainStarted = %v after %v; want %v after %v (within one step of %v)", ok, waited, tc.want, tc.waited, drainStep)
			}
		})
	}
}
