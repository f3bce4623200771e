package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/netproxy"
)

// TestMain removes the ticketd binary the harness built. go-sql-driver
// logs every connection a kill or a cut breaks ("unexpected EOF"); the
// history records each failed operation, so the driver's log is noise.
func TestMain(m *testing.M) {
	mysql.SetLogger(log.New(io.Discard, "", 0))
	harness.Main(m)
}

// Timing of the test clusters. A short statement timeout makes the
// minority's refusals (and the soak's recovery) quick; the election
// timeout is the server default (1s).
const (
	statementTimeout = 2 * time.Second
	// electionTimeout is raftstore's default; pauses and partitions last
	// a few of them so that the majority must elect a new leader.
	electionTimeout = time.Second
)

// Bounds asserted after each fault. DESIGN §5.4 asks for about two
// election timeouts; the bounds are looser because the machine running
// the tests has 2 cores shared by three nodes, the clients and whatever
// else runs, and the measured values are logged for the real picture.
const (
	// majorityBound: from the fault until every node of the majority has
	// completed an allocation it started after the fault.
	majorityBound = 10 * time.Second
	// healBound: from the heal (SIGCONT, link restored, process
	// restarted) until every node completes an allocation started after.
	healBound = 20 * time.Second
	// hangBound: no allocation may take longer than this unless its node
	// was paused meanwhile. A follower waits at most the statement
	// timeout plus the forwarding grace (2s) for the leader's answer.
	hangBound = 10 * time.Second
	// stallBound: after a fault on one node, no longer than this without
	// an id from any node (DESIGN §5.4: about two election timeouts).
	// Measured with the heartbeat timeout at half the election timeout
	// (issue 14): 0.6-1.4s for the leader faults, under 40ms for the
	// followers'. The bound is two election timeouts, plus one more for
	// a split vote, plus 500ms for this shared 2-core machine (timers
	// run late under load; the gap counts from the last id before the
	// fault). A split vote happens when both survivors time out within
	// an RPC round trip of each other (their timers are random over one
	// heartbeat timeout, 500ms): estimated ~1% of leader faults, and
	// hashicorp/raft has no tie-break, so it costs a new election
	// timeout (1-2s). Without that allowance the test would fail about
	// once in 15 runs of make test for Raft's nature, not a bug; two
	// split votes in a row, or any other stall, still fail it.
	stallBound = 3*electionTimeout + 500*time.Millisecond
	// refuseBound: a client of a node cut off from the others gets its
	// error (1290) within this, so it can move to another node. It is
	// under the test clusters' statement timeout, so a refusal that only
	// came because the statement timed out fails the test (at the
	// default --statement-timeout of 10s it is far under). A follower
	// refuses once it has missed the leader's heartbeats (one heartbeat
	// timeout, randomised up to twice that: 0.5-1s); a cut-off leader
	// once its 500ms lease lapses and it steps down. Measured 0.67-1.35s
	// with other work on the machine (issue 14).
	refuseBound = statementTimeout - 100*time.Millisecond
)

// cluster is a set of ticketd nodes, started with one --peers list naming
// the proxy's fronts, so every Raft connection and every forwarded batch
// crosses the proxy.
type cluster struct {
	t     testing.TB
	hc    *harness.Cluster
	proxy *netproxy.Proxy

	mu sync.Mutex // guards hc.Nodes against replacement during start
}

// clusterArgs are the flags every test node gets, plus extra.
func clusterArgs(extra ...string) []string {
	return append([]string{"--statement-timeout", statementTimeout.String()}, extra...)
}

