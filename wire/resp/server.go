// Package resp is ticketd's Redis front door (DESIGN §4e): it speaks the
// Redis protocol (RESP2, and RESP3 after HELLO 3) through
// github.com/tidwall/redcon and maps the string-key commands onto the
// same alloc.Service the MySQL wire layer calls. It owns the protocol
// and the connection's state (database, name, protocol, login); the keys
// and what a command does to them are the ticket package's (keys.go):
// every write is one model.OpKeys command through Raft, answered only
// once it is committed and applied, and a follower forwards it as it
// forwards SQL. Reads wait for a Raft read index, then read the local
// replica.
package resp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// Service is what the Redis front door needs from the ticket domain.
type Service interface {
	// ExecFor commits one command through group commit and replication.
	ExecFor(ctx context.Context, who *ticket.Session, c *model.Command) (model.Result, error)
	// ExecKeysOrdered commits a connection's pipelined key writes, in
	// their order; errors are per command.
	ExecKeysOrdered(ctx context.Context, cmds []*model.Command) ([]model.Result, []error)
	// View reads the local replica's state.
	View(fn func(ticket.Store) error) error
}

// Gate tells whether the local state may answer (wire.Gate's methods
// that this package uses).
type Gate interface {
	Serving() error
	WaitServing(ctx context.Context) error
	// WaitRead waits until the local state holds every write
	// acknowledged before the call, on any node.
	WaitRead(ctx context.Context) error
}

// Accounts are the logins AUTH checks: ticketd's MySQL accounts.
type Accounts interface {
	CheckPassword(name, password string, loopback bool) (mysqlconn.Role, bool)
	NoPassword(loopback bool) (name string, role mysqlconn.Role, ok bool)
	HasUser(name string) bool
}

// Observer counts commands by name and outcome.
type Observer interface {
	// Command counts one command: name is the command's lower-case name
	// for those the front door knows, "other" for the rest; outcome is
	// "ok", "error" (an error reply to a well-formed command, such as
	// not an integer) or "refused" (unknown, unsupported, wrong
	// arguments, not logged in) or "failed" (replication: no quorum,
	// outcome unknown, timeout).
	Command(name, outcome string, d time.Duration)
	ConnOpened()
	ConnClosed()
}

// Config sets up a Server.
type Config struct {
	Service Service
	// Gate, if set, holds every command until the local state may answer.
	Gate Gate
	// Users are the accounts of AUTH; nil: a fresh MySQL's (root with no
	// password, loopback clients only).
	Users Accounts
	// Clock is the replicated clock as this node applied it; reads judge
	// expiry by the later of it and the local clock.
	Clock func() time.Time
	// Leading reports whether this node leads: its sweeper deletes
	// expired keys through the log.
	Leading func() bool
	// Timeout bounds one command's wait for replication (10s).
	Timeout  time.Duration
	Logger   *slog.Logger
	Observer Observer
	// SweepInterval is how often the leader looks for expired keys
	// (100ms).
	SweepInterval time.Duration
}

// Server serves the Redis protocol.
type Server struct {
	cfg    Config
	log    *slog.Logger
	obs    Observer
	ctx    context.Context
	cancel context.CancelFunc
	lastID atomic.Int64
	start  time.Time
	wg     sync.WaitGroup

	mu    sync.Mutex
	lns   []net.Listener
	conns map[*client]struct{}
}

// New builds a Server.
func New(cfg Config) *Server {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Users == nil {
		cfg.Users = mysqlconn.DefaultUsers()
	}
	if cfg.Clock == nil {
		cfg.Clock = func() time.Time { return time.Time{} }
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = 100 * time.Millisecond
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: cfg.Logger, obs: obs, ctx: ctx, cancel: cancel, start: time.Now(), conns: map[*client]struct{}{}}
	if cfg.Leading != nil {
		s.wg.Add(1)
		go s.sweep()
	}
	return s
}

type nopObserver struct{}

func (nopObserver) Command(string, string, time.Duration) {}
func (nopObserver) ConnOpened()                           {}
func (nopObserver) ConnClosed()                           {}

// ErrServerClosed is Serve's answer once Close was called.
var ErrServerClosed = errors.New("resp: server closed")

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	err := redcon.Serve(ln, s.handle, s.accept, s.closed)
	if s.ctx.Err() != nil {
		return ErrServerClosed
	}
	return err
}

// Close stops accepting, ends every connection and the sweeper; commands
// waiting for replication stop waiting (their clients see the
// connection close).
func (s *Server) Close() error {
	s.cancel()
	s.mu.Lock()
	for _, ln := range s.lns {
		ln.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// Addr is the first listener's address (tests).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].Addr()
}

func (s *Server) accept(rc redcon.Conn) bool {
	c := s.newClient(rc)
	rc.SetContext(c)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.obs.ConnOpened()
	return true
}

func (s *Server) closed(rc redcon.Conn, _ error) {
	c, _ := rc.Context().(*client)
	if c == nil {
		return
	}
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.cmds.close()
	s.obs.ConnClosed()
}

// Clients is the number of open connections.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// sweep deletes expired keys through the log while this node leads: a
// key past its time is absent for every command already (reads and
// writes), and the sweep makes that the stored state too, on every
// replica at the same entry.
func (s *Server) sweep() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if !s.cfg.Leading() {
			continue
		}
		for db := range uint8(model.KeyDBs) {
			if err := s.sweepDB(db); err != nil {
				s.log.Debug("redis expiry sweep", "db", db, "err", err)
				break
			}
		}
	}
}

// sweepBatch bounds the keys one sweep command deletes.
const sweepBatch = 256

func (s *Server) sweepDB(db uint8) error {
	now := time.Now().UnixMilli()
	var due []string
	err := s.cfg.Service.View(func(st ticket.Store) error {
		return st.EachExpiring(db, func(name string, at int64) bool {
			if at <= now {
				due = append(due, name)
			}
			return len(due) < sweepBatch
		})
	})
	if err != nil || len(due) == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	r, err := s.cfg.Service.ExecFor(ctx, nil, &model.Command{Op: model.OpKeys,
		Key: &model.KeyCommand{Op: model.KeySweep, DB: db, Keys: due}})
	if err == nil && r.Err != nil {
		err = r.Err
	}
	return err
}
