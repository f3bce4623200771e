package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func openTestFSM(t testing.TB, path string) *FSM {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "state.db")
	}
	f, err := OpenFSM(path, false, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func entry(index uint64, cmds ...model.Command) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: logformat.EncodeBatch(nil, cmds)}
}

// applyOK applies one entry and returns its results, failing on any error.
func applyOK(t testing.TB, f *FSM, l *raft.Log) []model.Result {
	t.Helper()
	switch r := f.Apply(l).(type) {
	case *appliedEntry:
		return r.take()
	case error:
		t.Fatalf("entry %d: %v", l.Index, r)
	default:
		t.Fatalf("entry %d: response %T", l.Index, r)
	}
	return nil
}

func setupTickets(t testing.TB, f *FSM) {
	t.Helper()
	rs := applyOK(t, f, entry(1, createDB("flickr"), createTickets("flickr", "Tickets64")))
	for i, r := range rs {
		if r.Err != nil {
			t.Fatalf("setup command %d: %v", i, r.Err)
		}
	}
}

func TestFSMApplyBatch(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	rs := applyOK(t, f, entry(2,
		replaceCmd("flickr", "Tickets64", "a"),
		replaceCmd("flickr", "Tickets64", "a"),
		replaceCmd("flickr", "Tickets64", "b"),
		replaceCmd("flickr", "nope", "a"),
	))
	if got := []uint64{rs[0].InsertID, rs[1].InsertID, rs[2].InsertID}; !reflect.DeepEqual(got, []uint64{1, 2, 3}) {
		t.Errorf("ids %v, want 1 2 3", got)
	}
	if got := []uint64{rs[0].Affected, rs[1].Affected, rs[2].Affected}; !reflect.DeepEqual(got, []uint64{1, 2, 1}) {
		t.Errorf("affected %v, want 1 2 1 (MySQL's REPLACE)", got)
	}
	if rs[3].Err == nil || rs[3].Err.Code != mysqlerr.CodeNoSuchTable {
		t.Errorf("unknown table: %+v", rs[3])
	}
	if f.AppliedIndex() != 2 {
		t.Errorf("applied %d", f.AppliedIndex())
	}
	err := f.View(func(s ticket.Store) error {
		tb, err := s.Table("flickr", "Tickets64")
		if err != nil {
			return err
		}
		if tb.AutoInc != 4 || !reflect.DeepEqual(tb.Rows, []model.Row{{ID: 2, Stub: "a"}, {ID: 3, Stub: "b"}}) {
			t.Errorf("table %+v", tb)
		}
		if err := s.PutDatabase("x"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("View store writable: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFSMSkipsReplayedEntries(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	e := entry(2, replaceCmd("flickr", "Tickets64", "a"))
	applyOK(t, f, e)
	before := autoInc(t, f, "flickr", "Tickets64")
	for _, l := range []*raft.Log{e, entry(1, replaceCmd("flickr", "Tickets64", "a"))} {
		err, _ := f.Apply(l).(error)
		if !errors.Is(err, ErrAlreadyApplied) {
			t.Errorf("replay of %d: response %v", l.Index, err)
		}
	}
	if after := autoInc(t, f, "flickr", "Tickets64"); after != before {
		t.Errorf("replay moved the counter %d -> %d", before, after)
	}
	// A group mixing replayed and new entries applies only the new ones,
	// and configuration entries advance the index.
	resps := f.ApplyBatch([]*raft.Log{
		entry(2, replaceCmd("flickr", "Tickets64", "a")),
		entry(3, replaceCmd("flickr", "Tickets64", "a")),
		{Index: 4, Term: 2, Type: raft.LogConfiguration},
		entry(5, replaceCmd("flickr", "Tickets64", "a")),
	})
	if err, _ := resps[0].(error); !errors.Is(err, ErrAlreadyApplied) {
		t.Errorf("resp 0: %v", resps[0])
	}
	if ids := []uint64{resps[1].(*appliedEntry).results[0].InsertID, resps[3].(*appliedEntry).results[0].InsertID}; ids[0] != before || ids[1] != before+1 {
		t.Errorf("ids %v, want %d %d", ids, before, before+1)
	}
	if resps[2] != nil {
		t.Errorf("configuration entry response %v", resps[2])
	}
	if f.AppliedIndex() != 5 {
		t.Errorf("applied %d", f.AppliedIndex())
	}
}

func TestFSMReopenKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f, err := OpenFSM(path, false, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a")))
	must(t, f.Close())

	f = openTestFSM(t, path)
	if f.AppliedIndex() != 2 || autoInc(t, f, "flickr", "Tickets64") != 2 {
		t.Fatalf("after reopen: applied %d, auto_increment %d", f.AppliedIndex(), autoInc(t, f, "flickr", "Tickets64"))
	}
	// Raft replays entry 2 after a restart: it must not allocate again.
	if err, _ := f.Apply(entry(2, replaceCmd("flickr", "Tickets64", "a"))).(error); !errors.Is(err, ErrAlreadyApplied) {
		t.Fatalf("replay after reopen: %v", err)
	}
	if rs := applyOK(t, f, entry(3, replaceCmd("flickr", "Tickets64", "a"))); rs[0].InsertID != 2 {
		t.Fatalf("next id %d, want 2", rs[0].InsertID)
	}
}

// TestFSMUndecodableEntryStops: a committed entry this build cannot
// decode (damaged, or written by a newer build with a field this one does
// not know) stops the state machine; it is never skipped. Before, the
// entry was logged as "undecodable log entry" and consumed without
// effect, and the replica's state silently differed from the others'.
func TestFSMUndecodableEntryStops(t *testing.T) {
	future := logformat.EncodeBatch(nil, []model.Command{replaceCmd("flickr", "Tickets64", "a")})
	// The command's presence mask (after the version, the count and the
	// op) with a bit no field of this build has.
	future = append(append(future[:3:3], binary.AppendUvarint(nil, logformat.CmdUnknown|logformat.CmdDB|logformat.CmdTable)...), future[4:]...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"damaged", []byte{logformat.BatchVersion, 3, 1}},
		{"unknown field", future},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := openTestFSM(t, "")
			setupTickets(t, f)
			var fatal error
			f.onFatal = func(err error) { fatal = err }
			err, _ := f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: tc.data}).(error)
			if !errors.Is(err, ErrFSMFailed) || !errors.Is(err, ErrUndecodable) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("undecodable entry answered %v", err)
			}
			if !errors.Is(fatal, ErrUndecodable) {
				t.Errorf("onFatal got %v", fatal)
			}
			if f.AppliedIndex() != 1 || !errors.Is(f.Err(), ErrUndecodable) {
				t.Fatalf("applied %d, err %v: the entry was skipped", f.AppliedIndex(), f.Err())
			}
			// Nothing after it is applied either.
			if err, _ := f.Apply(entry(3, replaceCmd("flickr", "Tickets64", "a"))).(error); !errors.Is(err, ErrFSMFailed) {
				t.Fatalf("entry after the undecodable one: %v", err)
			}
			if got := autoInc(t, f, "flickr", "Tickets64"); got != 1 {
				t.Errorf("counter %d after the stop, want 1", got)
			}
		})
	}
}

