package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket"
)

// Service is what the wire layer needs from the ticket domain.
type Service interface {
	// Exec commits one command; statement errors are in Result.Err.
	Exec(ctx context.Context, c *ticket.Command) (ticket.Result, error)
	// View reads the local replica's state.
	View(fn func(ticket.Store) error) error
	// Global returns a replicated global variable or def.
	Global(name string, def uint64) uint64
}

// Config sets up a Server.
type Config struct {
	// Version is the server version in the handshake and VERSION().
	Version string
	// StatementTimeout bounds how long a statement waits for replication
	// (e.g. while there is no leader) before the client gets an error.
	StatementTimeout time.Duration
	// PlanCacheSize bounds the number of cached query texts.
	PlanCacheSize int
	Logger        *slog.Logger
}

// Server accepts MySQL connections and serves them.
type Server struct {
	svc   Service
	cfg   Config
	plans *sql.Cache
	proto *server.Server
	auth  *authHandler
	log   *slog.Logger
	start time.Time
	// vars are the system variables' defaults, shared read-only.
	vars map[string]sysVar

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New builds a Server. The go-mysql server configuration is built once:
// building it generates keys.
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
	auth := newAuthHandler()
	proto := server.NewServer(cfg.Version, mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, nil)
	return &Server{
		svc:   svc,
		cfg:   cfg,
		plans: sql.NewCache(cfg.PlanCacheSize),
		proto: proto,
		auth:  auth,
		log:   cfg.Logger,
		start: time.Now(),
		vars:  sysVars(cfg.Version),
		conns: map[net.Conn]struct{}{},
	}
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("wire: server closed")

// Serve accepts connections on ln until ctx ends or Close is called.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
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

func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[nc] = struct{}{}
	return true
}

func (s *Server) serveConn(nc net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		nc.Close()
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	h := newSession(s)
	c, err := s.proto.NewCustomizedConn(&capConn{Conn: nc}, s.auth, h)
	if err != nil {
		s.log.Debug("handshake failed", "remote", nc.RemoteAddr().String(), "err", err)
		return
	}
	h.attach(c)
	for !c.Closed() {
		if err := c.HandleCommand(); err != nil {
			return
		}
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// authHandler authenticates users; the single-node default is MySQL's
// fresh-install root with no password.
type authHandler struct {
	*server.InMemoryAuthenticationHandler
}

func newAuthHandler() *authHandler {
	h := server.NewInMemoryAuthenticationHandler(mysql.AUTH_NATIVE_PASSWORD)
	_ = h.AddUser("root", "")
	return &authHandler{h}
}

// OnAuthSuccess sets the autocommit status flag: go-mysql's handshake
// reports status 0, which PyMySQL, mysqlclient and Connector/J read as
// autocommit off.
func (a *authHandler) OnAuthSuccess(c *server.Conn) error {
	c.SetStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
	return nil
}

func timeSince(t time.Time) time.Duration { return time.Since(t) / time.Second }