// startCluster starts n nodes (n1..nN) behind a proxy and waits until all
// are ready. Node i listens for Raft on its own port; its entry in the
// shared --peers list is its proxy front, which is also what it
// advertises (raftstore advertises a node's own --peers entry), so no
// node ever dials another directly.
func startCluster(ctx context.Context, t testing.TB, n int, args []string) *cluster {
	t.Helper()
	c := &cluster{t: t, hc: &harness.Cluster{}}
	c.proxy = netproxy.New(netproxy.ByProcess(c.pids))
	t.Cleanup(func() { c.proxy.Close() })
	var peers []string
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		front, err := c.proxy.Listen(id, "")
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, id+"="+front)
	}
	c.hc.Peers = strings.Join(peers, ",")
	for i := 1; i <= n; i++ {
		c.hc.Nodes = append(c.hc.Nodes, c.newNode(fmt.Sprintf("n%d", i), args))
	}
	for attempt := 1; ; attempt++ {
		for _, node := range c.hc.Nodes {
			if !node.Running() {
				if err := node.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		err := c.hc.WaitReady(ctx)
		// WaitReady skips nodes that are not running, and two nodes are
		// ready without the third: a node that died at start counts.
		for _, node := range c.hc.Nodes {
			if !node.Running() {
				err = errors.Join(err, fmt.Errorf("node %s exited at start (%v); log tail:\n%s", node.ID(), node.ExitError(), node.LogTail(20)))
			}
		}
		if err == nil {
			return c
		}
		// A free port is only free until someone binds it, and the
		// machine is shared: replace a node that lost the race with one
		// on new ports (its front, the address in the Raft
		// configuration, stays the same).
		replaced := false
		for i, node := range c.hc.Nodes {
			if !node.Running() && strings.Contains(node.LogTail(50), "address already in use") && attempt < 3 {
				t.Logf("node %s lost a port race; retrying on new ports", node.ID())
				c.mu.Lock()
				c.hc.Nodes[i] = c.newNode(node.ID(), args)
				c.mu.Unlock()
				replaced = true
			}
		}
		if !replaced {
			t.Fatalf("cluster start: %v", err)
		}
	}
}

// newNode prepares (does not start) node id with a fresh data dir and
// ports, its front pointing at its new Raft port.
func (c *cluster) newNode(id string, args []string) *harness.Node {
	real := harness.FreeAddr(c.t)
	c.proxy.SetTarget(id, real)
	return harness.NewNode(c.t, harness.Options{
		NodeID:   id,
		RaftAddr: real,
		Peers:    c.hc.Peers,
		Args:     args,
		// Every node also serves Redis, for TestRedisFaults' clients.
		Redis: true,
	})
}

// pids maps the running nodes' process ids to their names, for the
// proxy's connection attribution. It is called on every accepted
// connection, so restarted nodes are recognised by their new pid.
func (c *cluster) pids() map[int]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[int]string, len(c.hc.Nodes))
	for _, n := range c.hc.Nodes {
		if pid := n.PID(); pid != 0 && n.Running() {
			m[pid] = n.ID()
		}
	}
	return m
}

// nodes returns the cluster's nodes.
func (c *cluster) nodes() []*harness.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*harness.Node(nil), c.hc.Nodes...)
}

