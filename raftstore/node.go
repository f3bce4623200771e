package raftstore

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/hclogslog"
	"github.com/ticketd/ticketd/raftstore/raftport"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
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

// Node is one ticketd replica: Raft (its log store, file snapshots, a TCP
// transport shared with forwarding), the FSM, and the forwarding of
// batches from followers to the leader. It implements ticket.Replicator,
// ticket.Reader and alloc.Leadership.
type Node struct {
	cfg  Config
	id   raft.ServerID
	addr string
	log  *slog.Logger

	raft  *raft.Raft
	fsm   *FSM
	store logStore
	trans *raftport.Transport
	port  *raftport.Port
	fwd   *forwarder
	// replies numbers Raft's AppendEntries and notes their replies, for
	// VerifyLeader (confirm.go).
	replies *replyLog
	// counted is the transport Raft sends through (replies' numbering),
	// and protocol Raft's protocol version: confirmFresh's own heartbeats
	// (Node.heartbeat) go the same way.
	counted  *countedTransport
	protocol raft.ProtocolVersion

	closed    chan struct{}
	closeOnce sync.Once
	// fatal fires when the node can answer nothing until restarted
	// (Failed).
	fatal    *fatalSignal
	closeErr error

	// handler, if not nil, runs batches forwarded by followers on the
	// leader (Config.Forward). Set before the node accepts connections.
	handler ForwardHandler

	// leaderGen is closed and replaced whenever the leader this node
	// knows changes (or is lost), so that forwards to the old one stop
	// waiting at once instead of holding batch workers until timeout.
	lmu       sync.Mutex
	leaderGen chan struct{}
	// leaderSeen is when a leader was last known here, in Unix
	// nanoseconds (watchLeader; see leaderless).
	leaderSeen atomic.Int64
	// campaignSince is when this node, knowing no leader, first stood
	// as a candidate, in Unix nanoseconds; 0 while a leader is known or
	// before it has campaigned (watchLeader; see leaderless).
	campaignSince atomic.Int64
	// quietTerm is the latest term noted here (when a leader was known,
	// at the start, or since); electionSeen is when, knowing no leader,
	// this node last saw the term rise past it, in Unix nanoseconds, 0
	// while a leader is known (watchLeader; see leaderless).
	quietTerm    atomic.Uint64
	electionSeen atomic.Int64

	// restarted is set when the node started from existing Raft state.
	restarted bool

	lock *dirLock
	// logs is the log store (behind its cache), read to tell command
	// entries from Raft's own (see stateIncludes).
	logs raft.LogStore
	// When the local state may answer statements (see serving.go).
	caughtUp atomic.Bool
	removed  atomic.Bool
	// toldRemoved: the leader that removed this node said so (fwdRemoved)
	// before Raft could bring it the entry (membership.go).
	toldRemoved atomic.Bool
	memberSeen  *atomic.Bool // a configuration listing this node was seen
	leaderTerm  atomic.Uint64
	// nudging is set while a nudge of the leader is under way (WaitApplied).
	nudging atomic.Bool
	// handingOver is set while this leader hands leadership over: it
	// starts no entry of its own then (see handover.go); applying counts
	// the entries it started and awaits.
	handingOver atomic.Bool
	applying    atomic.Int64
	// probed holds the members' command versions as they last answered
	// (version.go), nil while the cluster runs this build's version.
	probed atomic.Pointer[map[string]uint32]
	// reads batches read-index rounds (readindex.go).
	reads readRounds
	// lone: this node is the only voter of its latest configuration
	// (watchMembership); hold is its hold on elections while its disk is
	// full (diskfull.go).
	lone atomic.Bool
	hold electionHold
}

var (
	_ ticket.Replicator = (*Node)(nil)
	_ ticket.Reader     = (*Node)(nil)
	_ alloc.Leadership  = (*Node)(nil)
)

// Open starts a node. A data directory without Raft state is bootstrapped
// with Peers (unless NoBootstrap); one with state resumes from it.
func Open(cfg Config) (*Node, error) {
	return open(cfg, ticket.Apply)
}

