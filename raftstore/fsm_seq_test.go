package raftstore

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func seqRowOf(t *testing.T, r ticket.Reader) model.SequenceDef {
	t.Helper()
	var row model.SequenceDef
	err := r.View(func(s ticket.Store) error {
		tb, err := s.Table("d", "s")
		if err == nil && (tb == nil || tb.Def.Seq == nil) {
			t.Fatal("sequence d.s missing")
		}
		if err == nil {
			row = *tb.Def.Seq
		}
		return err
	})
	must(t, err)
	return row
}

// TestFSMSequenceReopenAndSnapshot: a sequence's row survives a state
// reopen and a snapshot restore, and a replayed NEXTVAL is not applied twice.
func TestFSMSequenceReopenAndSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f, err := OpenFSM(path, false, testLogger())
	must(t, err)
	cmds := formattest.SeqSeedCommands()
	applyOK(t, f, entry(1, createDB("d"), cmds[0]))
	next := model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}}
	rs := applyOK(t, f, entry(2, next, next))
	// INCREMENT -3 CACHE 10 CYCLE from -1: ranges [-1, -31) and [-31, -61).
	if int64(rs[0].First) != -1 || int64(rs[1].First) != -31 || int64(rs[1].Last) != -61 {
		t.Fatalf("ranges %+v", rs)
	}
	must(t, f.Close())

	f = openTestFSM(t, path)
	if row := seqRowOf(t, f); row.Next != -61 || row.Increment != -3 || row.Cache != 10 || !row.Cycle {
		t.Fatalf("after reopen: %+v", row)
	}
	if err, _ := f.Apply(entry(2, next)).(error); err == nil {
		t.Fatal("replayed NEXTVAL applied again")
	}
	snap, err := f.Snapshot()
	must(t, err)
	var sink bufSink
	must(t, snap.Persist(&sink))
	snap.Release()
	applyOK(t, f, entry(3, next))
	other := openTestFSM(t, "")
	must(t, other.Restore(readCloser{bytes.NewReader(sink.Bytes())}))
	if row := seqRowOf(t, other); row.Next != -61 {
		t.Fatalf("after restore: %+v", row)
	}
}
