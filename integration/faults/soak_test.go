//go:build soak

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/integration/netproxy"
)

// soakSettings are the soak tests' length and seed:
// TICKETD_SOAK_DURATION (a positive Go duration, default 10m) and
// TICKETD_SOAK_SEED (default: from the clock; the tests log it, so that
// a run can be repeated). A value that does not parse fails the run.
func soakSettings(t *testing.T) (time.Duration, uint64) {
	t.Helper()
	spec := os.Getenv("TICKETD_SOAK_DURATION")
	if spec == "" {
		spec = "10m"
	}
	dur, err := time.ParseDuration(spec)
	if err != nil || dur <= 0 {
		t.Fatalf("TICKETD_SOAK_DURATION=%q: want a positive Go duration such as 10m", spec)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TICKETD_SOAK_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TICKETD_SOAK_SEED=%q: %v", s, err)
		}
	}
	return dur, seed
}

// TestSoak is the long randomized fault loop behind `make soak`, built
// only with the soak tag, for TICKETD_SOAK_DURATION (a Go duration,
// default 10m): a
// three-node cluster behind the proxy, three clients per node, and one
// random fault after another (kill -9 of the leader, of a follower, of
// every node, a follower down long enough to need a snapshot, SIGSTOP of
// the leader or a follower, the leader partitioned, a follower isolated,
// a flapping link), each with random timing, every one checked as in
// TestFaults. At the end it checks the whole history and prints a
// summary: operations, faults by kind, duplicates, violations and the
// longest unavailability after each kind of fault.
//
// Environment: TICKETD_SOAK_SEED (default: time-based, always printed,
// so a run can be repeated), TICKETD_SOAK_ARGS (extra server flags, e.g.
// "--cache 100"), TICKETD_SOAK_SCOPE=node (the table is node-scoped,
// 'ticketd:cache=100,scope=node', and the history is checked for
// cluster-wide uniqueness and per-node order, DESIGN §4c).
func TestSoak(t *testing.T) { runSoak(t, false) }

