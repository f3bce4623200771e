package raftstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// Node errors. Replication failures of Propose wrap ticket.ErrNoQuorum or
// ticket.ErrUncertain as well.
var (
	// ErrClosed: the node has been closed.
	ErrClosed = errors.New("raftstore: node closed")
	// ErrNoLeader: no leader is known (election under way, or no quorum).
	ErrNoLeader = errors.New("raftstore: no leader")
	// ErrNotCaughtUp: the local state has not yet applied everything the
	// node knows to be committed.
	ErrNotCaughtUp = errors.New("raftstore: state not caught up")
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

// errNotLeader marks an operation that was certainly not committed because
// the node it reached is not the leader: it may be retried elsewhere.
var errNotLeader = errors.New("raftstore: not the leader")

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

	// Raft timing. Defaults: heartbeat and election 1s, leader lease
	// 500ms, commit 10ms (how soon followers learn an entry committed).
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
	// after LeaderLeaseTimeout without quorum). Default 5s.
	ApplyTimeout time.Duration
	// TransportTimeout is the I/O deadline of Raft RPCs and of dials.
	// Default 5s.
	TransportTimeout time.Duration
	// ForwardConns is the number of connections a follower keeps to the
	// leader for forwarded batches, each carrying many at once. Default 2.
	ForwardConns int
	// StateNoSync skips fsync of state.db. The state file is then treated
	// as a cache: it is deleted at every start and rebuilt from the latest
	// snapshot and the Raft log (which stays fsynced), because a crash of
	// the machine could leave it torn.
	StateNoSync bool
	// LogStore is the Raft log store (LogStoreBolt or LogStoreWAL); ""
	// keeps the one the data directory has, or DefaultLogStore for a new
	// one. Asking for another store than the directory has is refused
	// (ErrLogStoreMismatch).
	LogStore string

	// Observer, if set, is told about forwarding and snapshots (metrics).
	Observer Observer

	// Logger receives the node's and Raft's logs. Default: discard.
	Logger *slog.Logger
	// RaftLogLevel is the least level of Raft's own messages passed on
	// (Info: elections, membership, snapshots). Default Info.
	RaftLogLevel slog.Level
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeartbeatTimeout, time.Second)
	def(&c.ElectionTimeout, time.Second)
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

// Node is one ticketd replica: Raft (log and stable store in bbolt, file
// snapshots, TCP transport shared with forwarding), the FSM, and the
// forwarding of batches from followers to the leader. It implements
// ticket.Replicator and ticket.Reader.
type Node struct {
	cfg  Config
	id   raft.ServerID
	addr string
	log  *slog.Logger

	raft  *raft.Raft
	fsm   *FSM
	store logStore
	trans *raft.NetworkTransport
	mux   *mux
	fwd   *forwarder

	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error

	// handler, when set, runs batches forwarded by followers on the
	// leader (see SetForwardHandler).
	handler atomic.Pointer[ForwardHandler]

	// leaderGen is closed and replaced whenever the leader this node
	// knows changes (or is lost), so that forwards to the old one stop
	// waiting at once instead of holding batch workers until timeout.
	lmu       sync.Mutex
	leaderGen chan struct{}

	// restarted is set when the node started from existing Raft state.
	restarted bool

	lock *dirLock
	// logs is the log store (behind its cache), read to tell command
	// entries from Raft's own (see stateIncludes).
	logs raft.LogStore
	// When the local state may answer statements (see serving.go).
	caughtUp   atomic.Bool
	removed    atomic.Bool
	memberSeen *atomic.Bool // a configuration listing this node was seen
	leaderTerm atomic.Uint64
}

// Restarted reports whether the node resumed from existing Raft state
// rather than starting empty: a member that joined once must not ask to
// join again on every restart.
func (n *Node) Restarted() bool { return n.restarted }

// leaderChanged returns a channel closed at the next change of leader.
func (n *Node) leaderChanged() <-chan struct{} {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	return n.leaderGen
}

