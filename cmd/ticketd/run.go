package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/ticketd/ticketd/cmd/ticketd/internal/metrics"
	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/resp"
)

// options are ticketd's command-line settings; every flag can also come
// from TICKETD_<FLAG> in the environment (flags win).
type options struct {
	// envKeys are the TICKETD_* variables of the flags (unknownEnv).
	envKeys   map[string]bool
	dataDir   string
	mysqlAddr string
	httpAddr  string
	redisAddr string
	nodeID    string
	raftAddr  string
	peers     string
	join      string
	logLevel  string
	logFormat string

	snapshotThreshold uint64
	snapshotInterval  time.Duration
	trailingLogs      uint64
	stmtTimeout       time.Duration
	shutdownTimeout   time.Duration
	drainTime         time.Duration
	electionTimeout   time.Duration
	leaderLease       time.Duration
	cache             uint64
	redisCache        int64
	stateFsync        bool
	raftLog           string
	version           bool

	client clientOptions
	admin  adminFlags
	node   nodeTLSFlags
}

func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("ticketd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs) }
	fs.StringVar(&o.dataDir, "data-dir", "./ticketd-data", "directory for the Raft log, snapshots and bbolt state")
	fs.StringVar(&o.mysqlAddr, "mysql-addr", "127.0.0.1:3306", "MySQL protocol listen address")
	fs.StringVar(&o.httpAddr, "http-addr", "127.0.0.1:8306", "admin HTTP listen address (/status, /healthz, /readyz, /metrics)")
	fs.StringVar(&o.redisAddr, "redis-addr", "", "Redis protocol listen address (INCR and the string-key commands on the replicated state); empty: off")
	fs.Int64Var(&o.redisCache, "redis-cache", 0, "key reservation: INCRs the leader reserves per Redis key per Raft round trip and answers from memory (0: every INCR through Raft); see the manual")
	fs.StringVar(&o.nodeID, "node-id", "n1", "stable node name")
	fs.StringVar(&o.raftAddr, "raft-addr", "127.0.0.1:7306", "Raft and internal forwarding address")
	fs.StringVar(&o.peers, "peers", "", "static initial cluster: id=host:port,... (the same on every node); empty: this node alone")
	fs.StringVar(&o.join, "join", "", "admin address (host:port) of a member of a running cluster to join")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "text", "text (key=value) or json (one object per line)")
	fs.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "log entries between Raft snapshots")
	fs.DurationVar(&o.snapshotInterval, "snapshot-interval", 2*time.Minute, "how often Raft checks whether --snapshot-threshold entries have accumulated")
	fs.Uint64Var(&o.trailingLogs, "trailing-logs", 10240, "log entries kept after a snapshot, so that a briefly lagging follower catches up without one")
	fs.DurationVar(&o.stmtTimeout, "statement-timeout", 10*time.Second, "how long a statement waits for a leader with a quorum")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 20*time.Second, "bound on a stop (SIGTERM): draining clients, handing leadership over and --drain-time; what is still open then is closed")
	fs.DurationVar(&o.drainTime, "drain-time", 2*time.Second, "how long a stopping node stays up answering /readyz with 503 (no MySQL connections) so that load balancers mark it down: at least their check interval times their fall count; a lone node (the only member) does not wait")
	fs.DurationVar(&o.electionTimeout, "election-timeout", time.Second, "Raft's election timeout: a follower that has not heard from the leader for half of it (at least --leader-lease) stands for election, and a candidate that got no majority tries again after one to two halves of it; a node that has stood for election for longer than it without a leader appearing refuses statements at once (after a split vote, it plus two heartbeat timeouts from the last one)")
	fs.DurationVar(&o.leaderLease, "leader-lease", 500*time.Millisecond, "how long a leader goes without a quorum's answer before it steps down; at most --election-timeout")
	fs.StringVar(&o.raftLog, "raft-log", "", "Raft log store for a new data directory: bolt (raft-boltdb) or wal (raft-wal); empty keeps the directory's, or wal")
	fs.BoolVar(&o.stateFsync, "state-fsync", false, "fsync the bbolt state file's checkpoints (every second, and before snapshots and backups); off, a restart starts from the last checkpoint only in the same boot of the machine, and after a reboot rebuilds the state from the (always fsynced) Raft log and snapshot")
	o.client.register(fs)
	o.admin.register(fs, true)
	o.node.register(fs)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
	fs.Uint64Var(&o.cache, "cache", 0, "default range reservation: ids the leader reserves per Raft round trip for tables without their own 'ticketd:cache=N' comment (0: every id through Raft)")
	// Environment first, so that flags given on the command line win.
	o.envKeys = map[string]bool{}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		// TICKETD_VERSION is too likely to hold a deployment's version
		// label: read from the environment it would stop the node.
		if f.Name == "version" {
			return
		}
		key := envKey(f.Name)
		o.envKeys[key] = true
		if v := getenv(key); v != "" {
			if err := f.Value.Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s=%q: %w", key, v, err)
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	// Raft refuses these later with less to go on; below 5ms it refuses
	// them too.
	if o.electionTimeout < 5*time.Millisecond || o.leaderLease < 5*time.Millisecond {
		return nil, fmt.Errorf("--election-timeout %v and --leader-lease %v: each must be at least 5ms", o.electionTimeout, o.leaderLease)
	}
	if o.leaderLease > o.electionTimeout {
		// A deposed leader must step down before a new one can be
		// elected, or two would serve at once for a while.
		return nil, fmt.Errorf("--leader-lease %v is longer than --election-timeout %v", o.leaderLease, o.electionTimeout)
	}
	return o, nil
}

