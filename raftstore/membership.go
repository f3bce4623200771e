package raftstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
)

// Membership refusals: nothing was changed.
var (
	// ErrUnknownMember: Remove of an id that is not in the configuration.
	ErrUnknownMember = errors.New("raftstore: no such member")
	// ErrMemberConflict: Join of an id that is a member at another
	// address, or of an address that is another member's.
	ErrMemberConflict = errors.New("raftstore: conflicts with a member")
)

// memberIDs lists a configuration's ids, for error messages.
func memberIDs(c raft.Configuration) string {
	ids := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		ids[i] = string(s.ID)
	}
	return strings.Join(ids, ", ")
}

// ErrPeerUnverified refuses a Join whose new member's Raft address does not
// complete a mutual TLS handshake with this node: added, it would be a
// voter nobody can reach, and a quorum harder to find. Nothing changed.
var ErrPeerUnverified = errors.New("raftstore: the new member failed the TLS handshake")

// Join adds a voter to the cluster. Called on any member, it is carried
// out by the leader, retrying (through leader changes) until the
// context's deadline or ApplyTimeout. Joining a node that is already a
// voter at that address does nothing; an id or address that is already
// another member's is refused with ErrMemberConflict.
func (n *Node) Join(ctx context.Context, id, addr string) error {
	if id == "" || addr == "" {
		return errors.New("raftstore: join: id and address are required")
	}
	if err := n.port.Verify(addr, n.cfg.TransportTimeout); err != nil {
		err = fmt.Errorf("%w: %w", ErrPeerUnverified, err)
		n.log.Warn("join refused", "id", id, "addr", addr, "err", err)
		return err
	}
	return n.membership(ctx, fwdJoin, id, addr)
}

// Remove takes a server out of the cluster. Called on any member, it is
// carried out by the leader; an id that is not a member is refused with
// ErrUnknownMember (unless an earlier attempt of this call may already
// have removed it).
func (n *Node) Remove(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("raftstore: remove: id is required")
	}
	return n.membership(ctx, fwdRemove, id, "")
}

func (n *Node) membership(ctx context.Context, kind byte, id, addr string) error {
	deadline := n.deadline(ctx)
	var last error
	maybeDone := false // an attempt may have made the change
	for {
		if n.isClosed() {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if n.raft.State() == raft.Leader {
			err = n.membershipLocal(kind, id, addr, deadline)
		} else if laddr, lid := n.raft.LeaderWithID(); laddr != "" && lid != n.id {
			err = n.fwd.membership(ctx, string(laddr), deadline, kind, id, addr)
		} else {
			err = ErrNoLeader
		}
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrMemberConflict) || errors.Is(err, ErrUnknownMember) || errors.Is(err, ErrMemberVersion) {
			if kind == fwdRemove && errors.Is(err, ErrUnknownMember) && maybeDone {
				// An earlier attempt's outcome was unknown: it did it.
				return nil
			}
			return err
		}
		maybeDone = maybeDone || !(errors.Is(err, errNotLeader) || errors.Is(err, ErrNoLeader) ||
			errors.Is(err, errNotSent) || errors.Is(err, ticket.ErrNoQuorum))
		// A change is idempotent (membershipLocal skips one already in
		// the configuration), so unlike a batch it can be retried after
		// any failure, a lost leadership included.
		last = err
		if !n.pause(ctx, deadline) {
			return fmt.Errorf("raftstore: membership change: %w (last: %v)", ticket.ErrNoQuorum, last)
		}
	}
}

func (n *Node) membershipLocal(kind byte, id, addr string, deadline time.Time) error {
	timeout := time.Until(deadline)
	if timeout <= 0 {
		return fmt.Errorf("raftstore: membership change: %w: deadline passed", ticket.ErrNoQuorum)
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return fmt.Errorf("raftstore: configuration: %w", err)
	}
	cur := serverOf(cf.Configuration(), id)
	var f raft.IndexFuture
	switch kind {
	case fwdJoin:
		if cur != nil && cur.Address == raft.ServerAddress(addr) && cur.Suffrage == raft.Voter {
			return nil
		}
		if cur != nil && cur.Address != raft.ServerAddress(addr) {
			// Raft would move the member to the new address, cutting it
			// off if the address is wrong: a typo must not do that.
			return fmt.Errorf("%w: %q is already a member at %s; remove it first to move it", ErrMemberConflict, id, cur.Address)
		}
		for _, s := range cf.Configuration().Servers {
			if s.Address == raft.ServerAddress(addr) && s.ID != raft.ServerID(id) {
				return fmt.Errorf("%w: %s is already the address of member %q", ErrMemberConflict, addr, s.ID)
			}
		}
		if err := n.checkJoinVersion(id, addr, deadline); err != nil {
			n.log.Warn("join refused", "id", id, "addr", addr, "err", err)
			return err
		}
		n.log.Info("adding voter", "id", id, "addr", addr)
		f = n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeout)
	case fwdRemove:
		if cur == nil {
			return fmt.Errorf("%w: %q (members: %s)", ErrUnknownMember, id, memberIDs(cf.Configuration()))
		}
		n.log.Info("removing server", "id", id)
		f = n.raft.RemoveServer(raft.ServerID(id), 0, timeout)
	default:
		return fmt.Errorf("raftstore: unknown membership change %d", kind)
	}
	if err := n.waitMembership(f, kind == fwdRemove && raft.ServerID(id) == n.id, deadline); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return fmt.Errorf("%w: %w", errNotLeader, err)
		}
		return fmt.Errorf("raftstore: membership change: %w", err)
	}
	if kind == fwdRemove && raft.ServerID(id) != n.id {
		go n.tellRemoved(string(cur.Address), id, f.Index())
	}
	return nil
}

