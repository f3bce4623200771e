package wire

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/server"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// Service is what the wire layer needs from the ticket domain.
type Service interface {
	// ExecFor commits one command of a session (whose retry of a lost
	// compare-and-set the leader favours); statement errors are in
	// Result.Err.
	ExecFor(ctx context.Context, who *ticket.Session, c *model.Command) (model.Result, error)
	// TryExec answers a command at once when it needs no wait (a
	// node-scoped table's block holds its ids), or reports !ok, and the
	// session calls ExecFor with a statement deadline.
	TryExec(c *model.Command) (model.Result, bool)
	// View reads the local replica's state.
	View(fn func(ticket.Store) error) error
	// Global returns a replicated global variable or def.
	Global(name string, def uint64) uint64
	// IsRowTable reports whether a table is a row table on the local
	// replica, cheaply: INSERT asks it on the ticket hot path.
	IsRowTable(db, name string) bool
}

// Gate tells whether the local replica's state may answer statements: a
// node that has just restarted, a leader that has not yet applied its
// predecessors' entries, or a removed node must not answer from it.
type Gate interface {
	// Serving returns nil when statements may be answered now. It must
	// not block: it runs before every statement.
	Serving() error
	// WaitServing waits until they may, or ctx ends.
	WaitServing(ctx context.Context) error
	// Applied reports, without blocking, whether the local state holds
	// the write at a log index (model.Result.Index); WaitApplied waits
	// for it. A session's reads wait for its own writes.
	Applied(index uint64) bool
	WaitApplied(ctx context.Context, index uint64) error
	// WaitRead waits until the local state holds every write acknowledged,
	// by any node, before the call (a Raft read index). Reads of tables
	// wait for it, and so does a statement before it answers that a
	// database or table does not exist (it may just have been created
	// through another node).
	WaitRead(ctx context.Context) error
}

// Config sets up a Server.
type Config struct {
	// Gate, if set, holds every statement (and the login, which reads the
	// replicated session defaults) until the local state may answer it,
	// up to StatementTimeout; then the client gets error 1290. A login
	// waits at most until a second (a quarter of shorter timeouts) before
	// ConnectTimeout ends, so that the 1290 reaches the client.
	Gate Gate
	// Version is the server version in the handshake and VERSION().
	Version string
	// StatementTimeout bounds how long a statement waits for replication
	// (e.g. while there is no leader) before the client gets an error.
	StatementTimeout time.Duration
	// PlanCacheSize bounds the number of cached query texts.
	PlanCacheSize int
	Logger        *slog.Logger
	// Clock, if set, is the replicated clock as this node has applied it
	// (DESIGN §4d). NOW() in a statement that is not replicated (a SELECT)
	// reads the later of it and the local clock, so that a read never
	// sees a time below one a write before it stored, whichever node's
	// clock stamped that write.
	Clock func() time.Time

	// Users are the accounts clients log in as. Nil: a fresh MySQL's
	// accounts, root with no password from loopback addresses only.
	Users *Users
	// DefaultAuthPlugin is the plugin the initial handshake proposes and
	// the one a client using any other plugin is switched to:
	// caching_sha2_password (the default, as MySQL 8 and 9) or
	// mysql_native_password. Either is accepted without a switch.
	DefaultAuthPlugin string
	// TLS, if set, lets clients switch to TLS (CLIENT_SSL) before they
	// authenticate.
	TLS *tls.Config
	// RequireTLS refuses logins over plain TCP with MySQL's error 3159
	// (require_secure_transport).
	RequireTLS bool
	// MaxAllowedPacket bounds one client packet, frames joined (MySQL's
	// max_allowed_packet; default 64 MiB, as MySQL 8).
	MaxAllowedPacket int
	// IdleTimeout closes a connection that sends no command for this long
	// (MySQL's wait_timeout; default 8h). Half-open connections are found
	// sooner by TCP keep-alive.
	IdleTimeout time.Duration
	// ConnectTimeout bounds the connection phase (connect_timeout, 10s):
	// a client that has not logged in by then is disconnected.
	ConnectTimeout time.Duration
	// MaxConnections bounds the logged-in client connections (MySQL's
	// max_connections); one more login is answered with error 1040 and
	// closed, except one beyond the bound for the admin role (MariaDB's
	// extra connection for SUPER). Connections that have not logged in
	// yet do not count: MaxPendingLogins bounds them. 0 means the default,
	// 10000 (what @@max_connections always said; MySQL's is 151, too few
	// for a ticket server every application server connects to);
	// negative, no bound on either.
	MaxConnections int
	// MaxPendingLogins bounds the connections still in the connection
	// phase; one more closes the oldest of them. Sockets that never
	// answer the greeting so cannot keep anyone out: a client that logs in
	// within the time the server takes to accept this many others gets
	// in. 0 means 1024.
	MaxPendingLogins int
	// MaxConnectErrors blocks a host after this many consecutive
	// connection phases that broke the protocol (max_connect_errors, 100;
	// refused logins are not counted, loopback is never blocked) with
	// error 1129 until FLUSH HOSTS. 0 means the default; negative, no
	// blocking.
	MaxConnectErrors int
	// WriteTimeout bounds a write to a client that stopped reading
	// (net_write_timeout, 60s).
	WriteTimeout time.Duration
	// Observer, if set, counts statements, errors and connections.
	Observer Observer
	// Node describes this node to clients through the system variables
	// that name it (@@port, @@hostname, ...); see NodeInfo.
	Node NodeInfo
}

