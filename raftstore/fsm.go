package raftstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// FSM errors.
var (
	// ErrAlreadyApplied is the response to a log entry at or below the
	// state's applied index: Raft replays its log after a restart, and the
	// entry's effects are already in the state (the checkpoint it started
	// from, or memory).
	ErrAlreadyApplied = errors.New("raftstore: entry already applied")
	// ErrFSMFailed is returned for every entry after one failed to apply.
	// The node must be restarted: the entries after the last checkpoint
	// are still in the Raft log and are applied again then.
	ErrFSMFailed = errors.New("raftstore: state machine failed")
	// ErrCheckpoint: the state file could not take a checkpoint (disk
	// full, I/O error). It is not fatal: the state in memory is whole,
	// the Raft log holds every entry after the last checkpoint, and the
	// checkpoint is tried again every second. Snapshots and backups,
	// which need one, fail meanwhile.
	ErrCheckpoint = errors.New("raftstore: state checkpoint failed")
	// ErrUndecodable is wrapped (with ErrFSMFailed and ErrCorrupt) by the
	// failure of a state machine that met a committed entry it cannot
	// decode: it stops rather than skip the entry, which the other
	// replicas may have applied.
	ErrUndecodable = errors.New("raftstore: undecodable log entry")
)

// applyFunc is ticket.Apply; tests substitute it to isolate replication
// from the domain.
type applyFunc func(ticket.Store, *model.Command) (model.Result, error)

// FSM is the Raft state machine: every Raft log entry of type LogCommand is
// one batch of ticket.Commands (EncodeBatch), applied with ticket.Apply.
// The response of an entry is its []model.Result, or an error.
//
// The state lives decoded in memory (memState); the bbolt state file is
// its checkpoint, written with the index of the last entry it holds
// every checkpointInterval (when anything changed), before every
// snapshot and backup, and at Close. Entries after the checkpoint are in
// the Raft log, which Raft replays at start from the latest snapshot: the
// FSM skips the entries at or below the index it holds, so the file may
// lag behind memory without an allocation ever being applied twice or
// lost.
//
// FSM implements raft.BatchingFSM. It is also a ticket.Reader.
type FSM struct {
	path   string
	noSync bool
	apply  applyFunc
	log    *slog.Logger
	// stop ends the checkpoint loop, which closes loopDone.
	stop, loopDone chan struct{}
	closeOnce      sync.Once

	// ckptMu serialises checkpoints and orders them with Restore: the
	// background checkpoint writes its image without mu (so that
	// entries go on being applied meanwhile), and a later checkpoint,
	// snapshot, backup or restore must not overtake it. Taken before mu.
	ckptMu sync.Mutex
	// mu guards db, mem and the checkpoint fields: View holds it shared;
	// Apply, checkpoints and Restore exclusively.
	mu  sync.RWMutex
	db  *bolt.DB
	mem *memState
	// view is mem as View's read-only Store, made once per mem (an
	// interface made per View allocated per read).
	view ticket.Store
	// lastIndex and lastTerm are the last entry applied to mem;
	// checkpointed is the index the state file holds.
	lastIndex, lastTerm uint64
	checkpointed        uint64

	// cmds is the decoding buffer, reused from entry to entry: Raft
	// calls Apply and ApplyBatch from one goroutine, and ticket.Apply
	// keeps no reference to a command.
	cmds []model.Command

	applied atomic.Uint64
	// schema counts the applied commands that change tables other than
	// by allocation (ticket.ChangesSchema) and the states installed: the
	// ticket.SchemaClock that burns node-scoped blocks.
	schema atomic.Uint64
	failed atomic.Pointer[error]
	// ckptFailing is set while checkpoints fail (logged once per streak).
	ckptFailing atomic.Bool
	// reportFatal tells the log and onFatal of the failure once.
	reportFatal sync.Once
	// onFatal is told once when the state stops taking entries.
	onFatal func(error)
	// onConfiguration is told every committed configuration entry Raft
	// hands over, replays included.
	onConfiguration func(raft.Configuration)
	// obs is told about snapshots; set before Raft starts.
	obs Observer
	// version is the highest command version this state machine applies
	// (CommandVersion); an entry raising the cluster's version above it
	// stops it (ErrVersionTooOld).
	version uint32
	// clusterVersion and memberVersions mirror the versions in mem
	// (version.go), for readers that must not wait for the state's lock.
	clusterVersion atomic.Uint32
	memberVersions atomic.Pointer[map[string]uint32]
	// leftBase is set when an applied entry raised the cluster's version
	// above logformat.BaseVersion (the node then takes a snapshot: version.go).
	leftBase atomic.Bool
}