// usage is --help: how to run a node, the subcommands (from the one
// table main dispatches through) and the node's flags.
func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage:\n  ticketd [flags]            run a node (flags below)\n  ticketd COMMAND [flags]    run a command; ticketd COMMAND --help for its flags\n\nCommands:\n")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nFlags (each also from the environment as TICKETD_<FLAG>, e.g. TICKETD_MYSQL_ADDR; a flag wins):\n")
	fs.PrintDefaults()
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// run starts a node and serves until ctx ends, then shuts down in order:
// admin and MySQL listeners, client connections, the batcher, Raft.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	o, err := parseOptions(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.version {
		bi, _ := debug.ReadBuildInfo()
		_, err := io.WriteString(os.Stdout, versionText(bi))
		return err
	}
	log, err := newLogger(o.logLevel, o.logFormat, stderr)
	if err != nil {
		return err
	}
	names, closest := unknownEnv(os.Environ(), o.envKeys)
	for i, k := range names {
		args := []any{"var", k}
		if closest[i] != "" {
			args = append(args, "did_you_mean", closest[i])
		}
		log.Warn("environment variable ignored: no flag has this name", args...)
	}
	o.client.warnLoopbackOnly(o.mysqlAddr, log)
	// When the signal came, for the final line's "took".
	signalled := make(chan time.Time, 1)
	defer context.AfterFunc(ctx, func() { signalled <- time.Now() })()
	if err := runNode(ctx, o, log, getenv); err != nil {
		// In the log's format, so that --log-format json writes only
		// JSON lines; main prints nothing more.
		log.Error("ticketd stopped", "err", err.Error())
		return fmt.Errorf("%w: %w", errLogged, err)
	}
	// Everything is closed: the last line of a clean exit, so that an
	// operator (and a test) can tell a finished stop from a hung one.
	select {
	case at := <-signalled:
		log.Info("ticketd stopped", "took", time.Since(at).Round(time.Millisecond))
	default:
		log.Info("ticketd stopped")
	}
	return nil
}

// errLogged marks an error run has already written to the log.
var errLogged = errors.New("logged")

