package harness

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The harness is tested against a fake ticketd: this test binary itself,
// re-executed with HARNESS_FAKE_NODE=1. It accepts ticketd's flags, serves
// /readyz, /healthz and /status, listens on the MySQL address, counts its
// starts in the data dir, and exits 0 on SIGTERM, so process control can
// be checked without depending on the real server's state.
func TestMain(m *testing.M) {
	if os.Getenv("HARNESS_FAKE_NODE") == "1" {
		fakeNode()
		return
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	os.Setenv("TICKETD_BIN", exe)
	Main(m)
}

func fakeNode() {
	fs := flag.NewFlagSet("ticketd", flag.ExitOnError)
	dataDir := fs.String("data-dir", "", "")
	mysqlAddr := fs.String("mysql-addr", "", "")
	httpAddr := fs.String("http-addr", "", "")
	nodeID := fs.String("node-id", "", "")
	fs.String("raft-addr", "", "")
	peers := fs.String("peers", "", "")
	fs.String("join", "", "")
	fs.Parse(os.Args[1:])

	os.MkdirAll(*dataDir, 0o755)
	f, _ := os.OpenFile(filepath.Join(*dataDir, "starts"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	f.Write([]byte("x"))
	f.Close()

	ml, err := net.Listen("tcp", *mysqlAddr)
	if err != nil {
		os.Exit(3)
	}
	go func() {
		for {
			c, err := ml.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	state := "Leader"
	if strings.Contains(*peers, ",") && !strings.HasPrefix(*peers, *nodeID+"=") {
		state = "Follower" // the first peer leads
	}
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }
	mux.HandleFunc("/readyz", ok)
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		leader := *nodeID
		if *peers != "" {
			leader = strings.SplitN(*peers, "=", 2)[0]
		}
		json.NewEncoder(w).Encode(map[string]any{"node_id": *nodeID, "state": state, "leader_id": leader, "term": 3, "applied_index": "17"})
	})
	go http.ListenAndServe(*httpAddr, mux)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	os.Exit(0)
}

func fakeOpts() Options {
	return Options{Env: []string{"HARNESS_FAKE_NODE=1"}, ReadyTimeout: 10 * time.Second}
}

func TestNodeLifecycle(t *testing.T) {
	ctx := context.Background()
	n := Start(ctx, t, fakeOpts())
	if !n.Running() || !n.Ready(ctx) || !n.Healthy(ctx) {
		t.Fatal("started node not running/ready/healthy")
	}
	st, err := n.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.NodeID != "n1" || st.State != "Leader" || st.Term != 3 || st.AppliedIndex != 17 {
		t.Fatalf("status decoded as %+v", st)
	}

	// Pause: the process is alive but answers nothing.
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if n.Ready(pctx) {
		t.Error("paused node answered /readyz")
	}
	cancel()
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitReady(ctx); err != nil {
		t.Fatalf("after resume: %v", err)
	}

	// Restart keeps ports and data dir.
	addr, dir, pid := n.MySQLAddr(), n.DataDir(), n.PID()
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n.MySQLAddr() != addr || n.DataDir() != dir || n.PID() == pid {
		t.Fatalf("restart: addr %s→%s dir %s→%s pid %d→%d", addr, n.MySQLAddr(), dir, n.DataDir(), pid, n.PID())
	}

	// Kill leaves the data dir; Start brings it back.
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() || n.ExitError() == nil {
		t.Fatalf("killed node: running=%v exit=%v", n.Running(), n.ExitError())
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "starts")); string(b) != "xxx" {
		t.Fatalf("data dir saw starts %q, want 3 on the same dir", b)
	}
	if err := n.Stop(); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	if n.Running() {
		t.Fatal("stopped node still running")
	}
	if !strings.Contains(n.LogTail(20), "harness: start #3") {
		t.Fatalf("log lacks start markers:\n%s", n.LogTail(20))
	}
}

// TestWaitReadyDetectsExit: a node that dies at startup fails WaitReady
// at once with its log, not after the timeout.
func TestWaitReadyDetectsExit(t *testing.T) {
	o := fakeOpts()
	o.NoWait = true
	o.MySQLAddr = "256.0.0.1:1" // the fake cannot listen there and exits 3
	n := Start(context.Background(), t, o)
	start := time.Now()
	err := n.WaitReady(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited before ready") {
		t.Fatalf("want early exit error, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %v to notice the exit", time.Since(start))
	}
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	c := StartCluster(ctx, t, 3, fakeOpts())
	if len(c.Nodes) != 3 || strings.Count(c.Peers, "=") != 3 {
		t.Fatalf("cluster %d nodes, peers %q", len(c.Nodes), c.Peers)
	}
	seen := map[string]bool{}
	for _, n := range c.Nodes {
		for _, a := range []string{n.MySQLAddr(), n.HTTPAddr(), n.RaftAddr()} {
			if seen[a] {
				t.Fatalf("address %s handed out twice", a)
			}
			seen[a] = true
		}
	}
	l, err := c.Leader(ctx, 5*time.Second)
	if err != nil || l.ID() != "n1" {
		t.Fatalf("leader %v, %v; want n1", l, err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
}