// others returns the nodes other than the given ones.
// killNodes kill -9s every node at once, so that none sees another go.
func killNodes(t *testing.T, nodes []*harness.Node) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			if err := n.Kill(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func others(all []*harness.Node, not ...*harness.Node) []*harness.Node {
	var out []*harness.Node
	for _, n := range all {
		skip := false
		for _, x := range not {
			if n == x {
				skip = true
			}
		}
		if !skip {
			out = append(out, n)
		}
	}
	return out
}

func ids(ns []*harness.Node) []string {
	var s []string
	for _, n := range ns {
		s = append(s, n.ID())
	}
	return s
}

// leader waits for the running, reachable nodes to agree on a leader.
func leader(ctx context.Context, hc *harness.Cluster) (*harness.Node, error) {
	return hc.Leader(ctx, 30*time.Second)
}

// settle waits until every running node is ready and they agree on a
// leader, and returns it: each fault starts from a healthy cluster.
func settle(ctx context.Context, hc *harness.Cluster) (*harness.Node, error) {
	if err := hc.WaitReady(ctx); err != nil {
		return nil, err
	}
	return leader(ctx, hc)
}

// createTicketTable creates database db and Flickr's Tickets64 through
// node n (any node: DDL is forwarded), then waits until every node has
// applied it, since a node answers "unknown database" from its own
// applied state.
func createTicketTable(ctx context.Context, t testing.TB, hc *harness.Cluster, n *harness.Node, db string) {
	t.Helper()
	createTicketTableWith(ctx, t, hc, n, db, "")
}

// createTicketTableWith is createTicketTable with a table comment, such
// as nodeScope's.
func createTicketTableWith(ctx context.Context, t testing.TB, hc *harness.Cluster, n *harness.Node, db, comment string) {
	t.Helper()
	ddl := harness.FlickrDDL(db + ".Tickets64")
	if comment != "" {
		ddl += " COMMENT='" + comment + "'"
	}
	conn, err := sql.Open("mysql", n.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"CREATE DATABASE " + db,
		ddl,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := hc.WaitApplied(ctx, n, 15*time.Second); err != nil {
		t.Fatal(err)
	}
}

// members returns the ids of the voters in n's /status, sorted as served.
func members(ctx context.Context, n *harness.Node) ([]string, error) {
	st, err := n.Status(ctx)
	if err != nil {
		return nil, err
	}
	list, _ := st.Raw["members"].([]any)
	var out []string
	for _, m := range list {
		mm, _ := m.(map[string]any)
		if v, _ := mm["voter"].(bool); v {
			out = append(out, fmt.Sprint(mm["id"]))
		}
	}
	return out, nil
}

// waitMembers waits until every node in ns reports exactly want as its
// voters.
func waitMembers(ctx context.Context, ns []*harness.Node, want ...string) error {
	w := strings.Join(want, ",")
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range ns {
		for {
			got, err := members(ctx, n)
			if err == nil && strings.Join(got, ",") == w {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s: members %v (%v), want %s", n.ID(), got, err, w)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// adminPost sends POST /path?query to n's admin listener and returns an
// error unless it answers 200.
func adminPost(ctx context.Context, n *harness.Node, path string, q url.Values) error {
	code, body, err := adminPostStatus(ctx, n, path, q)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("POST %s%s: %d: %s", n.HTTPAddr(), path, code, body)
	}
	return err
}

// adminPostStatus sends an admin POST and returns the status and body.
func adminPostStatus(ctx context.Context, n *harness.Node, path string, q url.Values) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	u := "http://" + n.HTTPAddr() + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}

// binaryLacksFlags returns those of flags (names without dashes) that the
// ticketd binary does not know, from its -h output.
func binaryLacksFlags(t testing.TB, flags ...string) []string {
	t.Helper()
	out, err := exec.Command(harness.Binary(t), "-h").CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ticketd -h: %v", err)
	}
	var missing []string
	for _, f := range flags {
		if !strings.Contains(string(out), "-"+f+" ") && !strings.Contains(string(out), "-"+f+"\n") {
			missing = append(missing, "--"+f)
		}
	}
	return missing
}

// logSince returns the part of a node's log written by its latest start
// (the harness marks each start with a "=== harness: start #N" line).
func logSince(n *harness.Node) string {
	b, err := os.ReadFile(n.LogPath())
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndex(s, "=== harness: start #"); i >= 0 {
		s = s[i:]
	}
	return s
}

// saveGoroutines writes node n's goroutine dump (the admin listener's
// /debug/pprof/goroutine?debug=2) next to its log under
// TICKETD_TEST_LOG_DIR, for diagnosing a hang; it does nothing when the
// variable is unset.
func saveGoroutines(ctx context.Context, t testing.TB, n *harness.Node) {
	dir := os.Getenv("TICKETD_TEST_LOG_DIR")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTPAddr()+"/debug/pprof/goroutine?debug=2", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Logf("goroutines of %s: %v", n.ID(), err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := strings.TrimSuffix(n.LogPath(), ".log") + "-goroutines.txt"
	if err := os.WriteFile(p, b, 0o644); err == nil {
		t.Logf("goroutines of %s written to %s", n.ID(), p)
	}
}

// checkReplicasAgree waits until every running node has applied ref's
// log, then reads the ticket row on each: all replicas must hold the same
// id, and at least maxOK (the largest id a client got, when every id goes
// through Raft; failed allocations may have used higher ones). A replica
// that diverged or lost entries shows here.
func checkReplicasAgree(ctx context.Context, t testing.TB, hc *harness.Cluster, ref *harness.Node, db string, maxOK uint64) {
	t.Helper()
	if err := hc.WaitApplied(ctx, ref, 15*time.Second); err != nil {
		t.Error(err)
		return
	}
	var first uint64
	for i, n := range hc.Nodes {
		if !n.Running() {
			continue
		}
		conn, err := sql.Open("mysql", n.DSN(db))
		if err != nil {
			t.Fatal(err)
		}
		var id uint64
		err = conn.QueryRowContext(ctx, "SELECT id FROM Tickets64 WHERE stub = 'a'").Scan(&id)
		conn.Close()
		if err != nil {
			t.Errorf("node %s: reading the ticket row: %v", n.ID(), err)
			continue
		}
		if id < maxOK {
			t.Errorf("node %s: ticket row holds id %d, below %d handed out", n.ID(), id, maxOK)
		}
		if i > 0 && id != first {
			t.Errorf("node %s: ticket row holds id %d, %s holds %d", n.ID(), id, hc.Nodes[0].ID(), first)
		}
		if i == 0 {
			first = id
		}
	}
}
