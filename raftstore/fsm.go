package raftstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/ticket"
)

// FSM errors.
var (
	// ErrAlreadyApplied is the response to a log entry at or below the
	// state's applied index: Raft replays its log after a restart, and the
	// entry's effects are already in the state file.
	ErrAlreadyApplied = errors.New("raftstore: entry already applied")
	// ErrFSMFailed is returned for every entry after the state file failed
	// to take one (disk full, I/O error). The node must be restarted: the
	// failed entries are still in the Raft log and are applied again then.
	ErrFSMFailed = errors.New("raftstore: state machine failed")
)

// applyFunc is ticket.Apply; tests substitute it to isolate replication
// from the domain.
type applyFunc func(ticket.Store, *ticket.Command) (ticket.Result, error)

// FSM is the Raft state machine: every Raft log entry of type LogCommand is
// one batch of ticket.Commands (EncodeBatch), applied with ticket.Apply in
// one bbolt transaction that also records the entry's index. The response
// of an entry is its []ticket.Result, or an error.
//
// FSM implements raft.BatchingFSM, so a group of committed entries shares
// one transaction and one fsync. It is also a ticket.Reader.
type FSM struct {
	path   string
	noSync bool
	apply  applyFunc
	log    *slog.Logger

	// mu guards db: View and Snapshot hold it shared, Restore swaps the
	// file under it exclusively. Apply runs on Raft's FSM goroutine like
	// Restore, so it needs no lock for the swap, but takes it shared for
	// the pointer read.
	mu sync.RWMutex
	db *bolt.DB

	// cmds is the decoding buffer, reused from entry to entry: Raft
	// calls Apply and ApplyBatch from one goroutine, and ticket.Apply
	// keeps no reference to a command.
	cmds []ticket.Command

	applied atomic.Uint64
	failed  atomic.Pointer[error]
	// onFatal is told once when the state stops taking entries.
	onFatal func(error)
	// onConfiguration is told every committed configuration entry Raft
	// hands over, replays included.
	onConfiguration func(raft.Configuration)
	// obs is told about snapshots; set before Raft starts.
	obs Observer
}

var (
	_ raft.BatchingFSM = (*FSM)(nil)
	_ ticket.Reader    = (*FSM)(nil)
)

// OpenFSM opens the state file at path. noSync skips fsync on commit; it is
// only safe when the file is rebuilt from snapshot and log after a crash
// (Config.StateNoSync).
func OpenFSM(path string, noSync bool, log *slog.Logger) (*FSM, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := openState(path, noSync)
	if err != nil {
		return nil, err
	}
	f := &FSM{path: path, noSync: noSync, apply: ticket.Apply, log: log, db: db, obs: nopObserver{}}
	if err := db.View(func(tx *bolt.Tx) error {
		i, _ := readApplied(tx)
		f.applied.Store(i)
		return nil
	}); err != nil {
		db.Close()
		return nil, err
	}
	return f, nil
}

// AppliedIndex is the index of the last entry the state file holds.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// Err returns the failure that stopped the FSM, or nil.
func (f *FSM) Err() error {
	if p := f.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Close closes the state file.
func (f *FSM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return nil
	}
	err := f.db.Close()
	f.db = nil
	return err
}

// View runs fn on a read-only Store over a consistent view of the applied
// state.
func (f *FSM) View(fn func(ticket.Store) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return fmt.Errorf("raftstore: view: %w", bolt.ErrDatabaseNotOpen)
	}
	return f.db.View(func(tx *bolt.Tx) error {
		s, err := newTxStore(tx, true)
		if err != nil {
			return err
		}
		return fn(s)
	})
}

// Apply applies one log entry.
func (f *FSM) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in one transaction.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	resps := make([]any, len(logs))
	if err := f.Err(); err != nil {
		for i := range resps {
			resps[i] = err
		}
		return resps
	}
	if err := f.applyBatch(logs, resps); err != nil {
		err = fmt.Errorf("%w: %w", ErrFSMFailed, err)
		f.failed.Store(&err)
		f.log.Error("state machine failed; restart the node to retry", "err", err,
			"first_index", logs[0].Index, "last_index", logs[len(logs)-1].Index)
		for i := range resps {
			resps[i] = err
		}
		if f.onFatal != nil {
			f.onFatal(err)
		}
	}
	return resps
}

