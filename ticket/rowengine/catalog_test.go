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

// The one row of a SELECT without FROM: literals only, no column.
func TestEvalDual(t *testing.T) {
	var warns []model.Warning
	ev := NewEval(Dual, time.Unix(0, 0), &warns)
	sum := op(model.EAdd, lit(model.Value{Kind: model.ValInt, Int: 2}), lit(model.Value{Kind: model.ValUint, Uint: 3}))
	d, kind, dec, e := ev.Eval(sum, DualRow)
	if e != nil || d.S != "5" || kind != model.ColInt || dec {
		t.Errorf("2 + 3: %v %v %v %v", d, kind, dec, e)
	}
	if e := ev.Check(op(model.EEq, colx("a"), lit(model.Value{Kind: model.ValInt}))); e == nil || e.Code != 1054 {
		t.Errorf("a column without FROM: %v, want 1054", e)
	}
}

// The catalogue's functions (ECase, ECall) with MariaDB's answers, and
// the warnings of the conversions MariaDB warns about.
func TestEvalCatalogFunctions(t *testing.T) {
	i := func(n int64) model.RowExpr { return lit(model.Value{Kind: model.ValInt, Int: n}) }
	s := func(v string) model.RowExpr { return lit(model.Value{Kind: model.ValString, Str: v}) }
	null := lit(model.Value{Kind: model.ValNull})
	call := func(fn string, args ...model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.ECall, Unit: fn, Args: args}
	}
	cases := []struct {
		name  string
		x     *model.RowExpr
		want  string
		warns int
	}{
		{"CASE, first true", op(model.ECase, *op(model.EEq, i(1), i(2)), s("a"), *op(model.EEq, i(2), i(2)), s("b"), s("c")), "b", 0},
		{"CASE, ELSE", op(model.ECase, null, s("a"), s("c")), "c", 0},
		{"CASE, no ELSE", op(model.ECase, i(0), s("a")), "NULL", 0},
		{"CAST(' -3' AS SIGNED)", call(FnSigned, s(" -3")), "-3", 0},
		{"CAST(2.5 AS SIGNED)", call(FnSigned, lit(model.Value{Kind: model.ValDecimal, Str: "2.5"})), "3", 0},
		{"CAST('12abc' AS SIGNED)", call(FnSigned, s("12abc")), "12", 1},
		{"CAST(-1 AS UNSIGNED)", call(FnUnsigned, i(-1)), "18446744073709551615", 1},
		{"CAST(18446744073709551615 AS SIGNED)", call(FnSigned, lit(model.Value{Kind: model.ValUint, Uint: 1<<64 - 1})), "-1", 1},
		{"UPPER", call(FnUpper, s("bigint(20) unsigned")), "BIGINT(20) UNSIGNED", 0},
		{"SUBSTRING(s, -2)", call(FnSubstring, s("abcdef"), i(-2)), "ef", 0},
		{"SUBSTRING(s, 1, LOCATE('(', s) - 1)", call(FnSubstring, s("bigint(20)"), i(1), *op(model.ESub, *call(FnLocate, s("("), s("bigint(20)")), i(1))), "bigint", 0},
		{"SUBSTRING(s, '2')", call(FnSubstring, s("abc"), s("2")), "bc", 0},
		{"LOCATE from 3, case aside", call(FnLocate, s("B"), s("abcb"), i(3)), "4", 0},
		{"LEAST", call(FnLeast, i(5), i(2147483647)), "5", 0},
		{"GREATEST of strings, case aside", call(FnGreatest, s("a"), s("B")), "B", 0},
		{"GREATEST with NULL", call(FnGreatest, i(1), null), "NULL", 0},
		{"CONCAT", call(FnConcat, s("a"), i(1)), "a1", 0},
		{"CONCAT with NULL", call(FnConcat, s("a"), null), "NULL", 0},
	}
	for _, c := range cases {
		var warns []model.Warning
		ev := NewEval(Dual, time.Unix(0, 0), &warns)
		o, e := ev.Value(c.x, DualRow)
		got := o.S
		if o.Null {
			got = "NULL"
		}
		if e != nil || got != c.want || len(warns) != c.warns {
			t.Errorf("%s: %q, %v, warnings %v; want %q with %d", c.name, got, e, warns, c.want, c.warns)
		}
	}
}

