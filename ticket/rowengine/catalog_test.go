package rowengine

import (
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// A catalogue view's rows (utf8mb3_general_ci names, integer positions)
// filter and compute through the row engine's evaluator, as a row
// table's WHERE does: case and trailing spaces aside in the column's
// collation, NULL unknown, numbers exact.
func TestEvalCatalogRows(t *testing.T) {
	rd := &model.RowsDef{Collation: model.CollGeneralCI3, Cols: []model.RowCol{
		{Name: "TABLE_NAME", Kind: model.ColString, Len: 64},
		{Name: "ORDINAL_POSITION", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt, Unsigned: true}},
		{Name: "COLUMN_DEFAULT", Kind: model.ColString, Len: 64},
	}}
	rows := [][]model.Datum{
		{{S: "kv"}, {S: "1"}, {Null: true}},
		{{S: "Tickets64"}, {S: "2"}, {S: "''"}},
	}
	str := func(s string) model.RowExpr { return lit(model.Value{Kind: model.ValString, Str: s}) }
	var warns []model.Warning
	ev := NewEval(rd, time.Unix(0, 0), &warns)
	cases := []struct {
		name string
		x    *model.RowExpr
		want []bool
	}{
		{"= in the column's collation", op(model.EEq, colx("table_name"), str("KV ")), []bool{true, false}},
		{"LIKE", op(model.ELike, colx("TABLE_NAME"), str("t%")), []bool{false, true}},
		{"IS NULL", op(model.EIsNull, colx("COLUMN_DEFAULT")), []bool{true, false}},
		{"NULL comparison is no match", op(model.ENe, colx("COLUMN_DEFAULT"), str("x")), []bool{false, true}},
		{"unsigned against a negative", op(model.EGt, colx("ORDINAL_POSITION"), lit(model.Value{Kind: model.ValInt, Int: -1})), []bool{true, true}},
	}
	for _, c := range cases {
		if e := ev.Check(c.x); e != nil {
			t.Fatalf("%s: check: %v", c.name, e)
		}
		for i, r := range rows {
			got, e := ev.Match(c.x, r)
			if e != nil || got != c.want[i] {
				t.Errorf("%s, row %d: %v, %v; want %v", c.name, i, got, e, c.want[i])
			}
		}
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	if e := ev.Check(op(model.EEq, colx("nope"), str("x"))); e == nil || e.Code != 1054 {
		t.Errorf("unknown column: %v, want 1054", e)
	}
}

// The one row of a SELECT without FROM: literals only, and
// LAST_INSERT_ID(expr) reports the value it sets.
func TestEvalDual(t *testing.T) {
	var warns []model.Warning
	ev := NewEval(Dual, time.Unix(0, 0), &warns)
	sum := op(model.EAdd, lit(model.Value{Kind: model.ValInt, Int: 2}), lit(model.Value{Kind: model.ValUint, Uint: 3}))
	d, kind, dec, e := ev.Eval(sum, DualRow)
	if e != nil || d.S != "5" || kind != model.ColInt || dec {
		t.Errorf("2 + 3: %v %v %v %v", d, kind, dec, e)
	}
	if _, ok := ev.LastInsertID(); ok {
		t.Error("LAST_INSERT_ID set before any LAST_INSERT_ID(expr)")
	}
	set := op(model.ELastID, lit(model.Value{Kind: model.ValInt, Int: 42}))
	if d, _, _, e := ev.Eval(set, DualRow); e != nil || d.S != "42" {
		t.Errorf("LAST_INSERT_ID(42): %v %v", d, e)
	}
	if id, ok := ev.LastInsertID(); !ok || id != 42 {
		t.Errorf("LastInsertID: %d %v, want 42", id, ok)
	}
	if e := ev.Check(op(model.EEq, colx("a"), lit(model.Value{Kind: model.ValInt}))); e == nil || e.Code != 1054 {
		t.Errorf("a column without FROM: %v, want 1054", e)
	}
}
