package raftstore

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Peer is a cluster member: a stable node name and its Raft address.
type Peer struct {
	ID   string
	Addr string
}

// ParsePeers parses the --peers syntax "id=host:port,id=host:port".
func ParsePeers(s string) ([]Peer, error) {
	var out []Peer
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, addr, ok := strings.Cut(item, "=")
		id, addr = strings.TrimSpace(id), strings.TrimSpace(addr)
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("raftstore: peer %q: want id=host:port", item)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("raftstore: peer %q: %w", item, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("raftstore: peer %q listed twice", id)
		}
		seen[id] = true
		out = append(out, Peer{ID: id, Addr: addr})
	}
	return out, nil
}

// Config configures a Node. Zero durations and counts take the defaults
// noted.
type Config struct {
	// NodeID is the node's stable name (not its address).
	NodeID string
	// RaftAddr is the listen address for Raft and forwarding, e.g.
	// 127.0.0.1:7306. Ignored when Listener is set.
	RaftAddr string
	// Listener, if set, is used instead of listening on RaftAddr (tests
	// listen on port 0 first to learn the addresses). Node closes it.
	Listener net.Listener
	// AdvertiseAddr is the address peers dial. Default: this node's entry
	// in Peers, else RaftAddr, else the listener's address.
	AdvertiseAddr string
	// DataDir holds state.db (the counters) and raft/ (log and snapshots).
	DataDir string
	// Peers is the initial cluster, the same list on every node, this node
	// included. Empty means a cluster of this node alone. Used only when
	// the data directory has no Raft state yet.
	Peers []Peer
	// NoBootstrap starts a node without state as an empty member waiting
	// to be added with Join on the cluster (cmd's --join).
	NoBootstrap bool

	// Raft timing. Defaults: election 1s, heartbeat half the election
	// timeout but not below the leader lease, leader lease 500ms (at most
	// the heartbeat timeout), commit 10ms (how soon followers learn an
	// entry committed).
	//
	// HeartbeatTimeout is how long a follower goes without hearing from
	// the leader before it campaigns; Raft draws each wait at random
	// between one and two of them and a pre-vote needs both survivors to
	// have timed out, so a leader's death is noticed between one and
	// about three heartbeat timeouts after its last message. Half the
	// election timeout keeps that within two election timeouts, while
	// the leader still sends heartbeats ten times per heartbeat timeout
	// (every 50ms by default). Safety does not depend on it: every id is
	// committed by a quorum or confirmed with one (VerifyLeader).
	//
	// ElectionTimeout is how long a node goes without a leader before it
	// refuses statements at once (NoLeaderError). Raft's own election
	// timeout, after which a candidate without a majority tries again,
	// is the heartbeat timeout (see raftConfig).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// MaxAppendEntries bounds the entries per AppendEntries RPC and per
	// FSM batch. Default 64.
	MaxAppendEntries int
	// Snapshots. Defaults: every 8192 entries, checked every 2 minutes,
	// 10240 entries kept after a snapshot, 2 snapshots retained.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	SnapshotRetain    int

	// ApplyTimeout bounds Propose, Join and Remove when their context has
	// no deadline: waiting for a leader, and queueing the entry. Once the
	// entry is queued, Raft itself bounds the wait (commit, or step-down
	// after LeaderLeaseTimeout without quorum). It also caps the time a
	// leader gives a forwarded request. Default 5s; a server with a
	// statement timeout sets ApplyTimeoutFor(it).
	ApplyTimeout time.Duration
	// TransportTimeout is the I/O deadline of Raft RPCs and of dials.
	// Default 5s.
	TransportTimeout time.Duration
	// ForwardConns is the number of connections a follower keeps to the
	// leader for forwarded batches, each carrying many at once. Default 2.
	ForwardConns int
	// StateNoSync skips fsync of state.db's checkpoints. The node then
	// starts from its last checkpoint (and replays the log after it)
	// only when the file was written in the machine's current boot: a
	// process that exited, even by kill -9, left its writes in the
	// page cache; after a restart of the machine the file may be torn,
	// and it is rebuilt from the latest snapshot and the Raft log (which
	// stays fsynced). See unsynced.go. With fsync, a node always starts
	// from its last checkpoint.
	StateNoSync bool
	// LogStore is the Raft log store (LogStoreBolt or LogStoreWAL); ""
	// keeps the one the data directory has, or DefaultLogStore for a new
	// one. Asking for another store than the directory has is refused
	// (ErrLogStoreMismatch).
	LogStore string

	// Forward, if set, builds the handler that runs batches forwarded by
	// followers while this node leads: in ticketd the leader's
	// alloc.Service over this node, so that the round trip is follower ->
	// leader's Service (whose range reservations must see every
	// allocation) -> leader's Raft. Open calls it once, with the node
	// built but before it accepts any connection. Without it, forwarded
	// batches go straight into the log as the follower encoded them.
	Forward func(*Node) ForwardHandler
	// Describe, if set, returns the document node n gives a member that
	// asks for its status (ClusterStatus): the command's /status JSON,
	// with what only the command knows (its other addresses, its build).
	// Default: n.Status() as JSON. It must not block.
	Describe func(n *Node) []byte

	// TLS, if set, secures the Raft port: every connection, accepted or
	// dialled, for Raft or forwarding, is mutual TLS with this
	// configuration (see NodeTLS, MutualTLS), and Join first checks that
	// the new member completes the handshake. Nil: plain TCP.
	TLS *tls.Config

	// Observer, if set, is told about forwarding and snapshots (metrics).
	Observer Observer

	// Logger receives the node's and Raft's logs. Default: discard.
	Logger *slog.Logger
	// RaftLogLevel is the least level of Raft's own messages passed on
	// (Info: elections, membership, snapshots). Default Info.
	RaftLogLevel slog.Level

	// commandVersion is the command version the node announces and
	// applies up to: CommandVersion, lower only in tests that play an
	// older build.
	commandVersion uint32
	// appendClock, if set, restamps the entries this node appends as
	// leader: their AppendedAt, which Raft takes from the leader's clock,
	// becomes appendClock(AppendedAt). Tests use it to play leaders whose
	// clocks differ.
	appendClock func(time.Time) time.Time
	// bootIDFunc, if set, replaces the kernel's boot id (unsynced.go):
	// tests play a restart of the machine with it.
	bootIDFunc func() []byte
}

