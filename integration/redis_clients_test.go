package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketd/ticketd/integration/harness"
)

// needRedisTool finds a client program, or skips the test (fails with
// TICKETD_REQUIRE_REDIS=1, as CI sets).
func needRedisTool(t *testing.T, what, path string) string {
	t.Helper()
	p, err := exec.LookPath(path)
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("TICKETD_REQUIRE_REDIS") == "1" {
		t.Fatalf("%s (%s) not available and TICKETD_REQUIRE_REDIS=1: %v", what, path, err)
	}
	t.Skipf("%s (%s) not available: %v; set TICKETD_REQUIRE_REDIS=1 to fail instead", what, path, err)
	return ""
}

// TestRedisClients runs real Redis clients, unchanged, against a
// three-node cluster, each through another node (followers forward):
// redis-cli, go-redis (RESP2 and RESP3), Python's redis (Debian's
// python3-redis) and the Node redis client from npm. They share one
// counter: every client's INCRs are increasing, no number is answered
// twice across clients, and the counter ends at the number of INCRs.
func TestRedisClients(t *testing.T) {
	cli := needRedisTool(t, "redis-cli", "redis-cli")
	py := needRedisTool(t, "Python 3 with python3-redis", "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import redis").Run(); err != nil {
		needRedisTool(t, "python3-redis", "/nonexistent/python3-redis")
	}
	nodeJS := needRedisTool(t, "node", "node")
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(root, "integration", "compat", "redisnode")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "redis")); err != nil {
		needRedisTool(t, "the Node redis client (npm ci --prefix integration/compat/redisnode)", "/nonexistent/node_modules/redis")
	}

	ctx := context.Background()
	c := harness.StartCluster(ctx, t, 3, harness.Options{Redis: true})
	addr := func(i int) (string, string) {
		h, p, _ := net.SplitHostPort(c.Nodes[i%3].RedisAddr())
		return h, p
	}
	const n = 50
	total := 0
	var ranges [][2]int64
	run := func(name string, cmd *exec.Cmd) string {
		t.Helper()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	// firstLast reads "incr ... FIRST LAST" lines of a client's output.
	firstLast := func(name, out string) {
		t.Helper()
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "incr" {
				continue
			}
			a, _ := strconv.ParseInt(f[len(f)-2], 10, 64)
			b, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			if b-a != n-1 {
				t.Fatalf("%s: %d INCRs answered %d..%d", name, n, a, b)
			}
			ranges = append(ranges, [2]int64{a, b})
			total += n + 10 + 5 // the INCRs, the pipelined ones, INCRBY 5
		}
		if !strings.HasSuffix(strings.TrimSpace(out), "ok") {
			t.Fatalf("%s did not finish:\n%s", name, out)
		}
	}

	// Python, through node 1.
	h, p := addr(0)
	out := run("python3-redis", exec.Command(py, filepath.Join(root, "integration", "compat", "redis_client.py"), h, p, "ids", strconv.Itoa(n)))
	firstLast("python3-redis", out)
	t.Logf("python3-redis: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", "; "))

	// Node, through node 2.
	h, p = addr(1)
	out = run("node redis", exec.Command(nodeJS, filepath.Join(nodeDir, "client.js"), h, p, "ids", strconv.Itoa(n)))
	firstLast("node redis", out)
	t.Logf("node redis: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", "; "))

	// redis-cli, through node 3: INCRs from stdin, and a few commands.
	h, p = addr(2)
	cmd := exec.Command(cli, "-h", h, "-p", p)
	cmd.Stdin = strings.NewReader(strings.Repeat("INCR ids\n", n))
	lines := strings.Fields(run("redis-cli", cmd))
	if len(lines) != n {
		t.Fatalf("redis-cli: %d lines for %d INCRs", len(lines), n)
	}
	first, _ := strconv.ParseInt(lines[0], 10, 64)
	last, _ := strconv.ParseInt(lines[n-1], 10, 64)
	if last-first != n-1 {
		t.Fatalf("redis-cli answered %v", lines)
	}
	ranges = append(ranges, [2]int64{first, last})
	total += n
	for _, st := range []struct{ args, want string }{
		{"SET cli:k v EX 100", "OK"}, {"GET cli:k", "v"}, {"TTL cli:k", "100"}, {"DEL cli:k", "1"},
		{"INCR cli:k", "1"}, {"SET cli:s x", "OK"}, {"INCR cli:s", "ERR value is not an integer or out of range"},
		{"LPUSH cli:l x", "ERR 'LPUSH' is not supported by ticketd (lists); it serves string keys: see the manual's Redis section"},
	} {
		got := strings.TrimSpace(run("redis-cli", exec.Command(cli, append([]string{"-h", h, "-p", p}, strings.Fields(st.args)...)...)))
		if got != st.want && !(st.args == "TTL cli:k" && got == "99") {
			t.Fatalf("redis-cli %s: %q, want %q", st.args, got, st.want)
		}
	}

	// go-redis, RESP2 and RESP3, through every node.
	for proto := 2; proto <= 3; proto++ {
		for i := range 3 {
			rc := redis.NewClient(&redis.Options{Addr: c.Nodes[i].RedisAddr(), Protocol: proto})
			var prev int64
			for j := range n {
				v, err := rc.Incr(ctx, "ids").Result()
				if err != nil || v <= prev {
					t.Fatalf("go-redis RESP%d node %d INCR %d: %d after %d, %v", proto, i+1, j, v, prev, err)
				}
				if j == 0 {
					ranges = append(ranges, [2]int64{v, v})
				}
				prev = v
			}
			ranges[len(ranges)-1][1] = prev
			total += n
			if _, err := rc.Get(ctx, "go:none").Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("go-redis RESP%d GET of a missing key: %v", proto, err)
			}
			must(t, rc.Set(ctx, "go:k", "v", time.Minute).Err())
			if ttl, err := rc.TTL(ctx, "go:k").Result(); err != nil || ttl < 59*time.Second {
				t.Fatalf("go-redis TTL %v %v", ttl, err)
			}
			rc.Close()
		}
	}
	// Ranges of sequential clients never overlap, and the counter holds
	// every INCR.
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] <= ranges[i-1][1] {
			t.Fatalf("client %d's numbers %v overlap the previous client's %v", i, ranges[i], ranges[i-1])
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: c.Nodes[0].RedisAddr()})
	defer rc.Close()
	if v, err := rc.Get(ctx, "ids").Result(); err != nil || v != strconv.Itoa(total) {
		t.Fatalf("counter %q after %d INCRs (%v)", v, total, err)
	}
	t.Logf("%d INCRs from redis-cli, go-redis, python3-redis and node redis through three nodes: counter %d, %s", total, total, fmt.Sprint(ranges))
}
