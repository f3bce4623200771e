package raftstore

import (
	"errors"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/raftport"
	"github.com/ticketd/ticketd/raftstore/tlstest"
)

// TestTLSClusterRefusesForeignJoin: a cluster over mutual TLS elects,
// replicates and forwards; a node with another CA's certificate is refused
// by Join, and the configuration does not change.
func TestTLSClusterRefusesForeignJoin(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster CA")
	c := startCluster(t, func(cfg *Config) {
		cfg.TLS = raftport.MutualTLS(ca.Issue(t, cfg.NodeID).TLS(t), ca.Pool())
	})
	l := c.leader()
	proposeRetry(t, l, setupCmds()...)
	f := c.follower()
	ids := insertIDs(t, proposeRetry(t, f, replaceCmd("flickr", "Tickets64", "a")))
	if ids[0] == 0 {
		t.Fatal("no id through the follower")
	}

	other := tlstest.NewCA(t, "other CA")
	cfg := testConfig("intruder", t.TempDir(), listen(t))
	cfg.NoBootstrap = true
	cfg.TLS = raftport.MutualTLS(other.Issue(t, "intruder").TLS(t), other.Pool())
	intruder := openNode(t, cfg)
	err := f.Join(ctxT(t, 5*time.Second), "intruder", intruder.Addr())
	if !errors.Is(err, ErrPeerUnverified) {
		t.Fatalf("join of a node from another CA: %v, want ErrPeerUnverified", err)
	}
	if n := len(l.Status().Members); n != 3 {
		t.Errorf("%d members after the refused join, want 3", n)
	}
}
