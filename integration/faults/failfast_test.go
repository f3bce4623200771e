package faults

// Fail fast, recover fast (issue 34): a node without a quorum refuses at
// once, and a leader fault stalls the cluster for under two election
// timeouts.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
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