// fwdRemoved tells a server that the configuration committed at an
// index removes it (payload: u64 index, the server's id). Raft makes
// only one attempt to bring a removed server the entry that removes it:
// the leader stops replicating to it as soon as it appends the entry,
// and under load the last attempt often fails (TestMembership saw n3
// never learn it). The server would then wait for a leader for ever,
// refusing statements with "no leader" instead of saying it was removed.
const fwdRemoved byte = 11

// tellRemoved sends fwdRemoved to a server this leader has just removed,
// retrying for a few seconds; a server that is down learns nothing, and
// one of a build without the kind refuses it, both as before.
func (n *Node) tellRemoved(addr, id string, index uint64) {
	payload := logformat.AppendString(binary.BigEndian.AppendUint64(nil, index), id)
	for i := 0; i < 20 && !n.isClosed(); i++ {
		if n.isMember(id) {
			return // joined again meanwhile (a new process under the old id)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		status, _, err := n.fwd.call(ctx, addr, time.Now().Add(time.Second), fwdRemoved, payload, nil)
		cancel()
		if err == nil && (status == stOK || status == stRejected) {
			return
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-n.closed:
			return
		}
	}
}

// isMember reports whether id is in this node's latest configuration.
func (n *Node) isMember(id string) bool {
	cf := n.raft.GetConfiguration()
	return cf.Error() == nil && serverOf(cf.Configuration(), id) != nil
}

// serverOf is the server of c named id, or nil.
func serverOf(c raft.Configuration, id string) *raft.Server {
	for i := range c.Servers {
		if c.Servers[i].ID == raft.ServerID(id) {
			return &c.Servers[i]
		}
	}
	return nil
}

// wasMember reports whether this node has been a member of its cluster:
// seen in a configuration, or resumed from state of its own. A node that
// joins starts with an empty configuration and replays older ones that
// predate it; it is not "removed" from those.
func (n *Node) wasMember() bool { return n.memberSeen.Load() || n.restarted }

// heardRemoved answers fwdRemoved: this node counts as removed when the
// message names it, it has been a member (like watchMembership's rule: a
// new process started under the removed id with an empty data directory
// to join again must not take the message for itself), and the index is
// above the latest configuration Raft has given it (one it had not
// received; the entry itself would make watchMembership see the removal).
func (n *Node) heardRemoved(payload []byte) (byte, []byte) {
	if len(payload) < 8 {
		return stRejected, []byte("short fwdRemoved")
	}
	index := binary.BigEndian.Uint64(payload)
	d := logformat.NewReader(payload[8:])
	id := d.String()
	if err := d.Done(); err != nil {
		return stRejected, []byte(err.Error())
	}
	if raft.ServerID(id) != n.id {
		return stRejected, []byte(fmt.Sprintf("this is %q, not %q", n.id, id))
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return stRejected, []byte(err.Error())
	}
	if n.wasMember() && cf.Index() < index {
		n.toldRemoved.Store(true)
		n.log.Warn("the leader removed this node from the cluster's configuration", "index", index)
	}
	return stOK, nil
}

// waitMembership waits for a configuration change. A leader that removes
// itself shuts Raft down once the change commits, and the future is then
// never answered: its own shutdown is the success it waits for.
func (n *Node) waitMembership(f raft.IndexFuture, removingSelf bool, deadline time.Time) error {
	err := n.await(context.Background(), f, deadline)
	if errors.Is(err, errGaveUp) {
		if removingSelf && n.raft.State() == raft.Shutdown {
			return nil
		}
		return fmt.Errorf("%w: %w", ticket.ErrUncertain, err)
	}
	return err
}