// bootID is the id of the machine's current boot, nil when unknown.
func (c *Config) bootID() []byte {
	if c.bootIDFunc != nil {
		return c.bootIDFunc()
	}
	return readBootID()
}

// ApplyTimeoutFor is the ApplyTimeout that fits a statement timeout (the
// wire server's, --statement-timeout): a statement may wait in the queue
// behind one failing proposal and then fail its own, and both must end
// inside the statement timeout, so that the client hears "nothing was
// written" (MySQL error 1290) rather than "outcome unknown".
func ApplyTimeoutFor(statementTimeout time.Duration) time.Duration {
	return statementTimeout / 3
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.commandVersion == 0 {
		c.commandVersion = CommandVersion
	}
	def(&c.ElectionTimeout, time.Second)
	def(&c.HeartbeatTimeout, max(c.ElectionTimeout/2, c.LeaderLeaseTimeout))
	def(&c.LeaderLeaseTimeout, min(500*time.Millisecond, c.HeartbeatTimeout))
	def(&c.CommitTimeout, 10*time.Millisecond)
	def(&c.SnapshotInterval, 2*time.Minute)
	def(&c.ApplyTimeout, 5*time.Second)
	def(&c.TransportTimeout, 5*time.Second)
	if c.MaxAppendEntries <= 0 {
		c.MaxAppendEntries = 64
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.SnapshotRetain <= 0 {
		c.SnapshotRetain = 2
	}
	if c.ForwardConns <= 0 {
		c.ForwardConns = 2
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
}

// advertiseAddr is the address peers dial to reach this node: see
// Config.AdvertiseAddr.
func advertiseAddr(cfg *Config, self *Peer, ln net.Listener) (string, error) {
	switch {
	case cfg.AdvertiseAddr != "":
		return cfg.AdvertiseAddr, nil
	case self != nil:
		return self.Addr, nil
	}
	if cfg.Listener == nil {
		if host, port, err := net.SplitHostPort(cfg.RaftAddr); err == nil && port != "0" && host != "" {
			if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
				return cfg.RaftAddr, nil
			}
		}
	}
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok || a.IP == nil || a.IP.IsUnspecified() {
		return "", fmt.Errorf("raftstore: listener address %s is not advertisable: set AdvertiseAddr", ln.Addr())
	}
	return a.String(), nil
}
