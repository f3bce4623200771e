package raftstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// workerDef is UidGenerator's WORKER_NODE.
func workerDef(db string) *model.TableDef {
	def, err := ticket.NewTableDef(&model.TableSpec{DB: db, Name: "WORKER_NODE", Columns: []model.ColumnSpec{
		{Name: "ID", Type: "bigint", NotNull: true, AutoInc: true},
		{Name: "HOST_NAME", Type: "varchar", Width: 64, NotNull: true},
		{Name: "PORT", Type: "varchar", Width: 64, NotNull: true},
		{Name: "TYPE", Type: "int", NotNull: true},
		{Name: "LAUNCH_DATE", Type: "date", NotNull: true},
		{Name: "MODIFIED", Type: "timestamp", NotNull: true},
		{Name: "CREATED", Type: "timestamp", NotNull: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"ID"}}}})
	if err != nil {
		panic(err)
	}
	return def
}

// workerInsert is UidGenerator's INSERT of n rows.
func workerInsert(db string, n, from int) model.Command {
	c := model.Command{Op: model.OpInsert, DB: db, Table: "WORKER_NODE",
		Columns: []string{"HOST_NAME", "PORT", "TYPE", "LAUNCH_DATE", "MODIFIED", "CREATED"}}
	for i := range n {
		c.Values = append(c.Values, []model.Value{
			{Kind: model.ValString, Str: fmt.Sprintf("10.0.%d.%d", (from+i)/250, (from+i)%250)},
			{Kind: model.ValString, Str: strconv.Itoa(from+i) + "-173500000000"},
			{Kind: model.ValInt, Int: 1}, {Kind: model.ValString, Str: "2026-11-24"}, {Kind: model.ValNow}, {Kind: model.ValNow}})
	}
	return c
}

// fillWorkers applies a WORKER_NODE table of n rows to f, 1,000 rows per
// entry, from index 1; it returns the next index.
func fillWorkers(t testing.TB, f *FSM, n int) uint64 {
	t.Helper()
	idx := uint64(1)
	l := entry(idx, createDB("ids"), model.Command{Op: model.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: workerDef("ids")})
	for _, r := range applyOK(t, f, l) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	for done := 0; done < n; done += 1000 {
		idx++
		l := entry(idx, workerInsert("ids", min(1000, n-done), done))
		l.AppendedAt = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
		for _, r := range applyOK(t, f, l) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	return idx + 1
}

func rowCount(t testing.TB, f *FSM, db, name string) (n int) {
	t.Helper()
	must(t, f.View(func(s ticket.Store) error {
		rows, err := s.Rows(db, name)
		if rows != nil {
			n = rows.Len()
		}
		return err
	}))
	return n
}

// TestCheckpointWritesChangedRows: after a table of 20,000 rows is
// checkpointed, a checkpoint of one UPDATE writes a handful of pages, not
// the table (which is hundreds of pages), and the file reloads with the
// change.
func TestCheckpointWritesChangedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	idx := fillWorkers(t, f, 20000)
	must(t, f.checkpoint())
	before := f.db.Stats().TxStats
	upd := model.Command{Op: model.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &model.RowsCommand{
		Sets:  []model.RowSet{{Col: "PORT", A: model.RowOperand{Val: model.Value{Kind: model.ValString, Str: "changed"}}}},
		Where: []model.RowCond{{Col: "ID", Val: model.Value{Kind: model.ValInt, Int: 12345}}}}}
	if r := applyOK(t, f, entry(idx, upd)); r[0].Affected != 1 {
		t.Fatalf("update: %+v", r[0])
	}
	must(t, f.checkpoint())
	after := f.db.Stats().TxStats
	written := after.GetWrite() - before.GetWrite()
	var pages int
	must(t, f.db.View(func(tx *bolt.Tx) error {
		pages = tx.Bucket(bucketRows).Bucket(rowsBucketName(tableKey{"ids", "WORKER_NODE"})).Stats().LeafPageN
		return nil
	}))
	t.Logf("table: %d leaf pages; checkpoint of one UPDATE wrote %d pages", pages, written)
	if pages < 200 || written > 12 {
		t.Fatalf("checkpoint of one changed row wrote %d pages of a %d-page table", written, pages)
	}
	must(t, f.Close())
	g := openTestFSM(t, path)
	if n := rowCount(t, g, "ids", "WORKER_NODE"); n != 20000 {
		t.Fatalf("reloaded %d rows", n)
	}
	must(t, g.View(func(s ticket.Store) error {
		rows, _ := s.Rows("ids", "WORKER_NODE")
		k, _ := rowengine.IndexKey(workerDef("ids").Rows, 0, []model.Datum{{S: "12345"}, {}, {}, {}, {}, {}, {}})
		r, ok := rows.Get(k)
		if !ok || r[2].S != "changed" {
			t.Errorf("row 12345 after reload: %v %v", r, ok)
		}
		return nil
	}))
}

