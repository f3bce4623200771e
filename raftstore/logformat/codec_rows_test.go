package logformat

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket/model"
)

func TestRowsCommandsRoundTrip(t *testing.T) {
	cmds := formattest.RowsSeedCommands()
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
}

// TestRowsUpsertRoundTrip: ON DUPLICATE KEY UPDATE's assignments and
// VALUES expressions (command version 6) survive the log encoding,
// including an expression slot left empty for a literal.
func TestRowsUpsertRoundTrip(t *testing.T) {
	one := model.Value{Kind: model.ValInt, Int: 1}
	cmds := []model.Command{{Op: model.OpInsert, DB: "d", Table: "t", Columns: []string{"a", "b"},
		Values: [][]model.Value{{{Kind: model.ValString, Str: "x"}, {Kind: model.ValNull}}},
		Rows: &model.RowsCommand{Engine: true,
			Exprs: [][]model.RowExpr{{{}, {Op: model.EAdd, Args: []model.RowExpr{{Op: model.EVal, Val: &one}, {Op: model.ECol, Col: "b"}}}}},
			OnDup: []model.RowAssign{{Col: "b", Expr: model.RowExpr{Op: model.EValues, Col: "b"}}, {Col: "a", Default: true}}}}}
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
}

// TestRowTableStateAndSnapshot: a row table with rows goes through the
// state file encoding, a result's row images through the forwarding
// encoding (and raftstore's TestRowTableAppliesEntryTime: the FSM applies
// the commands with the entry's time).
func TestRowTableStateAndSnapshot(t *testing.T) {
	cmds := formattest.RowsSeedCommands()
	tb := model.Table{Def: *cmds[0].Def, AutoInc: 1}
	data := [][]model.Datum{
		{{S: "a"}, {S: "101"}, {S: "100"}, {S: "2026-11-22 10:00:00"}},
		{{S: "b"}, {S: "1"}, {S: "5"}, {S: "2026-11-22 10:00:01"}},
	}
	// A dump's (and a format-1 state file's) table with its rows.
	got, rows, err := DecodeTableRows(AppendTableRows(nil, &tb, data, FormatWire))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, tb) || !reflect.DeepEqual(rows, data) {
		t.Fatalf("table round trip\n got %+v %v\nwant %+v %v", *got, rows, tb, data)
	}
	if _, _, err := DecodeTableRows(AppendTableRows(nil, &tb, [][]model.Datum{{{S: "only one value"}}}, FormatWire)); err == nil {
		t.Fatal("a row with the wrong number of values decoded")
	}
	rs := []model.Result{{Affected: 1, Images: data}}
	back, err := DecodeResults(EncodeResults(nil, rs))
	if err != nil || !reflect.DeepEqual(back, rs) {
		t.Fatalf("results round trip: %+v, %v", back, err)
	}
}

// TestRowsExprCommandRoundTrip: a row command in the engine's expression
// form round-trips behind its own presence bit (cmdRowsExpr), which a
// build that does not know it refuses instead of applying the command
// without its WHERE.
func TestRowsExprCommandRoundTrip(t *testing.T) {
	v := func(n int64) *model.Value { return &model.Value{Kind: model.ValInt, Int: n} }
	cmds := []model.Command{
		{Op: model.OpUpdate, DB: "d", Table: "t", Rows: &model.RowsCommand{
			Assigns: []model.RowAssign{{Col: "step", Expr: model.RowExpr{Op: model.EMul,
				Args: []model.RowExpr{{Op: model.ECol, Col: "step"}, {Op: model.EVal, Val: v(2)}}}}, {Col: "x", Default: true}},
			Filter:  &model.RowExpr{Op: model.EGt, Args: []model.RowExpr{{Op: model.ECol, Col: "v"}, {Op: model.EVal, Val: v(-1)}}},
			OrderBy: []model.RowOrder{{Col: "v", Desc: true}}, HasLimit: true, Limit: 2,
			NotStrict: true, NoAutoValueOnZero: true, Now: 1700000000000000}},
		{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{*v(1)}}, Rows: &model.RowsCommand{NotStrict: true}},
	}
	enc := EncodeBatch(nil, cmds)
	got, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cmds {
		g, _ := json.Marshal(got[i].Rows)
		w, _ := json.Marshal(cmds[i].Rows)
		if string(g) != string(w) {
			t.Errorf("command %d rows: got %s, want %s", i, g, w)
		}
		got[i].Rows, cmds[i].Rows = nil, nil
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
	// The older form still encodes behind cmdRows.
	if formattest.RowsSeedCommands()[2].Rows.ExprForm() {
		t.Fatal("the older UPDATE form counts as the expression form")
	}
}

// leafBatch is n Leaf-segment UPDATEs (max_id = max_id + step WHERE
// biz_tag = ?), the row-table commands of the batch hot path: in the
// row engine's expression form, as wire writes them, or in the form of
// builds before it (legacy).
func leafBatch(n int, legacy bool) []model.Command {
	c := formattest.RowsSeedCommands()[2]
	if !legacy {
		col := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
		c.Rows = &model.RowsCommand{Engine: true,
			Assigns: []model.RowAssign{
				{Col: "max_id", Expr: model.RowExpr{Op: model.EAdd, Args: []model.RowExpr{col("max_id"), col("step")}}},
				{Col: "update_time", Expr: model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValNow}}},
			},
			Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{col("biz_tag"),
				{Op: model.EVal, Val: &model.Value{Kind: model.ValString, Str: "leaf-segment-test"}}}}}
	}
	cmds := make([]model.Command, n)
	for i := range cmds {
		cmds[i] = c
	}
	return cmds
}

// rowsBenchCases are the batch benchmarks' cases: each form of the
// commands in each format of their row parts (JSON: version 3; wire:
// version 4).
var rowsBenchCases = []struct {
	name   string
	legacy bool
	f      Format
}{
	{"expr/json", false, FormatJSON},
	{"expr/wire", false, FormatWire},
	{"legacy/json", true, FormatJSON},
	{"legacy/wire", true, FormatWire},
}

func BenchmarkEncodeRowsBatch(b *testing.B) {
	for _, tc := range rowsBenchCases {
		b.Run(tc.name, func(b *testing.B) {
			cmds := leafBatch(256, tc.legacy)
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendBatch(buf[:0], cmds, tc.f)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkDecodeRowsBatch decodes a 256-command batch as the state
// machine does (DecodeBatchInto, reusing its commands).
func BenchmarkDecodeRowsBatch(b *testing.B) {
	for _, tc := range rowsBenchCases {
		b.Run(tc.name, func(b *testing.B) {
			data := AppendBatch(nil, leafBatch(256, tc.legacy), tc.f)
			var buf []model.Command
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var err error
				if buf, err = DecodeBatchInto(buf, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