// runSoak is TestSoak's loop; redis makes the clients INCR a key over the
// Redis protocol (TestSoakRedis) and adds the replicas' check of the key.
func runSoak(t *testing.T, redis bool) {
	dur, seed := soakSettings(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))

	// A lowish snapshot threshold so that snapshots and log truncation
	// happen during the run; with the snapshot flags, often enough that
	// a follower down for half a minute catches up from one.
	extra := []string{"--snapshot-threshold", "1024"}
	if len(binaryLacksFlags(t, snapshotFlags...)) == 0 {
		extra = append(extra, "--snapshot-interval", "5s", "--trailing-logs", "256")
	}
	extra = append(extra, strings.Fields(os.Getenv("TICKETD_SOAK_ARGS"))...)
	nodeScoped := false
	switch scope := os.Getenv("TICKETD_SOAK_SCOPE"); scope {
	case "", "global":
	case "node":
		if redis {
			t.Fatalf("TICKETD_SOAK_SCOPE=node: a table's scope, not a Redis key's")
		}
		nodeScoped = true
	default:
		t.Fatalf("TICKETD_SOAK_SCOPE=%q: want global or node", scope)
	}
	t.Logf("soak: duration %v, seed %d (TICKETD_SOAK_SEED to repeat), server flags %v, node-scoped table %v, Redis INCR %v", dur, seed, clusterArgs(extra...), nodeScoped, redis)

	ctx, cancel := context.WithTimeout(context.Background(), dur+10*time.Minute)
	defer cancel()
	l := startLoaded(ctx, t, loadSpec{db: "soak", args: extra, proxied: true, clients: 3, serving: 30 * time.Second, nodeScoped: nodeScoped, redis: redis})
	c, w := l.c, l.w
	env := &faultEnv{ctx: ctx, c: c, w: w}
	between := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
	}
	mode := func() netproxy.Mode {
		if rng.IntN(2) == 0 {
			return netproxy.Stall
		}
		return netproxy.Reset
	}

	type soakFault struct {
		kind string
		run  func(t *testing.T, e *faultEnv, lead *harness.Node) measurement
	}
	faults := []soakFault{
		{"kill -9 leader", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.downFor = between(500*time.Millisecond, 5*time.Second)
			return killLeader(t, e, l)
		}},
		{"kill -9 follower", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.downFor = between(500*time.Millisecond, 5*time.Second)
			return killFollower(t, e, l)
		}},
		{"follower down 20-40s", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.downFor = between(20*time.Second, 40*time.Second)
			return killFollower(t, e, l)
		}},
		{"kill -9 all", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.downFor = between(200*time.Millisecond, 3*time.Second)
			return killAll(t, e, l)
		}},
		{"SIGSTOP leader", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.pauseFor = between(1500*time.Millisecond, 6*time.Second)
			return pauseLeader(t, e, l)
		}},
		{"SIGSTOP follower", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.pauseFor = between(1500*time.Millisecond, 6*time.Second)
			return pauseFollower(t, e, l)
		}},
		{"partition leader", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.holdFor = between(3*time.Second, 8*time.Second)
			return partition(t, e, l, mode(), true)
		}},
		{"isolate follower", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			e.holdFor = between(3*time.Second, 8*time.Second)
			return partition(t, e, others(e.c.nodes(), l)[rng.IntN(2)], mode(), false)
		}},
		{"flapping links", func(t *testing.T, e *faultEnv, l *harness.Node) measurement {
			return flap(t, e, rng)
		}},
	}

	stats := map[string]*kindStats{}
	deadline := time.Now().Add(dur)
	for n := 1; time.Now().Before(deadline); n++ {
		lead, err := settle(ctx, c.hc)
		if err != nil {
			t.Fatalf("fault %d: the cluster did not recover: %v\n%s", n, err, soakSummary(w, c, stats))
		}
		f := faults[rng.IntN(len(faults))]
		m := f.run(t, env, lead)
		if before, after, ok := clusterGap(w.h.All(), m.at); ok && !m.at.IsZero() {
			m.cluster = after.Sub(before)
		}
		st := stats[f.kind]
		if st == nil {
			st = &kindStats{}
			stats[f.kind] = st
		}
		st.add(m)
		t.Logf("fault %d: %s", n, m)
		if n%10 == 0 {
			okN, failed := w.h.Counts()
			t.Logf("after %d faults: %d ok, %d failed, %d violations so far", n, okN, failed, len(w.check()))
		}
		w.sleep(between(time.Second, 5*time.Second))
	}
	w.halt()
	dumpHistory(t, w.h)
	for i, o := range slowOps(w.h.All(), env.pauses) {
		if i == 5 {
			break
		}
		t.Errorf("allocation took %v (limit %v) on a node that was not paused: %s",
			o.Return.Sub(o.Call).Round(time.Millisecond), hangBound, w.h.Format(o))
	}
	w.checkClean(t)
	if redis {
		lead, err := settle(ctx, c.hc)
		if err != nil {
			t.Fatal(err)
		}
		checkRedisReplicasAgree(ctx, t, c.hc, lead, w.h.MaxID())
	}
	t.Log(soakSummary(w, c, stats))
}

// flap isolates a random node for 0.3-1.5s, heals for as long, five
// times, then checks that every node serves again. Short cuts exercise
// elections that are interrupted by the next heal.
func flap(t *testing.T, e *faultEnv, rng *rand.Rand) measurement {
	m := measurement{kind: "flapping links", at: time.Now()}
	all := e.c.nodes()
	for range 5 {
		v := all[rng.IntN(len(all))]
		md := netproxy.Stall
		if rng.IntN(2) == 0 {
			md = netproxy.Reset
		}
		e.c.proxy.Isolate(v.ID(), md)
		e.w.sleep(300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond))))
		e.c.proxy.HealAll()
		e.w.sleep(300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond))))
	}
	tHeal := time.Now()
	h, err := waitServing(e.w, all, tHeal, healBound)
	if err != nil {
		t.Errorf("after flapping links: %v", err)
	}
	m.heal = h
	return m
}

