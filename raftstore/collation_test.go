package raftstore

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// TestCollationKeptAcrossRestart: a row table of the older folding (as a
// build before command version 8 created it: no collation in its log
// entry) and one of utf8mb4_general_ci, written through the log's
// encoding, each keep their own comparison in a state file reloaded from
// a checkpoint and in a state replayed from the same entries: in the
// older table 'é' and 'E' are two keys and '_a' sorts before 'b', in the
// new one 'E' is 1062 and '_a' sorts after the letters; 'Ë' after the
// restart (and a unique key added) is a new key of the older table and
// 1062 in the new one. A
// backup of it restores both tables with their own comparison.
func TestCollationKeptAcrossRestart(t *testing.T) {
	def := func(name string) *model.TableDef {
		d, err := ticket.NewTableDef(&model.TableSpec{DB: "d", Name: name, Columns: []model.ColumnSpec{
			{Name: "name", Type: "varchar", Width: 10, NotNull: true}},
			Keys: []model.KeySpec{{Primary: true, Columns: []string{"name"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	insert := func(table, v string) model.Command {
		return model.Command{Op: model.OpInsert, DB: "d", Table: table, Columns: []string{"name"},
			Values: [][]model.Value{{{Kind: model.ValString, Str: v}}}, Rows: &model.RowsCommand{Engine: true}}
	}
	entries := []model.Command{createDB("d"),
		{Op: model.OpCreateTable, DB: "d", Table: "old", Def: formattest.LegacyDef(def("old"))},
		{Op: model.OpCreateTable, DB: "d", Table: "new", Def: def("new")}}
	for _, table := range []string{"old", "new"} {
		for _, v := range []string{"é", "E", "_a", "b"} {
			entries = append(entries, insert(table, v))
		}
	}
	// codes applies cmds one entry each from index idx and lists their
	// error codes (0: applied).
	codes := func(f *FSM, idx uint64, cmds []model.Command) []int {
		var out []int
		for i, c := range cmds {
			for _, r := range applyOK(t, f, entry(idx+uint64(i), c)) {
				code := 0
				if r.Err != nil {
					code = int(r.Err.Code)
				}
				out = append(out, code)
			}
		}
		return out
	}
	order := func(f *FSM, table string) []string {
		var names []string
		must(t, f.View(func(s ticket.Store) error {
			rows, err := s.Rows("d", table)
			if err != nil {
				return err
			}
			return rows.Scan(rowengine.ClusterIndex, "", "", func(_ string, row []model.Datum) bool {
				names = append(names, row[0].S)
				return true
			})
		}))
		return names
	}
	wantOld, wantNew := []string{"_a", "b", "E", "é"}, []string{"b", "é", "_a"}
	check := func(what string, f *FSM) {
		t.Helper()
		if got := order(f, "old"); !slices.Equal(got, wantOld) {
			t.Errorf("%s: older table holds %q, want %q", what, got, wantOld)
		}
		if got := order(f, "new"); !slices.Equal(got, wantNew) {
			t.Errorf("%s: general_ci table holds %q, want %q", what, got, wantNew)
		}
	}

	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	got := codes(f, 1, entries)
	want := []int{0, 0, 0, 0, 0, 0, 0, 0, 1062, 0, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first apply: codes %v, want %v", got, want)
	}
	check("applied", f)
	must(t, f.checkpoint())
	must(t, f.Close())

	g := openTestFSM(t, path)
	check("reloaded", g)
	// A key added to each keeps the table's comparison (ALTER TABLE
	// copies the definition).
	addKey := func(table string) model.Command {
		return model.Command{Op: model.OpAlterTable, DB: "d", Table: table,
			AddKeys: []model.KeySpec{{Name: "u", Unique: true, Columns: []string{"name"}}}}
	}
	after := []model.Command{addKey("old"), addKey("new"), insert("old", "Ë"), insert("new", "Ë")}
	if got := codes(g, uint64(len(entries)+1), after); fmt.Sprint(got) != "[0 0 0 1062]" {
		t.Errorf("after reload, a unique key added, 'Ë' into each: codes %v, want [0 0 0 1062]", got)
	}
	wantOld = []string{"_a", "b", "E", "é", "Ë"}
	check("reloaded, then written", g)

	// A replay of the same entries into an empty state answers alike.
	h := openTestFSM(t, "")
	if got := codes(h, 1, append(slices.Clone(entries), after...)); fmt.Sprint(got) != fmt.Sprint(append(want, 0, 0, 0, 1062)) {
		t.Errorf("replay: codes %v", got)
	}
	check("replayed", h)

	// And a backup of it restored.
	data, _ := backupBytes(t, g)
	b, err := ReadBackup(bytes.NewReader(data), t.TempDir())
	must(t, err)
	k := openTestFSM(t, "")
	if r := applyOK(t, k, entry(1, model.Command{Op: model.OpRestore, Dump: &b.Dump})); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	check("restored from a backup", k)
	if got := codes(k, 2, []model.Command{insert("old", "ê"), insert("new", "ê")}); fmt.Sprint(got) != "[0 1062]" {
		t.Errorf("restored: 'ê' into each: codes %v, want [0 1062]", got)
	}
}