func TestFSMStorageFailureStops(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	must(t, f.checkpoint())
	var fatal error
	f.onFatal = func(err error) { fatal = err }
	boom := errors.New("disk on fire")
	calls := 0
	f.apply = func(s ticket.Store, c *model.Command) (model.Result, error) {
		calls++
		if calls == 2 {
			return model.Result{}, boom
		}
		return ticket.Apply(s, c)
	}
	resps := f.ApplyBatch([]*raft.Log{entry(2, replaceCmd("flickr", "Tickets64", "a")), entry(3, replaceCmd("flickr", "Tickets64", "a"))})
	for i, r := range resps {
		if err, _ := r.(error); !errors.Is(err, ErrFSMFailed) || !errors.Is(err, boom) {
			t.Errorf("resp %d: %v", i, r)
		}
	}
	if !errors.Is(fatal, boom) {
		t.Errorf("onFatal got %v", fatal)
	}
	f.apply = ticket.Apply
	if err, _ := f.Apply(entry(4, replaceCmd("flickr", "Tickets64", "a"))).(error); !errors.Is(err, ErrFSMFailed) {
		t.Errorf("after failure: %v", err)
	}
	if err := f.checkpoint(); !errors.Is(err, ErrFSMFailed) {
		t.Errorf("checkpoint after failure: %v", err)
	}
	// Nothing of the failed group reached the state file (Close writes no
	// checkpoint for a failed state machine), so a restart applies it
	// again from the Raft log.
	must(t, f.Close())
	g := openTestFSM(t, f.path)
	if g.AppliedIndex() != 1 || autoInc(t, g, "flickr", "Tickets64") != 1 {
		t.Errorf("state file changed: applied %d", g.AppliedIndex())
	}
	if rs := applyOK(t, g, entry(2, replaceCmd("flickr", "Tickets64", "a"))); rs[0].InsertID != 1 {
		t.Errorf("reapplied entry 2: id %d, want 1", rs[0].InsertID)
	}
}

type bufSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *bufSink) ID() string    { return "test" }
func (s *bufSink) Cancel() error { s.cancelled = true; return nil }
func (s *bufSink) Close() error  { return nil }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func TestFSMSnapshotRestore(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a"), replaceCmd("flickr", "Tickets64", "b")))

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Applying while the snapshot is open must not change the snapshot.
	applyOK(t, f, entry(3, replaceCmd("flickr", "Tickets64", "a"), createDB("other")))
	var sink bufSink
	must(t, snap.Persist(&sink))
	snap.Release()
	if sink.cancelled || sink.Len() == 0 {
		t.Fatalf("persist: cancelled %v, %d bytes", sink.cancelled, sink.Len())
	}

	// Restore into a different FSM, and into the same one (which must
	// drop what came after the snapshot).
	other := openTestFSM(t, "")
	for name, g := range map[string]*FSM{"fresh": other, "same": f} {
		must(t, g.Restore(readCloser{bytes.NewReader(sink.Bytes())}))
		if g.AppliedIndex() != 2 {
			t.Errorf("%s: applied %d after restore", name, g.AppliedIndex())
		}
		if v := autoInc(t, g, "flickr", "Tickets64"); v != 3 {
			t.Errorf("%s: auto_increment %d after restore, want 3", name, v)
		}
		err := g.View(func(s ticket.Store) error {
			dbs, err := s.Databases()
			if !reflect.DeepEqual(dbs, []string{"flickr"}) {
				t.Errorf("%s: databases %v", name, dbs)
			}
			return err
		})
		must(t, err)
		if rs := applyOK(t, g, entry(3, replaceCmd("flickr", "Tickets64", "a"))); rs[0].InsertID != 3 {
			t.Errorf("%s: id after restore %d, want 3", name, rs[0].InsertID)
		}
	}

	if err := f.Restore(readCloser{bytes.NewReader([]byte("not a bolt file"))}); err == nil {
		t.Error("restore of garbage succeeded")
	}
	if v := autoInc(t, f, "flickr", "Tickets64"); v != 4 {
		t.Errorf("failed restore changed state: auto_increment %d", v)
	}
}

