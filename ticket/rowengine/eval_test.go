package rowengine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// The row engine's rules, each as MariaDB 10.11 answers it (the
// integration differential test checks them against the server).

func evalRow(t *testing.T, rd *model.RowsDef, row []model.Datum, x *model.RowExpr) (val, []model.Warning) {
	t.Helper()
	var w []model.Warning
	env := &evalEnv{rd: rd, row: row, warns: &w, lit: map[*model.RowExpr]val{}}
	v, e := env.eval(x)
	if e != nil {
		t.Fatalf("eval: %v", e)
	}
	return v, w
}

func lit(v model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: &v} }
func colx(name string) model.RowExpr  { return model.RowExpr{Op: model.ECol, Col: name} }
func op(o model.ExprOp, args ...model.RowExpr) *model.RowExpr {
	return &model.RowExpr{Op: o, Args: args}
}

func TestRowCompareRules(t *testing.T) {
	rd := &model.RowsDef{Cols: []model.RowCol{
		{Name: "v", Kind: model.ColInt, Int: model.IntType{Kind: model.Int}},
		{Name: "name", Kind: model.ColString, Len: 10, Type: "varchar(10)"},
		{Name: "at", Kind: model.ColDateTime},
		{Name: "u", Kind: model.ColInt, Int: model.IntType{Kind: model.Int, Unsigned: true}},
	}}
	row := []model.Datum{{S: "5"}, {S: "5abc"}, {S: "2024-01-01 00:00:00"}, {Null: true}}
	str := func(s string) model.Value { return model.Value{Kind: model.ValString, Str: s} }
	cases := []struct {
		name  string
		x     *model.RowExpr
		want  string // "1", "0" or "NULL"
		warns int
	}{
		{"int = decimal", op(model.EEq, colx("v"), lit(model.Value{Kind: model.ValDecimal, Str: "5.0"})), "1", 0},
		{"int = fraction", op(model.EEq, colx("v"), lit(model.Value{Kind: model.ValDecimal, Str: "5.5"})), "0", 0},
		{"int = '5abc'", op(model.EEq, colx("v"), lit(str("5abc"))), "1", 1},
		{"int = ' 5'", op(model.EEq, colx("v"), lit(str(" 5"))), "1", 0},
		{"int = '5 ' (a note)", op(model.EEq, colx("v"), lit(str("5 "))), "1", 1},
		{"string = number", op(model.EEq, colx("name"), lit(model.Value{Kind: model.ValInt, Int: 5})), "1", 1},
		{"string collation", op(model.EEq, colx("name"), lit(str("5ABC   "))), "1", 0},
		{"datetime = date string", op(model.EEq, colx("at"), lit(str("2024-01-01"))), "1", 0},
		{"datetime = number", op(model.EEq, colx("at"), lit(model.Value{Kind: model.ValInt, Int: 20240101})), "1", 0},
		{"datetime = no date (the zero date, as MariaDB: 0)", op(model.EEq, colx("at"), lit(str("abc"))), "0", 1},
		{"datetime > no date", op(model.EGt, colx("at"), lit(str("abc"))), "1", 1},
		{"NULL = NULL", op(model.EEq, colx("u"), lit(model.Value{Kind: model.ValNull})), "NULL", 0},
		{"NULL <=> NULL", op(model.ENullEq, colx("u"), lit(model.Value{Kind: model.ValNull})), "1", 0},
		{"unsigned NULL IS NULL", op(model.EIsNull, colx("u")), "1", 0},
		{"NOT IN with NULL", op(model.ENotIn, colx("v"), lit(model.Value{Kind: model.ValInt, Int: 1}), lit(model.Value{Kind: model.ValNull})), "NULL", 0},
		{"IN", op(model.EIn, colx("v"), lit(model.Value{Kind: model.ValInt, Int: 1}), lit(model.Value{Kind: model.ValInt, Int: 5})), "1", 0},
		{"BETWEEN", op(model.EBetween, colx("v"), lit(model.Value{Kind: model.ValInt, Int: -1}), lit(model.Value{Kind: model.ValInt, Int: 5})), "1", 0},
		{"NULL AND false", op(model.EAnd, colx("u"), lit(model.Value{Kind: model.ValInt})), "0", 0},
		{"NULL OR true", op(model.EOr, colx("u"), lit(model.Value{Kind: model.ValInt, Int: 1})), "1", 0},
		{"LIKE", op(model.ELike, colx("name"), lit(str("5A%"))), "1", 0},
		{"LIKE counts trailing spaces", op(model.ELike, colx("name"), lit(str("5abc "))), "0", 0},
	}
	for _, c := range cases {
		v, w := evalRow(t, rd, row, c.x)
		got := v.text()
		if v.k == vNull {
			got = "NULL"
		}
		if got != c.want || len(w) != c.warns {
			t.Errorf("%s: %s with %d warnings %v, want %s with %d", c.name, got, len(w), w, c.want, c.warns)
		}
	}
}

