package faults

// Fail fast, recover fast (issue 34): a node without a quorum refuses at
// once, and a leader fault stalls the cluster for under two election
// timeouts.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/integration/netproxy"
)

// refuseAtOnce bounds a refusal by a node that has known no leader for
// longer than an election timeout. DESIGN's target is 0.1 s; the bound
// leaves room for this shared 2-core machine, and stays far below the
// 3.3 s every statement waited before (the default 10 s statement
// timeout's ApplyTimeout), which the test must catch.
const refuseAtOnce = 500 * time.Millisecond

// TestMinorityRefusesAtOnce: two of three nodes are killed while clients
// of the third allocate. Once the survivor has known no leader for an
// election timeout it refuses every allocation at once with 1290, saying
// since when; once a second node is back and a leader is known, the
// survivor's next allocations succeed. Before issue 34 every statement
// waited the ApplyTimeout (3.3 s at the default --statement-timeout of
// 10 s) before its 1290, every time.
func TestMinorityRefusesAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The server's default statement timeout, where the issue measured
	// 3.4-4.0 s per refusal.
	hc := harness.StartCluster(ctx, t, 3, harness.Options{Args: []string{"--statement-timeout", "10s"}})
	lead, err := settle(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	createTicketTable(ctx, t, hc, lead, "minority")
	survivor := others(hc.Nodes, lead)[0]
	w := newWorkload(t, "minority")
	w.run(survivor, 3)
	if _, err := waitServing(w, []*harness.Node{survivor}, time.Now(), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	killed := others(hc.Nodes, survivor)
	tKill := time.Now()
	killNodes(t, killed)
	var tLost time.Time
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := survivor.Status(ctx); err == nil && st.LeaderID == "" {
			tLost = time.Now()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("survivor %s still names a leader 20s after the others died", survivor.ID())
		}
	}
	// The survivor fails fast once it has known no leader for an
	// election timeout; watch its clients for a few seconds after that.
	tKnown := tLost.Add(electionTimeout + 100*time.Millisecond)
	w.sleep(time.Until(tKnown.Add(3 * time.Second)))
	tEnd := time.Now()
	// Halting waits for the calls in flight, so every call of the window
	// is in the history (a slow refusal included).
	w.halt()
	ops := w.h.Ops()
	var n int
	var slowest, total time.Duration
	for _, o := range ops {
		if o.Call.Before(tKnown) || o.Call.After(tEnd) || o.Return.IsZero() {
			continue
		}
		n++
		took := o.Return.Sub(o.Call)
		total += took
		slowest = max(slowest, took)
		switch {
		case o.OK():
			t.Errorf("survivor without a quorum handed out an id: %s", w.h.Format(o))
		case errClass(o.Err) != "1290":
			t.Errorf("refusal without a quorum is not 1290: %s", w.h.Format(o))
		case !strings.Contains(o.Err.Error(), "no leader with a quorum since"):
			t.Errorf("refusal does not say since when there is no leader: %v", o.Err)
		}
		if took > refuseAtOnce {
			t.Errorf("refusal took %v (want under %v once the node knows it has no leader): %s",
				took.Round(time.Millisecond), refuseAtOnce, w.h.Format(o))
		}
	}
	if n == 0 {
		t.Fatalf("no allocation was refused between %s and %s", stamp(tKnown), stamp(tEnd))
	}
	t.Logf("killed at %s; survivor named no leader %v later; %d refusals after it knew, mean %v, slowest %v",
		stamp(tKill), tLost.Sub(tKill).Round(time.Millisecond), n, (total / time.Duration(n)).Round(time.Microsecond),
		slowest.Round(time.Microsecond))
	for _, o := range ops {
		if !o.OK() && !o.Call.Before(tKnown) {
			t.Logf("a refusal: %v", o.Err)
			break
		}
	}

	w.checkClean(t)

	// A second node back: a leader is elected, and the survivor's
	// clients get ids again, above every id before the kill.
	before := ops
	w = newWorkload(t, "minority")
	w.run(survivor, 3)
	if err := killed[0].Start(ctx); err != nil {
		t.Fatal(err)
	}
	var tLeader time.Time
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := survivor.Status(ctx); err == nil && st.LeaderID != "" {
			tLeader = time.Now()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader 20s after %s restarted", killed[0].ID())
		}
	}
	d, err := waitServing(w, []*harness.Node{survivor}, tLeader, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("survivor served again %v after it knew the new leader", d.Round(time.Millisecond))
	w.sleep(time.Second)
	w.halt()
	// Each client's first allocation called after the survivor knew the
	// leader succeeds: no stale "no leader" answer outlives the leader.
	// (A call made just before may still have been refused.)
	first := map[int]history.Op{}
	for _, o := range w.h.Ops() {
		if o.Call.After(tLeader) {
			if f, ok := first[o.Client]; !ok || o.Call.Before(f.Call) {
				first[o.Client] = o
			}
		}
	}
	for _, o := range first {
		if !o.OK() {
			t.Errorf("first allocation once a leader was known failed: %s", w.h.Format(o))
		}
	}
	w.checkClean(t)
	if vs := history.Check(append(before, w.h.Ops()...)); len(vs) > 0 {
		t.Errorf("history across the outage: %s", history.Report(vs, 20))
	}
}

