package ticket

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// kindsStore is a store with a database d holding a ticket table t, a row
// table r and a sequence s.
func kindsStore(t *testing.T) *MemStore {
	t.Helper()
	st := NewMemStore()
	rowDef, err := NewTableDef(&model.TableSpec{DB: "d", Name: "r", Columns: []model.ColumnSpec{
		{Name: "id", Type: "bigint", NotNull: true, AutoInc: true},
		{Name: "name", Type: "varchar", Width: 8},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}}})
	if err != nil {
		t.Fatal(err)
	}
	seqDef, _, err := NewSequenceDef("d", "s", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []model.Command{
		{Op: model.OpCreateDB, DB: "d"},
		{Op: model.OpCreateTable, Def: tickets64("d", "t")},
		{Op: model.OpCreateTable, Def: rowDef},
		{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: seqDef},
	} {
		if r, err := Apply(st, &c); err != nil || r.Err != nil {
			t.Fatalf("%v: %v %v", &c, err, r.Err)
		}
	}
	return st
}

// kindCommands are commands of every op, each applied below to each kind
// of table and to a table that does not exist.
func kindCommands() map[string]model.Command {
	one := model.Value{Kind: model.ValInt, Int: 1}
	return map[string]model.Command{
		"insert":        {Op: model.OpInsert, Values: [][]model.Value{{{Kind: model.ValInt, Int: 7}, {Kind: model.ValString, Str: "a"}}}, Increment: 1, Offset: 1},
		"insert-rows":   {Op: model.OpInsert, Values: [][]model.Value{{{Kind: model.ValInt, Int: 7}, {Kind: model.ValString, Str: "a"}}}, Increment: 1, Offset: 1, Rows: &model.RowsCommand{Engine: true}},
		"update":        {Op: model.OpUpdate, Set: model.Update{Column: "id", Delta: 1}},
		"update-rows":   {Op: model.OpUpdate, Rows: &model.RowsCommand{Engine: true, Assigns: []model.RowAssign{{Col: "id", Expr: model.RowExpr{Op: model.EVal, Val: &one}}}}},
		"delete":        {Op: model.OpDelete, Rows: &model.RowsCommand{Engine: true}},
		"alter-comment": {Op: model.OpAlterTable, HasComment: true, Comment: "c", HasAutoInc: true, AutoInc: 50},
		"alter-keys":    {Op: model.OpAlterTable, DropKeys: []string{"nokey"}},
		"alter-keys-ie": {Op: model.OpAlterTable, DropKeys: []string{"nokey"}, IfExists: true, HasComment: true, Comment: "c"},
		"reserve":       {Op: model.OpReserve, Count: 3},
		"restore-rows":  {Op: model.OpRestoreRows, RestoreRows: [][]model.Datum{{{S: "9"}, {S: "x"}}}},
		"nextval":       {Op: model.OpSeqNext},
		"setval":        {Op: model.OpSetVal, Seq: &model.SeqCommand{Value: 5}},
		"alter-seq":     {Op: model.OpAlterSeq, Seq: &model.SeqCommand{}},
		"drop-seq":      {Op: model.OpDropSeq},
		"drop-seq-ie":   {Op: model.OpDropSeq, IfExists: true},
		"drop-table":    {Op: model.OpDropTable},
		"drop-table-ie": {Op: model.OpDropTable, IfExists: true},
		"op-25":         {Op: 25},
		"op-13":         {Op: 13},
	}
}

// kindAnswers applies every command of kindCommands to every table of
// kindsStore, each on a fresh store, and renders the results and what
// they left of the table.
func kindAnswers(t *testing.T) string {
	var b strings.Builder
	cmds := kindCommands()
	var names []string
	for n := range cmds {
		names = append(names, n)
	}
	sortStrings(names)
	for _, table := range []string{"t", "r", "s", "none"} {
		for _, n := range names {
			st := kindsStore(t)
			c := cmds[n]
			c.DB, c.Table = "d", table
			r, err := Apply(st, &c)
			after, _ := st.Table("d", table)
			state := "gone"
			if after != nil {
				state = fmt.Sprintf("autoinc=%d rows=%d comment=%q", after.AutoInc, len(after.Rows), after.Def.Comment)
				if after.Def.Seq != nil {
					state += fmt.Sprintf(" next=%d", after.Def.Seq.Next)
				}
				if rows, _ := st.Rows("d", table); rows != nil {
					state += fmt.Sprintf(" stored=%d", rows.Len())
				}
			}
			fmt.Fprintf(&b, "%s %s: err=%v res=%v first=%d last=%d affected=%d warnings=%v | %s\n",
				table, n, err, r.Err, r.First, r.Last, r.Affected, r.Warnings, state)
		}
	}
	return b.String()
}

func sortStrings(s []string) { slices.Sort(s) }

// TestKindAnswers: every op on a ticket table, a row table, a sequence and
// a table that does not exist answers, and leaves the table, as
// testdata/kind_answers.txt says. The file was written by the build
// before Apply dispatched per table kind (kind.go), at b1500a8, so the
// dispatch answers as the per-op prologues did, refusals and notes
// included.
func TestKindAnswers(t *testing.T) {
	want, err := os.ReadFile("testdata/kind_answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := kindAnswers(t)
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}
