package raftstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
)

// Peers checked. Every member of a new cluster is started with the same
// --peers list; one with a typo (a wrong port) used to bootstrap a
// configuration of its own, and once it led, the cluster ran on the
// members it could reach. So before a new node bootstraps, it asks the
// other listed peers for their lists (forward kind fwdPeers, answered by
// any node, bootstrapped or not): it bootstraps once a majority of the
// list, itself included, has the same list, and refuses to start, naming
// the difference, once peers with other lists leave too few for that (the
// odd one out), or when one of them has already formed a cluster. Peers
// not started yet are asked again every peerCheckEvery. A node with state of its own
// compares its --peers with the configuration it holds, and warns about
// a difference (the configuration, changed by joins and removals, is what
// counts then).

// ErrPeersDiffer: this node's --peers list differs from a peer's, and the
// node refuses to form a cluster with it.
var ErrPeersDiffer = errors.New("raftstore: --peers differs between members")

// peerCheckEvery is how often a new node asks the peers it has not heard
// from yet.
const peerCheckEvery = 200 * time.Millisecond

// fwdPeers asks any node for the peer list it was started with (no
// payload). The answer: u8 1 when the node holds state of its own, then
// the count and each peer's id and address, sorted by id.
const fwdPeers byte = 10

// peersAnswer is this node's answer to fwdPeers.
func (n *Node) peersAnswer() []byte {
	out := []byte{0}
	if f := n.raft.GetConfiguration(); n.restarted || (f.Error() == nil && len(f.Configuration().Servers) > 0) {
		out[0] = 1
	}
	ps := sortedPeers(n.cfg.Peers)
	out = binary.AppendUvarint(out, uint64(len(ps)))
	for _, p := range ps {
		out = logformat.AppendString(logformat.AppendString(out, p.ID), p.Addr)
	}
	return out
}

func decodePeersAnswer(b []byte) (peers []Peer, hasState bool, err error) {
	if len(b) < 1 {
		return nil, false, errors.New("empty answer")
	}
	hasState = b[0] == 1
	d := logformat.NewReader(b[1:])
	count := d.Uvarint()
	if count > 1000 {
		return nil, false, errors.New("bad peer count")
	}
	for range count {
		peers = append(peers, Peer{ID: d.String(), Addr: d.String()})
	}
	return peers, hasState, d.Done()
}

func sortedPeers(ps []Peer) []Peer {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// peersDiff describes how theirs differs from ours ("" when the lists are
// the same), naming each id whose entry differs.
func peersDiff(ours, theirs []Peer) string {
	mine := map[string]string{}
	for _, p := range ours {
		mine[p.ID] = p.Addr
	}
	other := map[string]string{}
	for _, p := range theirs {
		other[p.ID] = p.Addr
	}
	var diffs []string
	for _, p := range sortedPeers(ours) {
		switch a, ok := other[p.ID]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s=%s is not in theirs", p.ID, p.Addr))
		case a != p.Addr:
			diffs = append(diffs, fmt.Sprintf("%s is %s here, %s there", p.ID, p.Addr, a))
		}
	}
	for _, p := range sortedPeers(theirs) {
		if _, ok := mine[p.ID]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%s is only in theirs", p.ID, p.Addr))
		}
	}
	return strings.Join(diffs, "; ")
}