// watchLeader follows Raft's leader observations until the node closes.
func (n *Node) watchLeader() {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(obs)
	go func() {
		defer n.raft.DeregisterObserver(obs)
		for {
			select {
			case o := <-ch:
				if lo := o.Data.(raft.LeaderObservation); lo.LeaderID == n.id {
					go n.confirmLeadership(n.raft.CurrentTerm())
				}
				n.lmu.Lock()
				close(n.leaderGen)
				n.leaderGen = make(chan struct{})
				n.lmu.Unlock()
			case <-n.closed:
				return
			}
		}
	}()
}

// ForwardHandler runs a batch forwarded by a follower on the leader.
type ForwardHandler func(ctx context.Context, cmds []ticket.Command) ([]ticket.Result, error)

// SetForwardHandler routes batches forwarded by followers through h
// instead of straight into the log, so that the leader's range
// reservations see every allocation. h typically proposes through this
// node again.
func (n *Node) SetForwardHandler(h ForwardHandler) { n.handler.Store(&h) }

// LeaderTerm reports the current term and whether this node leads it.
func (n *Node) LeaderTerm() (uint64, bool) {
	term := n.raft.CurrentTerm()
	return term, n.raft.State() == raft.Leader && n.raft.CurrentTerm() == term
}

var (
	_ ticket.Replicator = (*Node)(nil)
	_ ticket.Reader     = (*Node)(nil)
	_ ticket.Leadership = (*Node)(nil)
)

// Open starts a node. A data directory without Raft state is bootstrapped
// with Peers (unless NoBootstrap); one with state resumes from it.
func Open(cfg Config) (*Node, error) {
	return open(cfg, ticket.Apply)
}