func TestRowArithmetic(t *testing.T) {
	rd := &model.RowsDef{Cols: []model.RowCol{
		{Name: "v", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt}},
		{Name: "u", Kind: model.ColInt, Int: model.IntType{Kind: model.Int, Unsigned: true}},
	}}
	row := []model.Datum{{S: "9223372036854775807"}, {S: "3"}}
	n := func(i int64) model.RowExpr { return lit(model.Value{Kind: model.ValInt, Int: i}) }
	var w []model.Warning
	env := &evalEnv{rd: rd, row: row, warns: &w, lit: map[*model.RowExpr]val{}}
	if _, e := env.eval(op(model.EAdd, colx("v"), n(1))); e == nil || e.Code != mysqlerr.CodeValueOutOfRange {
		t.Errorf("BIGINT overflow: %v, want 1690", e)
	}
	if _, e := env.eval(op(model.ESub, colx("u"), n(10))); e == nil || e.Code != mysqlerr.CodeValueOutOfRange {
		t.Errorf("unsigned below 0: %v, want 1690", e)
	}
	if v, e := env.eval(op(model.EMul, colx("u"), lit(model.Value{Kind: model.ValDecimal, Str: "1.5"}))); e != nil || v.text() != "4.5" {
		t.Errorf("3 * 1.5 = %s %v", v.text(), e)
	}
	now := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC)
	env.now = now
	v, e := env.eval(&model.RowExpr{Op: model.EInterval, Unit: "DAY", Args: []model.RowExpr{lit(model.Value{Kind: model.ValNow}), n(-1)}})
	if e != nil || v.text() != "2023-11-13 22:13:20" {
		t.Errorf("NOW() - INTERVAL 1 DAY = %s %v", v.text(), e)
	}
}