var (
	_ raft.BatchingFSM = (*FSM)(nil)
	_ ticket.Reader    = (*FSM)(nil)
)

// checkpointInterval is how often the FSM writes what it applied since
// the last checkpoint to the state file.
const checkpointInterval = time.Second

// OpenFSM opens the state file at path and loads it. noSync skips fsync
// on checkpoints; it is only safe when the file is rebuilt from snapshot
// and log after a crash (Config.StateNoSync).
func OpenFSM(path string, noSync bool, log *slog.Logger) (*FSM, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := openState(path, noSync)
	if err != nil {
		return nil, err
	}
	f := &FSM{path: path, noSync: noSync, apply: ticket.Apply, log: log, db: db, obs: nopObserver{},
		version: CommandVersion, stop: make(chan struct{}), loopDone: make(chan struct{})}
	if err := f.load(); err != nil {
		db.Close()
		return nil, err
	}
	go f.checkpoints(checkpointInterval)
	return f, nil
}

// fileState is a state file decoded: its tables and the entry it holds.
type fileState struct {
	mem         *memState
	index, term uint64
}

// readFileState decodes the state file of db.
func readFileState(db *bolt.DB) (fs fileState, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		fs.index, fs.term = readApplied(tx)
		fs.mem, err = loadMemState(tx)
		return err
	})
	return fs, err
}

// load reads the state file into memory; the caller holds mu or owns f.
func (f *FSM) load() error {
	fs, err := readFileState(f.db)
	if err != nil {
		return fmt.Errorf("raftstore: load state %s: %w", f.path, err)
	}
	f.install(fs)
	return nil
}

// install makes fs the applied state, which the state file holds; the
// caller holds mu or owns f.
func (f *FSM) install(fs fileState) {
	f.mem = fs.mem
	f.view = memStore{m: fs.mem, readOnly: true}
	f.lastIndex, f.lastTerm = fs.index, fs.term
	f.checkpointed = fs.index
	f.applied.Store(fs.index)
	f.schema.Add(1)
	f.refreshVersions(fs.mem)
}

// refreshVersions copies the versions in m to the mirrors; the caller
// holds mu or owns f.
func (f *FSM) refreshVersions(m *memState) {
	f.clusterVersion.Store(clusterVersionIn(memStore{m: m, readOnly: true}))
	vs := map[string]uint32{}
	for name, v := range m.globals {
		if id, ok := strings.CutPrefix(name, memberVersionPrefix); ok {
			vs[id] = uint32(min(v, 1<<32-1))
		}
	}
	f.memberVersions.Store(&vs)
}

// MemberVersions are the command versions the members announced, by id
// (version.go). The map is not to be changed.
func (f *FSM) MemberVersions() map[string]uint32 {
	if p := f.memberVersions.Load(); p != nil {
		return *p
	}
	return nil
}

// ClusterVersion is the cluster's command version in the applied state
// (version.go).
func (f *FSM) ClusterVersion() uint32 { return f.clusterVersion.Load() }

// SchemaEpoch implements ticket.SchemaClock.
func (f *FSM) SchemaEpoch() uint64 { return f.schema.Load() }

// AppliedIndex is the index of the last entry the state holds.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// Err returns the failure that stopped the FSM, or nil.
func (f *FSM) Err() error {
	if p := f.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Close writes a last checkpoint and closes the state file. A node
// whose state machine failed skips the checkpoint: its memory may hold
// part of the entry that failed.
func (f *FSM) Close() error {
	f.closeOnce.Do(func() {
		close(f.stop)
		<-f.loopDone
	})
	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return nil
	}
	var err error
	if f.Err() == nil {
		err = f.checkpointLocked()
	}
	err = errors.Join(err, f.db.Close())
	f.db = nil
	return err
}

// View runs fn on a read-only Store over a consistent view of the applied
// state. fn runs under the state's read lock: it must not call View
// again, nor wait for anything that needs an entry applied.
func (f *FSM) View(fn func(ticket.Store) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return fmt.Errorf("raftstore: view: %w", bolt.ErrDatabaseNotOpen)
	}
	return fn(f.view)
}

// checkpoint writes what was applied since the last checkpoint, with its
// index, to the state file.
func (f *FSM) checkpoint() error {
	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkpointLocked()
}

// checkpoints writes a checkpoint every interval while there is anything
// new, until Close. Off the apply path: Apply only waits while the image
// is taken (checkpointAside).
func (f *FSM) checkpoints(interval time.Duration) {
	defer close(f.loopDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		_ = f.checkpointAside() // logged there; tried again next tick
	}
}

