package ticket

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// TestRowsCollation: the row engine's WHERE, range access, ORDER BY,
// GROUP BY, DISTINCT, MIN/MAX, LIKE and unique keys all compare by the
// table's collation: MariaDB's utf8mb4_general_ci for a table of this
// build, utf8mb4_bin for one that names it, the older lower-case folding for a table without a collation
// (as builds before command version 8 made them), which keeps its old
// answers.
func TestRowsCollation(t *testing.T) {
	spec := func() *model.TableSpec {
		return &model.TableSpec{DB: "ids", Name: "c", Columns: []model.ColumnSpec{
			{Name: "id", Type: "int", NotNull: true}, {Name: "name", Type: "varchar", Width: 10}},
			Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "name", Columns: []string{"name"}}, {Name: "u", Unique: true, Columns: []string{"name", "id"}}}}
	}
	names := []string{"e", "é", "E", "ß", "s", "_x", "Zed", "a\t", "a", "😀", "🚀"}
	col := func(c string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: c} }
	lit := func(s string) model.RowExpr { v := str(s); return model.RowExpr{Op: model.EVal, Val: &v} }
	bin := func(op model.ExprOp, a, b model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: op, Args: []model.RowExpr{a, b}}
	}
	queries := []struct {
		name string
		q    rowengine.Query
	}{
		{"= 'e'", rowengine.Query{Filter: bin(model.EEq, col("name"), lit("e"))}},
		{"= 's'", rowengine.Query{Filter: bin(model.EEq, col("name"), lit("s"))}},
		{"= '🎉'", rowengine.Query{Filter: bin(model.EEq, col("name"), lit("🎉"))}},
		{"< '_'", rowengine.Query{Filter: bin(model.ELt, col("name"), lit("_"))}},
		{"> 'z'", rowengine.Query{Filter: bin(model.EGt, col("name"), lit("z"))}},
		{"LIKE 'E'", rowengine.Query{Filter: bin(model.ELike, col("name"), lit("E"))}},
		{"ORDER BY name", rowengine.Query{OrderBy: []model.RowOrder{{Col: "name"}, {Col: "id"}}}},
		{"GROUP BY name", rowengine.Query{Aggs: []rowengine.Agg{{Fn: "COUNT"}, {Fn: "MIN", Col: "id"}}, GroupBy: []string{"name"}}},
		{"MIN, MAX", rowengine.Query{Aggs: []rowengine.Agg{{Fn: "MIN", Col: "name"}, {Fn: "MAX", Col: "name"}}, Filter: bin(model.ELt, col("name"), lit("b"))}},
		{"DISTINCT", rowengine.Query{Distinct: true, DistinctCols: []string{"name"}, OrderBy: []model.RowOrder{{Col: "id"}}}},
	}
	// Rows without ORDER BY come in the name index's order (a range).
	want := map[model.Collation][]string{
		model.CollGeneralCI: {
			"1 2 3", "4 5", "10 11", "8 9 1 2 3 4 5 7", "7 6 10 11", "1 2 3",
			"8 9 1 2 3 4 5 7 6 10 11",
			"[1 8] [1 9] [3 1] [2 4] [1 7] [1 6] [2 10]", "[a\t a]",
			"1 4 6 7 8 9 10",
		},
		// By code point: case and accents count, every emoji is itself.
		model.CollBin: {
			"1", "5", "", "3 7", "4 2 10 11", "3",
			"3 7 6 8 9 1 5 4 2 10 11",
			"[1 3] [1 7] [1 6] [1 8] [1 9] [1 1] [1 5] [1 4] [1 2] [1 10] [1 11]", "[E a]",
			"1 2 3 4 5 6 7 8 9 10 11",
		},
		model.CollLegacy: {
			"1 3", "5", "", "", "7 4 2 10 11", "1 3",
			"6 9 8 1 3 5 7 4 2 10 11",
			"[1 6] [1 9] [1 8] [2 1] [1 5] [1 7] [1 4] [1 2] [1 10] [1 11]", "[_x a\t]",
			"1 2 4 5 6 7 8 9 10 11",
		},
	}
	for _, coll := range []model.Collation{model.CollGeneralCI, model.CollBin, model.CollLegacy} {
		t.Run(coll.String(), func(t *testing.T) {
			e := &env{t: t, s: NewMemStore()}
			e.ok(model.Command{Op: model.OpCreateDB, DB: "ids"})
			d, err := NewTableDef(spec())
			if err != nil {
				t.Fatal(err)
			}
			if d.Rows.Collation != model.CollGeneralCI {
				t.Fatalf("a new row table has collation %v", d.Rows.Collation)
			}
			d.Rows.Collation = coll
			e.ok(model.Command{Op: model.OpCreateTable, Def: d})
			for i, n := range names {
				e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "c", Columns: []string{"id", "name"},
					Values: [][]model.Value{{num(int64(i + 1)), str(n)}}, Rows: &model.RowsCommand{Engine: true}})
			}
			tb, err := e.s.Table("ids", "c")
			if err != nil {
				t.Fatal(err)
			}
			rows, err := e.s.Rows("ids", "c")
			if err != nil {
				t.Fatal(err)
			}
			for i, qc := range queries {
				res, qe, err := rowengine.SelectFrom(tb, rows, nil, &qc.q)
				if err != nil || qe != nil {
					t.Fatalf("%s: %v %v", qc.name, qe, err)
				}
				var out []string
				for _, r := range res.Rows {
					out = append(out, r[0].S)
				}
				for _, g := range res.Groups {
					var vs []string
					for _, a := range g {
						vs = append(vs, a.Value.S)
					}
					out = append(out, fmt.Sprint(vs))
				}
				if got := strings.Join(out, " "); got != want[coll][i] {
					t.Errorf("%s: %q, want %q", qc.name, got, want[coll][i])
				}
			}
			// A unique key: 'E' and '😀' after 'é' and '🚀'.
			k, err := NewTableDef(&model.TableSpec{DB: "ids", Name: "k", Columns: []model.ColumnSpec{{Name: "name", Type: "varchar", Width: 10, NotNull: true}},
				Keys: []model.KeySpec{{Primary: true, Columns: []string{"name"}}}})
			if err != nil {
				t.Fatal(err)
			}
			k.Rows.Collation = coll
			e.ok(model.Command{Op: model.OpCreateTable, Def: k})
			var codes []int
			for _, n := range []string{"é", "🚀", "E", "😀"} {
				r := e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "k", Values: [][]model.Value{{str(n)}}, Rows: &model.RowsCommand{Engine: true}})
				code := 0
				if r.Err != nil {
					code = int(r.Err.Code)
				}
				codes = append(codes, code)
			}
			wantCodes := map[model.Collation]string{model.CollGeneralCI: "[0 0 1062 1062]", model.CollBin: "[0 0 0 0]", model.CollLegacy: "[0 0 0 0]"}[coll]
			if fmt.Sprint(codes) != wantCodes {
				t.Errorf("unique key: codes %v, want %s", codes, wantCodes)
			}
		})
	}
}

