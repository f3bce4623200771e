package raftstore

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPeersDiffer starts a new cluster where n3 was given a wrong port for
// n2 (the typo of issue 23). n3 refuses to form a cluster, naming the
// entry; n1 and n2, whose lists agree, form theirs. Before, n3
// bootstrapped a configuration of its own.
func TestPeersDiffer(t *testing.T) {
	ids := []string{"n1", "n2", "n3"}
	lns := map[string]net.Listener{}
	var good []Peer
	for _, id := range ids {
		lns[id] = listen(t)
		good = append(good, Peer{ID: id, Addr: lns[id].Addr().String()})
	}
	typo := append([]Peer(nil), good...)
	typo[1].Addr = "127.0.0.1:1" // n2, wrong port
	open := func(id string, peers []Peer) *Node {
		cfg := testConfig(id, t.TempDir(), lns[id])
		cfg.Peers = peers
		return openNode(t, cfg)
	}
	// The odd one out first: it waits for the others, then refuses.
	n3 := open("n3", typo)
	time.Sleep(300 * time.Millisecond)
	n1 := open("n1", good)
	n2 := open("n2", good)

	select {
	case <-n3.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("n3, started with another --peers, did not refuse")
	}
	err := n3.FatalErr()
	if !errors.Is(err, ErrPeersDiffer) || !strings.Contains(err.Error(), "n2 is 127.0.0.1:1 here") {
		t.Fatalf("n3's refusal: %v; want ErrPeersDiffer naming n2's entry", err)
	}
	if rerr := n3.Ready(); !errors.Is(rerr, ErrPeersDiffer) {
		t.Errorf("n3 Ready: %v", rerr)
	}
	waitFor(t, "n1 and n2 to elect a leader", 10*time.Second, func() bool {
		return (n1.IsLeader() || n2.IsLeader()) && n1.Ready() == nil && n2.Ready() == nil
	})
	for _, n := range []*Node{n1, n2} {
		select {
		case <-n.Failed():
			t.Errorf("%s refused too: %v", n.ID(), n.FatalErr())
		default:
		}
		if got := len(n.Status().Members); got != 3 {
			t.Errorf("%s holds %d members, want the 3 of --peers", n.ID(), got)
		}
	}
	if st := n3.Status(); st.State != "Shutdown" {
		t.Errorf("n3's Raft is %s after its refusal, want Shutdown", st.State)
	}
}

func TestPeersDiff(t *testing.T) {
	a := []Peer{{"n1", "h:1"}, {"n2", "h:2"}, {"n3", "h:3"}}
	if d := peersDiff(a, []Peer{{"n3", "h:3"}, {"n1", "h:1"}, {"n2", "h:2"}}); d != "" {
		t.Errorf("same lists in another order: %q", d)
	}
	d := peersDiff(a, []Peer{{"n1", "h:1"}, {"n2", "h:9"}, {"n4", "h:4"}})
	for _, want := range []string{"n2 is h:2 here, h:9 there", "n3=h:3 is not in theirs", "n4=h:4 is only in theirs"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff %q lacks %q", d, want)
		}
	}
}

// TestPeersDifferFromHeldConfiguration: a node restarted on its state with
// another --peers says so at start, naming the difference (the held
// configuration wins).
func TestPeersDifferFromHeldConfiguration(t *testing.T) {
	dir := t.TempDir()
	ln := listen(t)
	addr := ln.Addr().String()
	cfg := testConfig("n1", dir, ln)
	n := openNode(t, cfg)
	waitFor(t, "leader", 10*time.Second, n.IsLeader)
	must(t, n.Close())

	var buf strings.Builder
	var mu sync.Mutex
	cfg = testConfig("n1", dir, listenAt(t, addr))
	cfg.Peers = []Peer{{"n1", addr}, {"n2", "127.0.0.1:2"}}
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	openNode(t, cfg)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "--peers differs from the cluster configuration this node holds") || !strings.Contains(out, "n2=127.0.0.1:2 is not in theirs") {
		t.Errorf("no warning naming the difference; log:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func listenAt(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
