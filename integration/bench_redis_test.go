//go:build bench

package integration

import (
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestBenchRedis is the Redis front door's part of `make bench` (issue
// 35): redis-benchmark -t incr at 1 and 64 clients, and 64 clients
// pipelining 16, against ticketd (one node, three nodes through the
// leader and through a follower; every INCR committed through Raft; key
// reservation, --redis-cache, is withdrawn in this build) and against Debian's redis-server with an append-only file fsynced on
// every write (appendfsync always) and every second (everysec), in one
// run. Each row has the rate, its ratio to redis-server always in the
// same configuration, and the CPU the server processes spent per INCR
// (all three ticketd nodes for a cluster), from /proc.
//
// TICKETD_BENCH_REDIS_N scales the request counts (default 1: 2,000 at
// one client, 30,000 at 64, 100,000 pipelined).
func TestBenchRedis(t *testing.T) {
	scale := benchCount(t, "TICKETD_BENCH_REDIS_N", 1, 1, "a positive multiplier")
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Fatalf("redis-benchmark not found (apt-get install redis-tools): %v", err)
	}
	ctx := context.Background()
	type target struct {
		name string
		addr string
		pids []int
	}
	var targets []target
	for _, fsync := range []string{"always", "everysec"} {
		addr, pid := startRedisServer(t, "--appendonly", "yes", "--appendfsync", fsync)
		targets = append(targets, target{"redis-server appendfsync " + fsync, addr, []int{pid}})
	}
	one := harness.Start(ctx, t, harness.Options{Redis: true})
	targets = append(targets, target{"ticketd 1 node", one.RedisAddr(), []int{one.PID()}})
	c := harness.StartCluster(ctx, t, 3, harness.Options{Redis: true})
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
	targets = append(targets, target{"ticketd 3 nodes, leader", lead.RedisAddr(), pids},
		target{"ticketd 3 nodes, follower", follower.RedisAddr(), pids})

	runs := []struct {
		name             string
		clients, n, pipe int
	}{
		{"1 client", 1, 2000 * scale, 1},
		{"64 clients", 64, 30000 * scale, 1},
		{"64 clients -P 16", 64, 100000 * scale, 16},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Redis INCR (redis-benchmark -t incr), %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "| target | run | INCR/s | × redis-server always | CPU µs per INCR |\n|---|---|---|---|---|\n")
	base := map[string]float64{}
	for _, r := range runs {
		for _, tg := range targets {
			host, port, _ := net.SplitHostPort(tg.addr)
			before := cpuTime(t, tg.pids)
			args := []string{"-h", host, "-p", port, "-t", "incr", "-n", strconv.Itoa(r.n), "-c", strconv.Itoa(r.clients),
				"-P", strconv.Itoa(r.pipe), "--csv"}
			out, err := exec.Command(bench, args...).Output()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", tg.name, r.name, err, out)
			}
			cpu := cpuTime(t, tg.pids) - before
			rps := csvRate(t, out)
			if strings.HasSuffix(tg.name, "always") {
				base[r.name] = rps
			}
			ratio := "-"
			if base[r.name] > 0 {
				ratio = fmt.Sprintf("%.2f", rps/base[r.name])
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %.0f |\n", tg.name, r.name, rps, ratio, float64(cpu.Microseconds())/float64(r.n))
		}
	}
	fmt.Fprintf(&b, "\nOne key (redis-benchmark's counter), one run each; redis-server %s with an append-only file and no RDB saves; CPU: user+system of the server processes (all three ticketd nodes for a cluster) from /proc, divided by the INCRs.\n", redisServerVersion())
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