func open(cfg Config, apply applyFunc) (n *Node, err error) {
	cfg.setDefaults()
	if cfg.NodeID == "" {
		return nil, errors.New("raftstore: NodeID is required")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("raftstore: DataDir is required")
	}
	var self *Peer
	for i := range cfg.Peers {
		if cfg.Peers[i].ID == cfg.NodeID {
			self = &cfg.Peers[i]
		}
	}
	if len(cfg.Peers) > 0 && self == nil {
		return nil, fmt.Errorf("raftstore: node %q is not in its peer list", cfg.NodeID)
	}
	log := cfg.Logger.With("node", cfg.NodeID)

	var cleanup []func()
	defer func() {
		if err != nil {
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		}
	}()

	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { lock.release() })
	raftDir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}

	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.RaftAddr); err != nil {
			return nil, fmt.Errorf("raftstore: listen: %w", err)
		}
	}
	cleanup = append(cleanup, func() { ln.Close() })
	addr, err := advertiseAddr(&cfg, self, ln)
	if err != nil {
		return nil, err
	}
	if self != nil && self.Addr != addr {
		return nil, fmt.Errorf("raftstore: node %q is %s in the peer list but advertises %s", cfg.NodeID, self.Addr, addr)
	}

	m := newMux(ln, tcpAddr(addr), cfg.TransportTimeout, log)
	hl := newHCLog(log.With("component", "raft"), cfg.RaftLogLevel)
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  m.raftLayer(),
		MaxPool: 3,
		Timeout: cfg.TransportTimeout,
		Logger:  hl,
	})
	cleanup = append(cleanup, func() { trans.Close() })

	sp := statePath(cfg.DataDir)
	if cfg.StateNoSync {
		if err := os.Remove(sp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("raftstore: reset state: %w", err)
		}
	}
	fsm, err := OpenFSM(sp, cfg.StateNoSync, log)
	if err != nil {
		return nil, err
	}
	fsm.apply = apply
	fsm.obs = cfg.Observer
	cleanup = append(cleanup, func() { fsm.Close() })

	store, err := openLogStore(raftDir, cfg.LogStore)
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { store.Close() })
	logs, err := raft.NewLogCache(512, store)
	if err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(raftDir, cfg.SnapshotRetain, hl)
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshot store: %w", err)
	}
	existing, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		return nil, fmt.Errorf("raftstore: %w", err)
	}

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hl
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	rc.MaxAppendEntries = cfg.MaxAppendEntries
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.TrailingLogs = cfg.TrailingLogs
	// The state file is durable and records its applied index, so it
	// normally is ahead of the latest snapshot and Raft need not restore
	// it; only when it is behind (deleted, StateNoSync) does Raft restore
	// the snapshot and replay the log from there.
	rc.NoSnapshotRestoreOnStart = true
	if list, err := snaps.List(); err != nil {
		return nil, fmt.Errorf("raftstore: list snapshots: %w", err)
	} else if len(list) > 0 && list[0].Index > fsm.AppliedIndex() {
		rc.NoSnapshotRestoreOnStart = false
		log.Info("state behind the latest snapshot; restoring", "state_index", fsm.AppliedIndex(), "snapshot_index", list[0].Index)
	}

	// Set before Raft starts handing the FSM entries.
	memberSeen := new(atomic.Bool)
	fsm.onConfiguration = func(c raft.Configuration) {
		if slices.ContainsFunc(c.Servers, func(s raft.Server) bool { return s.ID == rc.LocalID }) {
			memberSeen.Store(true)
		}
	}
	r, err := raft.NewRaft(rc, fsm, logs, store, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("raftstore: start raft: %w", err)
	}
	cleanup = append(cleanup, func() { r.Shutdown().Error() })

	n = &Node{
		cfg:        cfg,
		id:         rc.LocalID,
		addr:       addr,
		log:        log,
		raft:       r,
		fsm:        fsm,
		store:      store,
		logs:       logs,
		lock:       lock,
		memberSeen: memberSeen,
		trans:      trans,
		mux:        m,
		closed:     make(chan struct{}),
	}
	n.fwd = newForwarder(m, cfg.ForwardConns, cfg.TransportTimeout, log)
	fsm.onFatal = func(error) {
		// A replica whose state cannot take entries must not lead or
		// vote. Shutdown waits for the FSM goroutine that calls us.
		go r.Shutdown()
	}
	m.start(n.serveForward)
	cleanup = append(cleanup, func() { m.Close() })
	n.leaderGen = make(chan struct{})
	n.watchLeader()
	if r.State() == raft.Leader {
		// Elected before the observer was registered.
		go n.confirmLeadership(r.CurrentTerm())
	}

	if !existing && !cfg.NoBootstrap {
		conf := raft.Configuration{}
		if len(cfg.Peers) == 0 {
			conf.Servers = []raft.Server{{ID: rc.LocalID, Address: raft.ServerAddress(addr)}}
		}
		for _, p := range cfg.Peers {
			conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
		}
		if err := r.BootstrapCluster(conf).Error(); err != nil {
			return nil, fmt.Errorf("raftstore: bootstrap: %w", err)
		}
		log.Info("bootstrapped cluster", "members", len(conf.Servers))
	}
	n.restarted = existing
	n.kickLoneVoter()
	go n.catchUp()
	go n.watchMembership(250 * time.Millisecond)
	log.Info("raft node started", "addr", addr, "existing_state", existing, "state_index", fsm.AppliedIndex())
	return n, nil
}

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

// ID is the node's name.
func (n *Node) ID() string { return string(n.id) }

// Addr is the node's advertised Raft address.
func (n *Node) Addr() string { return n.addr }

// Leader returns the leader's ID and address, empty if none is known.
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// IsLeader reports whether this node believes it is the leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// View reads the local replica's applied state (ticket.Reader). On a
// follower it may lag the leader by a commit interval.
func (n *Node) View(fn func(ticket.Store) error) error { return n.fsm.View(fn) }

// deadline is the time a call gives up: the context's, or ApplyTimeout.
func (n *Node) deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(n.cfg.ApplyTimeout)
}

// pause waits before retrying; false when the deadline, the context or
// Close ends the call.
func (n *Node) pause(ctx context.Context, deadline time.Time) bool {
	d := min(time.Until(deadline), 20*time.Millisecond)
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return time.Now().Before(deadline)
	case <-ctx.Done():
		return false
	case <-n.closed:
		return false
	}
}

func (n *Node) isClosed() bool {
	select {
	case <-n.closed:
		return true
	default:
		return false
	}
}