func open(cfg Config, apply applyFunc) (n *Node, err error) {
	cfg.setDefaults()
	self, err := checkConfig(&cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("node", cfg.NodeID)
	hl := hclogslog.New(log.With("component", "raft"), cfg.RaftLogLevel)

	// Each step that opens something pushes its undo; a failed open runs
	// them in reverse.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()

	lock, raftDir, err := claimDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { lock.release() })

	ln, addr, err := listenRaft(&cfg, self)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { ln.Close() })
	port := raftport.New(ln, addr, cfg.TransportTimeout, cfg.TLS, log)
	// The node's closed channel, made here for the transport's waits.
	closed := make(chan struct{})
	var raftp atomic.Pointer[raft.Raft]
	trans := raftport.NewTransport(port, cfg.TransportTimeout, hl, func() bool {
		select {
		case <-closed:
			return false
		default:
		}
		r := raftp.Load()
		return r != nil && r.State() == raft.Leader
	}, log)
	undo = append(undo, func() { trans.Close() })

	began := time.Now()
	fsm, err := openFSM(&cfg, apply, log)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { fsm.Close() })
	log.Info("state loaded", "state_index", fsm.AppliedIndex(), "took", time.Since(began).Round(time.Millisecond))
	if cv := fsm.ClusterVersion(); cv > cfg.commandVersion {
		return nil, fmt.Errorf("%w: the cluster in %s runs command version %d and this build applies up to %d; start a build of version %d or later",
			ErrDowngrade, cfg.DataDir, cv, cfg.commandVersion, cv)
	}

	began = time.Now()
	rs, err := openRaftStorage(raftDir, &cfg, hl, log)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { rs.store.Close() })
	log.Info("raft log opened", "took", time.Since(began).Round(time.Millisecond))
	if !rs.existing && fsm.AppliedIndex() > 0 {
		// A state file without the Raft state it came from (raft/ was
		// emptied, not the whole directory): this node starts a new log
		// from index 1, whose entries the state machine would skip up to
		// the file's index. It starts from an empty state instead.
		log.Warn("state file without Raft state: starting from an empty state", "state_index", fsm.AppliedIndex())
		if err := fsm.Close(); err != nil {
			return nil, err
		}
		if err := os.Remove(statePath(cfg.DataDir)); err != nil {
			return nil, fmt.Errorf("raftstore: reset state: %w", err)
		}
		if fsm, err = openFSM(&cfg, apply, log); err != nil {
			return nil, err
		}
	}

	rc := raftConfig(&cfg, hl)
	if rc.NoSnapshotRestoreOnStart, err = stateAheadOfSnapshots(rs.snaps, fsm, log); err != nil {
		return nil, err
	}
	memberSeen := new(atomic.Bool)
	fatal := &fatalSignal{ch: make(chan struct{})}
	replies := newReplyLog()
	counted := &countedTransport{Transport: trans, replies: replies}
	r, err := startRaft(rc, fsm, rs, counted, memberSeen, fatal)
	if err != nil {
		return nil, err
	}
	raftp.Store(r)
	undo = append(undo, func() { close(closed); r.Shutdown().Error() })

	n = &Node{
		cfg:        cfg,
		id:         rc.LocalID,
		addr:       addr,
		log:        log,
		raft:       r,
		fsm:        fsm,
		store:      rs.store,
		logs:       rs.logs,
		lock:       lock,
		memberSeen: memberSeen,
		trans:      trans,
		port:       port,
		fwd:        newForwarder(port, cfg.ForwardConns, cfg.TransportTimeout, log),
		replies:    replies,
		counted:    counted,
		protocol:   rc.ProtocolVersion,
		closed:     closed,
		fatal:      fatal,
		leaderGen:  make(chan struct{}),
		restarted:  rs.existing,
	}
	if cfg.Forward != nil {
		n.handler = cfg.Forward(n)
	}
	if ws, ok := rs.store.(*watchedStore); ok {
		refused := n.storeRefused
		ws.refused.Store(&refused)
	}
	port.Start(n.serveForward)
	undo = append(undo, func() { port.Close() })
	n.followLeader()

	switch {
	case !rs.existing && !cfg.NoBootstrap && len(cfg.Peers) > 1:
		// Only once a majority agrees on the list (peers.go).
		go n.bootstrapChecked(addr)
	case !rs.existing && !cfg.NoBootstrap:
		if err := bootstrap(r, &cfg, addr, log); err != nil {
			return nil, err
		}
	case rs.existing:
		n.warnPeersDiffer()
	}
	n.startBackground()
	log.Info("raft node started", "addr", addr, "existing_state", rs.existing, "state_index", fsm.AppliedIndex())
	return n, nil
}