// TestStateFormat1Upgrade: a state file written before per-row storage
// (format 1, a row table's rows inside its table value) loads, and the
// first checkpoint rewrites it as format 2 with the rows in their bucket.
func TestStateFormat1Upgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := openState(path, true)
	must(t, err)
	def := workerDef("ids")
	tb := &model.Table{Def: *def, AutoInc: 3}
	legacy := [][]model.Datum{
		{{S: "1"}, {S: "h1"}, {S: "p1"}, {S: "1"}, {S: "2026-01-01"}, {S: "2026-01-01 00:00:00"}, {S: "2026-01-01 00:00:00"}},
		{{S: "2"}, {S: "h2"}, {S: "p2"}, {S: "1"}, {S: "2026-01-02"}, {S: "2026-01-02 00:00:00"}, {S: "2026-01-02 00:00:00"}},
	}
	must(t, db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyFormat, []byte{0, 0, 0, 0, 0, 0, 0, 1}); err != nil {
			return err
		}
		b, err := tx.Bucket(bucketDBs).CreateBucket([]byte("ids"))
		if err != nil {
			return err
		}
		if err := b.Put([]byte("WORKER_NODE"), logformat.AppendTableRows(nil, tb, legacy, logformat.FormatJSON)); err != nil {
			return err
		}
		return writeApplied(tx, 7, 1)
	}))
	must(t, db.Close())

	f := openTestFSM(t, path)
	if n := rowCount(t, f, "ids", "WORKER_NODE"); n != 2 {
		t.Fatalf("format 1 file: %d rows", n)
	}
	// A new row, then the checkpoint that rewrites the file.
	applyOK(t, f, &raft.Log{Index: 8, Term: 1, Type: raft.LogCommand, Data: logformat.EncodeBatch(nil, []model.Command{workerInsert("ids", 1, 3)})})
	must(t, f.Close())
	db, err = bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.View(func(tx *bolt.Tx) error {
		if v := readFormat(tx); v != stateFormat {
			t.Errorf("format %d after a checkpoint", v)
		}
		_, rows, err := logformat.DecodeTableRows(tx.Bucket(bucketDBs).Bucket([]byte("ids")).Get([]byte("WORKER_NODE")))
		if err != nil || rows != nil {
			t.Errorf("table value still holds rows: %v %v", rows, err)
		}
		if n := tx.Bucket(bucketRows).Bucket(rowsBucketName(tableKey{"ids", "WORKER_NODE"})).Stats().KeyN; n != 3 {
			t.Errorf("rows bucket holds %d rows", n)
		}
		return nil
	}))
	must(t, db.Close())
	g := openTestFSM(t, path)
	if n := rowCount(t, g, "ids", "WORKER_NODE"); n != 3 {
		t.Fatalf("after the upgrade: %d rows", n)
	}
}

// TestReloadAtScale: 50,000 rows checkpointed load back, with their
// count and order; the time to load is logged (make bench-rows measures
// restarts of real nodes).
func TestReloadAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 50,000 rows")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	fillWorkers(t, f, 50000)
	start := time.Now()
	must(t, f.Close())
	t.Logf("checkpoint of 50,000 new rows at close: %v", time.Since(start))
	start = time.Now()
	g := openTestFSM(t, path)
	t.Logf("load of 50,000 rows: %v", time.Since(start))
	if n := rowCount(t, g, "ids", "WORKER_NODE"); n != 50000 {
		t.Fatalf("reloaded %d rows", n)
	}
	prev := int64(0)
	must(t, g.View(func(s ticket.Store) error {
		rows, _ := s.Rows("ids", "WORKER_NODE")
		return rows.Scan(rowengine.ClusterIndex, "", "", func(_ string, r []model.Datum) bool {
			id, _ := strconv.ParseInt(r[0].S, 10, 64)
			if id != prev+1 {
				t.Fatalf("row %d after %d", id, prev)
			}
			prev = id
			return true
		})
	}))
}

// TestBackupRestoreRowTable: a backup of a row table reads back with its
// rows, and a restore command carrying them (the log entry a restore
// commits) installs them on another state machine.
func TestBackupRestoreRowTable(t *testing.T) {
	f := openTestFSM(t, "")
	fillWorkers(t, f, 2500)
	data, _ := backupBytes(t, f)
	b, err := ReadBackup(bytes.NewReader(data), t.TempDir())
	must(t, err)
	if rows := b.Dump.Rows["ids.WORKER_NODE"]; len(rows) != 2500 || rows[0][0].S != "1" || rows[2499][0].S != "2500" {
		t.Fatalf("backup holds %d rows", len(rows))
	}
	g := openTestFSM(t, "")
	r := applyOK(t, g, entry(1, model.Command{Op: model.OpRestore, Dump: &b.Dump}))
	if r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if n := rowCount(t, g, "ids", "WORKER_NODE"); n != 2500 {
		t.Fatalf("restored %d rows", n)
	}
	// The restored table goes on: the next generated id follows.
	r = applyOK(t, g, entry(2, workerInsert("ids", 1, 9999)))
	if r[0].Err != nil || r[0].LastID != 2501 {
		t.Fatalf("insert after restore: %+v", r[0])
	}
}

// TestResultsNotKeptByLogCache: once a proposal's results are handed to
// the proposer, nothing in the node keeps them. Raft's log cache holds
// its last 512 entries by pointer into their futures, responses
// included: results kept there held every row image of the last 512
// entries (about 140 MB after a fill by 1,000-row INSERTs).
func TestResultsNotKeptByLogCache(t *testing.T) {
	cfg := testConfig("n1", t.TempDir(), nil)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.AdvertiseAddr = "127.0.0.1:1" // a lone voter never dials itself
	var freed atomic.Int64
	n, err := open(cfg, func(st ticket.Store, c *model.Command) (model.Result, error) {
		r, err := ticket.Apply(st, c)
		img := make([]model.Datum, 1024)
		runtime.SetFinalizer(&img[0], func(*model.Datum) { freed.Add(1) })
		r.Images = [][]model.Datum{img}
		return r, err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	must(t, n.WaitServing(ctxT(t, 5*time.Second)))
	const entries = 20
	for range entries {
		propose(t, n, model.Command{Op: model.OpSetGlobal, Name: "g", Value: 1})
	}
	for deadline := time.Now().Add(10 * time.Second); freed.Load() < entries && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := freed.Load(); got < entries {
		t.Fatalf("%d of %d entries' results freed after the proposals returned", got, entries)
	}
}