// bootstrapChecked bootstraps a new node with Peers once a majority of
// them (itself included) has started with the same list. It refuses,
// naming the difference, when that can no longer happen (the peers with
// other lists leave too few), or when a peer with another list already
// holds state (the cluster formed without this node).
func (n *Node) bootstrapChecked(addr string) {
	agree := map[string]bool{string(n.id): true}
	differ := map[string]string{} // id -> difference
	logged := time.Time{}
	majority := len(n.cfg.Peers)/2 + 1
	for {
		for _, p := range n.cfg.Peers {
			if agree[p.ID] {
				continue
			}
			theirs, hasState, err := n.askPeers(p.Addr)
			if err != nil {
				continue // not started yet, or an older build (see askPeers)
			}
			d := peersDiff(n.cfg.Peers, theirs)
			if d == "" {
				agree[p.ID] = true
				continue
			}
			if differ[p.ID] == "" {
				differ[p.ID] = fmt.Sprintf("%s at %s was started with other --peers (%s)", p.ID, p.Addr, d)
				n.log.Warn("a peer was started with another --peers list", "peer", p.ID, "addr", p.Addr, "differences", d)
			}
			if hasState {
				n.refuse(differ[p.ID] + ", and already formed a cluster")
				return
			}
		}
		if len(agree) >= majority {
			break
		}
		if len(n.cfg.Peers)-len(differ) < majority {
			var why []string
			for _, p := range n.cfg.Peers {
				if differ[p.ID] != "" {
					why = append(why, differ[p.ID])
				}
			}
			n.refuse(strings.Join(why, "; "))
			return
		}
		if time.Since(logged) > 10*time.Second {
			logged = time.Now()
			var missing []string
			for _, p := range n.cfg.Peers {
				if !agree[p.ID] && differ[p.ID] == "" {
					missing = append(missing, p.ID+"="+p.Addr)
				}
			}
			n.log.Info("waiting for a majority of --peers to compare lists before bootstrapping", "not_reached", strings.Join(missing, ","))
		}
		select {
		case <-n.closed:
			return
		case <-time.After(peerCheckEvery):
		}
	}
	if len(differ) > 0 {
		n.log.Warn("bootstrapping with the majority's --peers; the members with other lists refuse to start", "agreeing", len(agree))
	}
	if err := bootstrap(n.raft, &n.cfg, addr, n.log); err != nil {
		if errors.Is(err, raft.ErrCantBootstrap) {
			// A peer's leader reached this node first and gave it the
			// cluster's configuration.
			return
		}
		n.fail(err)
	}
}

// refuse stops a node that will not form a cluster with its peers: Raft
// shuts down (a leader of the others must not pull it in), and the node
// fails with ErrPeersDiffer.
func (n *Node) refuse(why string) {
	n.raft.Shutdown()
	n.fail(fmt.Errorf("%w: %s; this node refuses to form a cluster with them (nothing was bootstrapped here): start every member with the same --peers", ErrPeersDiffer, why))
}

// askPeers asks the node at addr for its --peers. A build from before
// fwdPeers refuses the kind; it counts as unreachable, so a cluster of
// old and new builds still forms once a majority of new ones agree.
func (n *Node) askPeers(addr string) ([]Peer, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	status, out, err := n.fwd.call(ctx, addr, time.Now().Add(time.Second), fwdPeers, nil, nil)
	if err != nil {
		return nil, false, err
	}
	if status != stOK {
		return nil, false, fmt.Errorf("%s: status %d: %s", addr, status, out)
	}
	return decodePeersAnswer(out)
}

// warnPeersDiffer logs how --peers differs from the configuration a node
// with state holds.
func (n *Node) warnPeersDiffer() {
	if len(n.cfg.Peers) == 0 {
		return
	}
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	var held []Peer
	for _, s := range f.Configuration().Servers {
		held = append(held, Peer{ID: string(s.ID), Addr: string(s.Address)})
	}
	if len(held) == 0 {
		return
	}
	if d := peersDiff(n.cfg.Peers, held); d != "" {
		n.log.Warn("--peers differs from the cluster configuration this node holds; --peers is only read on a first start, the held configuration (changed by joins and removals) is what counts",
			"differences", d, "held", formatPeers(held))
	}
}

func formatPeers(ps []Peer) string {
	var parts []string
	for _, p := range sortedPeers(ps) {
		parts = append(parts, p.ID+"="+p.Addr)
	}
	return strings.Join(parts, ",")
}