// Propose commits cmds as one Raft entry and returns their results
// (ticket.Replicator). On a follower the batch goes to the leader. Errors
// wrap ticket.ErrNoQuorum when the batch was certainly not committed (no
// leader before the deadline, queue timeout, node closed) and
// ticket.ErrUncertain when it may have been (leadership lost, connection
// to the leader lost, context ended while waiting): a batch that may have
// committed is never retried.
func (n *Node) Propose(ctx context.Context, cmds []ticket.Command) ([]ticket.Result, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	data := EncodeBatch(make([]byte, 0, 8+24*len(cmds)), cmds)
	deadline := n.deadline(ctx)
	res, index, err := n.propose(ctx, deadline, data)
	if err == nil && changesSchema(cmds) {
		// A session that created a database through a follower expects to
		// USE it next; the follower's own state must have caught up with
		// the entry first. Allocations need no wait: their results are all
		// the client sees.
		n.waitApplied(ctx, deadline, index)
	}
	if err == nil && len(res) != len(cmds) {
		return nil, fmt.Errorf("raftstore: %w: %d results for %d commands", ticket.ErrUncertain, len(res), len(cmds))
	}
	for i := range res {
		res[i].Index = index
	}
	return res, err
}

// propose commits an encoded batch here or through the leader, and
// returns the results and the entry's log index.
func (n *Node) propose(ctx context.Context, deadline time.Time, data []byte) ([]ticket.Result, uint64, error) {
	var last error
	for {
		if n.isClosed() {
			return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, err)
		}
		if n.raft.State() == raft.Leader {
			res, index, err := n.proposeLocal(ctx, deadline, data)
			if !errors.Is(err, errNotLeader) {
				return res, index, err
			}
			last = err
		} else if changed, addr, id := n.currentLeader(); addr != "" && id != n.id {
			start := time.Now()
			res, index, err := n.fwd.propose(ctx, string(addr), deadline, data, changed)
			n.cfg.Observer.Forwarded(time.Since(start), err)
			if !errors.Is(err, errNotLeader) && !errors.Is(err, errNotSent) {
				return res, index, err
			}
			last = err
		} else {
			last = ErrNoLeader
		}
		if !n.pause(ctx, deadline) {
			return nil, 0, fmt.Errorf("raftstore: propose: %w (last: %v)", ticket.ErrNoQuorum, last)
		}
	}
}

// currentLeader returns the leader with the channel that announces its
// change, taken first so that no change can slip in between.
func (n *Node) currentLeader() (<-chan struct{}, raft.ServerAddress, raft.ServerID) {
	changed := n.leaderChanged()
	addr, id := n.raft.LeaderWithID()
	return changed, addr, id
}

// changesSchema reports commands whose effect later statements read from
// the local state (databases, tables, global variables).
func changesSchema(cmds []ticket.Command) bool {
	for i := range cmds {
		switch cmds[i].Op {
		case ticket.OpInsert, ticket.OpUpdate, ticket.OpReserve:
		default:
			return true
		}
	}
	return false
}

// waitApplied waits, until the deadline at most, for the local state to
// include the entry at index. Missing the deadline is not an error: the
// entry is committed, only this replica's view lags.
func (n *Node) waitApplied(ctx context.Context, deadline time.Time, index uint64) {
	for n.fsm.AppliedIndex() < index && time.Now().Before(deadline) && ctx.Err() == nil && !n.isClosed() {
		time.Sleep(time.Millisecond)
	}
}

// proposeLocal applies an encoded batch on this node, which believes it
// leads.
func (n *Node) proposeLocal(ctx context.Context, deadline time.Time, data []byte) ([]ticket.Result, uint64, error) {
	timeout := time.Until(deadline)
	if timeout <= 0 {
		return nil, 0, fmt.Errorf("raftstore: propose: %w: deadline passed", ticket.ErrNoQuorum)
	}
	f := n.raft.Apply(data, timeout)
	err := n.await(ctx, f, deadline)
	if errors.Is(err, errGaveUp) {
		return nil, 0, fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrUncertain, err)
	}
	if err != nil {
		return nil, 0, applyError(err)
	}
	switch r := f.Response().(type) {
	case []ticket.Result:
		return r, f.Index(), nil
	case error:
		return nil, 0, fmt.Errorf("raftstore: propose: %w: committed but not applied: %w", ticket.ErrUncertain, r)
	default:
		return nil, 0, fmt.Errorf("raftstore: propose: %w: unexpected response %T", ticket.ErrUncertain, r)
	}
}