// BenchmarkFSMApplyBatch is one Raft entry of 256 REPLACEs on one table:
// decode and 256 ticket.Apply calls on the memory state (checkpoints, at
// most one a second, are not in the loop's cost).
func BenchmarkFSMApplyBatch(b *testing.B) {
	f, err := OpenFSM(filepath.Join(b.TempDir(), "state.db"), true, testLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	setupTickets(b, f)
	data := logformat.EncodeBatch(nil, formattest.ReplaceBatch(256))
	l := &raft.Log{Type: raft.LogCommand, Data: data, Index: 1}
	b.ReportAllocs()
	for b.Loop() {
		l.Index++
		if _, ok := f.Apply(l).(*appliedEntry); !ok {
			b.Fatal("apply failed")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/256, "ns/cmd")
}

// TestFSMReplaysAfterLaggingCheckpoint: the state file lags behind what
// was applied (checkpoints are periodic). A node that crashed then starts
// from the last checkpoint, and Raft hands it the log again: the entries
// the checkpoint holds are skipped, the rest are applied, and the state
// and every answer come out as they did the first time.
func TestFSMReplaysAfterLaggingCheckpoint(t *testing.T) {
	dir := t.TempDir()
	f := openTestFSM(t, filepath.Join(dir, "state.db"))
	log := []*raft.Log{entry(1, createDB("flickr"), createTickets("flickr", "Tickets64"))}
	for i := uint64(2); i <= 10; i++ {
		log = append(log, entry(i, replaceCmd("flickr", "Tickets64", "a"), replaceCmd("flickr", "Tickets64", string(rune('a'+i)))))
	}
	var first [][]model.Result
	for i, l := range log {
		first = append(first, applyOK(t, f, l))
		if i == 4 {
			must(t, f.checkpoint())
		}
	}
	// What a crash leaves: the file as of the checkpoint at index 5.
	image, err := os.ReadFile(f.path)
	must(t, err)
	crashed := filepath.Join(dir, "crashed.db")
	must(t, os.WriteFile(crashed, image, 0o600))

	g := openTestFSM(t, crashed)
	if g.AppliedIndex() != 5 {
		t.Fatalf("restarted at index %d, want the checkpoint's 5", g.AppliedIndex())
	}
	for i, l := range log {
		resp := g.Apply(l)
		if l.Index <= 5 {
			if err, _ := resp.(error); !errors.Is(err, ErrAlreadyApplied) {
				t.Errorf("entry %d: %v, want ErrAlreadyApplied", l.Index, resp)
			}
			continue
		}
		got, _ := resp.(*appliedEntry)
		if got == nil || !reflect.DeepEqual(got.take(), first[i]) {
			t.Errorf("entry %d replayed: %+v, first time %+v", l.Index, resp, first[i])
		}
	}
	if a, b := autoInc(t, f, "flickr", "Tickets64"), autoInc(t, g, "flickr", "Tickets64"); a != b || a != 19 {
		t.Errorf("auto_increment %d after replay, %d originally (want 19: 18 ids)", b, a)
	}
}

// TestFSMSchemaEpoch: the SchemaClock that burns node-scoped blocks moves
// with every applied schema change and installed snapshot, and not with
// allocations (which would burn every block on every REPLACE) nor with
// DELETE (row tables only: a busy one would burn them as often).
func TestFSMSchemaEpoch(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	e0 := f.SchemaEpoch()
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a"),
		model.Command{Op: model.OpReserve, DB: "flickr", Table: "Tickets64", Count: 10},
		model.Command{Op: model.OpDelete, DB: "flickr", Table: "Tickets64"}))
	if e := f.SchemaEpoch(); e != e0 {
		t.Fatalf("allocations moved the schema epoch %d -> %d", e0, e)
	}
	applyOK(t, f, entry(3, model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "Tickets64",
		HasComment: true, Comment: "ticketd:cache=10"}))
	e1 := f.SchemaEpoch()
	if e1 <= e0 {
		t.Fatalf("ALTER TABLE left the schema epoch at %d", e1)
	}
	snap, err := f.Snapshot()
	must(t, err)
	var sink bufSink
	must(t, snap.Persist(&sink))
	snap.Release()
	must(t, f.Restore(readCloser{bytes.NewReader(sink.Bytes())}))
	if e := f.SchemaEpoch(); e <= e1 {
		t.Fatalf("installed snapshot left the schema epoch at %d", e)
	}
}