// TestColumnCollations: CREATE TABLE's COLLATE, CHARACTER SET and BINARY,
// of a column and of the table, resolve as MariaDB 10.11 resolves them
// (its SHOW CREATE TABLE of each is the want), and what ticketd does not
// compare by is refused naming it.
func TestColumnCollations(t *testing.T) {
	vc := func(name string, mod func(*model.ColumnSpec)) model.ColumnSpec {
		c := model.ColumnSpec{Name: name, Type: "varchar", Width: 5}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	for _, tc := range []struct {
		name               string
		cols               []model.ColumnSpec
		charsets, collates []string
		want               string // SHOW CREATE TABLE's column lines and table options, or the error
	}{
		{"column COLLATE", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Collate = "utf8mb4_bin" }), vc("a", nil)}, nil, nil,
			"`s` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL|`a` varchar(5) DEFAULT NULL|DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"},
		{"column CHARACTER SET and COLLATE, BINARY", []model.ColumnSpec{
			vc("b", func(c *model.ColumnSpec) { c.Charset, c.Collate = "utf8", "utf8_bin" }),
			vc("c", func(c *model.ColumnSpec) { c.Binary = true }),
			vc("d", func(c *model.ColumnSpec) { c.Collate = "utf8mb4_general_ci" }),
			vc("e", func(c *model.ColumnSpec) { c.Charset = "utf8mb4" }),
		}, nil, nil,
			"`b` varchar(5) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL|`c` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL|`d` varchar(5) DEFAULT NULL|`e` varchar(5) DEFAULT NULL|DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"},
		{"table COLLATE", []model.ColumnSpec{vc("s", nil), vc("g", func(c *model.ColumnSpec) { c.Collate = "utf8mb4_general_ci" }),
			vc("a", func(c *model.ColumnSpec) { c.Charset = "utf8mb4" }), vc("b", func(c *model.ColumnSpec) { c.Binary = true })}, nil, []string{"utf8mb4_bin"},
			"`s` varchar(5) DEFAULT NULL|`g` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci DEFAULT NULL|`a` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci DEFAULT NULL|`b` varchar(5) DEFAULT NULL|DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"},
		{"table CHARSET=utf8", []model.ColumnSpec{vc("s", nil), vc("b", func(c *model.ColumnSpec) { c.Collate = "utf8mb4_bin" }),
			vc("c", func(c *model.ColumnSpec) { c.Binary = true })}, []string{"utf8"}, nil,
			"`s` varchar(5) DEFAULT NULL|`b` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL|`c` varchar(5) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin DEFAULT NULL|DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci"},
		{"table CHARSET twice, the same", []model.ColumnSpec{vc("s", nil)}, []string{"utf8", "utf8mb3"}, []string{"utf8mb3_bin"},
			"`s` varchar(5) DEFAULT NULL|DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin"},
		{"latin1 table", []model.ColumnSpec{vc("s", nil)}, []string{"latin1"}, nil, "1235 CHARACTER SET latin1"},
		{"latin1 column", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Charset, c.Collate = "latin1", "latin1_bin" })}, nil, nil, "1235 CHARACTER SET latin1"},
		{"unicode_ci", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Collate = "utf8mb4_unicode_ci" })}, nil, nil, "1235 COLLATE utf8mb4_unicode_ci"},
		{"COLLATE binary", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Collate = "binary" })}, nil, nil, "1235 COLLATE binary"},
		{"table COLLATE of latin1", []model.ColumnSpec{vc("s", nil)}, nil, []string{"latin1_swedish_ci"}, "1235 COLLATE latin1_swedish_ci"},
		{"COLLATE of another charset", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Charset, c.Collate = "utf8", "utf8mb4_bin" })}, nil, nil,
			"1253 COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'utf8mb3'"},
		{"table COLLATE of another charset", []model.ColumnSpec{vc("s", nil)}, []string{"utf8mb4"}, []string{"utf8_bin"},
			"1253 COLLATION 'utf8mb3_bin' is not valid for CHARACTER SET 'utf8mb4'"},
		{"conflicting CHARSETs", []model.ColumnSpec{vc("s", nil)}, []string{"utf8", "latin1"}, nil,
			"1302 Conflicting declarations: 'CHARACTER SET utf8mb3' and 'CHARACTER SET latin1'"},
		{"conflicting COLLATEs", []model.ColumnSpec{vc("s", nil)}, nil, []string{"utf8mb4_bin", "utf8mb4_general_ci"},
			"1302 Conflicting declarations: 'COLLATE utf8mb4_bin' and 'COLLATE utf8mb4_general_ci'"},
		{"BINARY and COLLATE", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Binary, c.Collate = true, "utf8mb4_general_ci" })}, nil, nil,
			"1302 Conflicting declarations: 'BINARY' and 'COLLATE utf8mb4_general_ci'"},
		{"COLLATE on an INT column", []model.ColumnSpec{{Name: "n", Type: "int", Collate: "latin1_bin"}, vc("s", nil)}, nil, nil,
			"`n` int(11) DEFAULT NULL|`s` varchar(5) DEFAULT NULL|DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"},
		{"utf8mb3 DEFAULT beyond the BMP", []model.ColumnSpec{vc("s", func(c *model.ColumnSpec) { c.Charset, c.HasDefault, c.Default = "utf8", true, str("😀") })}, nil, nil,
			"1067 Invalid default value for 's'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewTableDef(&model.TableSpec{DB: "d", Name: "t", Columns: tc.cols, Charsets: tc.charsets, Collates: tc.collates})
			var got string
			if err != nil {
				e, _ := err.(*model.Error)
				if e == nil {
					t.Fatal(err)
				}
				got = fmt.Sprintf("%d %s", e.Code, e.Message)
				if e.Code == model.CodeNotSupported {
					got = fmt.Sprintf("%d %s", e.Code, strings.TrimSuffix(strings.TrimPrefix(e.Message, "This version of ticketd doesn't yet support '"), "'"))
				}
			} else {
				tb := &model.Table{Def: *d}
				lines := strings.Split(CreateStatement(tb), "\n")
				var parts []string
				for _, l := range lines[1 : len(lines)-1] {
					parts = append(parts, strings.TrimSuffix(strings.TrimSpace(l), ","))
				}
				last := lines[len(lines)-1]
				parts = append(parts, last[strings.Index(last, "DEFAULT CHARSET"):])
				got = strings.Join(parts, "|")
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestColumnCollationAnswers: comparisons, keys, LIKE and ORDER BY by
// each column's collation; two columns compare by the _bin one of one
// character set and by utf8mb4's of utf8mb3 and utf8mb4; a utf8mb3
// column refuses characters beyond the BMP (1366; '?' with a warning
// outside strict mode), and a literal with one against it is MariaDB's
// "Illegal mix of collations".
func TestColumnCollationAnswers(t *testing.T) {
	e := &env{t: t, s: NewMemStore()}
	e.ok(model.Command{Op: model.OpCreateDB, DB: "d"})
	d, err := NewTableDef(&model.TableSpec{DB: "d", Name: "m", Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true, PrimaryKey: true},
		{Name: "a", Type: "varchar", Width: 5, Charset: "utf8"},
		{Name: "b", Type: "varchar", Width: 5, Collate: "utf8mb4_bin", Unique: true},
		{Name: "c", Type: "varchar", Width: 5},
		{Name: "dd", Type: "varchar", Width: 5, Collate: "utf8_bin"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.ok(model.Command{Op: model.OpCreateTable, Def: d})
	ins := func(vals ...model.Value) model.Result {
		return e.do(model.Command{Op: model.OpInsert, DB: "d", Table: "m", Values: [][]model.Value{vals}, Rows: &model.RowsCommand{Engine: true}})
	}
	for _, r := range [][]model.Value{
		{num(1), str("x"), str("x"), str("x"), str("x")},
		{num(3), str("q"), str("y"), str("Y"), str("Q")},
		{num(5), str("K"), str("k"), str("K"), str("k")},
	} {
		if res := ins(r...); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if res := ins(num(6), str("z"), str("X"), str("z"), str("z")); res.Err != nil {
		t.Fatalf("'X' beside 'x' in a utf8mb4_bin unique key: %v", res.Err)
	}
	if res := ins(num(7), str("z"), str("X "), str("z"), str("z")); res.Err == nil || res.Err.Code != 1062 {
		t.Fatalf("'X ' beside 'X' (PAD SPACE): %+v", res)
	}
	res := ins(num(8), str("a😀b"), str("z"), str("z"), str("z"))
	if res.Err == nil || res.Err.Code != 1366 || res.Err.Message != "Incorrect string value: '\\xF0\\x9F\\x98\\x80b' for column `d`.`m`.`a` at row 1" {
		t.Fatalf("an emoji into utf8mb3: %+v", res.Err)
	}
	res = e.do(model.Command{Op: model.OpInsert, DB: "d", Table: "m", Ignore: true, Values: [][]model.Value{{num(8), str("😀😀😀"), str("z"), str("z"), str("z")}}, Rows: &model.RowsCommand{Engine: true}})
	if res.Err != nil || len(res.Warnings) != 1 || res.Warnings[0].Message != "Incorrect string value: '\\xF0\\x9F\\x98\\x80\\xF0\\x9F...' for column `d`.`m`.`a` at row 1" {
		t.Fatalf("INSERT IGNORE of emoji into utf8mb3: %+v", res)
	}
	tb, err := e.s.Table("d", "m")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.s.Rows("d", "m")
	if err != nil {
		t.Fatal(err)
	}
	col := func(c string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: c} }
	lit := func(s string) model.RowExpr { v := str(s); return model.RowExpr{Op: model.EVal, Val: &v} }
	op := func(o model.ExprOp, args ...model.RowExpr) *model.RowExpr { return &model.RowExpr{Op: o, Args: args} }
	for _, tc := range []struct {
		name   string
		filter *model.RowExpr
		want   string
	}{
		{"b = 'X' (utf8mb4_bin)", op(model.EEq, col("b"), lit("X")), "6"},
		{"c = 'X' (general_ci)", op(model.EEq, col("c"), lit("X")), "1"},
		{"b = c: utf8mb4_bin", op(model.EEq, col("b"), col("c")), "1 8"},
		{"dd = c: utf8mb4_general_ci (the superset's)", op(model.EEq, col("dd"), col("c")), "1 5 6 8"},
		{"a = b: utf8mb4_bin", op(model.EEq, col("a"), col("b")), "1"},
		{"a = dd: utf8mb3_bin", op(model.EEq, col("a"), col("dd")), "1 6"},
		{"'X' IN (c, b): utf8mb4_bin", op(model.EIn, lit("X"), col("c"), col("b")), "6"},
		{"c BETWEEN 'x' AND b: utf8mb4_bin", op(model.EBetween, col("c"), lit("x"), col("b")), "1 8"},
		{"b LIKE 'K'", op(model.ELike, col("b"), lit("K")), ""},
		{"c LIKE 'k'", op(model.ELike, col("c"), lit("k")), "5"},
		{"a = '😀'", op(model.EEq, col("a"), lit("😀")), "1267 Illegal mix of collations (utf8mb3_general_ci,IMPLICIT) and (utf8mb4_general_ci,COERCIBLE) for operation '='"},
		{"dd LIKE '😀%'", op(model.ELike, col("dd"), lit("😀%")), "1267 Illegal mix of collations (utf8mb3_bin,IMPLICIT) and (utf8mb4_general_ci,COERCIBLE) for operation 'like'"},
		{"a IN ('😀', 'x')", op(model.EIn, col("a"), lit("😀"), lit("x")), "1270 Illegal mix of collations (utf8mb3_general_ci,IMPLICIT), (utf8mb4_general_ci,COERCIBLE), (utf8mb4_general_ci,COERCIBLE) for operation 'in'"},
		{"b = '😀' (utf8mb4)", op(model.EEq, col("b"), lit("😀")), ""},
		{"a IN (5, '😀')", op(model.EIn, col("a"), model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValInt, Int: 5}}, lit("😀")),
			"1270 Illegal mix of collations (utf8mb3_general_ci,IMPLICIT), (latin1_swedish_ci,NUMERIC), (utf8mb4_general_ci,COERCIBLE) for operation 'in'"},
		{"a IN (NULL, '😀')", op(model.EIn, col("a"), model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValNull}}, lit("😀")),
			"1270 Illegal mix of collations (utf8mb3_general_ci,IMPLICIT), (binary,IGNORABLE), (utf8mb4_general_ci,COERCIBLE) for operation 'in'"},
		{"a IN ('😀', 'x', 'y')", op(model.EIn, col("a"), lit("😀"), lit("x"), lit("y")), "1271 Illegal mix of collations for operation 'in'"},
	} {
		q := &rowengine.Query{Filter: tc.filter, OrderBy: []model.RowOrder{{Col: "id"}}}
		r, qe, err := rowengine.SelectFrom(tb, rows, nil, q)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if qe != nil {
			got = fmt.Sprintf("%d %s", qe.Code, qe.Message)
		} else {
			got = firstColumn(r)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	r, qe, err := rowengine.SelectFrom(tb, rows, nil, &rowengine.Query{OrderBy: []model.RowOrder{{Col: "b"}, {Col: "id"}}})
	if err != nil || qe != nil {
		t.Fatal(qe, err)
	}
	if got := firstColumn(r); got != "6 5 1 3 8" {
		t.Errorf("ORDER BY b (utf8mb4_bin): %s", got)
	}
}

// TestBinStubIsRowTable: Flickr's shape with a stub of a _bin collation
// is a row table (a ticket table's stubs fold case); with utf8mb4 or
// utf8 and their default collation it stays a ticket table.
func TestBinStubIsRowTable(t *testing.T) {
	for _, tc := range []struct {
		stub     model.ColumnSpec
		charsets []string
		rows     bool
	}{
		{model.ColumnSpec{Name: "stub", Type: "char", Width: 1, NotNull: true, Collate: "utf8mb4_bin"}, nil, true},
		{model.ColumnSpec{Name: "stub", Type: "char", Width: 1, NotNull: true, Binary: true}, nil, true},
		{model.ColumnSpec{Name: "stub", Type: "char", Width: 1, NotNull: true}, []string{"utf8"}, false},
		{model.ColumnSpec{Name: "stub", Type: "char", Width: 1, NotNull: true}, []string{"utf8mb4"}, false},
	} {
		d, err := NewTableDef(&model.TableSpec{DB: "d", Name: "Tickets64", Charsets: tc.charsets, Columns: []model.ColumnSpec{
			{Name: "id", Type: "bigint", Unsigned: true, NotNull: true, AutoInc: true, PrimaryKey: true}, tc.stub},
			Keys: []model.KeySpec{{Name: "stub", Unique: true, Columns: []string{"stub"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if (d.Rows != nil) != tc.rows {
			t.Errorf("%+v %v: row table %v, want %v", tc.stub, tc.charsets, d.Rows != nil, tc.rows)
		}
	}
}

// TestBetweenOtherCollation: c BETWEEN 'x' AND b, with b of utf8mb4_bin,
// compares in utf8mb4_bin; c's general_ci index must not bound the scan
// by 'x' ('é' is below 'x' in general_ci, above it by code point).
func TestBetweenOtherCollation(t *testing.T) {
	e := &env{t: t, s: NewMemStore()}
	e.ok(model.Command{Op: model.OpCreateDB, DB: "d"})
	d, err := NewTableDef(&model.TableSpec{DB: "d", Name: "m", Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true, PrimaryKey: true},
		{Name: "c", Type: "varchar", Width: 5},
		{Name: "b", Type: "varchar", Width: 5, Collate: "utf8mb4_bin"},
	}, Keys: []model.KeySpec{{Name: "c", Columns: []string{"c"}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.ok(model.Command{Op: model.OpCreateTable, Def: d})
	e.ok(model.Command{Op: model.OpInsert, DB: "d", Table: "m", Values: [][]model.Value{{num(1), str("é"), str("ê")}, {num(2), str("y"), str("z")}, {num(3), str("a"), str("z")}}, Rows: &model.RowsCommand{Engine: true}})
	tb, _ := e.s.Table("d", "m")
	rows, _ := e.s.Rows("d", "m")
	x := model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValString, Str: "x"}}
	q := &rowengine.Query{Filter: &model.RowExpr{Op: model.EBetween, Args: []model.RowExpr{{Op: model.ECol, Col: "c"}, x, {Op: model.ECol, Col: "b"}}}, OrderBy: []model.RowOrder{{Col: "id"}}}
	r, qe, err := rowengine.SelectFrom(tb, rows, nil, q)
	if err != nil || qe != nil {
		t.Fatal(qe, err)
	}
	if got := firstColumn(r); got != "1 2" {
		t.Errorf("c BETWEEN 'x' AND b: %q, want \"1 2\"", got)
	}
}

// TestCheckDatabaseCollation: a database's CHARACTER SET and COLLATE are
// taken when they are utf8mb4_general_ci, the default of every database;
// any other is refused (its tables would not have it), conflicts are
// MariaDB's errors.
func TestCheckDatabaseCollation(t *testing.T) {
	for _, tc := range []struct {
		charsets, collates []string
		code               uint16
	}{
		{nil, nil, 0},
		{[]string{"utf8mb4"}, nil, 0},
		{[]string{"utf8mb4"}, []string{"utf8mb4_general_ci"}, 0},
		{nil, []string{"UTF8MB4_GENERAL_CI"}, 0},
		{[]string{"utf8"}, nil, model.CodeNotSupported},
		{[]string{"latin1"}, nil, model.CodeNotSupported},
		{nil, []string{"utf8mb4_bin"}, model.CodeNotSupported},
		{nil, []string{"utf8mb4_unicode_ci"}, model.CodeNotSupported},
		{[]string{"latin1"}, []string{"binary"}, model.CodeNotSupported},
		{[]string{"utf8mb4"}, []string{"utf8_bin"}, 1253},
		{[]string{"utf8mb4", "utf8"}, nil, 1302},
	} {
		err := CheckDatabaseCollation(tc.charsets, tc.collates)
		var code uint16
		if e, ok := err.(*model.Error); ok {
			code = e.Code
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%v %v: %v, want code %d", tc.charsets, tc.collates, err, tc.code)
		}
	}
}

// TestRowSize: MariaDB's column and row length limits, by character set
// (each case measured on MariaDB 10.11).
func TestRowSize(t *testing.T) {
	vc := func(name, typ string, width int, notNull bool, cs string) model.ColumnSpec {
		return model.ColumnSpec{Name: name, Type: typ, Width: width, NotNull: notNull, Charset: cs}
	}
	for _, tc := range []struct {
		cols      []model.ColumnSpec
		notStrict bool
		code      uint16
	}{
		{[]model.ColumnSpec{vc("a", "varchar", 16383, false, "")}, false, 0},
		{[]model.ColumnSpec{vc("a", "varchar", 16384, false, ""), vc("b", "int", 0, false, "")}, false, 1074},
		{[]model.ColumnSpec{vc("a", "varchar", 16384, false, ""), vc("b", "int", 0, false, "")}, true, model.CodeNotSupported},
		{[]model.ColumnSpec{vc("a", "varchar", 21844, true, "utf8")}, false, 0},
		{[]model.ColumnSpec{vc("a", "varchar", 21845, true, "utf8")}, false, 1074},
		{[]model.ColumnSpec{vc("a", "varchar", 21844, true, "utf8"), vc("b", "int", 0, true, "")}, false, 1118},
		{[]model.ColumnSpec{vc("a", "char", 256, false, ""), vc("b", "int", 0, false, "")}, true, 1074},
		{[]model.ColumnSpec{vc("a", "varchar", 16383, false, ""), vc("b", "tinyint", 0, true, "")}, false, 1118},
		{[]model.ColumnSpec{vc("a", "varchar", 16383, true, ""), vc("b", "tinyint", 0, true, "")}, false, 0},
		{[]model.ColumnSpec{vc("a", "varchar", 16382, true, ""), vc("b", "datetime", 0, true, "")}, false, 0},
		{[]model.ColumnSpec{vc("a", "varchar", 16382, true, ""), vc("b", "timestamp", 0, true, "")}, false, 0},
		{[]model.ColumnSpec{vc("a", "varchar", 16383, true, ""), vc("b", "date", 0, true, "")}, false, 1118},
		{[]model.ColumnSpec{vc("a", "char", 255, true, ""), vc("b", "varchar", 16128, true, "")}, false, 0},
		{[]model.ColumnSpec{vc("a", "char", 255, true, ""), vc("b", "varchar", 16129, true, "")}, false, 1118},
	} {
		_, err := NewTableDef(&model.TableSpec{DB: "d", Name: "t", Columns: tc.cols, NotStrict: tc.notStrict})
		var code uint16
		if e, ok := err.(*model.Error); ok {
			code = e.Code
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%+v (not strict %v): %v, want code %d", tc.cols, tc.notStrict, err, tc.code)
		}
	}
}

// firstColumn is a result's first column, row by row, space-separated.
func firstColumn(r *rowengine.QueryResult) string {
	var ids []string
	for _, row := range r.Rows {
		ids = append(ids, row[0].S)
	}
	return strings.Join(ids, " ")
}
