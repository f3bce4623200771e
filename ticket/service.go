package ticket

import (
	"context"
	"errors"
	"log/slog"
)

// ErrClosed is returned by a Service that has been closed.
var ErrClosed = errors.New("ticket: service closed")

// Config tunes a Service.
type Config struct {
	// Workers is the number of proposals in flight at once (pipelining).
	Workers int
	// MaxBatch bounds the commands in one proposal.
	MaxBatch int
}

// Service is what the wire layer calls: it runs commands through group
// commit and replication, and reads the local replica's state.
type Service struct {
	read Reader
	b    *batcher
	log  *slog.Logger
}

// NewService starts a Service over a Replicator and the local state.
func NewService(repl Replicator, read Reader, cfg Config, log *slog.Logger) *Service {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{read: read, b: newBatcher(repl, cfg.Workers, cfg.MaxBatch), log: log}
}

// Exec commits one command and returns its result. A non-nil error is a
// replication failure (wrapping ErrNoQuorum or ErrUncertain, or the
// context's error); statement errors are in Result.Err.
func (s *Service) Exec(ctx context.Context, c *Command) (Result, error) {
	return s.b.exec(ctx, c)
}

// View reads the local replica's applied state.
func (s *Service) View(fn func(Store) error) error { return s.read.View(fn) }

// Global returns a replicated global variable, or def if it was never set.
func (s *Service) Global(name string, def uint64) uint64 {
	v := def
	err := s.read.View(func(st Store) error {
		g, ok, err := st.Global(name)
		if ok {
			v = g
		}
		return err
	})
	if err != nil {
		s.log.Warn("reading global variable", "name", name, "err", err)
	}
	return v
}

// Close stops the workers; commands in flight finish first.
func (s *Service) Close() { s.b.close() }