// stallBoundStrict is DESIGN's bound on the cluster-wide stall after a
// leader fault: two election timeouts.
const stallBoundStrict = 2 * electionTimeout

// TestLeaderFaultStall: three nodes under load (four clients on each,
// --state-fsync), the leader paused (SIGSTOP for 4 s), killed (kill -9,
// restarted 2 s later) or cut off (its links stalled for 4 s), rounds
// of each (TICKETD_STALL_ROUNDS, default 3; TICKETD_STALL_FAULT=partition
// runs only the faults whose name holds it). The cluster-wide stall is
// from the last id any node returned before the fault to the first id
// any node returned for a call made after it. Its median over the rounds
// of each kind must stay under two election timeouts (issue 34: 2.65
// and 2.73 s for a paused leader here, 1.3-4.0 s at the default
// statement timeout), and no single one above stallBound: Raft's
// election is random, and one in about ten took 2.1-2.6 s on this
// loaded 2-core machine (a pre-vote refused and retried), which a strict
// bound on every round would turn into a test that fails once in a
// while. Each round logs a timeline of the healthy nodes: when their
// /status stopped naming the old leader and named the new one (upper
// bounds: /status answers late while Raft is busy electing; the nodes'
// logs have the exact times), when each served again, and what became
// of the statements in flight at the fault.
func TestLeaderFaultStall(t *testing.T) {
	rounds := 3
	if s := os.Getenv("TICKETD_STALL_ROUNDS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("TICKETD_STALL_ROUNDS=%q: want a positive count", s)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rounds)*90*time.Second+time.Minute)
	defer cancel()
	l := startLoaded(ctx, t, loadSpec{db: "stall", args: []string{"--state-fsync"}, proxied: true, clients: 4})
	c, w := l.c, l.w
	type fault struct {
		name        string
		start, stop func(n *harness.Node) error
		lasts       time.Duration
	}
	faults := []fault{
		{"SIGSTOP leader", (*harness.Node).Pause, (*harness.Node).Resume, 4 * time.Second},
		{"kill -9 leader", (*harness.Node).Kill, func(n *harness.Node) error { return n.Start(ctx) }, 2 * time.Second},
		{"partition leader", func(n *harness.Node) error { c.proxy.Isolate(n.ID(), netproxy.Stall); return nil },
			func(*harness.Node) error { c.proxy.HealAll(); return nil }, 4 * time.Second},
	}
	if only := os.Getenv("TICKETD_STALL_FAULT"); only != "" {
		faults = slices.DeleteFunc(faults, func(f fault) bool { return !strings.Contains(f.name, only) })
	}
	gaps := map[string][]time.Duration{}
	for r := 1; r <= rounds; r++ {
		for _, f := range faults {
			lead, err := settle(ctx, c.hc)
			if err != nil {
				t.Fatalf("before %s: %v", f.name, err)
			}
			rest := others(c.nodes(), lead)
			watch := watchLeaders(ctx, rest, lead.ID())
			if err := f.start(lead); err != nil {
				t.Fatal(err)
			}
			// From when the fault has taken hold (Pause returns once
			// every thread is stopped, Kill once the process is
			// reaped): a call made a moment before could still be
			// answered, and would hide the stall.
			t0 := time.Now()
			if _, err := waitServing(w, rest, t0, majorityBound); err != nil {
				t.Errorf("%s: %v", f.name, err)
			}
			w.sleep(time.Until(t0.Add(f.lasts)))
			events := watch()
			if err := f.stop(lead); err != nil {
				t.Fatal(err)
			}
			if _, err := waitServing(w, c.nodes(), time.Now(), healBound); err != nil {
				t.Errorf("after %s: %v", f.name, err)
			}
			ops := w.h.Ops()
			before, after, ok := clusterGap(slices.Values(ops), t0)
			if !ok {
				t.Fatalf("%s: no id after the fault", f.name)
			}
			gap := after.Sub(before)
			gaps[f.name] = append(gaps[f.name], gap)
			t.Logf("round %d, %s %s at %s: cluster-wide gap %v (last id %s, next %s)\n%s", r, f.name, lead.ID(), stamp(t0),
				gap.Round(time.Millisecond), since(t0, before), since(t0, after), stallTimeline(ops, rest, lead.ID(), t0, events))
			if gap > stallBound {
				t.Errorf("%s: no node handed out an id for %v, more than %v", f.name, gap.Round(time.Millisecond), stallBound)
			}
			w.sleep(time.Second)
		}
	}
	w.halt()
	w.checkClean(t)
	var b strings.Builder
	for _, f := range faults {
		p50, most := medianMax(gaps[f.name])
		fmt.Fprintf(&b, "\n  %-18s gaps %v (median %v, max %v)", f.name, roundAll(gaps[f.name]), p50.Round(time.Millisecond), most.Round(time.Millisecond))
		if p50 > stallBoundStrict {
			t.Errorf("%s: median cluster-wide gap %v over %d rounds, more than two election timeouts (%v)",
				f.name, p50.Round(time.Millisecond), len(gaps[f.name]), stallBoundStrict)
		}
	}
	t.Logf("cluster-wide gaps, %d rounds:%s", rounds, b.String())
}

// medianMax is the median and the largest of ds.
func medianMax(ds []time.Duration) (p50, most time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	g := slices.Sorted(slices.Values(ds))
	return g[len(g)/2], g[len(g)-1]
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// since formats t relative to t0, "+1.234s".
func since(t0, t time.Time) string {
	d := t.Sub(t0).Round(time.Millisecond)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// leaderEvent is when a healthy node stopped naming the old leader and
// when it named a new one.
type leaderEvent struct {
	node       string
	lost, next time.Time
	newLeader  string
}

// watchLeaders polls the nodes' /status every 10 ms until the returned
// function is called, which returns what each node said when.
func watchLeaders(ctx context.Context, ns []*harness.Node, old string) func() []leaderEvent {
	ctx, cancel := context.WithCancel(ctx)
	evs := make([]leaderEvent, len(ns))
	var wg sync.WaitGroup
	for i, n := range ns {
		evs[i].node = n.ID()
		wg.Go(func() {
			for ctx.Err() == nil {
				st, err := n.Status(ctx)
				now := time.Now()
				if err == nil && st.LeaderID != old && evs[i].lost.IsZero() {
					evs[i].lost = now
				}
				if err == nil && st.LeaderID != old && st.LeaderID != "" {
					evs[i].next, evs[i].newLeader = now, st.LeaderID
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	return func() []leaderEvent {
		cancel()
		wg.Wait()
		return evs
	}
}

// stallTimeline describes, relative to the fault at t0, what the healthy
// nodes saw: leader lost and found, first id served, and the calls in
// flight at the fault or made during the stall that failed.
func stallTimeline(ops []history.Op, rest []*harness.Node, victim string, t0 time.Time, evs []leaderEvent) string {
	var b strings.Builder
	for _, e := range evs {
		first, _ := firstOK(slices.Values(ops), e.node, t0)
		fmt.Fprintf(&b, "    %s: old leader gone %s, new leader %s %s, first id of a call made after the fault %s\n",
			e.node, since(t0, e.lost), e.newLeader, since(t0, e.next), since(t0, first))
	}
	// Calls of the healthy nodes in flight at the fault: how they ended.
	for _, n := range rest {
		var inflight, failed []string
		for _, o := range ops {
			if o.Node != n.ID() || o.Call.After(t0) || o.Return.Before(t0) {
				continue
			}
			s := fmt.Sprintf("%s->%s", since(t0, o.Call), since(t0, o.Return))
			if o.OK() {
				inflight = append(inflight, s+" ok")
			} else {
				failed = append(failed, s+" "+errClass(o.Err))
			}
		}
		fmt.Fprintf(&b, "    %s: in flight at the fault: %d ok %v, %d failed %v\n", n.ID(), len(inflight), inflight, len(failed), failed)
	}
	classes := map[string]int{}
	var lastErr time.Time
	for _, o := range ops {
		if o.Node != victim && !o.OK() && o.Call.After(t0) && o.Call.Before(t0.Add(5*time.Second)) {
			classes[errClass(o.Err)]++
			if o.Return.After(lastErr) {
				lastErr = o.Return
			}
		}
	}
	fmt.Fprintf(&b, "    healthy nodes' calls made within 5 s of the fault that failed: %v (last returned %s)", classes, since(t0, lastErr))
	return b.String()
}
