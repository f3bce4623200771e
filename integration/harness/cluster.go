package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is a set of nodes started with one shared --peers list.
type Cluster struct {
	Nodes []*Node
	Peers string // the --peers value every node was given
}

// StartCluster starts n nodes (ids n1..nN) with a shared static --peers
// list and waits until every node is ready. base supplies common settings
// (Args, Env, ReadyTimeout, Binary); its addresses, NodeID, DataDir, Peers and Join
// are ignored. Failures are fatal to the test.
func StartCluster(ctx context.Context, t testing.TB, n int, base ...Options) *Cluster {
	t.Helper()
	var b Options
	if len(base) > 0 {
		b = base[0]
	}
	c := &Cluster{}
	var peers []string
	for i := 1; i <= n; i++ {
		o := Options{
			NodeID:       fmt.Sprintf("n%d", i),
			Args:         b.Args,
			Env:          b.Env,
			ReadyTimeout: b.ReadyTimeout,
			NoWait:       b.NoWait,
			Binary:       b.Binary,
			Redis:        b.Redis,
		}
		node := NewNode(t, o)
		c.Nodes = append(c.Nodes, node)
		peers = append(peers, node.ID()+"="+node.RaftAddr())
	}
	c.Peers = strings.Join(peers, ",")
	// Every node is started before any is awaited: none can be ready until
	// a quorum is up to elect a leader.
	for _, node := range c.Nodes {
		node.opts.Peers = c.Peers
		if err := node.Start(ctx); err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	if !b.NoWait {
		if err := c.WaitReady(ctx); err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	return c
}

// WaitReady waits, in parallel, for every running node to be ready.
func (c *Cluster) WaitReady(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i, node := range c.Nodes {
		if !node.Running() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = node.WaitReady(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Node returns the node with the given id, or nil.
func (c *Cluster) Node(id string) *Node {
	for _, n := range c.Nodes {
		if n.ID() == id {
			return n
		}
	}
	return nil
}

// Leader polls the running nodes' /status until one reports itself Leader
// and the other reachable nodes agree on its id, or timeout passes.
func (c *Cluster) Leader(ctx context.Context, timeout time.Duration) (*Node, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		var leaders []*Node
		var seen []Status
		var parts []string
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			st, err := n.Status(ctx)
			if err != nil {
				continue // paused or partitioned nodes do not vote here
			}
			if st.State == "Leader" {
				leaders = append(leaders, n)
			}
			seen = append(seen, st)
			parts = append(parts, fmt.Sprintf("%s: state=%s leader=%s term=%d", n.ID(), st.State, st.LeaderID, st.Term))
		}
		last = strings.Join(parts, "; ")
		// Two self-declared leaders happen briefly across terms; wait
		// until exactly one remains and nobody names another.
		if len(leaders) == 1 {
			agree := true
			for _, st := range seen {
				if st.LeaderID != "" && st.LeaderID != leaders[0].ID() {
					agree = false
				}
			}
			if agree {
				return leaders[0], nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no agreed leader after %v (last: %s)", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops every running node with SIGTERM, in parallel.
func (c *Cluster) Stop() error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i, n := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.Stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// MySQLAddrs returns every node's MySQL address, in node order (for a
// driver's host list or a client-side load balancer).
func (c *Cluster) MySQLAddrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.MySQLAddr())
	}
	return a
}

// WaitApplied waits until every running node has applied at least ref's
// applied index at the call, or within has passed: a node answers from
// its own applied state, so a test that created a table through one node
// waits for this before it uses the table on another. Stopped nodes are
// skipped: tests wait on the survivors of a fault.
func (c *Cluster) WaitApplied(ctx context.Context, ref *Node, within time.Duration) error {
	st, err := ref.Status(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		for {
			s, err := n.Status(ctx)
			if err == nil && s.AppliedIndex >= st.AppliedIndex {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s has not applied index %d after %v (status %+v, %v)", n.ID(), st.AppliedIndex, within, s, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}