// checkpointAside is the background checkpoint: it takes the image under
// mu and writes it without, so that Apply does not wait for bbolt. That
// wait stalled every connection once a second: under random UPDATEs by
// key (3 nodes, 64 connections, 100,000 rows) each checkpoint held the
// lock for 40-100 ms, and every connection's slowest statements came at
// one-second intervals. An image holding whole-table rewrites (rare: a
// table created, dropped, restored or re-indexed) reads the live rows
// and is written under mu as before.
func (f *FSM) checkpointAside() error {
	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
	f.mu.Lock()
	if f.db == nil || f.Err() != nil || (f.checkpointed == f.lastIndex && !f.mem.dirty()) {
		f.mu.Unlock()
		return nil
	}
	if len(f.mem.rewrite) > 0 {
		defer f.mu.Unlock()
		return f.checkpointLocked()
	}
	img, index, term, db := f.mem.take(), f.lastIndex, f.lastTerm, f.db
	f.mu.Unlock()

	err := writeCheckpoint(db, img, nil, index, term)

	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkpointDone(img, index, err)
}

// checkpointLocked writes a checkpoint under mu (and ckptMu), which
// the caller holds: the state file then holds every entry applied.
func (f *FSM) checkpointLocked() error {
	if f.db == nil {
		return fmt.Errorf("raftstore: checkpoint: %w", bolt.ErrDatabaseNotOpen)
	}
	if err := f.Err(); err != nil {
		return err
	}
	if f.checkpointed == f.lastIndex && !f.mem.dirty() {
		return nil
	}
	img := f.mem.take()
	err := writeCheckpoint(f.db, img, f.mem, f.lastIndex, f.lastTerm)
	return f.checkpointDone(img, f.lastIndex, err)
}

// writeCheckpoint writes img (its whole-table rewrites read from m) and
// the index and term of the last entry it holds, in one transaction.
func writeCheckpoint(db *bolt.DB, img *ckptImage, m *memState, index, term uint64) error {
	return db.Update(func(tx *bolt.Tx) error {
		if err := img.write(tx, m); err != nil {
			return err
		}
		return writeApplied(tx, index, term)
	})
}

// checkpointDone records how writing img, which holds the entries up to
// index, went; the caller holds mu. A failed image goes back into memory
// (bbolt rolled the transaction back: the file still holds the last
// checkpoint), so the next attempt writes everything since.
func (f *FSM) checkpointDone(img *ckptImage, index uint64, err error) error {
	if err != nil {
		f.mem.putBack(img)
		err = fmt.Errorf("%w at index %d (the file holds %d; the Raft log has the rest): %w", ErrCheckpoint, index, f.checkpointed, err)
		if !f.ckptFailing.Swap(true) {
			f.log.Error("state checkpoint failed; trying again every second", "err", err)
		}
		return err
	}
	if f.ckptFailing.Swap(false) {
		f.log.Info("state checkpoint written again", "index", index)
	}
	f.checkpointed = index
	return nil
}

// CheckpointFailing reports whether the last checkpoint attempt failed.
func (f *FSM) CheckpointFailing() bool { return f.ckptFailing.Load() }

// Apply applies one log entry.
func (f *FSM) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	resps := make([]any, len(logs))
	err := f.applyBatch(logs, resps)
	if err == nil {
		return resps
	}
	for i := range resps {
		resps[i] = err
	}
	// Told here, on Raft's FSM goroutine, whatever failed first (an entry
	// or a checkpoint).
	f.reportFatal.Do(func() {
		f.log.Error("state machine failed; restart the node to retry", "err", err)
		if f.onFatal != nil {
			f.onFatal(err)
		}
	})
	return resps
}

// failLocked stops the state machine: every later entry is answered with
// the error returned, and no checkpoint is written. The caller holds mu,
// so a checkpoint never writes what a failed entry left half applied.
func (f *FSM) failLocked(err error) error {
	if p := f.failed.Load(); p != nil {
		return *p
	}
	err = fmt.Errorf("%w: %w", ErrFSMFailed, err)
	f.failed.Store(&err)
	return err
}

// undecodableAdvice is what the operator should run when a committed
// entry cannot be decoded, err being the decoder's failure: an entry in
// an encoding below this build's floor (logformat.ErrBelowFloor) needs an
// older build, one that still reads it, and the error says which; any
// other, a build that knows the encoding, newer if a newer member wrote it.
func undecodableAdvice(err error) string {
	if errors.Is(err, logformat.ErrBelowFloor) {
		return "it was written in an encoding this build no longer reads (below its command version floor): " +
			"go back to a build that still reads it and roll the cluster forward as the error says"
	}
	return "run a ticketd build that can apply it (a newer one, if a newer member wrote it)"
}

