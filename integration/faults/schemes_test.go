package faults

// The ID schemes of issue 12 (Leaf segments, Tinyid compare-and-set,
// UidGenerator worker ids, NEXTVAL on cached and uncached sequences)
// through faults on a three-node cluster. These need the row-table and
// sequence server work: until it is merged ticketd refuses the schemes'
// DDL with error 1235 and TestSchemeFaults fails at setup.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/integration/schemes"
)

// schemeMix puts one client of each scheme on each of the three nodes
// (client i runs on node i mod 3, reconnecting to its own node, so that
// every node's service is measured): three Leaf servers with the row's
// step and three with a dynamic one on one biz_tag, three Tinyid servers
// racing on one biz_type, three UidGenerator launchers, three callers of
// each sequence.
var schemeMix = []schemes.Config{
	{Scheme: schemes.Leaf, Clients: 3},
	{Scheme: schemes.LeafDynamic, Clients: 3, Step: 700},
	{Scheme: schemes.Tinyid, Clients: 3},
	{Scheme: schemes.UidGen, Clients: 3},
	{Scheme: schemes.NextVal, Clients: 3},
	{Scheme: schemes.NextValNoCache, Clients: 3},
}

// schemeErrors are the allocation errors a fault may cause: a lost
// connection, the server's refusals (1290 no quorum, 1105 outcome
// unknown), and Tinyid's compare-and-set losing three times in a row.
var schemeErrors = []string{schemes.ClassConn, "1290", "1105", schemes.ClassConflict}

// schemeLoad is the schemes' workload on a cluster.
type schemeLoad struct {
	w      *workload // its history sees every scheme's allocations
	cancel context.CancelFunc
	done   chan struct{}
	mix    *schemes.Mix // histories readable while it runs
	err    error        // Mix.Run's, valid after done
}

// startSchemes creates database db and the schemes' tables through lead,
// waits until every node has applied them, and starts schemeMix on every
// node, recording into w's history too (for disrupt's availability
// checks) and in one history per counter.
func startSchemes(ctx context.Context, t *testing.T, hc *harness.Cluster, lead *harness.Node, db string, mix []schemes.Config) *schemeLoad {
	t.Helper()
	admin, err := sql.Open("mysql", lead.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	all := []schemes.Scheme{}
	for _, c := range mix {
		all = append(all, c.Scheme)
	}
	if err := schemes.Setup(ctx, schemes.DSN(lead.MySQLAddr(), db), all...); err != nil {
		t.Fatal(err)
	}
	if err := hc.WaitApplied(ctx, lead, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	tgt := schemes.Target{Name: "ticketd cluster"}
	for _, n := range hc.Nodes {
		tgt.Nodes = append(tgt.Nodes, schemes.Node{Name: n.ID(), DSN: schemes.DSN(n.MySQLAddr(), db)})
	}
	l := &schemeLoad{w: newWorkload(t, db), done: make(chan struct{}), mix: schemes.NewMix(mix)}
	rctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.done)
		l.err = l.mix.Run(rctx, tgt, l.w.h)
	}()
	t.Cleanup(l.halt)
	return l
}

// halt stops the clients and waits for them.
func (l *schemeLoad) halt() {
	l.cancel()
	<-l.done
	l.w.halt()
}

// servedAll waits until every node has served every scheme's counter
// with an allocation called at or after from, within bound.
func (l *schemeLoad) servedAll(ns []*harness.Node, from time.Time, bound time.Duration) error {
	for {
		missing := l.mix.Unserved(ids(ns), from)
		if len(missing) == 0 {
			return nil
		}
		if time.Since(from) > bound {
			return fmt.Errorf("no allocation called after %s completed within %v on: %s", stamp(from), bound, strings.Join(missing, ", "))
		}
		l.w.sleep(50 * time.Millisecond)
	}
}

// schemeFault is one fault of the scheme tests; single says it hits one
// node, so the cluster-wide stall is bounded by stallBound.
type schemeFault struct {
	name   string
	run    func(t *testing.T, e *faultEnv, leader *harness.Node) measurement
	single bool
}

// TestSchemeFaults runs schemeMix on a three-node cluster behind the
// proxy and injects kill -9 of the leader, SIGSTOP of the leader past
// the election timeout, and the leader partitioned from both followers
// (its clients still reaching it), one after another. After each it
// checks, per counter, that no id was handed out twice and nothing went
// backwards (a stale leader serving a Leaf segment or a cached sequence
// value from its old term is exactly what this catches), that every node
// serves every scheme again, the partitioned leader's refusals, and the
// cluster-wide stall; at the end the final rows against the histories.
func TestSchemeFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	faults := []schemeFault{
		{"kill-leader", killLeader, true},
		{"pause-leader", pauseLeader, true},
		{"partition-leader", partitionLeader, true},
	}
	runSchemeFaults(ctx, t, schemeMix, func(i int) (schemeFault, bool) {
		if i >= len(faults) {
			return schemeFault{}, false
		}
		return faults[i], true
	})
}

