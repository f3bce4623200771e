package faults

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestMembership changes the cluster's membership under load: a fourth
// node joins with --join (through a follower's admin address, which
// forwards to the leader), a follower is removed with POST /remove sent
// to the new node, and finally the leader is removed with POST /remove
// sent to a follower. Allocations must continue on the members through
// every change, every member must agree on the voter list, the joined
// node must serve ids above everything handed out before it joined, and
// a removed node must stop handing out ids.
func TestMembership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := startLoaded(ctx, t, loadSpec{db: "members", clients: 2})
	hc, lead, w := l.hc, l.lead, l.w

	// Join n4 through a follower.
	follower := others(hc.Nodes, lead)[0]
	tJoin := time.Now()
	n4 := harness.Start(ctx, t, harness.Options{NodeID: "n4", Join: follower.HTTPAddr(), Args: clusterArgs()})
	t.Logf("n4 joined through %s and is ready after %v", follower.ID(), time.Since(tJoin).Round(time.Millisecond))
	hc.Nodes = append(hc.Nodes, n4)
	if err := waitMembers(ctx, hc.Nodes, "n1", "n2", "n3", "n4"); err != nil {
		t.Fatal(err)
	}
	maxBeforeJoin := w.h.MaxID()
	tServe := time.Now()
	w.run(n4, 2)
	if d, err := waitServing(w, []*harness.Node{n4}, tServe, healBound); err != nil {
		t.Errorf("joined node: %v", err)
	} else {
		t.Logf("joined node n4 served its first id %v after its clients started", d.Round(time.Millisecond))
	}
	for _, o := range w.h.Ops() {
		if o.Node == "n4" && o.OK() && o.ID <= maxBeforeJoin {
			t.Errorf("joined node handed out id %d, not above %d handed out before it joined", o.ID, maxBeforeJoin)
		}
	}

	// Mistakes are refused and change nothing: a member's id at a dead
	// address (Raft would move the member there), another member's
	// address, an unknown id to remove.
	for _, tc := range []struct {
		path string
		q    url.Values
		want int
	}{
		{"/join", url.Values{"id": {follower.ID()}, "addr": {"127.0.0.1:1"}}, http.StatusConflict},
		{"/join", url.Values{"id": {"evil"}, "addr": {follower.RaftAddr()}}, http.StatusConflict},
		{"/remove", url.Values{"id": {"n9"}}, http.StatusNotFound},
	} {
		code, body, err := adminPostStatus(ctx, n4, tc.path, tc.q)
		if err != nil || code != tc.want {
			t.Errorf("POST %s %v: %d %q (%v), want %d", tc.path, tc.q, code, body, err, tc.want)
		}
	}
	if err := waitMembers(ctx, hc.Nodes, "n1", "n2", "n3", "n4"); err != nil {
		t.Fatal(err)
	}
	if st, err := follower.Status(ctx); err != nil || st.LeaderID == "" {
		t.Errorf("%s after the refused join: %+v %v", follower.ID(), st, err)
	}

	// Remove a follower (one of the original three), asking n4.
	lead, err := settle(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	victim := others(hc.Nodes, lead, n4)[0]
	removeMember(ctx, t, w, hc, n4, victim)

	// Remove the leader, asking a follower. The leader commits its own
	// removal and steps down; the remaining two elect a new leader.
	lead, err = settle(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	asker := others(hc.Nodes, lead)[0]
	d := removeMember(ctx, t, w, hc, asker, lead)
	t.Logf("after removing the leader %s the remaining nodes %v served again within %v", lead.ID(), ids(hc.Nodes), d.Round(time.Millisecond))
	if len(hc.Nodes) != 2 {
		t.Fatalf("%d members left, want 2", len(hc.Nodes))
	}
	if _, err := settle(ctx, hc); err != nil {
		t.Errorf("two-node cluster after removing the leader: %v", err)
	}

	// A joined node restarts from its own state, with the same flags: it
	// must not ask to join again, and its --join target may be gone.
	for _, n := range hc.Nodes {
		if n != n4 {
			continue
		}
		if err := n4.Restart(ctx); err != nil {
			t.Fatalf("joined node n4 did not restart with its --join flag: %v", err)
		}
		if _, err := settle(ctx, hc); err != nil {
			t.Errorf("cluster after restarting the joined node: %v", err)
		}
	}

	w.halt()
	dumpHistory(t, w.h)
	w.checkClean(t)
	okN, failed := w.h.Counts()
	t.Logf("membership: %d allocations ok, %d failed (%s), max id %d", okN, failed, w.errorClasses(), w.h.MaxID())
}

// removeMember removes victim by POST /remove on asker while the load
// runs, checks that the others agree on the new voter list and keep
// serving, and that victim hands out no id once the others have moved
// on. It drops victim from hc.Nodes and returns how long the others took
// to serve an allocation started after the removal was requested.
func removeMember(ctx context.Context, t *testing.T, w *workload, hc *harness.Cluster, asker, victim *harness.Node) time.Duration {
	t.Helper()
	rest := others(hc.Nodes, victim)
	want := ids(rest)
	sort.Strings(want)
	t0 := time.Now()
	if err := adminPost(ctx, asker, "/remove", url.Values{"id": {victim.ID()}}); err != nil {
		saveGoroutines(ctx, t, victim)
		t.Fatalf("remove %s via %s: %v", victim.ID(), asker.ID(), err)
	}
	t.Logf("removed %s via %s in %v", victim.ID(), asker.ID(), time.Since(t0).Round(time.Millisecond))
	if err := waitMembers(ctx, rest, want...); err != nil {
		t.Fatal(err)
	}
	d, err := waitServing(w, rest, t0, majorityBound)
	if err != nil {
		t.Errorf("after removing %s: %v", victim.ID(), err)
	}
	// The removed node no longer receives the log, and the leader stops
	// replicating to it at once, so it may never hear of its removal: it
	// notices only when its heartbeat timeout (1-2s) passes without a
	// leader. Until then it may still forward batches to the leader,
	// which hands out correct ids; after that it must refuse.
	w.sleep(5 * time.Second)
	tWatch := time.Now()
	w.sleep(2 * time.Second)
	for _, o := range w.h.Ops() {
		if o.Node == victim.ID() && o.OK() && !o.Call.Before(tWatch) {
			t.Errorf("removed node %s handed out id %d %v after its removal: %s",
				victim.ID(), o.ID, o.Call.Sub(t0).Round(time.Millisecond), w.h.Format(o))
			break
		}
	}
	if victim.Ready(ctx) {
		t.Errorf("removed node %s still reports /readyz 200", victim.ID())
	}
	// Nor does it answer reads from its frozen state. It says it was
	// removed when the entry that removed it reached it; when it did not
	// (see above), it knows only that no leader answers its read index.
	if db, err := sql.Open("mysql", victim.DSN("")); err == nil {
		var s string
		err := db.QueryRowContext(ctx, "SHOW DATABASES").Scan(&s)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != errNoQuorum ||
			!(strings.Contains(me.Message, "removed") || strings.Contains(me.Message, "no leader")) {
			t.Errorf("removed node %s answered a read: %v, want error %d saying it was removed or has no leader", victim.ID(), err, errNoQuorum)
		}
		t.Logf("removed node %s refuses a read: %v", victim.ID(), err)
		db.Close()
	}
	w.stopNode(victim.ID())
	saveGoroutines(ctx, t, victim) // in case it does not stop
	if err := victim.Stop(); err != nil {
		t.Errorf("stopping removed node %s: %v", victim.ID(), err)
	}
	hc.Nodes = rest
	return d
}
