package raftstore

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Tests of how raftstore uses the log format (package logformat): which
// format it writes at which cluster version, and what the state machine
// does with what the codec carries.

// TestMalformedCommandDoesNotStopStateMachine proposes commands no
// encoder of a statement writes but the codec carries (a SET GLOBAL with
// no name, a database command with no database): applied, they failed in
// bbolt and stopped the state machine, on every replica at the same
// entry and again at every restart. Propose refuses them with a
// statement error before anything is written (an undecodable entry would
// stop the state machine too), and the node carries on; the other
// commands of the same batch commit.
func TestMalformedCommandDoesNotStopStateMachine(t *testing.T) {
	n := openNode(t, testConfig("n1", t.TempDir(), listen(t)))
	must(t, n.WaitReady(ctxT(t, 10*time.Second)))
	for _, c := range []model.Command{
		{Op: model.OpSetGlobal, Value: 2},
		{Op: model.OpCreateDB},
		{Op: model.OpDropDB},
	} {
		before := n.fsm.AppliedIndex()
		res, err := n.Propose(ctxT(t, 5*time.Second), []model.Command{c, createDB(fmt.Sprintf("ok%d", c.Op))})
		if err != nil {
			t.Fatalf("op %v: %v", c.Op, err)
		}
		if res[0].Err == nil || res[0].Err.Code != model.CodeUnknown {
			t.Errorf("op %v: malformed command answered %+v", c.Op, res[0])
		}
		if res[1].Err != nil || res[1].Index <= before {
			t.Errorf("op %v: the well-formed command beside it: %+v", c.Op, res[1])
		}
		if err := n.fsm.Err(); err != nil {
			t.Fatalf("op %v: state machine failed: %v", c.Op, err)
		}
	}
	if _, err := n.Propose(ctxT(t, 5*time.Second), []model.Command{createDB("alive")}); err != nil {
		t.Fatalf("node no longer commits: %v", err)
	}
}

// TestRowsFormatFollowsClusterVersion: while the cluster runs below
// version 7 (here a node whose build says 3) the row parts go into the
// log, the state file and forwarded answers as JSON, which version-3
// members read; at version 7, in numbered fields.
func TestRowsFormatFollowsClusterVersion(t *testing.T) {
	for _, tc := range []struct {
		version uint32
		json    bool
	}{{3, true}, {logformat.FormatWireVersion - 1, true}, {CommandVersion, false}} {
		cfg := testConfig("n1", t.TempDir(), listen(t))
		cfg.commandVersion = tc.version
		n := openNode(t, cfg)
		must(t, n.WaitReady(ctxT(t, 10*time.Second)))
		waitFor(t, "the cluster's version to rise", 10*time.Second, func() bool { return n.ClusterVersion() == tc.version })
		cmds := formattest.GoldenRowsCommands()
		res := propose(t, n, append([]model.Command{createDB("d")}, cmds[:3]...)...)
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("version %d: command %d: %v", tc.version, i, r.Err)
			}
		}
		var e raft.Log
		must(t, n.logs.GetLog(n.raft.LastIndex(), &e))
		for e.Type != raft.LogCommand {
			must(t, n.logs.GetLog(e.Index-1, &e))
		}
		want := logformat.AppendBatch(nil, append([]model.Command{createDB("d")}, cmds[:3]...), logformat.FormatAt(tc.version))
		if !bytes.Equal(e.Data, want) {
			t.Errorf("version %d: entry %x\nwant %x", tc.version, e.Data, want)
		}
		if got := bytes.Contains(e.Data, []byte(`{"Cols":`)); got != tc.json {
			t.Errorf("version %d: JSON in the entry: %v", tc.version, got)
		}
		must(t, n.fsm.checkpoint())
		var stored []byte
		must(t, n.fsm.db.View(func(tx *bolt.Tx) error {
			stored = bytes.Clone(tx.Bucket(bucketDBs).Bucket([]byte("d")).Get([]byte("w")))
			return nil
		}))
		if got := bytes.Contains(stored, []byte(`{"Cols":`)); got != tc.json {
			t.Errorf("version %d: JSON in the state file's table: %v", tc.version, got)
		}
		must(t, n.Close())
	}
}

// TestRowTableAppliesEntryTime: the FSM applies row-table commands with
// the entry's time (the second half of logformat's
// TestRowTableStateAndSnapshot, before the codec moved there).
func TestRowTableAppliesEntryTime(t *testing.T) {
	cmds := formattest.RowsSeedCommands()
	// Through the state machine: NOW() and CURRENT_TIMESTAMP are the
	// entry's AppendedAt on every replica.
	f := openTestFSM(t, "")
	at := time.Date(2026, 11, 22, 12, 34, 56, 0, time.UTC)
	for i, batch := range [][]model.Command{{{Op: model.OpCreateDB, DB: "d"}}, cmds[:3]} {
		l := entry(uint64(i+1), batch...)
		l.AppendedAt = at
		for _, r := range applyOK(t, f, l) {
			if r.Err != nil {
				t.Fatalf("entry %d: %v", i+1, r.Err)
			}
		}
	}
	var row []model.Datum
	if err := f.View(func(s ticket.Store) error {
		rows, err := s.Rows("d", "leaf_alloc")
		if err == nil && rows != nil && rows.Len() == 1 {
			k, _ := rowengine.IndexKey(cmds[0].Def.Rows, 0, []model.Datum{{S: "A"}, {}, {}, {}})
			row, _ = rows.Get(k) // the primary key, case-insensitive
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if row == nil || row[1].S != "101" || row[3].S != "2026-11-22 12:34:56" {
		t.Fatalf("row after insert and update: %v", row)
	}
}
