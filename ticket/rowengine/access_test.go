package rowengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// rangeTable is a row table with a key of each kind a range can bound: an
// INT primary key, a plain INT key with NULLs, a TINYINT UNSIGNED key, a
// DATETIME key, a DATE key and a VARCHAR key with mixed case.
func rangeTable(t testing.TB, n int) (*env, *model.Table) {
	spec := &model.TableSpec{DB: "ids", Name: "r", Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true},
		{Name: "v", Type: "int"},
		{Name: "u", Type: "tinyint", Unsigned: true},
		{Name: "at", Type: "datetime"},
		{Name: "d", Type: "date"},
		{Name: "name", Type: "varchar", Width: 10},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "v", Columns: []string{"v"}},
		{Name: "u", Columns: []string{"u"}}, {Name: "at", Columns: []string{"at"}}, {Name: "d", Columns: []string{"d"}},
		{Name: "name", Columns: []string{"name"}}}}
	e := rowsEnv(t, spec)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var vals [][]model.Value
	for i := 1; i <= n; i++ {
		v := num(int64((i*7)%11 - 3))
		if i%5 == 0 {
			v = model.Value{Kind: model.ValNull}
		}
		name := string(rune('a' + i%7))
		if i%2 == 0 {
			name = strings.ToUpper(name)
		}
		vals = append(vals, []model.Value{num(int64(i)), v, num(int64(i * 9 % 256)),
			str(base.Add(time.Duration(i) * 5 * time.Hour).Format(dateTimeFormat)),
			str(base.Add(time.Duration(i/3) * 24 * time.Hour).Format(dateFormat)), str(name)})
		if len(vals) == 1000 || i == n {
			e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "r", Values: vals, Rows: &model.RowsCommand{Engine: true}})
			vals = nil
		}
	}
	var tb *model.Table
	if err := e.s.View(func(s Store) (err error) { tb, err = s.Table("ids", "r"); return err }); err != nil {
		t.Fatal(err)
	}
	return e, tb
}