func (f *FSM) applyBatch(logs []*raft.Log, resps []any) error {
	f.mu.RLock()
	db := f.db
	f.mu.RUnlock()
	if db == nil {
		return bolt.ErrDatabaseNotOpen
	}
	tx, err := db.Begin(true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	applied, _ := readApplied(tx)
	st, err := newTxStore(tx, false)
	if err != nil {
		return err
	}
	var lastIndex, lastTerm uint64
	for i, l := range logs {
		if l.Type == raft.LogConfiguration && f.onConfiguration != nil {
			f.onConfiguration(raft.DecodeConfiguration(l.Data))
		}
		if l.Index <= applied {
			resps[i] = fmt.Errorf("%w: index %d <= %d", ErrAlreadyApplied, l.Index, applied)
			continue
		}
		lastIndex, lastTerm = l.Index, l.Term
		if l.Type != raft.LogCommand {
			continue
		}
		cmds, err := decodeBatchInto(f.cmds, l.Data)
		if err != nil {
			// Every replica sees the same bytes and fails the same way:
			// the entry is consumed without effect.
			f.log.Error("undecodable log entry", "index", l.Index, "err", err)
			resps[i] = fmt.Errorf("raftstore: entry %d: %w", l.Index, err)
			continue
		}
		f.cmds = cmds
		results := make([]ticket.Result, len(cmds))
		for j := range cmds {
			cmds[j].Now = l.AppendedAt
			r, err := f.apply(st, &cmds[j])
			if err != nil {
				return fmt.Errorf("entry %d command %d: %w", l.Index, j, err)
			}
			results[j] = r
		}
		resps[i] = results
	}
	if lastIndex == 0 {
		return nil // only replayed entries: nothing to write
	}
	if err := st.flush(); err != nil {
		return err
	}
	if err := writeApplied(tx, lastIndex, lastTerm); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	f.applied.Store(lastIndex)
	return nil
}

// Snapshot captures the state as of now: a bbolt read transaction, written
// out by Persist while Apply goes on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return nil, fmt.Errorf("raftstore: snapshot: %w", bolt.ErrDatabaseNotOpen)
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("raftstore: snapshot: %w", err)
	}
	return &fsmSnapshot{tx: tx, obs: f.obs, start: time.Now()}, nil
}

type fsmSnapshot struct {
	tx    *bolt.Tx
	once  sync.Once
	obs   Observer
	start time.Time
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) (err error) {
	defer func() { s.obs.SnapshotPersisted(time.Since(s.start), err) }()
	if _, err := s.tx.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("raftstore: persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release ends the read transaction. A long-lived one keeps bbolt from
// reusing freed pages, so Raft calls this as soon as Persist is done.
func (s *fsmSnapshot) Release() {
	s.once.Do(func() { s.tx.Rollback() })
}

// Restore replaces the whole state with a snapshot: the stream is written
// to a temporary file next to the state file, checked, and renamed over
// it, so that a crash leaves either the old or the new state.
func (f *FSM) Restore(rc io.ReadCloser) error {
	start := time.Now()
	err := f.restore(rc)
	f.obs.SnapshotRestored(time.Since(start), err)
	return err
}

func (f *FSM) restore(rc io.ReadCloser) error {
	defer rc.Close()
	tmp := f.path + ".restore"
	if err := writeFileSync(tmp, rc); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raftstore: restore: %w", err)
	}
	// Opening checks the format and leaves a usable file.
	probe, err := openState(tmp, true)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raftstore: restore: %w", err)
	}
	var applied uint64
	probe.View(func(tx *bolt.Tx) error { applied, _ = readApplied(tx); return nil })
	if err := probe.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raftstore: restore: %w", err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db != nil {
		// Close waits for open read transactions (View, a snapshot being
		// persisted) to finish.
		if err := f.db.Close(); err != nil {
			return fmt.Errorf("raftstore: restore: close state: %w", err)
		}
		f.db = nil
	}
	if err := os.Rename(tmp, f.path); err != nil {
		err = fmt.Errorf("raftstore: restore: %w", err)
		f.failed.Store(&err)
		return err
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		f.log.Warn("restore: sync state directory", "err", err)
	}
	db, err := openState(f.path, f.noSync)
	if err != nil {
		err = fmt.Errorf("raftstore: restore: %w", err)
		f.failed.Store(&err)
		return err
	}
	f.db = db
	f.applied.Store(applied)
	f.log.Info("state restored from snapshot", "applied_index", applied)
	return nil
}

func writeFileSync(path string, r io.Reader) error {
	w, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