// checkConfig refuses a configuration Open cannot start from, and returns
// this node's entry in Peers (nil when Peers is empty).
func checkConfig(cfg *Config) (self *Peer, err error) {
	if cfg.NodeID == "" {
		return nil, errors.New("raftstore: NodeID is required")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("raftstore: DataDir is required")
	}
	for i := range cfg.Peers {
		if cfg.Peers[i].ID == cfg.NodeID {
			self = &cfg.Peers[i]
		}
	}
	if len(cfg.Peers) > 0 && self == nil {
		return nil, fmt.Errorf("raftstore: node %q is not in its peer list", cfg.NodeID)
	}
	return self, nil
}

// claimDataDir creates the data directory, locks it against a second
// process, and creates raft/ inside it.
func claimDataDir(dataDir string) (lock *dirLock, raftDir string, err error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, "", fmt.Errorf("raftstore: %w", err)
	}
	if lock, err = lockDataDir(dataDir); err != nil {
		return nil, "", err
	}
	raftDir = filepath.Join(dataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		lock.release()
		return nil, "", fmt.Errorf("raftstore: %w", err)
	}
	return lock, raftDir, nil
}

// listenRaft returns the listener for Raft and forwarding (Config.Listener, or
// a new one on RaftAddr) and the address peers dial, which must be the one
// the peer list gives this node.
func listenRaft(cfg *Config, self *Peer) (ln net.Listener, addr string, err error) {
	ln = cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.RaftAddr); err != nil {
			return nil, "", fmt.Errorf("raftstore: listen: %w", err)
		}
	}
	if addr, err = advertiseAddr(cfg, self, ln); err != nil {
		ln.Close()
		return nil, "", err
	}
	if self != nil && self.Addr != addr {
		ln.Close()
		return nil, "", fmt.Errorf("raftstore: node %q is %s in the peer list but advertises %s", cfg.NodeID, self.Addr, addr)
	}
	return ln, addr, nil
}

// openFSM opens the state file the FSM applies entries to. With
// StateNoSync the file is kept only when it was written in this boot of
// the machine, and otherwise rebuilt from the snapshot and the log
// (unsynced.go): a crash of the machine could have left it torn.
func openFSM(cfg *Config, apply applyFunc, log *slog.Logger) (*FSM, error) {
	sp := statePath(cfg.DataDir)
	syncOnce, err := prepareState(sp, cfg.StateNoSync, cfg.bootID(), log)
	if err != nil {
		return nil, err
	}
	fsm, err := OpenFSM(sp, cfg.StateNoSync, log)
	if err != nil {
		return nil, err
	}
	if syncOnce {
		// Written without fsync in this boot, now used with fsync on:
		// synced once, then as durable as the rest.
		if err := errors.Join(fsm.db.Sync(), clearMarker(sp)); err != nil {
			fsm.Close()
			return nil, fmt.Errorf("raftstore: sync state: %w", err)
		}
	}
	fsm.apply = apply
	fsm.obs = cfg.Observer
	fsm.version = cfg.commandVersion
	return fsm, nil
}

// raftStorage is what Raft keeps on disk under raft/.
type raftStorage struct {
	store    logStore      // log and stable store (openLogStore)
	logs     raft.LogStore // store behind a cache of recent entries
	snaps    raft.SnapshotStore
	existing bool // the directory holds Raft state already
	// appendClock is Config.appendClock (tests).
	appendClock func(time.Time) time.Time
}