// kindStats aggregates the measurements of one kind of fault.
type kindStats struct {
	n                    int
	majority, gap, heal  time.Duration // maxima
	sumMajority, sumHeal time.Duration
	refused, cutServed   int
	cluster              []time.Duration // cluster-wide gaps, one per fault
	wait                 []time.Duration // worst client waits, one per fault
}

func (k *kindStats) add(m measurement) {
	k.n++
	k.majority = max(k.majority, m.majority)
	k.gap = max(k.gap, m.gap)
	k.heal = max(k.heal, m.heal)
	k.sumMajority += m.majority
	k.sumHeal += m.heal
	k.refused += m.refused
	k.cutServed += m.cutServed
	k.cluster = append(k.cluster, m.cluster)
	k.wait = append(k.wait, m.worst)
}

// p50Max is the median and the largest of ds.
func p50Max(ds []time.Duration) (p50, most time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	g := slices.Sorted(slices.Values(ds))
	return g[len(g)/2], g[len(g)-1]
}

// soakSummary renders the end-of-run report.
func soakSummary(w *workload, c *cluster, stats map[string]*kindStats) string {
	var b strings.Builder
	okN, failed := w.h.Counts()
	vs := w.check()
	byKind := map[history.Kind]int{}
	for _, v := range vs {
		byKind[v.Kind]++
	}
	w.mu.Lock()
	mismatches, unexpected, connFails := len(w.mismatch), len(w.unexpectd), w.connFails
	w.mu.Unlock()
	fmt.Fprintf(&b, "soak summary\n")
	fmt.Fprintf(&b, "  operations: %d ok, %d failed (%s); max id %d; reconnect attempts failed: %d\n",
		okN, failed, w.errorClasses(), w.h.MaxID(), connFails)
	fmt.Fprintf(&b, "  duplicates: %d, ids not above an earlier returned id: %d, LAST_INSERT_ID mismatches: %d, unexpected errors: %d\n",
		byKind[history.Duplicate], byKind[history.NotIncreasing], mismatches, unexpected)
	fmt.Fprintf(&b, "  proxy: %+v\n", c.proxy.Stats())
	fmt.Fprintf(&b, "  %s\n", testMemory())
	fmt.Fprintf(&b, "  %-22s %5s %14s %14s %14s %14s %14s %14s %14s %14s %14s %9s %10s\n", "fault", "count",
		"cluster p50", "cluster max", "client wait p50", "client wait max", "majority max", "majority mean", "longest gap", "heal max", "heal mean", "refusals", "cut served")
	var kinds []string
	for k := range stats {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	for _, k := range kinds {
		s := stats[k]
		p50, most := p50Max(s.cluster)
		w50, wmax := p50Max(s.wait)
		fmt.Fprintf(&b, "  %-22s %5d %14s %14s %14s %14s %14s %14s %14s %14s %14s %9d %10d\n", k, s.n, ms(p50), ms(most), ms(w50), ms(wmax), ms(s.majority),
			ms(s.sumMajority/time.Duration(s.n)), ms(s.gap), ms(s.heal), ms(s.sumHeal/time.Duration(s.n)), s.refused, s.cutServed)
	}
	if len(vs) > 0 {
		fmt.Fprintf(&b, "  %s\n", history.Report(vs, 10))
	}
	return b.String()
}

// testMemory is the test process's own memory, apart from the nodes it
// runs (which /usr/bin/time would count with it): its peak resident set
// from getrusage(RUSAGE_SELF), and the Go heap now. The history of a long
// soak is most of it.
func testMemory() string {
	var ru syscall.Rusage
	peak := "unknown"
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		peak = fmt.Sprintf("%.1f MiB", float64(ru.Maxrss)/1024) // Linux: KiB
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("test process memory: peak RSS %s, Go heap in use %.1f MiB, total allocated %.1f MiB",
		peak, float64(ms.HeapInuse)/(1<<20), float64(ms.TotalAlloc)/(1<<20))
}
