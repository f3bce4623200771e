package raftstore

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// TestLoneRestartElectsAtOnce: a lone voter that restarts stands for
// election at once (kickLoneVoter), also where the leader lease equals the
// heartbeat timeout, as the flags' defaults have it, so that the timeout
// cannot be lowered to the lease. The timeouts are a minute: a restart
// that waited for its timer would miss the proposal's 20 s deadline, one
// that campaigns at once is done in milliseconds. (Lowering to the lease
// did nothing at the defaults: a single node waited 0.5-1 s after each
// restart.)
func TestLoneRestartElectsAtOnce(t *testing.T) {
	cfg := testConfig("n1", t.TempDir(), nil)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = time.Minute, time.Minute, time.Minute
	n := openNode(t, cfg)
	propose(t, n, setupCmds()...)
	must(t, n.Close())
	for i := range 3 {
		n := openNode(t, cfg)
		start := time.Now()
		if _, err := n.Propose(ctxT(t, 20*time.Second), []model.Command{replaceCmd("flickr", "Tickets64", "a")}); err != nil {
			t.Fatalf("restart %d: proposal sent at once: %v after %v", i, err, time.Since(start).Round(time.Millisecond))
		}
		must(t, n.Close())
	}
}

// TestClusterRestartWaitsForItsElection: after a full restart no member
// knows a leader until the first election, which starts when the first
// follower's timer fires, anywhere in [1, 2) heartbeat timeouts after the
// start (Raft draws it at random). A proposal sent at once waits for that
// election instead of being refused as leaderless: the fail-fast clock
// starts when a node stands as a candidate, not at its start (counted from
// the start, a node refused whenever every timer fired later than one
// election timeout, which the test config makes the heartbeat timeout:
// nearly always).
func TestClusterRestartWaitsForItsElection(t *testing.T) {
	c := startCluster(t)
	proposeRetry(t, c.leader(), setupCmds()...)
	for round := range 2 {
		c.restartAll()
		start := time.Now()
		_, err := c.nodes["n1"].Propose(ctxT(t, 20*time.Second), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
		if nl := new(NoLeaderError); errors.As(err, &nl) {
			t.Fatalf("round %d: proposal sent at once refused as leaderless after %v: %v", round, time.Since(start).Round(time.Millisecond), err)
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// restartAll closes every node, then opens them all again at once on
// their addresses.
func (c *cluster) restartAll() {
	t := c.t
	t.Helper()
	for _, n := range c.nodes {
		must(t, n.Close())
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id, cfg := range c.cfgs {
		cfg.Listener = rebind(t, cfg.Listener.Addr().String())
		c.cfgs[id] = cfg
		wg.Go(func() {
			n := openNode(t, cfg)
			mu.Lock()
			c.nodes[id] = n
			mu.Unlock()
		})
	}
	wg.Wait()
}

// rebind listens on addr again, which a node closed a moment ago; another
// process may hold the port for a moment on a busy machine.
func rebind(t testing.TB, addr string) net.Listener {
	t.Helper()
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cannot rebind %s: %v", addr, err)
	return nil
}