// runNode is run once the options are parsed and the log is set up: the
// settings loaded, the listeners opened, Raft and the Service started,
// the servers started, then a wait for the stop. What each step opens is
// closed by a defer here, in the reverse order, however runNode returns.
func runNode(ctx context.Context, o *options, log *slog.Logger, getenv func(string) string) error {
	if o.redisCache < 0 {
		return errors.New("--redis-cache must not be negative")
	}
	met, err := newNodeMetrics()
	if err != nil {
		return err
	}
	defer met.uninstall()
	set, err := loadSettings(o, log, getenv, met)
	if err != nil {
		return err
	}
	lns, err := openListeners(o)
	if err != nil {
		return err
	}
	defer lns.close()
	node, svc, err := openNode(o, set, lns, met, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := node.Close(); err != nil {
			log.Error("closing raft", "err", err)
		}
	}()
	defer svc.Close()

	met.reg.MustRegister(metrics.NewNodeCollector(node))

	// Statements wait until this node's state has caught up with its own
	// log and the leader's commit index (a restarted node replays the log
	// after its last checkpoint, or after the snapshot when its state
	// file was rebuilt, and the log is applied only once a leader is
	// known).
	wcfg := set.wcfg
	wcfg.Gate, wcfg.Clock, wcfg.Node = node, node.Clock, nodeInfo(o, lns.mysql)
	srv := wire.New(svc, wcfg)
	defer srv.Close()

	stop := &stopper{drainTime: o.drainTime, timeout: o.shutdownTimeout, log: log}
	admin := newAdminServer(o, set, node, svc, stop, met, log)
	errc := make(chan error, 3)
	var rsrv *resp.Server
	if lns.redis != nil {
		rsrv = newRedisServer(svc, node, wcfg.Users, o.stmtTimeout, met.Redis, log)
		defer rsrv.Close()
		go func() { errc <- rsrv.Serve(lns.redis) }()
	}
	// The MySQL listener is closed by the planned stop (srv.Shutdown), not
	// by the signal itself.
	serveCtx, serveCancel := context.WithCancel(context.Background())
	defer serveCancel()
	go func() { errc <- srv.Serve(serveCtx, lns.mysql) }()
	go func() {
		if set.adminTLS != nil {
			errc <- admin.ServeTLS(lns.http, "", "")
			return
		}
		errc <- admin.Serve(lns.http)
	}()
	log.Info("ticketd started", "node_id", o.nodeID, "mysql", lns.mysql.Addr().String(), "redis", o.redisAddr,
		"http", lns.http.Addr().String(), "raft", node.Addr(), "data_dir", o.dataDir)

	if err := joinIfAsked(ctx, o, set.token, node, log); err != nil {
		return err
	}
	fatal := waitForStop(ctx, node, errc, rsrv, stop, srv, log)
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = admin.Shutdown(shutCtx)
	return fatal
}

// nodeSettings is what the options load from files and the environment
// (the client settings, the admin token, the certificates, the peers).
type nodeSettings struct {
	wcfg     wire.Config
	token    string
	adminTLS *tls.Config
	nodeTLS  *tls.Config
	peers    []raftstore.Peer
}

// loadSettings reads everything the options name and creates the data
// directory before any port is taken or Raft opened, so that a bad
// certificate, token or peer list fails the start with nothing to undo.
func loadSettings(o *options, log *slog.Logger, getenv func(string) string, met *nodeMetrics) (*nodeSettings, error) {
	set := &nodeSettings{wcfg: wire.Config{StatementTimeout: o.stmtTimeout, Logger: log, Observer: met.Wire}}
	if err := o.client.apply(&set.wcfg, log); err != nil {
		return nil, err
	}
	var err error
	if set.token, err = o.admin.token(getenv); err != nil {
		return nil, err
	}
	if set.adminTLS, err = o.admin.serverTLS(); err != nil {
		return nil, err
	}
	if set.nodeTLS, err = o.node.load(o.raftAddr); err != nil {
		return nil, err
	}
	if o.peers != "" {
		if set.peers, err = raftstore.ParsePeers(o.peers); err != nil {
			return nil, fmt.Errorf("--peers: %w", err)
		}
	}
	if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return set, nil
}

// nodeListeners are the node's MySQL, admin and Redis listeners (redis
// nil without --redis-addr).
type nodeListeners struct {
	mysql, http, redis net.Listener
}

// openListeners listens before Raft starts, so that a taken port fails
// fast; on an error it closes what it opened.
func openListeners(o *options) (*nodeListeners, error) {
	var l nodeListeners
	var err error
	if l.mysql, err = listen("mysql listener", "--mysql-addr", o.mysqlAddr); err != nil {
		return nil, err
	}
	if l.http, err = listen("admin listener", "--http-addr", o.httpAddr); err != nil {
		l.mysql.Close()
		return nil, err
	}
	if l.redis, err = listenRedis(o.redisAddr); err != nil {
		l.http.Close()
		l.mysql.Close()
		return nil, err
	}
	return &l, nil
}

// close closes the listeners, the last opened first.
func (l *nodeListeners) close() {
	if l.redis != nil {
		l.redis.Close()
	}
	l.http.Close()
	l.mysql.Close()
}