func TestRowStoreRules(t *testing.T) {
	tiny := &model.RowCol{Name: "ti", Kind: model.ColInt, Int: model.IntType{Kind: model.TinyInt}}
	vc := &model.RowCol{Name: "n", Kind: model.ColString, Len: 3, Type: "varchar(3)"}
	ch := &model.RowCol{Name: "c", Kind: model.ColString, Len: 5, Type: "char(5)"}
	date := &model.RowCol{Name: "d", Kind: model.ColDate}
	str := func(s string) val { return val{k: vStr, s: s} }
	dec := func(s string) val {
		v, _ := litVal(model.Value{Kind: model.ValDecimal, Str: s}, time.Time{})
		return v
	}
	cases := []struct {
		col    *model.RowCol
		v      val
		strict bool
		want   string
		code   uint16 // error (strict) or first warning's code
	}{
		{tiny, val{k: vInt, i: 300}, true, "", mysqlerr.CodeDataOutOfRange},
		{tiny, val{k: vInt, i: 300}, false, "127", mysqlerr.CodeDataOutOfRange},
		{tiny, val{k: vInt, i: -300}, false, "-128", mysqlerr.CodeDataOutOfRange},
		{tiny, dec("5.5"), true, "6", 0},
		{tiny, dec("-5.5"), true, "-6", 0},
		{tiny, str("5.5"), true, "6", 0},
		{tiny, str("5abc"), true, "", mysqlerr.CodeDataTruncated},
		{tiny, str("5abc"), false, "5", mysqlerr.CodeDataTruncated},
		{tiny, str(" 7 "), true, "7", mysqlerr.CodeDataTruncated}, // a note
		{tiny, str("abc"), true, "", mysqlerr.CodeIncorrectValue},
		{tiny, str(""), false, "0", mysqlerr.CodeIncorrectValue},
		{vc, str("abcd"), true, "", mysqlerr.CodeDataTooLong},
		{vc, str("abcd"), false, "abc", mysqlerr.CodeDataTruncated},
		{vc, str("abc   "), true, "abc", mysqlerr.CodeDataTruncated}, // a note
		{ch, str("ab   "), true, "ab", 0},
		{date, val{k: vInt, i: 20240101}, true, "2024-01-01", 0},
		{date, str("2024-03-05 10:11:12"), true, "2024-03-05", mysqlerr.CodeDataTruncated}, // a note
		{date, str("not a date"), true, "", mysqlerr.CodeTruncatedWrongValue},
		{date, str("0000-00-00"), true, "", mysqlerr.CodeNotSupported},
	}
	for _, c := range cases {
		var w []model.Warning
		sc := &storeCtx{strict: c.strict, db: "d", table: "t", warns: &w}
		d, e := sc.store(c.col, c.v, 1)
		var code uint16
		switch {
		case e != nil:
			code = e.Code
		case len(w) > 0:
			code = w[0].Code
		}
		if d.S != c.want || code != c.code {
			t.Errorf("%s <- %q (strict %v): %q code %d, want %q code %d", c.col.Name, c.v.text(), c.strict, d.S, code, c.want, c.code)
		}
	}
}

func TestRowIndexValue(t *testing.T) {
	// An index lookup binds only values the comparison matches exactly.
	s := &model.RowCol{Name: "s", Kind: model.ColString, Len: 8, Type: "varchar(8)"}
	i := &model.RowCol{Name: "i", Kind: model.ColInt, Int: model.IntType{Kind: model.Int}}
	for _, c := range []struct {
		col  *model.RowCol
		v    model.Value
		ok   bool
		want string
	}{
		{s, model.Value{Kind: model.ValString, Str: "Ab"}, true, "Ab"},
		{s, model.Value{Kind: model.ValInt, Int: 5}, false, ""}, // '5abc' = 5 too
		{i, model.Value{Kind: model.ValString, Str: "5"}, true, "5"},
		{i, model.Value{Kind: model.ValString, Str: "5abc"}, false, ""},
		{i, model.Value{Kind: model.ValDecimal, Str: "5.0"}, true, "5"},
		{i, model.Value{Kind: model.ValDecimal, Str: "5.5"}, false, ""},
		{i, model.Value{Kind: model.ValInt, Int: 1 << 40}, false, ""}, // out of the column's range
	} {
		d, ok := indexValue(c.col, c.v)
		if ok != c.ok || d.S != c.want {
			t.Errorf("indexValue(%s, %+v) = %q %v, want %q %v", c.col.Name, c.v, d.S, ok, c.want, c.ok)
		}
	}
}