// runSchemeFaults starts a proxied three-node cluster under mix
// (schemeMix in the tests) and injects the faults next returns (next(0), next(1), ... until it
// says no), each from a settled cluster, checking after each and at the
// end. It returns the measurements.
func runSchemeFaults(ctx context.Context, t *testing.T, mix []schemes.Config, next func(i int) (schemeFault, bool)) []measurement {
	c := startCluster(ctx, t, 3, clusterArgs())
	lead, err := settle(ctx, c.hc)
	if err != nil {
		t.Fatal(err)
	}
	l := startSchemes(ctx, t, c.hc, lead, "ids", mix)
	if err := l.servedAll(c.nodes(), time.Now(), 20*time.Second); err != nil {
		t.Fatalf("schemes on the cluster, before any fault: %v", err)
	}
	env := &faultEnv{ctx: ctx, c: c, w: l.w, pauseFor: 3 * electionTimeout, holdFor: hold, downFor: time.Second, mixed: true}
	var results []measurement
	for i := 0; ; i++ {
		f, ok := next(i)
		if !ok {
			break
		}
		lead, err := settle(ctx, c.hc)
		if err != nil {
			t.Fatalf("before %s: %v", f.name, err)
		}
		t.Run(fmt.Sprintf("%02d-%s", i, f.name), func(t *testing.T) {
			m := f.run(t, env, lead)
			if before, after, ok := clusterGap(l.w.h.All(), m.at); ok {
				m.cluster = after.Sub(before)
				if f.single && m.cluster > stallBound {
					t.Errorf("%s: no node handed out an id of any scheme for %v (from %s to %s), more than %v",
						m.kind, m.cluster.Round(time.Millisecond), stamp(before), stamp(after), stallBound)
				}
			}
			// disrupt waited for every node to serve some scheme;
			// each must serve every scheme again.
			if err := l.servedAll(c.nodes(), time.Now(), healBound); err != nil {
				t.Errorf("after %s: %v", m.kind, err)
			}
			// The histories so far, so a failure points at its fault.
			for counter, vs := range l.mix.Violations() {
				t.Errorf("%s: %s", counter, history.Report(vs, 10))
			}
			results = append(results, m)
			t.Logf("%s", m)
		})
	}
	l.cancel()
	<-l.done
	if l.err != nil {
		t.Fatal(l.err)
	}
	dumpHistory(t, l.w.h)
	checkSchemeRun(t, l.mix, mix, env)
	lead, err = settle(ctx, c.hc)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.mix.CheckState(ctx, schemes.DSN(lead.MySQLAddr(), "ids")); err != nil {
		t.Errorf("final state on leader %s: %v", lead.ID(), err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scheme fault summary:")
	for _, m := range results {
		fmt.Fprintf(&b, "\n  %s", m)
	}
	t.Log(b.String())
	return results
}

// checkSchemeRun fails the test on a violation in any counter's history,
// an error no fault explains, or an allocation that hung on a node that
// was not paused; it logs each scheme's figures.
func checkSchemeRun(t *testing.T, mix *schemes.Mix, cfgs []schemes.Config, env *faultEnv) {
	t.Helper()
	for counter, vs := range mix.Violations() {
		t.Errorf("%s: %s", counter, history.Report(vs, 20))
	}
	for _, c := range cfgs {
		st := mix.Stats[c.Scheme]
		if st == nil {
			t.Errorf("%s: no stats", c.Scheme)
			continue
		}
		t.Logf("%-16s %d ok, %d failed [%s], %d lost CAS, p50 %v p99 %v", c.Scheme, st.OK, st.Failed, st.ErrorSummary(),
			st.Retries, st.P50.Round(time.Microsecond), st.P99.Round(time.Microsecond))
		for _, e := range st.Unexpected(schemeErrors...) {
			t.Errorf("%s: unexpected error: %s", c.Scheme, e)
		}
	}
	env.mu.Lock()
	pauses := append([]pauseWindow(nil), env.pauses...)
	env.mu.Unlock()
	for counter, h := range mix.Histories {
		for i, o := range slowOps(h.All(), pauses) {
			if i == 3 {
				break
			}
			t.Errorf("%s: allocation took %v (limit %v) on a node that was not paused: %s",
				counter, o.Return.Sub(o.Call).Round(time.Millisecond), hangBound, h.Format(o))
		}
	}
}