// Validate reports a configuration New cannot serve as asked.
func (c *Config) Validate() error {
	cc := c.connConfig()
	if err := cc.Validate(); err != nil {
		return fmt.Errorf("wire: %w", err)
	}
	if c.MaxAllowedPacket < 0 || c.IdleTimeout < 0 {
		return errors.New("wire: negative max_allowed_packet or idle timeout")
	}
	return nil
}

// connConfig is the configuration of the connection phase and of the
// connections under the sessions.
func (c *Config) connConfig() mysqlconn.Config {
	return mysqlconn.Config{
		Users:             c.Users,
		DefaultAuthPlugin: c.DefaultAuthPlugin,
		Version:           c.Version,
		TLS:               c.TLS,
		RequireTLS:        c.RequireTLS,
		MaxAllowedPacket:  c.MaxAllowedPacket,
		WriteTimeout:      c.WriteTimeout,
		Logger:            c.Logger,
		MaxConnectErrors:  max(c.MaxConnectErrors, 0),
	}
}

// keepAlive finds dead peers of idle connections within about a minute
// (MySQL leaves this to the kernel's two hours).
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}

// loginReserve is the part of the connect timeout kept for answering a
// login the local state could not serve in time: a second, or a quarter
// of shorter timeouts.
func loginReserve(connectTimeout time.Duration) time.Duration {
	return min(time.Second, connectTimeout/4)
}

// Server accepts MySQL connections and serves them.
type Server struct {
	svc      Service
	cfg      Config
	plans    *sql.Cache
	acceptor *mysqlconn.Acceptor
	log      *slog.Logger
	obs      Observer
	start    time.Time
	// vars are the system variables' defaults, shared read-only.
	vars map[string]sysVar

	lastID    atomic.Uint32 // connection ids handed out
	questions atomic.Uint64 // statements received (COM_STATISTICS)
	panics    atomic.Int64  // handler panics recovered (tests and fuzzing check it)
	onPanic   func(v any, stack string)

	ctx    context.Context // ends on Close: statements stop waiting
	cancel context.CancelFunc

	// fields caches encoded result column definitions.
	fields fieldCache

	mu    sync.Mutex
	conns map[net.Conn]*connState
	// pending are the connections in the connection phase, oldest first;
	// authed counts the logged-in ones (MaxConnections).
	pending list.List
	authed  int
	closed  bool
	wg      sync.WaitGroup
	// draining is set by Shutdown (drain.go); lns are the listeners
	// Serve accepts on, which Shutdown closes.
	draining   atomic.Bool
	drainQuiet time.Duration
	lns        []net.Listener
}

// connState is where a connection stands against the server's limits.
type connState struct {
	pending *list.Element // in Server.pending until it logs in
	authed  bool          // counted in Server.authed
	evicted bool          // closed to make room for a newer connection
}

