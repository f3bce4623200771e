package raftport

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Fast rejoin. hashicorp/raft's leader retries a follower it cannot reach
// with an exponential backoff (replication.go: 10 ms doubling per failed
// AppendEntries, up to 10.24 s), and a follower that comes back waits for
// the next retry: after a 15 s outage, 5.7-8.2 s in which it is not ready.
// Raft offers no way to cut a backoff short, so the failures are not let
// happen: an AppendEntries to a peer that cannot be connected to waits,
// probing the peer every peerProbeEvery, and is sent once the peer is
// back. Raft's replication (and heartbeat) goroutine for that peer is
// blocked meanwhile, which costs nothing: the peer could not take
// anything. Every other RPC (votes, TimeoutNow, snapshots) fails at once
// as before.
//
// The wait ends, and the failure goes to Raft, after peerDownWait (a
// removed peer's goroutine must end some day, and past it the backoff
// grows one step per peerDownWait instead of per attempt), when this node
// stops leading, or when it closes.

// errUnreachable marks a dial that could not connect to the peer's
// address at all (refused, timed out, no route); a peer that answers but
// fails the TLS handshake is not unreachable.
var errUnreachable = errors.New("raftstore: peer unreachable")

const (
	peerProbeEvery = 20 * time.Millisecond
	peerDownWait   = 2 * time.Minute
)

// Transport is Raft's network transport over a port's Raft streams, with
// AppendEntries waiting for an unreachable peer (see above).
type Transport struct {
	*raft.NetworkTransport
	probe func(addr string) error
	// leading reports whether the wait is still worth it: this node leads
	// and has not closed.
	leading func() bool
	log     *slog.Logger

	mu   sync.Mutex
	down map[raft.ServerID]time.Time // peers waited for, since when
}

// NewTransport is Raft's transport over p: timeout bounds each RPC and
// dial, hl is what hashicorp's transport logs through, and leading
// reports whether an AppendEntries to an unreachable peer is still worth
// waiting for (this node leads and has not closed); log gets the waits.
func NewTransport(p *Port, timeout time.Duration, hl hclog.Logger, leading func() bool, log *slog.Logger) *Transport {
	t := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  p.raftLayer(),
		MaxPool: 3,
		// 1 turns pipelined replication off. Its goroutines can wedge
		// (hashicorp/raft#612): a follower that answers with a newer term
		// or a rejection ends the pipeline's reader, and the next send
		// parks for good on the pipeline's queue; replication to that
		// peer stops while heartbeats go on, and Raft's Shutdown then
		// waits forever. A leadership transfer (every planned stop) is
		// exactly a follower answering with a newer term: in tests a node
		// that handed over could not close. Synchronous AppendEntries
		// cost little here (see the commit's A/B), as hashicorp/raft#541
		// found for batched workloads.
		MaxRPCsInFlight: 1,
		Timeout:         timeout,
		Logger:          quietShutdown{hl},
	})
	probe := func(addr string) error { return p.reach(addr, timeout) }
	return &Transport{NetworkTransport: t, probe: probe, leading: leading, log: log, down: map[raft.ServerID]time.Time{}}
}

// AppendEntries sends the request, first waiting for the peer to be
// reachable when it is not.
func (t *Transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil || !errors.Is(err, errUnreachable) || !t.awaitPeer(id, target) {
		return err
	}
	return t.NetworkTransport.AppendEntries(id, target, args, resp)
}

// awaitPeer probes target until it accepts a connection (true), or the
// wait is over (false).
func (t *Transport) awaitPeer(id raft.ServerID, target raft.ServerAddress) bool {
	t.mu.Lock()
	since, known := t.down[id]
	if !known {
		since = time.Now()
		t.down[id] = since
		t.log.Warn("peer unreachable: replication to it waits until it is back", "peer", id, "addr", target)
	}
	t.mu.Unlock()
	deadline := time.Now().Add(peerDownWait)
	tick := time.NewTicker(peerProbeEvery)
	defer tick.Stop()
	for range tick.C {
		if !t.leading() || time.Now().After(deadline) {
			return false
		}
		if t.probe(string(target)) == nil {
			t.mu.Lock()
			if _, ok := t.down[id]; ok {
				delete(t.down, id)
				t.log.Info("peer reachable again", "peer", id, "addr", target, "down_for", time.Since(since).Round(time.Millisecond))
			}
			t.mu.Unlock()
			return true
		}
	}
	return false
}