// errGaveUp marks a wait for a Raft future that ended without its answer.
var errGaveUp = errors.New("raftstore: gave up waiting for Raft")

// await waits for a Raft future, but not forever: Raft resolves it when
// the entry commits or leadership is lost, except when Raft shuts down
// under it (a leader that committed its own removal loses the batch in
// flight, and its future is never answered; a worker stuck on it would
// hold up the process's shutdown). The wait also ends with ctx, past the
// deadline plus the forwarding grace, or when the node closes.
func (n *Node) await(ctx context.Context, f raft.Future, deadline time.Time) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	limit := time.NewTimer(time.Until(deadline) + forwardGrace)
	defer limit.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", errGaveUp, ctx.Err())
		case <-limit.C:
			return fmt.Errorf("%w: no answer by the deadline", errGaveUp)
		case <-n.closed:
			return fmt.Errorf("%w: %w", errGaveUp, ErrClosed)
		case <-tick.C:
			if n.raft.State() == raft.Shutdown {
				select {
				case err := <-done:
					return err
				case <-time.After(100 * time.Millisecond):
				}
				return fmt.Errorf("%w: raft shut down", errGaveUp)
			}
		}
	}
}

// applyError sorts a Raft Apply failure into "not committed" and "may have
// been committed".
func applyError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", errNotLeader, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, err)
	default:
		// ErrLeadershipLost, ErrAbortedByRestore, ErrRaftShutdown (which
		// Raft also returns for entries already queued).
		return fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrUncertain, err)
	}
}

