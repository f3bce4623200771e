package ticket

import (
	"fmt"
	"strings"
	"testing"
)

// TestRowsCollation: the row engine's WHERE, range access, ORDER BY,
// GROUP BY, DISTINCT, MIN/MAX, LIKE and unique keys all compare by the
// table's collation: MariaDB's utf8mb4_general_ci for a table of this
// build, the older lower-case folding for a table without a collation
// (as builds before command version 8 made them), which keeps its old
// answers.
func TestRowsCollation(t *testing.T) {
	spec := func() *TableSpec {
		return &TableSpec{DB: "ids", Name: "c", Columns: []ColumnSpec{
			{Name: "id", Type: "int", NotNull: true}, {Name: "name", Type: "varchar", Width: 10}},
			Keys: []KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "name", Columns: []string{"name"}}, {Name: "u", Unique: true, Columns: []string{"name", "id"}}}}
	}
	names := []string{"e", "é", "E", "ß", "s", "_x", "Zed", "a\t", "a", "😀", "🚀"}
	col := func(c string) RowExpr { return RowExpr{Op: ECol, Col: c} }
	lit := func(s string) RowExpr { v := str(s); return RowExpr{Op: EVal, Val: &v} }
	bin := func(op ExprOp, a, b RowExpr) *RowExpr { return &RowExpr{Op: op, Args: []RowExpr{a, b}} }
	queries := []struct {
		name string
		q    Query
	}{
		{"= 'e'", Query{Filter: bin(EEq, col("name"), lit("e"))}},
		{"= 's'", Query{Filter: bin(EEq, col("name"), lit("s"))}},
		{"= '🎉'", Query{Filter: bin(EEq, col("name"), lit("🎉"))}},
		{"< '_'", Query{Filter: bin(ELt, col("name"), lit("_"))}},
		{"> 'z'", Query{Filter: bin(EGt, col("name"), lit("z"))}},
		{"LIKE 'E'", Query{Filter: bin(ELike, col("name"), lit("E"))}},
		{"ORDER BY name", Query{OrderBy: []RowOrder{{Col: "name"}, {Col: "id"}}}},
		{"GROUP BY name", Query{Aggs: []Agg{{Fn: "COUNT"}, {Fn: "MIN", Col: "id"}}, GroupBy: []string{"name"}}},
		{"MIN, MAX", Query{Aggs: []Agg{{Fn: "MIN", Col: "name"}, {Fn: "MAX", Col: "name"}}, Filter: bin(ELt, col("name"), lit("b"))}},
		{"DISTINCT", Query{Distinct: true, DistinctCols: []string{"name"}, OrderBy: []RowOrder{{Col: "id"}}}},
	}
	// Rows without ORDER BY come in the name index's order (a range).
	want := map[Collation][]string{
		CollGeneralCI: {
			"1 2 3", "4 5", "10 11", "8 9 1 2 3 4 5 7", "7 6 10 11", "1 2 3",
			"8 9 1 2 3 4 5 7 6 10 11",
			"[1 8] [1 9] [3 1] [2 4] [1 7] [1 6] [2 10]", "[a\t a]",
			"1 4 6 7 8 9 10",
		},
		CollLegacy: {
			"1 3", "5", "", "", "7 4 2 10 11", "1 3",
			"6 9 8 1 3 5 7 4 2 10 11",
			"[1 6] [1 9] [1 8] [2 1] [1 5] [1 7] [1 4] [1 2] [1 10] [1 11]", "[_x a\t]",
			"1 2 4 5 6 7 8 9 10 11",
		},
	}
	for _, coll := range []Collation{CollGeneralCI, CollLegacy} {
		t.Run(coll.String(), func(t *testing.T) {
			e := &env{t: t, s: NewMemStore()}
			e.ok(Command{Op: OpCreateDB, DB: "ids"})
			d, err := NewTableDef(spec())
			if err != nil {
				t.Fatal(err)
			}
			if d.Rows.Collation != CollGeneralCI {
				t.Fatalf("a new row table has collation %v", d.Rows.Collation)
			}
			d.Rows.Collation = coll
			e.ok(Command{Op: OpCreateTable, Def: d})
			for i, n := range names {
				e.ok(Command{Op: OpInsert, DB: "ids", Table: "c", Columns: []string{"id", "name"},
					Values: [][]Value{{num(int64(i + 1)), str(n)}}, Rows: &RowsCommand{Engine: true}})
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
				res, qe, err := SelectFrom(tb, rows, nil, &qc.q)
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
			k, err := NewTableDef(&TableSpec{DB: "ids", Name: "k", Columns: []ColumnSpec{{Name: "name", Type: "varchar", Width: 10, NotNull: true}},
				Keys: []KeySpec{{Primary: true, Columns: []string{"name"}}}})
			if err != nil {
				t.Fatal(err)
			}
			k.Rows.Collation = coll
			e.ok(Command{Op: OpCreateTable, Def: k})
			var codes []int
			for _, n := range []string{"é", "🚀", "E", "😀"} {
				r := e.do(Command{Op: OpInsert, DB: "ids", Table: "k", Values: [][]Value{{str(n)}}, Rows: &RowsCommand{Engine: true}})
				code := 0
				if r.Err != nil {
					code = int(r.Err.Code)
				}
				codes = append(codes, code)
			}
			wantCodes := map[Collation]string{CollGeneralCI: "[0 0 1062 1062]", CollLegacy: "[0 0 0 0]"}[coll]
			if fmt.Sprint(codes) != wantCodes {
				t.Errorf("unique key: codes %v, want %s", codes, wantCodes)
			}
		})
	}
}