// New builds a Server from a configuration that passed Validate.
func New(svc Service, cfg Config) *Server {
	if cfg.Version == "" {
		cfg.Version = "8.0.36-ticketd"
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = 10 * time.Second
	}
	if cfg.PlanCacheSize <= 0 {
		cfg.PlanCacheSize = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DefaultAuthPlugin == "" {
		cfg.DefaultAuthPlugin = mysqlconn.CachingSHA2Password
	}
	if cfg.Users == nil {
		cfg.Users = mysqlconn.DefaultUsers()
	}
	if cfg.MaxAllowedPacket <= 0 {
		cfg.MaxAllowedPacket = 64 << 20
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 8 * time.Hour
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 60 * time.Second
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 10000
	}
	if cfg.MaxPendingLogins <= 0 {
		cfg.MaxPendingLogins = 1024
	}
	if cfg.MaxConnectErrors == 0 {
		cfg.MaxConnectErrors = 100
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	cc := cfg.connConfig()
	cc.AuthFailed = obs.AuthFailed
	vars := sysVars(cfg.Version)
	vars["max_allowed_packet"] = sysVar{value: int64(cfg.MaxAllowedPacket), session: true}
	vars["wait_timeout"] = sysVar{value: int64(cfg.IdleTimeout / time.Second), session: true}
	vars["max_connections"] = sysVar{value: int64(max(cfg.MaxConnections, 0)), readOnly: true}
	vars["max_connect_errors"] = sysVar{value: int64(max(cfg.MaxConnectErrors, 0)), readOnly: true}
	vars["connect_timeout"] = sysVar{value: int64(cfg.ConnectTimeout / time.Second), readOnly: true}
	vars["default_authentication_plugin"] = sysVar{value: cfg.DefaultAuthPlugin, readOnly: true}
	haveSSL, requireTLS := "DISABLED", int64(0)
	if cfg.TLS != nil {
		haveSSL = "YES"
	}
	if cfg.RequireTLS {
		requireTLS = 1
	}
	vars["have_ssl"] = sysVar{value: haveSSL, readOnly: true}
	vars["have_openssl"] = sysVar{value: haveSSL, readOnly: true}
	vars["require_secure_transport"] = sysVar{value: requireTLS, readOnly: true}
	cfg.Node.setVars(vars)
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		svc:      svc,
		cfg:      cfg,
		plans:    sql.NewCache(cfg.PlanCacheSize),
		acceptor: mysqlconn.NewAcceptor(cc),
		log:      cfg.Logger,
		obs:      obs,
		start:    time.Now(),
		vars:     vars,
		ctx:      ctx,
		cancel:   cancel,
		conns:    map[net.Conn]*connState{},

		drainQuiet: drainQuiet,
	}
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("wire: server closed")

// Serve accepts connections on ln until ctx ends or Close is called.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	s.mu.Lock()
	s.lns = append(s.lns, ln)
	draining := s.draining.Load() || s.closed
	s.mu.Unlock()
	if draining {
		ln.Close()
		return ErrServerClosed
	}
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed || s.draining.Load()
			s.mu.Unlock()
			if closed || ctx.Err() != nil {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("wire: accept: %w", err)
		}
		if !s.track(nc) {
			nc.Close()
			return ErrServerClosed
		}
		s.wg.Add(1)
		go s.serveConn(nc)
	}
}

// track adds a connection to the open ones, as pending, unless the
// server is closed. With MaxPendingLogins pending already, it closes the
// oldest of them: max_connections is checked at login (admit), so
// sockets that never log in cannot fill it, and they cannot fill the
// pending ones either.
func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.draining.Load() {
		return false
	}
	if s.cfg.MaxConnections > 0 && s.pending.Len() >= s.cfg.MaxPendingLogins {
		old := s.pending.Remove(s.pending.Front()).(net.Conn)
		st := s.conns[old]
		st.pending, st.evicted = nil, true
		old.Close()
		s.log.Debug("connection closed before its login to make room for a newer one", "remote", old.RemoteAddr().String(),
			"pending_logins", s.cfg.MaxPendingLogins)
	}
	s.conns[nc] = &connState{pending: s.pending.PushBack(nc)}
	return true
}

// errConCount is MySQL's answer to a login beyond max_connections.
var errConCount = packet(&mysqlerr.Error{Code: mysqlerr.CodeConCount, State: "08004", Message: "Too many connections"})

