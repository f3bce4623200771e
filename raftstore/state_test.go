package raftstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

func openTestState(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := openState(filepath.Join(t.TempDir(), "state.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStoreMatchesMemStore runs random Store operations against the FSM's
// memory state and ticket.MemStore, and compares every answer. At random
// points the changes are checkpointed into a bbolt file, and a state
// loaded back from that file must equal the live one: the checkpoint
// writes exactly what changed (drops of tables and of whole databases,
// re-creations, globals).
func TestStoreMatchesMemStore(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { storeMatchesMemStore(t, 11+seed) })
	}
}

func storeMatchesMemStore(t *testing.T, seed uint64) {
	db := openTestState(t)
	mem := ticket.NewMemStore()
	r := rand.New(rand.NewPCG(seed, 12))
	dbs := []string{"a", "b", "c"}
	names := []string{"t1", "t2", "t3"}

	live := newMemState()
	st := memStore{m: live}
	checkpoints := 0
	// pending is a background checkpoint's image, taken and not yet
	// written: entries go on being applied meanwhile, and then it is
	// written, or fails and goes back (FSM.checkpointAside).
	var pending *ckptImage
	errFailed := errors.New("checkpoint failed")
	settle := func() {
		t.Helper()
		if pending == nil {
			return
		}
		if r.IntN(2) == 0 {
			must(t, db.Update(func(tx *bolt.Tx) error { return pending.write(tx, nil) }))
		} else {
			err := db.Update(func(tx *bolt.Tx) error {
				if err := pending.write(tx, nil); err != nil {
					return err
				}
				return errFailed
			})
			if !errors.Is(err, errFailed) {
				t.Fatalf("failed checkpoint: %v", err)
			}
			live.putBack(pending)
		}
		pending = nil
	}
	commit := func(step int) {
		t.Helper()
		settle()
		img := live.take()
		must(t, db.Update(func(tx *bolt.Tx) error { return img.write(tx, live) }))
		checkpoints++
		var loaded *memState
		must(t, db.View(func(tx *bolt.Tx) (err error) { loaded, err = loadMemState(tx); return err }))
		if !reflect.DeepEqual(loaded.dbs, live.dbs) || !reflect.DeepEqual(loaded.globals, live.globals) ||
			len(loaded.tables) != len(live.tables) {
			t.Fatalf("step %d: checkpoint loads as %d dbs %d tables %v, live %d dbs %d tables %v", step,
				len(loaded.dbs), len(loaded.tables), loaded.globals, len(live.dbs), len(live.tables), live.globals)
		}
		if len(loaded.rows) != len(live.rows) {
			t.Fatalf("step %d: checkpoint loads %d row tables, live %d", step, len(loaded.rows), len(live.rows))
		}
		for k, rt := range live.rows {
			lr := loaded.rows[k]
			if lr == nil {
				t.Fatalf("step %d: row table %v not loaded", step, k)
			}
			for idx := rowengine.ClusterIndex; idx < len(rt.Def().Keys); idx++ {
				if got, want := scanAll(t, lr, idx), scanAll(t, rt, idx); !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d: row table %v index %d loads as\n%v\nlive\n%v", step, k, idx, got, want)
				}
			}
		}
		for k, tb := range live.tables {
			got := loaded.tables[k]
			// Decoding gives nil for empty row lists.
			if got == nil || got.AutoInc != tb.AutoInc || len(got.Rows) != len(tb.Rows) ||
				(len(tb.Rows) > 0 && !reflect.DeepEqual(got.Rows, tb.Rows)) {
				t.Fatalf("step %d: table %v loads as %+v, live %+v", step, k, got, tb)
			}
		}
	}

	same := func(step int, what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d %s:\n got %#v\nwant %#v", step, what, got, want)
		}
	}
	for step := range 3000 {
		d, n := dbs[r.IntN(len(dbs))], names[r.IntN(len(names))]
		op := r.IntN(14)
		switch op {
		case 0:
			commit(step)
		case 1:
			must(t, st.PutDatabase(d))
			must(t, mem.PutDatabase(d))
		case 2:
			if r.IntN(3) == 0 {
				must(t, st.DeleteDatabase(d))
				must(t, mem.DeleteDatabase(d))
			}
		case 3, 4:
			tb := &model.Table{Def: *formattest.Tickets64(d, n), AutoInc: r.Uint64N(1000)}
			if n != "t1" {
				// t2 is clustered by hidden row id, t3 by its primary
				// key; t3 gains and loses a secondary key (re-indexing).
				tb = &model.Table{Def: *rowsTestDef(d, n, n == "t3", r.IntN(2) == 0), AutoInc: 1}
			}
			for range r.IntN(4) {
				tb.Rows = append(tb.Rows, model.Row{ID: r.Uint64N(1000), Stub: string(rune('a' + r.IntN(3)))})
			}
			ok, _ := mem.Database(d)
			err := st.PutTable(tb)
			if !ok {
				if !errors.Is(err, ErrNoDatabase) {
					t.Fatalf("step %d: PutTable without database: %v", step, err)
				}
				continue
			}
			must(t, err)
			must(t, mem.PutTable(tb))
			// The store keeps its own copy.
			tb.AutoInc++
			if len(tb.Rows) > 0 {
				tb.Rows[0].Stub = "changed"
			}
		case 5:
			must(t, st.DeleteTable(d, n))
			must(t, mem.DeleteTable(d, n))
		case 6:
			// A table changed but not put back leaves the state alone.
			got, err := st.Table(d, n)
			must(t, err)
			if got != nil {
				got.AutoInc += 7
				got.Rows = append(got.Rows, model.Row{ID: 1})
				if len(got.Rows) > 1 {
					got.Rows[0].ID = 999999
				}
			}
		case 7:
			v := r.Uint64()
			must(t, st.PutGlobal(n, v))
			must(t, mem.PutGlobal(n, v))
		case 8, 9, 10:
			// A row written: new, or over one with the same key.
			gr, err := st.Rows(d, n)
			must(t, err)
			wr, _ := mem.Rows(d, n)
			if (gr == nil) != (wr == nil) {
				t.Fatalf("step %d: Rows %v vs %v", step, gr, wr)
			}
			if gr == nil {
				continue
			}
			row := []model.Datum{{S: strconv.Itoa(r.IntN(50))}, {S: string(rune('a' + r.IntN(40)))}, {S: strconv.Itoa(r.IntN(5))}}
			if r.IntN(5) == 0 {
				row[1] = model.Datum{Null: true}
			}
			pk := ""
			if n == "t2" && gr.Len() > 0 && r.IntN(2) == 0 {
				pk = nthKey(t, gr, r.IntN(gr.Len()))
			}
			gk, gerr := gr.Put(pk, row)
			wk, werr := wr.Put(pk, row)
			if gk != wk || errors.Is(gerr, rowengine.ErrRowsDuplicate) != errors.Is(werr, rowengine.ErrRowsDuplicate) {
				t.Fatalf("step %d: Put: %q %v vs %q %v", step, gk, gerr, wk, werr)
			}
		case 13:
			switch {
			case pending != nil:
				settle()
			case len(live.rewrite) == 0:
				// Whole-table rewrites are written under the lock.
				pending = live.take()
			}
		case 11, 12:
			gr, err := st.Rows(d, n)
			must(t, err)
			wr, _ := mem.Rows(d, n)
			if gr != nil && gr.Len() > 0 {
				pk := nthKey(t, gr, r.IntN(gr.Len()))
				must(t, gr.Delete(pk))
				must(t, wr.Delete(pk))
			}
		}
		gr, err := st.Rows(d, n)
		must(t, err)
		wr, _ := mem.Rows(d, n)
		if (gr == nil) != (wr == nil) {
			t.Fatalf("step %d: Rows %v vs %v", step, gr, wr)
		}
		if gr != nil {
			for idx := rowengine.ClusterIndex; idx < len(gr.(*rowengine.RowTree).Def().Keys); idx++ {
				same(step, "Scan", scanAll(t, gr, idx), scanAll(t, wr, idx))
			}
		}
		got, err := st.Table(d, n)
		must(t, err)
		want, _ := mem.Table(d, n)
		same(step, "Table", got, want)
		gotT, err := st.Tables(d)
		must(t, err)
		wantT, _ := mem.Tables(d)
		same(step, "Tables", gotT, wantT)
		gotD, err := st.Databases()
		must(t, err)
		wantD, _ := mem.Databases()
		same(step, "Databases", gotD, wantD)
		okG, _ := st.Database(d)
		okW, _ := mem.Database(d)
		same(step, "Database", okG, okW)
		gv, gok, err := st.Global(n)
		must(t, err)
		wv, wok, _ := mem.Global(n)
		same(step, "Global", [2]any{gv, gok}, [2]any{wv, wok})
	}
	if checkpoints < 100 {
		t.Fatalf("only %d checkpoints", checkpoints)
	}
}

