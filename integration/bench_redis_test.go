//go:build bench

package integration

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestBenchRedis is the Redis front door's part of `make bench` (issue
// 35): redis-benchmark -t incr at 1 and 64 clients, and 64 clients
// pipelining 16, against ticketd (one node, three nodes through the
// leader and through a follower, every INCR committed through Raft; and
// three nodes with key reservation, --redis-cache 1000) and against
// Debian's redis-server with an append-only file fsynced on every write
// (appendfsync always) and every second (everysec), in one run. Every
// measurement of another target is paired with one of redis-server
// always taken right before it, in the same configuration: a machine
// whose load drifts (a shared one) then weighs on both sides of a ratio.
// Each row has the rate, its ratio to its pair, and the CPU the server
// processes spent per INCR (all three ticketd nodes for a cluster), from
// /proc.
//
// TICKETD_BENCH_REDIS_N scales the request counts (default 1: 2,000 at
// one client, 30,000 at 64, 100,000 pipelined). TICKETD_BENCH_REDIS_REPS
// (default 1) repeats every pair, the targets in the opposite order in
// every other repetition; the table has each ratio's median and range
// over the repetitions, and the load average at each one's start.
//
// TICKETD_BENCH_REDIS_BASE names another ticketd binary (a build of main,
// say): its three nodes with --redis-cache 1000 join the targets,
// labelled "(base)", so that a change is measured against its base in
// the same alternated pairs. TICKETD_BENCH_REDIS_TARGETS keeps only the
// targets whose name contains one of its comma-separated parts (and
// redis-server always, every pair's first), e.g. "redis-cache 1000" for
// the key reservation rows.
func TestBenchRedis(t *testing.T) {
	scale := benchCount(t, "TICKETD_BENCH_REDIS_N", 1, 1, "a positive multiplier")
	reps := benchCount(t, "TICKETD_BENCH_REDIS_REPS", 1, 1, "a positive number of repetitions")
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Fatalf("redis-benchmark not found (apt-get install redis-tools): %v", err)
	}
	ctx := context.Background()
	var targets []redisTarget
	for _, fsync := range []string{"always", "everysec"} {
		addr, pid := startRedisServer(t, "--appendonly", "yes", "--appendfsync", fsync)
		targets = append(targets, redisTarget{"redis-server appendfsync " + fsync, addr, []int{pid}})
	}
	one := harness.Start(ctx, t, harness.Options{Redis: true})
	targets = append(targets, redisTarget{"ticketd 1 node", one.RedisAddr(), []int{one.PID()}})
	for _, cache := range []string{"", "1000"} {
		opts, label := harness.Options{Redis: true}, "ticketd 3 nodes"
		if cache != "" {
			opts.Args, label = []string{"--redis-cache", cache}, label+" --redis-cache "+cache
		}
		targets = append(targets, clusterTargets(ctx, t, opts, label)...)
	}
	if base := os.Getenv("TICKETD_BENCH_REDIS_BASE"); base != "" {
		opts := harness.Options{Redis: true, Args: []string{"--redis-cache", "1000"}, Binary: base}
		targets = append(targets, clusterTargets(ctx, t, opts, "ticketd 3 nodes --redis-cache 1000 (base)")...)
	}
	if only := os.Getenv("TICKETD_BENCH_REDIS_TARGETS"); only != "" {
		targets = slices.DeleteFunc(targets, func(tg redisTarget) bool {
			if strings.HasPrefix(tg.name, "redis-server appendfsync always") {
				return false
			}
			for part := range strings.SplitSeq(only, ",") {
				if strings.Contains(tg.name, strings.TrimSpace(part)) {
					return false
				}
			}
			return true
		})
	}
	runs := []struct {
		name             string
		clients, n, pipe int
	}{
		{"1 client", 1, 2000 * scale, 1},
		{"64 clients", 64, 30000 * scale, 1},
		{"64 clients -P 16", 64, 100000 * scale, 16},
	}
	measure := func(tg redisTarget, clients, n, pipe int) (rps, cpuPer float64) {
		host, port, _ := net.SplitHostPort(tg.addr)
		before := cpuTime(t, tg.pids)
		args := []string{"-h", host, "-p", port, "-t", "incr", "-n", strconv.Itoa(n), "-c", strconv.Itoa(clients),
			"-P", strconv.Itoa(pipe), "--csv"}
		out, err := exec.Command(bench, args...).Output()
		if err != nil {
			t.Fatalf("%s, %d clients -P %d: %v\n%s", tg.name, clients, pipe, err, out)
		}
		cpu := cpuTime(t, tg.pids) - before
		return csvRate(t, out), float64(cpu.Microseconds()) / float64(n)
	}
	// Pairs: redis-server always right before each other target, and
	// that target's ratio to it; the targets' order reversed every other
	// repetition, so that neither end of a repetition is always the same
	// target's.
	type sample struct{ rps, ratio, cpu float64 }
	got := map[[2]int][]sample{} // by run, target
	var loads []string
	for rep := range reps {
		loads = append(loads, fmt.Sprintf("repetition %d %s", rep+1, loadAverage()))
		seq := make([]int, 0, len(targets)-1)
		for ti := 1; ti < len(targets); ti++ {
			seq = append(seq, ti)
		}
		if rep%2 == 1 {
			slices.Reverse(seq)
		}
		for ri, r := range runs {
			for _, ti := range seq {
				base, baseCPU := measure(targets[0], r.clients, r.n, r.pipe)
				got[[2]int{ri, 0}] = append(got[[2]int{ri, 0}], sample{base, 1, baseCPU})
				rps, cpu := measure(targets[ti], r.clients, r.n, r.pipe)
				got[[2]int{ri, ti}] = append(got[[2]int{ri, ti}], sample{rps, rps / base, cpu})
			}
		}
	}
	loads = append(loads, "after: "+loadAverage())

	var b strings.Builder
	fmt.Fprintf(&b, "\n### Redis INCR (redis-benchmark -t incr), %s, %d repetition(s)\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), reps)
	fmt.Fprintf(&b, "| target | run | INCR/s (median) | × redis-server always (median) | × always, min–max | CPU µs per INCR (median) |\n|---|---|---|---|---|---|\n")
	for ri, r := range runs {
		for ti, tg := range targets {
			ss := got[[2]int{ri, ti}]
			rps := median(ss, func(s sample) float64 { return s.rps })
			ratio := median(ss, func(s sample) float64 { return s.ratio })
			lo := slices.MinFunc(ss, func(a, b sample) int { return cmp.Compare(a.ratio, b.ratio) }).ratio
			hi := slices.MaxFunc(ss, func(a, b sample) int { return cmp.Compare(a.ratio, b.ratio) }).ratio
			cpu := median(ss, func(s sample) float64 { return s.cpu })
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.2f | %.2f–%.2f | %.0f |\n", tg.name, r.name, rps, ratio, lo, hi, cpu)
		}
	}
	fmt.Fprintf(&b, "\nOne key (redis-benchmark's counter); in each repetition and configuration redis-server always is measured right before every other target, whose ratio is to that measurement (the targets in the order listed, reversed every other repetition); redis-server %s with an append-only file and no RDB saves; CPU: user+system of the server processes (all three ticketd nodes for a cluster) from /proc, divided by the INCRs. Load average (1, 5, 15 min, /proc/loadavg) at the start of each repetition: %s.\n",
		redisServerVersion(), strings.Join(loads, "; "))
	t.Log(b.String())
	if path := os.Getenv("TICKETD_BENCH_OUT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(b.String()); err != nil {
			t.Fatal(err)
		}
	}
}