// openNode starts Raft and the Service, which need each other: a
// follower forwards its batches to the leader, where they run through
// the leader's Service, so that range reservations see every allocation
// of their tables, and from there into the leader's Raft. The Service
// proposes through the node and the node hands forwarded batches to the
// Service: Open builds it, through Forward, before the node accepts any
// connection.
func openNode(o *options, set *nodeSettings, lns *nodeListeners, met *nodeMetrics, log *slog.Logger) (*raftstore.Node, *alloc.Service, error) {
	var svc *alloc.Service
	node, err := raftstore.Open(raftstore.Config{
		NodeID:            o.nodeID,
		RaftAddr:          o.raftAddr,
		DataDir:           o.dataDir,
		Peers:             set.peers,
		NoBootstrap:       o.join != "",
		SnapshotThreshold: o.snapshotThreshold,
		SnapshotInterval:  o.snapshotInterval,
		TrailingLogs:      o.trailingLogs,
		StateNoSync:       !o.stateFsync,
		LogStore:          o.raftLog,
		// Heartbeat timeout: raftstore's default, half the election
		// timeout (not below the lease), measured in issue 14.
		ElectionTimeout:    o.electionTimeout,
		LeaderLeaseTimeout: o.leaderLease,
		ApplyTimeout:       raftstore.ApplyTimeoutFor(o.stmtTimeout),
		Forward: func(n *raftstore.Node) raftstore.ForwardHandler {
			svc = alloc.NewService(n, n, alloc.Config{Cache: o.cache, Leadership: n, Reads: n, Observer: met.Ticket, KeyCache: o.redisCache}, log)
			return svc.ExecBatch
		},
		TLS:      set.nodeTLS,
		Logger:   log,
		Observer: met.Store,
		// GET /status, on this node and for `ticketd status` through any
		// member.
		Describe: describer(lns.mysql.Addr().String(), lns.http.Addr().String(), addrOf(lns.redis)),
	})
	if err != nil {
		if svc != nil {
			svc.Close()
		}
		return nil, nil, fmt.Errorf("raft: %w", err)
	}
	return node, svc, nil
}

// newAdminServer is the admin API's server: its routes (health, status,
// membership, backups, metrics) behind the token and TLS checks, and
// /readyz failing once the planned stop starts draining.
func newAdminServer(o *options, set *nodeSettings, node *raftstore.Node, svc *alloc.Service, stop *stopper, met *nodeMetrics, log *slog.Logger) *http.Server {
	notReady := func() error {
		if stop.draining.Load() {
			return errDraining
		}
		return nil
	}
	adminH := secureAdmin(withMetrics(backupRoutes(adminHandler(node, notReady, log), node, svc, o.dataDir, log), met.reg, log),
		&o.admin, set.token, o.httpAddr, log)
	// ErrorLog: net/http's own complaints (a failed TLS handshake) went
	// to the standard logger, the one line --log-format json left plain.
	return &http.Server{Handler: adminH, TLSConfig: set.adminTLS, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// joinIfAsked asks the cluster at --join to add this node, unless the
// node restarted with state of its own (it is a member already).
func joinIfAsked(ctx context.Context, o *options, token string, node *raftstore.Node, log *slog.Logger) error {
	if o.join != "" && node.Restarted() {
		log.Info("resuming from existing state; --join ignored", "join", o.join)
	} else if o.join != "" {
		jf := o.admin
		if jf.ca == "" && jf.cert != "" {
			// --http-ca would also make this node's admin API demand
			// client certificates: the member's admin certificate is
			// verified against the cluster's CA instead (OPERATIONS.md
			// "Securing a cluster" signs both with it).
			jf.ca = o.node.ca
		}
		if err := joinCluster(ctx, &jf, token, o.join, o.nodeID, node.Addr(), log); err != nil {
			return fmt.Errorf("--join %s: %w", o.join, err)
		}
	}
	return nil
}

// waitForStop serves until the signal (then runs the planned stop), the
// node's failure, or a listener's; fatal is the error the node failed
// with, which makes the process exit with status 1.
func waitForStop(ctx context.Context, node *raftstore.Node, errc <-chan error, rsrv *resp.Server, stop *stopper, srv *wire.Server, log *slog.Logger) (fatal error) {
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		if rsrv != nil {
			// Redis clients have no drain protocol: they reconnect, to
			// another node behind a balancer. A command in flight loses
			// its reply (its number is never handed out).
			rsrv.Close()
		}
		stop.stop(srv, node)
	case <-node.Failed():
		// Nothing more can be answered here. An exit status other than 0
		// has systemd restart the node (Restart=on-failure), which
		// replays the log from the last checkpoint; a build too old for
		// an entry (ErrUndecodable) fails again, and the unit's start
		// limit stops it until it is upgraded.
		fatal = node.FatalErr()
		log.Error("this node cannot go on; exiting with status 1 (systemd restarts it)", "err", fatal)
	case err := <-errc:
		if !errors.Is(err, wire.ErrServerClosed) && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, resp.ErrServerClosed) {
			log.Error("listener failed", "err", err)
		}
	}
	return fatal
}