// TestFSMAppliesDuringCheckpoint: the background checkpoint writes its
// image without the state's lock, so entries are applied while bbolt
// writes (it held the lock throughout: every connection stalled 40-100 ms
// once a second under random UPDATEs). Here bbolt's single writer slot
// is held by the test, so the checkpoint waits in its write; an entry
// must apply meanwhile, and the checkpoint then holds what it took, not
// the entry applied after.
func TestFSMAppliesDuringCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a")))

	wtx, err := f.db.Begin(true)
	must(t, err)
	errc := make(chan error, 1)
	go func() { errc <- f.checkpointAside() }()
	// The image is taken once the state is clean again.
	for deadline := time.Now().Add(5 * time.Second); ; {
		dirty := true
		if f.mu.TryRLock() {
			dirty = f.mem.dirty()
			f.mu.RUnlock()
		}
		if !dirty {
			break
		}
		if time.Now().After(deadline) {
			must(t, wtx.Rollback())
			t.Fatal("the checkpoint did not let go of the state while it writes")
		}
		time.Sleep(time.Millisecond)
	}
	applied := make(chan []model.Result, 1)
	go func() { applied <- applyOK(t, f, entry(3, replaceCmd("flickr", "Tickets64", "a"))) }()
	select {
	case rs := <-applied:
		if rs[0].InsertID != 2 {
			t.Errorf("entry 3 took id %d, want 2", rs[0].InsertID)
		}
	case <-time.After(5 * time.Second):
		must(t, wtx.Rollback())
		t.Fatal("an entry waited for the checkpoint's write")
	}
	must(t, wtx.Rollback())
	must(t, <-errc)
	if f.checkpointed != 2 {
		t.Fatalf("checkpoint holds index %d, want the image's 2", f.checkpointed)
	}
	must(t, f.Close())
	g := openTestFSM(t, path)
	if g.AppliedIndex() != 3 || autoInc(t, g, "flickr", "Tickets64") != 3 {
		t.Fatalf("after reopen: applied %d, auto_increment %d, want 3 and 3", g.AppliedIndex(), autoInc(t, g, "flickr", "Tickets64"))
	}
}

// TestUndecodableAdvice: the UNDECODABLE message advises by the error. An
// entry in an encoding below this build's floor needs an older build,
// one that still reads it (it advised "a newer build", which cannot read
// it either); any other undecodable entry, a build that knows its
// encoding. The FSM logs the advice for the entry it met.
func TestUndecodableAdvice(t *testing.T) {
	below := fmt.Errorf("logformat: row command: %w", &logformat.BelowFloorError{What: "row command", Gen: "row parts as JSON", Until: 7, Floor: 7})
	if a := undecodableAdvice(below); !strings.Contains(a, "below its command version floor") || strings.Contains(a, "newer") {
		t.Errorf("advice for an entry below the floor: %q", a)
	}
	damaged := []byte{logformat.BatchVersion, 3, 1}
	_, decErr := logformat.DecodeBatch(damaged)
	if decErr == nil || errors.Is(decErr, logformat.ErrBelowFloor) {
		t.Fatalf("damaged batch decoded with %v", decErr)
	}
	if a := undecodableAdvice(decErr); !strings.Contains(a, "a newer one") || strings.Contains(a, "floor") {
		t.Errorf("advice for a damaged entry: %q", a)
	}

	var logged bytes.Buffer
	f, err := OpenFSM(filepath.Join(t.TempDir(), "state.db"), false, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	setupTickets(t, f)
	f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: damaged})
	if !strings.Contains(logged.String(), "UNDECODABLE LOG ENTRY: this node stops applying the log; "+undecodableAdvice(decErr)) {
		t.Errorf("the FSM's log lacks the advice:\n%s", logged.String())
	}
}