// openRaftStorage opens the log store the directory has or cfg asks for,
// and the snapshot store.
func openRaftStorage(raftDir string, cfg *Config, hl hclog.Logger, log *slog.Logger) (rs raftStorage, err error) {
	store, err := openLogStore(raftDir, cfg.LogStore)
	if err != nil {
		return rs, err
	}
	rs.store = &watchedStore{logStore: store, log: log}
	rs.appendClock = cfg.appendClock
	defer func() {
		if err != nil {
			rs.store.Close()
		}
	}()
	if rs.logs, err = raft.NewLogCache(512, rs.store); err != nil {
		return rs, fmt.Errorf("raftstore: %w", err)
	}
	if rs.snaps, err = raft.NewFileSnapshotStoreWithLogger(raftDir, cfg.SnapshotRetain, hl); err != nil {
		return rs, fmt.Errorf("raftstore: snapshot store: %w", err)
	}
	if rs.existing, err = raft.HasExistingState(rs.logs, rs.store, rs.snaps); err != nil {
		return rs, fmt.Errorf("raftstore: %w", err)
	}
	return rs, nil
}

// raftConfig is Raft's configuration from cfg.
func raftConfig(cfg *Config, hl hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hl
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	// A candidate that got no majority tries again after one to two
	// heartbeat timeouts, not election timeouts. The common case is the
	// pre-vote of the first survivor to notice a dead leader being
	// refused by the other, which still follows the leader (and refuses
	// again once it has timed out too, if its log is longer): then the
	// cluster waited for the first one's retry, 1-2 s at the defaults,
	// and a cut-off leader stalled it 2.6-3.6 s (issue 34). Half that
	// bounds it within two election timeouts; split votes cost half as
	// much too. Raft also waits this long for a leadership transfer's
	// target to win, which in a planned stop takes milliseconds.
	rc.ElectionTimeout = cfg.HeartbeatTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	rc.MaxAppendEntries = cfg.MaxAppendEntries
	rc.BatchApplyCh = true
	// The per-peer metric names (raft.replication.appendEntries.rpc.<id>
	// and the like) duplicate the labelled ones, at two more metric
	// calls per entry and follower.
	rc.NoLegacyTelemetry = true
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.TrailingLogs = cfg.TrailingLogs
	return rc
}

// stateAheadOfSnapshots reports whether Raft may skip restoring the latest
// snapshot at start. The state file is durable and records its applied
// index, so it normally is ahead of the latest snapshot; only when it is
// behind (deleted, StateNoSync) must Raft restore the snapshot and replay
// the log from there.
func stateAheadOfSnapshots(snaps raft.SnapshotStore, fsm *FSM, log *slog.Logger) (bool, error) {
	list, err := snaps.List()
	if err != nil {
		return false, fmt.Errorf("raftstore: list snapshots: %w", err)
	}
	if len(list) > 0 && list[0].Index > fsm.AppliedIndex() {
		log.Info("state behind the latest snapshot; restoring", "state_index", fsm.AppliedIndex(), "snapshot_index", list[0].Index)
		return false, nil
	}
	return true, nil
}

// startRaft starts Raft over the FSM and storage. memberSeen is set when
// the FSM is handed a configuration that lists this node.
func startRaft(rc *raft.Config, fsm *FSM, rs raftStorage, trans raft.Transport, memberSeen *atomic.Bool, fatal *fatalSignal) (*raft.Raft, error) {
	// Set before Raft starts handing the FSM entries.
	fsm.onConfiguration = func(c raft.Configuration) {
		if slices.ContainsFunc(c.Servers, func(s raft.Server) bool { return s.ID == rc.LocalID }) {
			memberSeen.Store(true)
		}
	}
	logs := rs.logs
	var stamped *stampedLogs
	if rs.appendClock != nil {
		stamped = &stampedLogs{LogStore: logs, clock: rs.appendClock}
		logs = stamped
	}
	r, err := raft.NewRaft(rc, fsm, logs, rs.store, rs.snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("raftstore: start raft: %w", err)
	}
	if stamped != nil {
		stamped.raft.Store(r)
	}
	fsm.onFatal = func(error) {
		// A replica whose state cannot take entries must not lead or
		// vote. Shutdown waits for the FSM goroutine that calls us.
		go r.Shutdown()
		fatal.fire(nil)
	}
	return r, nil
}

// followLeader starts tracking the leader (see leader.go).
func (n *Node) followLeader() {
	n.watchLeader()
	if n.raft.State() == raft.Leader {
		// Elected before the observer was registered.
		go n.confirmLeadership(n.raft.CurrentTerm())
	}
}