// redisTarget is a server TestBenchRedis measures: where redis-benchmark
// connects, and the processes whose CPU time counts.
type redisTarget struct {
	name string
	addr string
	pids []int
}

// clusterTargets starts three nodes with opts and returns them as two
// targets: through the leader and through a follower.
func clusterTargets(ctx context.Context, t *testing.T, opts harness.Options, label string) []redisTarget {
	t.Helper()
	c := harness.StartCluster(ctx, t, 3, opts)
	lead, err := c.Leader(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	var follower *harness.Node
	for _, n := range c.Nodes {
		pids = append(pids, n.PID())
		if n != lead && follower == nil {
			follower = n
		}
	}
	return []redisTarget{{label + ", leader", lead.RedisAddr(), pids}, {label + ", follower", follower.RedisAddr(), pids}}
}

// median is the median of f over ss (the upper one of an even count).
func median[S any](ss []S, f func(S) float64) float64 {
	vs := make([]float64, len(ss))
	for i, s := range ss {
		vs[i] = f(s)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute load averages: the
// machine may be shared, and a figure is read with its load.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "(unknown)"
	}
	return strings.Join(f[:3], " ")
}

// csvRate reads the requests per second of redis-benchmark --csv's
// single test row.
func csvRate(t *testing.T, out []byte) float64 {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		t.Fatalf("redis-benchmark output %q: %v", out, err)
	}
	v, err := strconv.ParseFloat(recs[1][1], 64)
	if err != nil {
		t.Fatalf("redis-benchmark rate %q: %v", recs[1][1], err)
	}
	return v
}

// redisServerVersion is redis-server --version's "v=" field.
func redisServerVersion() string {
	out, _ := exec.Command("redis-server", "--version").Output()
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v
		}
	}
	return "(unknown version)"
}