// Join adds a voter to the cluster. Called on any member, it is carried
// out by the leader, retrying (through leader changes) until the
// context's deadline or ApplyTimeout. Joining a node that is already a
// voter at that address does nothing; an id or address that is already
// another member's is refused with ErrMemberConflict.
func (n *Node) Join(ctx context.Context, id, addr string) error {
	if id == "" || addr == "" {
		return errors.New("raftstore: join: id and address are required")
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
		if errors.Is(err, ErrMemberConflict) || errors.Is(err, ErrUnknownMember) {
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
	var cur *raft.Server
	for _, s := range cf.Configuration().Servers {
		if s.ID == raft.ServerID(id) {
			cur = &s
			break
		}
	}
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
	return nil
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

// VerifyLeader confirms with a quorum that this node still leads, and
// returns the term it leads in: state kept in memory on behalf of a term
// (range reservations) must be dropped when the term changes. Concurrent
// callers may share one round of heartbeats.
func (n *Node) VerifyLeader(ctx context.Context) (term uint64, err error) {
	term = n.raft.CurrentTerm()
	if n.raft.State() != raft.Leader {
		return term, fmt.Errorf("raftstore: verify leader: %w: %w", ticket.ErrNoQuorum, errNotLeader)
	}
	f := n.raft.VerifyLeader()
	if ctx.Done() == nil {
		err = f.Error()
	} else {
		done := make(chan error, 1)
		go func() { done <- f.Error() }()
		select {
		case err = <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err == nil && n.raft.CurrentTerm() != term {
		err = errors.New("term changed")
	}
	if err != nil {
		return term, fmt.Errorf("raftstore: verify leader: %w: %w", ticket.ErrNoQuorum, err)
	}
	return term, nil
}

// Snapshot makes Raft take a snapshot now and compact its log.
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return fmt.Errorf("raftstore: snapshot: %w", err)
	}
	return nil
}

// Member is one server of the Raft configuration.
type Member struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
}

// Status is a node's view of the cluster, for /status.
type Status struct {
	NodeID     string `json:"node_id"`
	Addr       string `json:"raft_addr"`
	State      string `json:"state"` // Leader, Follower, Candidate, Shutdown
	LeaderID   string `json:"leader_id"`
	LeaderAddr string `json:"leader_addr"`
	Term       uint64 `json:"term"`
	// AppliedIndex is the last entry Raft handed to the state machine;
	// StateIndex the last one the state file holds (Raft's no-op and
	// barrier entries never reach it).
	AppliedIndex uint64   `json:"applied_index"`
	StateIndex   uint64   `json:"state_index"`
	CommitIndex  uint64   `json:"commit_index"`
	LastLogIndex uint64   `json:"last_log_index"`
	Members      []Member `json:"members"`
	// Error is set when the state machine failed (see ErrFSMFailed).
	Error string `json:"error,omitempty"`
}

// Status reports the node's Raft state. It does not block.
func (n *Node) Status() Status {
	laddr, lid := n.raft.LeaderWithID()
	st := Status{
		NodeID:       string(n.id),
		Addr:         n.addr,
		State:        n.raft.State().String(),
		LeaderID:     string(lid),
		LeaderAddr:   string(laddr),
		Term:         n.raft.CurrentTerm(),
		AppliedIndex: n.raft.AppliedIndex(),
		StateIndex:   n.fsm.AppliedIndex(),
		CommitIndex:  n.raft.CommitIndex(),
		LastLogIndex: n.raft.LastIndex(),
		Members:      []Member{},
	}
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		for _, s := range cf.Configuration().Servers {
			st.Members = append(st.Members, Member{
				ID:     string(s.ID),
				Addr:   string(s.Address),
				Voter:  s.Suffrage == raft.Voter,
				Leader: s.ID == lid,
			})
		}
	}
	if err := n.fsm.Err(); err != nil {
		st.Error = err.Error()
	}
	return st
}

// Ready returns nil when the node can serve: it is a member, knows a
// leader, and its state holds every entry committed when it asked. A
// leader asks itself through a Barrier in its term (see
// confirmLeadership); a follower asks the leader for its commit index and
// waits up to a second to get there. Otherwise it says why (ErrNoLeader,
// ErrNotCaughtUp, ErrRemoved, ErrClosed, ErrFSMFailed).
func (n *Node) Ready() error {
	if err := n.fsm.Err(); err != nil {
		return err
	}
	if n.isClosed() || n.raft.State() == raft.Shutdown {
		return ErrClosed
	}
	if n.removed.Load() {
		return ErrRemoved
	}
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return ErrNoLeader
	}
	if id == n.id {
		if n.leaderTerm.Load() != n.raft.CurrentTerm() {
			return fmt.Errorf("%w: new leader applying its predecessors' entries", ErrNotCaughtUp)
		}
		return nil
	}
	// A follower's own commit index can lag far behind the leader's (just
	// restarted, or waiting for a snapshot): ask the leader.
	deadline := time.Now().Add(readyTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	lc, err := n.fwd.commitIndex(ctx, string(addr), deadline)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotCaughtUp, err)
	}
	// Under load the leader commits all the time: what counts is reaching
	// what it had committed when asked, which a follower in step does
	// within a commit interval.
	for !n.stateIncludes(lc) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: state at %d, raft applied %d, leader's commit %d", ErrNotCaughtUp,
				n.fsm.AppliedIndex(), n.raft.AppliedIndex(), lc)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

// readyTimeout bounds Ready's question to the leader.
const readyTimeout = time.Second

// WaitReady waits until Ready returns nil or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		err := n.Ready()
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrClosed) || errors.Is(err, ErrFSMFailed) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("raftstore: wait ready: %w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// WaitLeader waits until a leader is known and returns its ID.
func (n *Node) WaitLeader(ctx context.Context) (string, error) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if _, id := n.raft.LeaderWithID(); id != "" {
			return string(id), nil
		}
		if n.isClosed() {
			return "", ErrClosed
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("raftstore: wait leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Close shuts the node down: no new proposals, Raft stopped (proposals in
// flight fail with ErrUncertain), listener and stores closed. It is safe to
// call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.closed)
		n.fwd.close()
		errs := []error{n.raft.Shutdown().Error()}
		errs = append(errs, n.mux.Close(), n.trans.Close(), n.store.Close(), n.fsm.Close())
		// Last: the directory is free only once its files are closed.
		errs = append(errs, n.lock.release())
		var out []error
		for _, e := range errs {
			if e != nil && !errors.Is(e, net.ErrClosed) {
				out = append(out, e)
			}
		}
		n.closeErr = errors.Join(out...)
		n.log.Info("raft node closed")
	})
	return n.closeErr
}