// Narrow refuses what the catalogue's evaluation refused before it was
// the row engine's: arithmetic on anything but integers, and two literal
// strings compared under a connection collation other than general_ci.
func TestEvalNarrow(t *testing.T) {
	dec := lit(model.Value{Kind: model.ValDecimal, Str: "1.5"})
	one := lit(model.Value{Kind: model.ValInt, Int: 1})
	a, b := lit(model.Value{Kind: model.ValString, Str: "a"}), lit(model.Value{Kind: model.ValString, Str: "A"})
	three := lit(model.Value{Kind: model.ValString, Str: " 3"})
	run := func(conn string, x *model.RowExpr) (model.Datum, *model.Error) {
		var warns []model.Warning
		ev := NewEval(Dual, time.Unix(0, 0), &warns)
		ev.Narrow(conn)
		d, _, _, e := ev.Eval(x, DualRow)
		return d, e
	}
	if _, e := run("", op(model.EAdd, dec, one)); e == nil || e.Code != 1235 {
		t.Errorf("1.5 + 1 under Narrow: %v, want 1235", e)
	}
	if d, e := run("", op(model.EAdd, three, one)); e != nil || d.S != "4" {
		t.Errorf("' 3' + 1 under Narrow: %v %v, want 4", d, e)
	}
	if d, e := run("", op(model.EEq, a, b)); e != nil || d.S != "1" {
		t.Errorf("'a' = 'A' in general_ci: %v %v, want 1", d, e)
	}
	if _, e := run("utf8mb4_bin", op(model.EEq, a, b)); e == nil || e.Code != 1235 {
		t.Errorf("'a' = 'A' under utf8mb4_bin: %v, want 1235", e)
	}
	if _, e := run("utf8mb4_bin", op(model.ELike, a, b)); e == nil || e.Code != 1235 {
		t.Errorf("'a' LIKE 'A' under utf8mb4_bin: %v, want 1235", e)
	}
	var warns []model.Warning
	ev := NewEval(Dual, time.Unix(0, 0), &warns)
	if d, _, dec, e := ev.Eval(op(model.EAdd, lit(model.Value{Kind: model.ValDecimal, Str: "1.5"}), one), DualRow); e != nil || d.S != "2.5" || !dec {
		t.Errorf("1.5 + 1 without Narrow: %v %v %v, want 2.5", d, dec, e)
	}
}

// CompareRows orders as a row table's ORDER BY: NULL first, integers as
// numbers (negative ones too), strings in the column's collation.
func TestCompareRows(t *testing.T) {
	rd := &model.RowsDef{Collation: model.CollGeneralCI3, Cols: []model.RowCol{
		{Name: "n", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt}},
		{Name: "s", Kind: model.ColString},
	}}
	r := func(n, s string) []model.Datum { return []model.Datum{{S: n, Null: n == ""}, {S: s}} }
	cases := []struct {
		a, b []model.Datum
		col  int
		want int
	}{
		{r("-2", ""), r("-1", ""), 0, -1},
		{r("10", ""), r("9", ""), 0, 1},
		{r("", ""), r("-5", ""), 0, -1},
		{r("0", "Abc "), r("0", "abc"), 1, 0},
		{r("0", "b"), r("0", "A"), 1, 1},
	}
	for _, c := range cases {
		if got := CompareRows(rd, c.col, c.a, c.b); got != c.want {
			t.Errorf("CompareRows(%v, %v) on %d: %d, want %d", c.a, c.b, c.col, got, c.want)
		}
	}
}

// The catalogue's functions evaluate over in-memory rows only: a row
// table's command (whose evaluator is not NewEval's) refuses them, as a
// replica of an older build would.
func TestCatalogFunctionsNotInCommands(t *testing.T) {
	var warns []model.Warning
	env := &evalEnv{rd: Dual, warns: &warns}
	x := &model.RowExpr{Op: model.ECall, Unit: FnUpper, Args: []model.RowExpr{lit(model.Value{Kind: model.ValString, Str: "a"})}}
	if _, e := env.eval(x); e == nil || e.Code != 1235 {
		t.Errorf("ECall in a command's evaluator: %v, want 1235", e)
	}
	if _, e := env.eval(op(model.ECase, lit(model.Value{Kind: model.ValInt, Int: 1}), lit(model.Value{Kind: model.ValInt, Int: 2}))); e == nil || e.Code != 1235 {
		t.Errorf("ECase in a command's evaluator: %v, want 1235", e)
	}
}