// admit counts a connection that has just logged in against
// MaxConnections, or refuses it with 1040: the admin role has one more
// (MariaDB keeps one connection beyond max_connections for SUPER), so an
// operator can always get in to see what holds the others.
func (s *Server) admit(nc net.Conn, role mysqlconn.Role) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[nc]
	if st == nil || st.evicted {
		return errors.New("connection closed before its login completed")
	}
	if limit := s.cfg.MaxConnections; limit > 0 {
		if role == mysqlconn.RoleAdmin {
			limit++
		}
		if s.authed >= limit {
			s.log.Debug("login refused: max_connections reached", "remote", nc.RemoteAddr().String(),
				"max_connections", s.cfg.MaxConnections, "role", role.String())
			return errConCount
		}
	}
	if st.pending != nil {
		s.pending.Remove(st.pending)
		st.pending = nil
	}
	st.authed = true
	s.authed++
	return nil
}

// untrack forgets a closed connection.
func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[nc]
	if st == nil {
		return
	}
	if st.pending != nil {
		s.pending.Remove(st.pending)
	}
	if st.authed {
		s.authed--
	}
	delete(s.conns, nc)
}

func (s *Server) serveConn(nc net.Conn) {
	defer s.wg.Done()
	s.obs.ConnOpened()
	defer s.obs.ConnClosed()
	defer func() {
		s.untrack(nc)
		nc.Close()
	}()
	// A bug reachable from one client's input must cost that client its
	// connection, not every client the server.
	defer func() {
		if r := recover(); r != nil {
			s.panics.Add(1)
			s.log.Error("connection handler panicked; connection closed", "remote", nc.RemoteAddr().String(),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAliveConfig(keepAlive)
	}
	h := newSession(s)
	defer h.close()
	deadline := time.Now().Add(s.cfg.ConnectTimeout)
	_ = nc.SetDeadline(deadline)
	h.loginBy = deadline.Add(-loginReserve(s.cfg.ConnectTimeout))
	c, cc, err := s.acceptor.Connect(nc, h.id, h, func(l mysqlconn.Login) error {
		if err := s.admit(nc, l.Role); err != nil {
			return err
		}
		return h.connected(l)
	})
	if err != nil {
		s.log.Debug("connection phase failed", "remote", nc.RemoteAddr().String(), "err", err)
		return
	}
	_ = nc.SetDeadline(time.Time{})
	h.attach(c, cc)
	var readSet time.Time
	for !c.Closed() && !h.quit {
		if s.cfg.IdleTimeout > 0 {
			// As with writes, move the deadline only when a fraction of
			// it is used: an hours-long timeout needs no timer update
			// per command.
			if now := time.Now(); now.Sub(readSet) > s.cfg.IdleTimeout/64 {
				readSet = now
				_ = nc.SetReadDeadline(now.Add(s.cfg.IdleTimeout))
			}
		}
		if s.draining.Load() {
			s.drainDeadline(nc)
		}
		err, panicked := s.handleCommand(c)
		if err != nil && !panicked && s.draining.Load() && !h.quit {
			// Quiet for drainQuiet during a drain (or the client left).
			if e := cc.ShutdownNotice(drainRefusal()); e != nil {
				s.log.Debug("closing quiet connection for shutdown", "remote", nc.RemoteAddr().String())
			}
			return
		}
		if err != nil || panicked {
			// go-mysql formats the read error into its own, so an idle
			// timeout is recognised by the clock.
			idle := s.cfg.IdleTimeout > 0 && !time.Now().Before(readSet.Add(s.cfg.IdleTimeout))
			if e := cc.Farewell(idle, panicked); e != nil {
				s.log.Debug("closing connection", "remote", nc.RemoteAddr().String(), "code", e.Code, "err", err)
			}
			return
		}
	}
	_ = cc.Flush()
}

// handleCommand runs one command. A panic while handling it costs the
// client its connection: go-mysql v1.16.0 itself panics on some malformed
// packets (a COM_STMT_EXECUTE whose length-encoded parameter is cut off
// indexes past the packet).
func (s *Server) handleCommand(c *server.Conn) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			stack := string(debug.Stack())
			s.panics.Add(1)
			if s.onPanic != nil {
				s.onPanic(r, stack)
			}
			s.log.Warn("malformed command: handler panicked; connection closed", "remote", c.RemoteAddr().String(),
				"panic", fmt.Sprint(r), "stack", stack)
		}
	}()
	return c.HandleCommand(), false
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func timeSince(t time.Time) time.Duration { return time.Since(t) / time.Second }
