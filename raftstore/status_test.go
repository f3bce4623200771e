package raftstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestClusterStatus asks a follower for every member's status: each
// member answers with its own document over the Raft port (its Describe
// when set), and a stopped member is reported with an error within the
// caller's deadline instead of holding the others back.
func TestClusterStatus(t *testing.T) {
	c := startCluster(t, func(cfg *Config) {
		if cfg.NodeID == "n2" {
			cfg.Describe = func(*Node) []byte { return []byte(`{"node_id":"n2","custom":true}`) }
		}
	})
	c.leader()
	var from *Node
	for _, id := range []string{"n1", "n3"} {
		if !c.nodes[id].IsLeader() {
			from = c.nodes[id]
		}
	}
	reports := from.ClusterStatus(ctxT(t, 5*time.Second))
	if len(reports) != 3 {
		t.Fatalf("%d reports, want 3: %+v", len(reports), reports)
	}
	for _, r := range reports {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.ID, r.Error)
		}
		var doc struct {
			NodeID string `json:"node_id"`
			Term   uint64 `json:"term"`
			Custom bool   `json:"custom"`
		}
		if err := json.Unmarshal(r.Status, &doc); err != nil {
			t.Fatalf("%s: %v: %s", r.ID, err, r.Status)
		}
		if doc.NodeID != r.ID || r.Addr != c.nodes[r.ID].Addr() {
			t.Errorf("report %s at %s holds node %s's status (%s)", r.ID, r.Addr, doc.NodeID, r.Status)
		}
		if r.ID == "n2" != doc.Custom || (r.ID != "n2" && doc.Term == 0) {
			t.Errorf("%s's document %s: Describe not used where set, or Status where not", r.ID, r.Status)
		}
	}

	// A member that is down is reported as such, within the deadline.
	var down string
	for id, n := range c.nodes {
		if n != from {
			down = id
			break
		}
	}
	if err := c.nodes[down].Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	reports = from.ClusterStatus(ctx)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("ClusterStatus with a member down took %v, past its 2s deadline", took)
	}
	for _, r := range reports {
		if (r.ID == down) != (r.Error != "") || (r.Error != "" && r.Status != nil) {
			t.Errorf("with %s down: report %s status %s error %q", down, r.ID, r.Status, r.Error)
		}
	}
}