func TestRowGroups(t *testing.T) {
	tb := &model.Table{Def: model.TableDef{DB: "d", Name: "w", Rows: &model.RowsDef{Cols: []model.RowCol{
		{Name: "host", Kind: model.ColString, Len: 8, Type: "varchar(8)"},
		{Name: "type", Kind: model.ColInt, Int: model.IntType{Kind: model.Int}},
	}}}}
	rows := [][]model.Datum{{{S: "h2"}, {S: "1"}}, {{S: "h1"}, {S: "2"}}, {{S: "H2"}, {S: "1"}}, {{S: "h1"}, {S: "1"}}}
	res, e := SelectRows(tb, rows, &Query{GroupBy: []string{"host"}, Aggs: []Agg{{Col: "host"}, {Fn: "COUNT"}, {Fn: "MAX", Col: "type"}}})
	if e != nil {
		t.Fatal(e)
	}
	var got []string
	for _, g := range res.Groups {
		got = append(got, g[0].Value.S+":"+g[1].Value.S+":"+g[2].Value.S)
	}
	// One group for 'h2' and 'H2' (the collation), sorted, shown as its
	// first row has it.
	if want := "h1:2:2 h2:2:1"; fmt.Sprint(strings.Join(got, " ")) != want {
		t.Errorf("groups %v, want %s", got, want)
	}
	res, e = SelectRows(tb, rows, &Query{Distinct: true, DistinctCols: []string{"type"}, OrderBy: []model.RowOrder{{Col: "type", Desc: true}}})
	if e != nil || len(res.Rows) != 2 || res.Rows[0][1].S != "2" || res.Rows[1][1].S != "1" {
		t.Errorf("DISTINCT type ORDER BY type DESC: %v %v", res.Rows, e)
	}
	if _, e := SelectRows(tb, rows, &Query{GroupBy: []string{"host"}, Aggs: []Agg{{Col: "type"}}}); e == nil || e.Code != mysqlerr.CodeNotSupported {
		t.Errorf("a column outside GROUP BY: %v, want 1235", e)
	}
}

// TestParseCanonicalTime: the fast path reads what time.Parse reads with
// the canonical layouts, and leaves everything else to them.
func TestParseCanonicalTime(t *testing.T) {
	for _, s := range []string{
		"2026-11-24", "2026-11-24 21:30:05", "2024-02-29", "2023-02-29", "2024-02-30", "0000-01-01",
		"9999-12-31 23:59:59", "2026-13-01", "2026-00-10", "2026-01-00", "2026-04-31", "2026-11-24 24:00:00",
		"2026-11-24 23:60:00", "2026-11-24 23:59:60", "2026-11-24T21:30:05", "2026/11/24", "2026-1-024",
		"20261124", "2026-11-24 21:30", "+026-11-24", "2026-11-2x", "2026-11-24 2:30:051",
	} {
		layout := dateTimeFormat
		if len(s) == len(dateFormat) {
			layout = dateFormat
		}
		want, werr := time.Parse(layout, s)
		got, ok := parseCanonicalTime(s)
		if ok && (werr != nil || !got.Equal(want)) {
			t.Errorf("%q: fast path %v, time.Parse %v %v", s, got, want, werr)
		}
		if !ok && werr == nil && (s[4] == '-' && len(s) >= 10) {
			t.Errorf("%q: fast path refused what time.Parse reads (%v)", s, want)
		}
		slow, sok := parseTime(s)
		if ok && (!sok || !slow.Equal(got)) {
			t.Errorf("%q: parseTime %v %v, fast path %v", s, slow, sok, got)
		}
	}
}

// BenchmarkParseTime: a DATE and a DATETIME as stored, read through
// parseTime (the canonical fast path) and through the layouts alone (what
// parseTime did before it: a DATE failed four layouts first).
func BenchmarkParseTime(b *testing.B) {
	layouts := func(s string) (time.Time, bool) {
		for _, f := range timeLayouts {
			if t, err := time.Parse(f, s); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	for _, s := range []string{"2026-11-24", "2026-11-24 21:30:05"} {
		kind := map[int]string{len(dateFormat): "date", len(dateTimeFormat): "datetime"}[len(s)]
		b.Run("parseTime/"+kind, func(b *testing.B) {
			for b.Loop() {
				if _, ok := parseTime(s); !ok {
					b.Fatal(s)
				}
			}
		})
		b.Run("layouts/"+kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := layouts(s); !ok {
					b.Fatal(s)
				}
			}
		})
	}
}