// rowsTestDef is a row table (id INT NOT NULL, name VARCHAR(2), v INT):
// keyed has PRIMARY KEY(id) and UNIQUE(name), else rows are clustered
// by hidden row id; withV adds KEY(v).
func rowsTestDef(db, name string, keyed, withV bool) *model.TableDef {
	spec := &model.TableSpec{DB: db, Name: name, Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true}, {Name: "name", Type: "varchar", Width: 2}, {Name: "v", Type: "int"}}}
	if keyed {
		spec.Keys = append(spec.Keys, model.KeySpec{Primary: true, Columns: []string{"id"}},
			model.KeySpec{Unique: true, Name: "name", Columns: []string{"name"}})
	}
	if withV {
		spec.Keys = append(spec.Keys, model.KeySpec{Name: "v", Columns: []string{"v"}})
	}
	def, err := ticket.NewTableDef(spec)
	if err != nil || def.Rows == nil {
		panic(fmt.Sprint("rowsTestDef: ", err))
	}
	return def
}

// scanAll lists an index's rows as "key=row" lines.
func scanAll(t testing.TB, rows rowengine.TableRows, index int) []string {
	t.Helper()
	var out []string
	must(t, rows.Scan(index, "", "", func(pk string, r []model.Datum) bool {
		out = append(out, fmt.Sprintf("%x=%v", pk, r))
		return true
	}))
	return out
}

// nthKey is the clustering key of the i-th row.
func nthKey(t testing.TB, rows rowengine.TableRows, i int) (pk string) {
	t.Helper()
	must(t, rows.Scan(rowengine.ClusterIndex, "", "", func(k string, _ []model.Datum) bool {
		pk = k
		i--
		return i >= 0
	}))
	return pk
}

func TestReadOnlyStore(t *testing.T) {
	st := memStore{m: newMemState(), readOnly: true}
	for name, err := range map[string]error{
		"PutDatabase":    st.PutDatabase("x"),
		"DeleteDatabase": st.DeleteDatabase("x"),
		"PutTable":       st.PutTable(&model.Table{Def: *formattest.Tickets64("x", "y")}),
		"DeleteTable":    st.DeleteTable("x", "y"),
		"PutGlobal":      st.PutGlobal("g", 1),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: %v", name, err)
		}
	}
	tb, err := st.Table("x", "y")
	if tb != nil || err != nil {
		t.Errorf("Table: %v %v", tb, err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