func (f *FSM) applyBatch(logs []*raft.Log, resps []any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.Err(); err != nil {
		return err
	}
	if f.db == nil {
		return f.failLocked(bolt.ErrDatabaseNotOpen)
	}
	applied := f.lastIndex
	st := memStore{m: f.mem}
	for i, l := range logs {
		if l.Type == raft.LogConfiguration && f.onConfiguration != nil {
			f.onConfiguration(raft.DecodeConfiguration(l.Data))
		}
		if l.Index <= applied {
			resps[i] = fmt.Errorf("%w: index %d <= %d", ErrAlreadyApplied, l.Index, applied)
			continue
		}
		if l.Type == raft.LogCommand {
			cmds, err := logformat.DecodeBatchInto(f.cmds, l.Data)
			if err != nil {
				// Never skipped: the entry is committed, and the other
				// replicas may have applied it (it may come from a newer
				// build whose encoding this one does not know). Skipping
				// it would leave this replica's state silently different
				// from theirs. Nothing of the entry is applied; the
				// state machine stops here, and a build that decodes it
				// applies it after a restart.
				f.log.Error("UNDECODABLE LOG ENTRY: this node stops applying the log; "+undecodableAdvice(err),
					"index", l.Index, "term", l.Term, "err", err)
				return f.failLocked(fmt.Errorf("%w: log entry %d cannot be decoded by this build: %w", ErrUndecodable, l.Index, err))
			}
			f.cmds = cmds
			now := f.entryTime(st, l.AppendedAt)
			results := make([]model.Result, len(cmds))
			for j := range cmds {
				c := &cmds[j]
				if c.Op == model.OpSetGlobal && c.Name == clusterVersionGlobal && c.Value > uint64(f.version) {
					f.log.Error("CLUSTER COMMAND VERSION ABOVE THIS BUILD'S: this node stops applying the log; run a newer ticketd",
						"index", l.Index, "cluster_version", c.Value, "build_version", f.version)
					return f.failLocked(fmt.Errorf("%w: log entry %d raises it to %d, this build applies up to %d",
						ErrVersionTooOld, l.Index, c.Value, f.version))
				}
				c.Now = now
				c.Version = max(f.ClusterVersion(), logformat.BaseVersion)
				r, err := f.apply(st, c)
				if err != nil {
					return f.failLocked(fmt.Errorf("entry %d command %d: %w", l.Index, j, err))
				}
				results[j] = r
				if ticket.ChangesSchema(cmds[j].Op) {
					f.schema.Add(1)
				}
				if (c.Op == model.OpSetGlobal && isVersionGlobal(c.Name)) || c.Op == model.OpRestore {
					was := f.ClusterVersion()
					f.refreshVersions(f.mem)
					if was <= logformat.BaseVersion && f.ClusterVersion() > logformat.BaseVersion {
						f.leftBase.Store(true)
					}
					if was < clockVersion && f.ClusterVersion() >= clockVersion {
						f.startClock(st, l.AppendedAt)
					}
				}
			}
			resps[i] = &appliedEntry{results: results}
		}
		// Entry by entry: a later entry's failure stops the state machine,
		// and what was applied before it stays applied.
		f.lastIndex, f.lastTerm = l.Index, l.Term
		f.applied.Store(l.Index)
	}
	return nil
}

// appliedEntry is an entry's response: its commands' results, taken (and
// dropped) by the proposer. Raft's log cache keeps the last entries it
// appended by pointer into their futures, responses included; a response
// holding the results kept every row image of the last 512 entries alive
// (about 140 MB after a fill by 1,000-row INSERTs).
type appliedEntry struct {
	results []model.Result
}

// take returns the results once and lets them go.
func (a *appliedEntry) take() []model.Result {
	r := a.results
	a.results = nil
	return r
}

// Snapshot captures the state as of now: a checkpoint, then a bbolt read
// transaction written out by Persist while Apply goes on. Raft calls it
// between entries, on the goroutine that applies them.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkpointLocked(); err != nil {
		return nil, fmt.Errorf("raftstore: snapshot: %w", err)
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
	// Decoded once, here: every table must decode before the image
	// replaces the state, and then it is the state.
	fs, err := readFileState(probe)
	if err := errors.Join(err, probe.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raftstore: restore: %w", err)
	}

	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
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
	f.install(fs)
	if cv := f.ClusterVersion(); cv > f.version {
		err := fmt.Errorf("raftstore: restore: %w: the snapshot's cluster runs %d, this build applies up to %d", ErrVersionTooOld, cv, f.version)
		f.failed.Store(&err)
		return err
	}
	f.log.Info("state restored from snapshot", "applied_index", f.lastIndex)
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
