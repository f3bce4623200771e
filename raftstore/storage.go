package raftstore

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// A full disk. The Raft log and stable store cannot be rebuilt from
// anything, so a write that fails there fails the statement; Raft itself
// then steps down (a leader that cannot store its own entries) and tries
// again at its next election. The state file is only a checkpoint of what
// the log holds, and its failures are retried (FSM.checkpointLocked).
// Nothing here stops the node: once space is freed the next write
// succeeds and the node serves again by itself. watchedStore remembers
// the last write failure, so that statements and /readyz say what is
// wrong instead of only "no leader".

// storeFailure is a failed write of the log or stable store: the first
// of a streak (err, since) and the time of the latest.
type storeFailure struct {
	err   error
	since time.Time
	last  atomic.Int64 // unix nanoseconds
}

// storageErrFresh is how long after its latest failed write a store
// still counts as failing: writes are retried all the time while a node
// has work, and an idle node must not be reported broken forever.
const storageErrFresh = 5 * time.Second

// watchedStore is the log and stable store with its last write failure
// recorded (cleared by the next successful write).
type watchedStore struct {
	logStore
	log    *slog.Logger
	failed atomic.Pointer[storeFailure]
	// refused, if set, is told of every failed write (Node.storeRefused).
	refused atomic.Pointer[func(error)]
}

// note records a failed write; a successful write of log entries (what
// statements need) ends the streak. The stable store's few bytes may fit
// where entries do not, so its successes prove nothing.
func (s *watchedStore) note(err error, entries bool) error {
	now := time.Now()
	if fn := s.refused.Load(); err != nil && fn != nil {
		(*fn)(err)
	}
	switch f := s.failed.Load(); {
	case err != nil && (f == nil || now.Sub(time.Unix(0, f.last.Load())) > storageErrFresh):
		f = &storeFailure{err: err, since: now}
		f.last.Store(now.UnixNano())
		s.failed.Store(f)
		s.log.Error("the Raft log store refuses writes: statements fail until it takes them again", "err", err)
	case err != nil:
		f.last.Store(now.UnixNano())
	case entries && f != nil:
		s.failed.Store(nil)
		s.log.Info("the Raft log store takes writes again", "failed_for", now.Sub(f.since).Round(time.Millisecond))
	}
	return err
}

func (s *watchedStore) StoreLog(l *raft.Log) error    { return s.note(s.logStore.StoreLog(l), true) }
func (s *watchedStore) StoreLogs(l []*raft.Log) error { return s.note(s.logStore.StoreLogs(l), true) }
func (s *watchedStore) Set(k, v []byte) error         { return s.note(s.logStore.Set(k, v), false) }
func (s *watchedStore) SetUint64(k []byte, v uint64) error {
	return s.note(s.logStore.SetUint64(k, v), false)
}

// IsMonotonic passes on raft-wal's promise (raft.MonotonicLogStore): Raft
// treats a monotonic store differently after restoring a snapshot.
func (s *watchedStore) IsMonotonic() bool {
	m, ok := s.logStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

var _ raft.MonotonicLogStore = (*watchedStore)(nil)

// StorageErr returns why this node cannot write its Raft log, or nil.
func (n *Node) StorageErr() error {
	ws, ok := n.store.(*watchedStore)
	if !ok {
		return nil
	}
	f := ws.failed.Load()
	// A lone voter holding its elections for a full disk writes nothing
	// meanwhile, and still cannot.
	if f == nil || !n.hold.held.Load() && time.Since(time.Unix(0, f.last.Load())) > storageErrFresh {
		return nil
	}
	return fmt.Errorf("%w on node %s since %s: %w", ticket.ErrStorage, n.id, f.since.Format(time.RFC3339), f.err)
}

// withStorage names the storage failure, if any, as the cause of a
// replication error (keeping whether anything was written).
func (n *Node) withStorage(err error) error {
	if err == nil {
		return nil
	}
	class := ticket.ErrNoQuorum
	switch {
	case errors.Is(err, ticket.ErrUncertain):
		class = ticket.ErrUncertain
	case !errors.Is(err, ticket.ErrNoQuorum):
		return err
	}
	if serr := n.StorageErr(); serr != nil {
		return fmt.Errorf("%w (%w)", serr, class)
	}
	return err
}
