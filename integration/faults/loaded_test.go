package faults

import (
	"cmp"
	"context"
	"iter"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// loadSpec says how to start a cluster under load for a fault test.
type loadSpec struct {
	db   string   // database created, and the workload's
	args []string // ticketd flags beyond clusterArgs'
	// proxied puts every Raft link through netproxy so tests can cut
	// them; without it nodes dial each other directly.
	proxied bool
	clients int // workload clients per loaded node
	// loadOn picks the nodes that get clients; nil loads every node.
	loadOn func(lead *harness.Node, all []*harness.Node) []*harness.Node
	// serving bounds the wait for every loaded node's first id; 0 is 20s.
	serving time.Duration
	// nodeScoped makes the table node-scoped (nodeScope): the history is
	// checked with history.CheckNodeScoped.
	nodeScoped bool
	// redis: the workload INCRs a key over the Redis protocol.
	redis bool
}

// nodeScope is the table comment of the node-scoped fault runs: blocks of
// 100, so that a cut-off node's block runs out within a partition.
const (
	nodeScope      = "ticketd:cache=100,scope=node"
	nodeScopeBlock = 100
)

// loaded is a three-node cluster serving a workload, before any fault.
type loaded struct {
	c    *cluster // the proxied cluster; nil unless loadSpec.proxied
	hc   *harness.Cluster
	lead *harness.Node
	w    *workload
}

// startLoaded starts three nodes, waits for a leader, creates the Flickr
// table in s.db on every node, starts s.clients clients on each loaded
// node and returns once each of those nodes has handed out an id.
func startLoaded(ctx context.Context, t *testing.T, s loadSpec) *loaded {
	t.Helper()
	l := &loaded{}
	if s.proxied {
		l.c = startCluster(ctx, t, 3, clusterArgs(s.args...))
		l.hc = l.c.hc
	} else {
		l.hc = harness.StartCluster(ctx, t, 3, harness.Options{Args: clusterArgs(s.args...)})
	}
	var err error
	if l.lead, err = settle(ctx, l.hc); err != nil {
		t.Fatal(err)
	}
	comment := ""
	if s.nodeScoped {
		comment = nodeScope
	}
	createTicketTableWith(ctx, t, l.hc, l.lead, s.db, comment)
	on := l.hc.Nodes
	if s.loadOn != nil {
		on = s.loadOn(l.lead, l.hc.Nodes)
	}
	l.w = newWorkload(t, s.db)
	l.w.nodeScoped = s.nodeScoped
	l.w.redis = s.redis
	for _, n := range on {
		l.w.run(n, s.clients)
	}
	if _, err := waitServing(l.w, on, time.Now(), cmp.Or(s.serving, 20*time.Second)); err != nil {
		t.Fatalf("cluster under load, before any fault: %v", err)
	}
	return l
}

// clusterGap is the cluster-wide unavailability around a fault at t: from
// the last id any node returned before t to the first id any node
// returned for a call made after t. ok is false while no id has come
// after t.
func clusterGap(ops iter.Seq[history.Op], t time.Time) (before, after time.Time, ok bool) {
	for o := range ops {
		if !o.OK() {
			continue
		}
		if o.Return.Before(t) && o.Return.After(before) {
			before = o.Return
		}
		if !o.Call.Before(t) && (after.IsZero() || o.Return.Before(after)) {
			after = o.Return
		}
	}
	return before, after, !after.IsZero()
}