// TestRangeAccess: every WHERE below answers the same rows, order and
// warnings through the access path PlanAccess picks as through a scan of
// the whole index it reads (with ORDER BY, also as a scan in clustering
// order; without LIMIT, the same rows as that), and the ones a key can
// bound do use a key range (an
// inclusive or exclusive bound, NULLs, a decimal or string bound on an
// integer key, a clamped bound, a date bound on a DATETIME key, an
// ORDER BY LIMIT that stops the scan, an IN list of a key's values); the
// ones whose bound does not
// convert as MariaDB compares ('5abc', 'abc' on a date, a number on a
// string key) scan the table.
func TestRangeAccess(t *testing.T) {
	e, tb := rangeTable(t, 60)
	c := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
	v := func(x model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: &x} }
	dec := func(s string) model.RowExpr { return v(model.Value{Kind: model.ValDecimal, Str: s}) }
	op := func(o model.ExprOp, a, b model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: o, Args: []model.RowExpr{a, b}}
	}
	and := func(a, b *model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{*a, *b}}
	}
	betw := func(a, lo, hi model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EBetween, Args: []model.RowExpr{a, lo, hi}}
	}
	in := func(a model.RowExpr, list ...model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EIn, Args: append([]model.RowExpr{a}, list...)}
	}
	now := time.Date(2024, 1, 5, 12, 0, 0, 0, time.UTC)
	nowMinus := func(days int64) model.RowExpr {
		return model.RowExpr{Op: model.EInterval, Unit: "DAY", Args: []model.RowExpr{v(model.Value{Kind: model.ValNow}), {Op: model.ENeg, Args: []model.RowExpr{v(num(days))}}}}
	}
	const ranged, scan = true, false
	for _, tc := range []struct {
		filter  *model.RowExpr
		order   []model.RowOrder
		limit   uint64
		indexed bool
	}{
		{filter: op(model.EGt, c("id"), v(num(5))), indexed: ranged},
		{filter: op(model.EGe, c("id"), v(num(5))), indexed: ranged},
		{filter: op(model.ELt, c("id"), v(num(5))), indexed: ranged},
		{filter: op(model.ELe, c("id"), v(num(5))), indexed: ranged},
		{filter: op(model.EGt, v(num(50)), c("id")), indexed: ranged},
		{filter: betw(c("id"), v(num(3)), v(num(7))), indexed: ranged},
		{filter: betw(c("id"), v(num(7)), v(num(3))), indexed: ranged},
		{filter: op(model.EGt, c("id"), dec("2.5")), indexed: ranged},
		{filter: op(model.ELt, c("id"), dec("2.5")), indexed: ranged},
		{filter: op(model.EGe, c("id"), dec("2.5")), indexed: ranged},
		{filter: op(model.ELe, c("id"), dec("2.4")), indexed: ranged},
		{filter: op(model.EGt, c("id"), dec("-2.5")), indexed: ranged},
		{filter: op(model.EGt, c("id"), v(str("5"))), indexed: ranged},
		{filter: op(model.EGt, c("id"), v(str("5abc"))), indexed: scan},
		{filter: op(model.EGt, c("id"), v(str(" 5"))), indexed: scan},
		{filter: op(model.EGt, c("id"), v(str("5 "))), indexed: scan},
		{filter: op(model.ELt, c("id"), dec("99999999999999999999")), indexed: ranged},
		{filter: op(model.EGt, c("id"), dec("-99999999999999999999")), indexed: ranged},
		{filter: op(model.EGt, c("id"), v(model.Value{Kind: model.ValNull})), indexed: scan},
		{filter: and(op(model.EGt, c("id"), v(num(30))), op(model.ELt, c("id"), v(num(20)))), indexed: ranged},
		{filter: and(op(model.EGt, c("id"), v(num(10))), op(model.ELe, c("id"), v(num(12)))), indexed: ranged},
		{filter: op(model.EGt, c("v"), v(num(3))), indexed: ranged},
		{filter: op(model.ELt, c("v"), v(num(3))), indexed: ranged},
		{filter: op(model.ELe, c("v"), v(num(-3))), indexed: ranged},
		{filter: betw(c("v"), v(num(-1)), dec("2.5")), indexed: ranged},
		{filter: and(op(model.EEq, c("v"), v(num(2))), op(model.EGt, c("id"), v(num(20)))), indexed: ranged},
		{filter: op(model.EGt, c("u"), v(num(300))), indexed: ranged},
		{filter: op(model.ELt, c("u"), v(num(-5))), indexed: ranged},
		{filter: op(model.EGt, c("u"), v(num(-5))), indexed: ranged},
		{filter: op(model.EGe, c("u"), v(num(250))), indexed: ranged},
		{filter: op(model.EGt, c("at"), v(str("2024-01-03"))), indexed: ranged},
		{filter: op(model.EGe, c("at"), v(str("2024-01-03 10:00:00.5"))), indexed: ranged},
		{filter: op(model.ELt, c("at"), v(num(20240103))), indexed: ranged},
		{filter: op(model.ELt, c("at"), nowMinus(2)), indexed: ranged},
		{filter: op(model.EGt, c("at"), v(str("abc"))), indexed: scan},
		{filter: op(model.EGt, c("d"), v(str("2024-01-05 10:00:00"))), indexed: ranged},
		{filter: op(model.ELe, c("d"), v(str("2024-01-05 10:00:00"))), indexed: ranged},
		{filter: op(model.ELt, c("d"), v(str("2024-01-05"))), indexed: ranged},
		{filter: op(model.EGt, c("name"), v(str("c"))), indexed: ranged},
		{filter: op(model.EGe, c("name"), v(str("C "))), indexed: ranged},
		{filter: op(model.ELt, c("name"), v(str("D"))), indexed: ranged},
		{filter: op(model.EGt, c("name"), v(num(5))), indexed: scan},
		{filter: op(model.EGt, c("id"), v(num(5))), order: []model.RowOrder{{Col: "id"}}, limit: 3, indexed: ranged},
		{filter: op(model.EGt, c("v"), v(num(0))), order: []model.RowOrder{{Col: "v"}}, limit: 4, indexed: ranged},
		{filter: op(model.EGt, c("v"), v(num(0))), order: []model.RowOrder{{Col: "v", Desc: true}}, limit: 4, indexed: ranged},
		{order: []model.RowOrder{{Col: "name"}}, limit: 5, indexed: ranged},
		{order: []model.RowOrder{{Col: "v"}}, limit: 7, indexed: ranged},
		{order: []model.RowOrder{{Col: "at"}, {Col: "id"}}, limit: 2, indexed: scan},
		{order: []model.RowOrder{{Col: "id", Desc: true}}, limit: 3, indexed: ranged},
		{filter: op(model.ELt, c("id"), v(num(30))), order: []model.RowOrder{{Col: "id", Desc: true}}, limit: 2, indexed: ranged},
		{filter: op(model.EGe, c("id"), v(num(58))), order: []model.RowOrder{{Col: "id", Desc: true}}, limit: 5, indexed: ranged},
		{filter: betw(c("id"), v(num(10)), v(num(20))), order: []model.RowOrder{{Col: "id", Desc: true}}, indexed: ranged},
		{order: []model.RowOrder{{Col: "v", Desc: true}}, limit: 4, indexed: scan},
		{order: []model.RowOrder{{Col: "name", Desc: true}}, limit: 4, indexed: scan},
		{filter: op(model.EEq, c("v"), v(num(2))), order: []model.RowOrder{{Col: "v"}, {Col: "id"}}, limit: 2, indexed: ranged},
		{filter: in(c("id"), v(num(7)), v(num(3)), v(num(3)), v(num(99)), v(model.Value{Kind: model.ValNull})), indexed: ranged},
		{filter: in(c("id"), v(num(7)), v(num(3)), dec("4.0"), v(str("5"))), limit: 2, indexed: ranged},
		{filter: in(c("id"), v(num(7)), v(str("3abc"))), indexed: scan},
		{filter: in(c("id"), v(model.Value{Kind: model.ValNull})), indexed: ranged},
		{filter: in(c("v"), v(num(2)), v(num(-3)), v(num(5))), limit: 3, indexed: ranged},
		{filter: in(c("v"), v(num(2)), v(num(-3))), order: []model.RowOrder{{Col: "id", Desc: true}}, limit: 3, indexed: ranged},
		{filter: in(c("name"), v(str("b")), v(str("C ")), v(str("zz"))), indexed: ranged},
		{filter: &model.RowExpr{Op: model.EOr, Args: []model.RowExpr{*op(model.EEq, c("v"), v(num(4))), *op(model.EEq, v(num(-3)), c("v"))}}, indexed: ranged},
		{filter: &model.RowExpr{Op: model.EOr, Args: []model.RowExpr{*op(model.EEq, c("v"), v(num(4))), *op(model.EEq, c("id"), v(num(3)))}}, indexed: scan},
		{filter: &model.RowExpr{Op: model.EOr, Args: []model.RowExpr{*op(model.EEq, c("v"), v(num(4))), *op(model.EGt, c("v"), v(num(3)))}}, indexed: scan},
		{filter: and(in(c("v"), v(num(2)), v(num(4))), op(model.EEq, c("id"), v(num(12)))), indexed: ranged},
	} {
		q := &Query{Filter: tc.filter, OrderBy: tc.order, HasLimit: tc.limit > 0, Limit: tc.limit, Now: now}
		what := fmt.Sprintf("WHERE %s ORDER BY %v LIMIT %d", exprString(tc.filter), tc.order, tc.limit)
		a := PlanAccess(tb, q.Filter, q.OrderBy, q.HasLimit, q.Now)
		if got := a.Index != ClusterIndex || a.Lo != "" || a.Hi != "" || a.Point || a.Empty || a.Ordered || a.In != nil; got != tc.indexed {
			t.Errorf("%s: access %+v, want a key range %v", what, a, tc.indexed)
		}
		// The reference: every row of the same index in the same direction
		// (the bounds are what is tested), and, with ORDER BY, every row in
		// clustering order (a stable sort gives the same rows).
		var planned, sameIndex, clustered *QueryResult
		if err := e.s.View(func(s Store) error {
			rows, err := s.Rows("ids", "r")
			if err != nil {
				return err
			}
			var e *model.Error
			if planned, e, err = SelectFrom(tb, rows, nil, q); e != nil || err != nil {
				return fmt.Errorf("%v %v", e, err)
			}
			for _, ref := range []struct {
				access RowsAccess
				out    **QueryResult
			}{{RowsAccess{Index: a.Index, Desc: a.Desc}, &sameIndex}, {RowsAccess{Index: ClusterIndex}, &clustered}} {
				var all [][]model.Datum
				if err := ScanAccess(rows, ref.access, func(_ string, r []model.Datum) bool { all = append(all, r); return true }); err != nil {
					return err
				}
				if *ref.out, e = SelectRows(tb, all, q); e != nil {
					return e
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, want := text(planned.Rows), text(sameIndex.Rows); got != want {
			t.Errorf("%s through %+v:\n%swant\n%s", what, a, got, want)
		}
		if fmt.Sprint(planned.Warnings) != fmt.Sprint(sameIndex.Warnings) {
			t.Errorf("%s: warnings %v, want %v", what, planned.Warnings, sameIndex.Warnings)
		}
		if got, want := text(planned.Rows), text(clustered.Rows); len(tc.order) > 0 && got != want {
			t.Errorf("%s through %+v, against a scan in clustering order:\n%swant\n%s", what, a, got, want)
		}
		if got, want := sortedText(planned.Rows), sortedText(clustered.Rows); tc.limit == 0 && got != want {
			t.Errorf("%s through %+v: rows\n%swant\n%s", what, a, got, want)
		}
	}
}

// exprString renders a test's filter for its messages.
func exprString(x *model.RowExpr) string {
	if x == nil {
		return "-"
	}
	switch x.Op {
	case model.ECol:
		return x.Col
	case model.EVal:
		if x.Val == nil {
			return "NULL"
		}
		return exprText(x)
	}
	parts := make([]string, len(x.Args))
	for i := range x.Args {
		parts[i] = exprString(&x.Args[i])
	}
	return fmt.Sprintf("op%d(%s)", x.Op, strings.Join(parts, ", "))
}

// BenchmarkRangeSelect: SELECTs a key can bound, on a million-row table,
// through the access path (range) and through a scan of the whole table
// with the WHERE on every row (scan: what every WHERE but an equality did
// before ranges; a session's own writes still force it), in the same run.
func BenchmarkRangeSelect(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	e, tb := rangeTable(b, n)
	rows, err := e.s.Rows("ids", "r")
	if err != nil {
		b.Fatal(err)
	}
	c := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
	v := func(x model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: &x} }
	mid := int64(n / 2)
	queries := []struct {
		name string
		q    Query
	}{
		{"id_between_100", Query{Filter: &model.RowExpr{Op: model.EBetween, Args: []model.RowExpr{c("id"), v(num(mid)), v(num(mid + 99))}}}},
		{"id_gt_limit_10", Query{Filter: &model.RowExpr{Op: model.EGt, Args: []model.RowExpr{c("id"), v(num(mid))}}, HasLimit: true, Limit: 10}},
		{"order_by_at_limit_10", Query{OrderBy: []model.RowOrder{{Col: "at"}}, HasLimit: true, Limit: 10}},
		{"id_in_5", Query{Filter: &model.RowExpr{Op: model.EIn, Args: []model.RowExpr{c("id"), v(num(mid)), v(num(7)), v(num(mid + 5)), v(num(3)), v(num(int64(n) - 1))}}}},
		{"at_range_1_day", Query{Filter: &model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{
			{Op: model.EGe, Args: []model.RowExpr{c("at"), v(str("2025-01-01"))}}, {Op: model.ELt, Args: []model.RowExpr{c("at"), v(str("2025-01-02"))}}}}}},
	}
	whole := func(_ string, r []model.Datum) []model.Datum { return r }
	for _, qc := range queries {
		for _, path := range []string{"scan", "range"} {
			b.Run(qc.name+"/"+path, func(b *testing.B) {
				var over func(string, []model.Datum) []model.Datum
				if path == "scan" {
					over = whole
				}
				var got int
				for b.Loop() {
					res, e, err := SelectFrom(tb, rows, over, &qc.q)
					if e != nil || err != nil {
						b.Fatal(e, err)
					}
					got = len(res.Rows)
				}
				b.ReportMetric(float64(got), "rows")
			})
		}
	}
}

// sortedText is text of rows in sorted order, to compare sets of rows.
func sortedText(rows [][]model.Datum) string {
	lines := strings.SplitAfter(text(rows), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// TestApplyAccessKeepsOrder: the rows an UPDATE or DELETE takes, and the
// order it takes them in, are those of the access path builds before key
// ranges used (ChooseAccess of the equalities, then a stable sort by
// ORDER BY, then LIMIT), for every WHERE, ORDER BY and LIMIT below: the
// state machine applies the same log on replicas of either build during
// a rolling upgrade, and a LIMIT or a unique key met halfway would
// otherwise change rows on one and not the other.
func TestApplyAccessKeepsOrder(t *testing.T) {
	e, tb := rangeTable(t, 60)
	c := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
	v := func(x model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: &x} }
	op := func(o model.ExprOp, a, b model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: o, Args: []model.RowExpr{a, b}}
	}
	in := func(a model.RowExpr, list ...model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EIn, Args: append([]model.RowExpr{a}, list...)}
	}
	and := func(a, b *model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{*a, *b}}
	}
	filters := []*model.RowExpr{nil, op(model.EGt, c("v"), v(num(2))), op(model.ELt, c("id"), v(num(40))), in(c("v"), v(num(4)), v(num(-3))),
		in(c("id"), v(num(9)), v(num(4)), v(num(30))), op(model.EGe, c("name"), v(str("c"))),
		and(op(model.EEq, c("v"), v(num(4))), op(model.EGt, c("id"), v(num(20)))), op(model.EGt, c("at"), v(str("2024-01-05")))}
	orders := [][]model.RowOrder{nil, {{Col: "id"}}, {{Col: "id", Desc: true}}, {{Col: "v"}}, {{Col: "name"}}, {{Col: "v", Desc: true}, {Col: "id"}}}
	now := time.Date(2024, 1, 5, 12, 0, 0, 0, time.UTC)
	must := func(err error, e *model.Error) {
		t.Helper()
		if err != nil || e != nil {
			t.Fatal(err, e)
		}
	}
	rows, err := e.s.Rows("ids", "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range filters {
		for _, o := range orders {
			for _, limit := range []uint64{0, 1, 3} {
				env := &evalEnv{rd: tb.Def.Rows, now: now, lit: map[*model.RowExpr]val{}}
				got, e, err := env.scanPick(rows, ApplyAccess(tb, f, o, limit > 0, now), nil, f, o, limit > 0, 0, limit)
				must(err, e)
				var cands []matched
				must(ScanAccess(rows, ChooseAccess(tb, EqualityConds(f)), func(pk string, r []model.Datum) bool {
					cands = append(cands, matched{pk, r})
					return true
				}), nil)
				env = &evalEnv{rd: tb.Def.Rows, now: now, lit: map[*model.RowExpr]val{}}
				want, e := env.pick(cands, f, o, limit > 0, 0, limit)
				must(nil, e)
				gotRows, wantRows := make([][]model.Datum, len(got)), make([][]model.Datum, len(want))
				for i := range got {
					gotRows[i] = got[i].row
				}
				for i := range want {
					wantRows[i] = want[i].row
				}
				if text(gotRows) != text(wantRows) {
					t.Errorf("WHERE %s ORDER BY %v LIMIT %d:\n%swant\n%s", exprString(f), o, limit, text(gotRows), text(wantRows))
				}
			}
		}
	}
}