// bootstrap writes the first configuration of a new cluster: Peers, or
// this node alone.
func bootstrap(r *raft.Raft, cfg *Config, addr string, log *slog.Logger) error {
	conf := raft.Configuration{}
	if len(cfg.Peers) == 0 {
		conf.Servers = []raft.Server{{ID: raft.ServerID(cfg.NodeID), Address: raft.ServerAddress(addr)}}
	}
	for _, p := range cfg.Peers {
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
	}
	if err := r.BootstrapCluster(conf).Error(); err != nil {
		return fmt.Errorf("raftstore: bootstrap: %w", err)
	}
	log.Info("bootstrapped cluster", "members", len(conf.Servers))
	return nil
}

// startBackground starts what keeps the node's view current: the first
// election of a lone voter, catching up before serving, and watching the
// configuration for this node's removal (see serving.go).
func (n *Node) startBackground() {
	n.kickLoneVoter()
	go n.catchUp()
	go n.watchMembership(250 * time.Millisecond)
	go n.keepVersions()
}

// Failed is closed when the node can answer nothing until it is
// restarted: its state machine failed (ErrFSMFailed; a restart replays
// the log from the last checkpoint, and for ErrUndecodable a newer build
// is needed), or it refused to form a cluster (ErrPeersDiffer). FatalErr
// says why.
func (n *Node) Failed() <-chan struct{} { return n.fatal.ch }

// FatalErr is why Failed fired, or nil.
func (n *Node) FatalErr() error {
	if err := n.fsm.Err(); err != nil {
		return err
	}
	if p := n.fatal.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fail stops the node for good: err is what FatalErr and Ready say.
func (n *Node) fail(err error) {
	n.log.Error("this node cannot go on", "err", err)
	n.fatal.fire(err)
}

// fatalSignal is closed once, on the first fatal failure.
type fatalSignal struct {
	once sync.Once
	ch   chan struct{}
	err  atomic.Pointer[error]
}

func (f *fatalSignal) fire(err error) {
	f.once.Do(func() {
		if err != nil {
			f.err.Store(&err)
		}
		close(f.ch)
	})
}

// Restarted reports whether the node resumed from existing Raft state
// rather than starting empty: a member that joined once must not ask to
// join again on every restart.
func (n *Node) Restarted() bool { return n.restarted }

// ID is the node's name.
func (n *Node) ID() string { return string(n.id) }

// Addr is the node's advertised Raft address.
func (n *Node) Addr() string { return n.addr }

// View reads the local replica's applied state (ticket.Reader). On a
// follower it may lag the leader by a commit interval.
func (n *Node) View(fn func(ticket.Store) error) error { return n.fsm.View(fn) }

// SchemaEpoch implements ticket.SchemaClock: it grows whenever this
// node's state applies a schema change, a restore or a snapshot.
func (n *Node) SchemaEpoch() uint64 { return n.fsm.SchemaEpoch() }

func (n *Node) isClosed() bool {
	select {
	case <-n.closed:
		return true
	default:
		return false
	}
}

// Snapshot makes Raft take a snapshot now and compact its log.
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return fmt.Errorf("raftstore: snapshot: %w", err)
	}
	return nil
}

// Close shuts the node down: no new proposals, Raft stopped (proposals in
// flight fail with ErrUncertain), listener and stores closed. It is safe to
// call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		began := time.Now()
		close(n.closed)
		n.fwd.close()
		errs := []error{n.raft.Shutdown().Error()}
		raftTook := time.Since(began)
		errs = append(errs, n.port.Close(), n.trans.Close(), n.store.Close(), n.fsm.Close())
		// Last: the directory is free only once its files are closed.
		errs = append(errs, n.lock.release())
		var out []error
		for _, e := range errs {
			if e != nil && !errors.Is(e, net.ErrClosed) {
				out = append(out, e)
			}
		}
		n.closeErr = errors.Join(out...)
		n.log.Info("raft node closed", "took", time.Since(began).Round(time.Millisecond),
			"raft_shutdown", raftTook.Round(time.Millisecond))
	})
	return n.closeErr
}
