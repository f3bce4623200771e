package rowengine

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// TestIntIndexValue: an integer's key value is what storing it strictly
// gives (storeInt through big.Rat), in and out of every integer type's
// range.
func TestIntIndexValue(t *testing.T) {
	var vals []model.Value
	for _, n := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
		8388607, 8388608, -8388608, -8388609, 16777215, 16777216, math.MaxInt32, math.MaxInt32 + 1, math.MinInt32,
		math.MinInt32 - 1, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		vals = append(vals, num(n))
		if n >= 0 {
			vals = append(vals, model.Value{Kind: model.ValUint, Uint: uint64(n)})
		}
	}
	vals = append(vals, model.Value{Kind: model.ValUint, Uint: math.MaxUint64}, model.Value{Kind: model.ValUint, Uint: math.MaxInt64 + 1})
	for k := model.TinyInt; k <= model.BigInt; k++ {
		for _, unsigned := range []bool{false, true} {
			col := &model.RowCol{Name: "c", Kind: model.ColInt, Int: model.IntType{Kind: k, Unsigned: unsigned}}
			for _, v := range vals {
				got, gok := indexValue(col, v)
				var warns []model.Warning
				lv, e := litVal(v, time.Time{})
				if e != nil {
					t.Fatal(e)
				}
				want, e := (&storeCtx{strict: true, warns: &warns}).store(col, lv, 1)
				wok := e == nil && !want.Null && len(warns) == 0
				if !wok {
					want = model.Datum{}
				}
				if got != want || gok != wok {
					t.Errorf("%s %+v: indexValue %q %v, storing gives %q %v", col.Int.SQL(), v, got.S, gok, want.S, wok)
				}
			}
		}
	}
}

// TestPointAccess: a WHERE that binds the whole clustering key with
// equalities gets PlanAccess's own point lookup from pointAccess (or
// pointAccess declines), and every WHERE below answers the rows and
// warnings a scan of the whole table does, with and without LIMIT and
// OFFSET.
func TestPointAccess(t *testing.T) {
	re, rtb := rangeTable(t, 60)
	ce := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "c", Columns: []model.ColumnSpec{
		{Name: "a", Type: "int", NotNull: true},
		{Name: "b", Type: "varchar", Width: 10, NotNull: true},
		{Name: "n", Type: "int"},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"b", "a"}}}})
	var vals [][]model.Value
	for i := 1; i <= 20; i++ {
		vals = append(vals, []model.Value{num(int64(i % 4)), str(string(rune('a'+i%5)) + "x"), num(int64(i))})
	}
	ce.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "c", Values: vals, Rows: &model.RowsCommand{Engine: true}})
	var ctb *model.Table
	if err := ce.s.View(func(s Store) (err error) { ctb, err = s.Table("ids", "c"); return err }); err != nil {
		t.Fatal(err)
	}
	c := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
	v := func(x model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: &x} }
	dec := func(s string) model.RowExpr { return v(model.Value{Kind: model.ValDecimal, Str: s}) }
	eq := func(a, b model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{a, b}}
	}
	and := func(a, b *model.RowExpr) *model.RowExpr {
		return &model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{*a, *b}}
	}
	const point, planned = true, false
	for _, tc := range []struct {
		e      *env
		tb     *model.Table
		filter *model.RowExpr
		order  []model.RowOrder
		fast   bool
	}{
		{e: re, tb: rtb, filter: eq(c("id"), v(num(5))), fast: point},
		{e: re, tb: rtb, filter: eq(v(num(5)), c("ID")), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(model.Value{Kind: model.ValUint, Uint: 7})), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(num(0))), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(num(-1))), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(num(61))), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(num(math.MaxInt32+1))), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(model.Value{Kind: model.ValUint, Uint: math.MaxUint64})), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(str("5"))), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), v(str("5 "))), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(str("5abc"))), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(str(" 5"))), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), dec("5.0")), fast: point},
		{e: re, tb: rtb, filter: eq(c("id"), dec("5.5")), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(model.Value{Kind: model.ValNull})), fast: planned},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(num(10))), eq(c("v"), v(num(2)))), fast: point},
		{e: re, tb: rtb, filter: and(eq(c("v"), v(num(4))), eq(c("id"), v(num(10)))), fast: point},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(num(10))), eq(c("name"), v(num(0)))), fast: point},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(num(12))), eq(c("v"), v(str("2abc")))), fast: point},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(num(12))), &model.RowExpr{Op: model.EGt, Args: []model.RowExpr{c("at"), v(str("x"))}}), fast: point},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(num(5))), eq(c("id"), v(num(6)))), fast: planned},
		{e: re, tb: rtb, filter: and(eq(c("id"), v(str("5abc"))), eq(c("id"), v(num(5)))), fast: planned},
		{e: re, tb: rtb, filter: eq(c("id"), v(num(5))), order: []model.RowOrder{{Col: "name"}}, fast: planned},
		{e: re, tb: rtb, filter: eq(c("v"), v(num(2))), fast: planned},
		{e: re, tb: rtb, filter: &model.RowExpr{Op: model.EOr, Args: []model.RowExpr{*eq(c("id"), v(num(3))), *eq(c("id"), v(num(4)))}}, fast: planned},
		{e: ce, tb: ctb, filter: and(eq(c("a"), v(num(1))), eq(c("b"), v(str("bx")))), fast: point},
		{e: ce, tb: ctb, filter: and(eq(c("b"), v(str("BX "))), eq(c("a"), v(str("1")))), fast: point},
		{e: ce, tb: ctb, filter: and(eq(c("a"), v(num(2))), eq(c("b"), v(str("zz")))), fast: point},
		{e: ce, tb: ctb, filter: and(and(eq(c("a"), v(num(3))), eq(c("n"), v(num(8)))), eq(c("b"), v(str("dx")))), fast: point},
		{e: ce, tb: ctb, filter: eq(c("a"), v(num(1))), fast: planned},
		{e: ce, tb: ctb, filter: eq(c("b"), v(str("bx"))), fast: planned},
		{e: ce, tb: ctb, filter: and(eq(c("a"), v(num(1))), eq(c("b"), v(num(0)))), fast: planned},
	} {
		for _, lim := range []struct {
			has           bool
			limit, offset uint64
		}{{}, {true, 1, 0}, {true, 0, 0}, {true, 1, 1}, {true, math.MaxUint64, 0}, {true, math.MaxUint64, 1}} {
			q := &Query{Filter: tc.filter, OrderBy: tc.order, HasLimit: lim.has, Limit: lim.limit, Offset: lim.offset, Now: time.Now()}
			what := fmt.Sprintf("%s: WHERE %s ORDER BY %v LIMIT %+v", tc.tb.Def.Name, exprString(tc.filter), tc.order, lim)
			a, ok := pointAccess(tc.tb.Def.Rows, q.Filter, q.OrderBy)
			if ok != tc.fast {
				t.Errorf("%s: pointAccess %v, want %v", what, ok, tc.fast)
			}
			if ok {
				want := PlanAccess(tc.tb, q.Filter, q.OrderBy, q.HasLimit, q.Now)
				want.Hi = ""
				if !reflect.DeepEqual(a, want) {
					t.Errorf("%s: pointAccess %+v, PlanAccess %+v", what, a, want)
				}
			}
			var got, all *QueryResult
			if err := tc.e.s.View(func(s Store) error {
				rows, err := s.Rows("ids", tc.tb.Def.Name)
				if err != nil {
					return err
				}
				var e *model.Error
				if got, e, err = SelectFrom(tc.tb, rows, nil, q); e != nil || err != nil {
					return fmt.Errorf("%v %v", e, err)
				}
				if all, e, err = SelectFrom(tc.tb, rows, func(_ string, r []model.Datum) []model.Datum { return r }, q); e != nil || err != nil {
					return fmt.Errorf("scan: %v %v", e, err)
				}
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if text(got.Rows) != text(all.Rows) || fmt.Sprint(got.Warnings) != fmt.Sprint(all.Warnings) {
				t.Errorf("%s:\n%s%v\nwant (a scan)\n%s%v", what, text(got.Rows), got.Warnings, text(all.Rows), all.Warnings)
			}
		}
	}
}

// BenchmarkRowTreeGet is one probe of a million-row RowTree by clustering
// key, in an order that defeats the caches as a busy server's reads do:
// the tree's own share of a point SELECT at scale.
func BenchmarkRowTreeGet(b *testing.B) {
	d, err := newTableDef(workerSpec())
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000000
	rt := NewRowTree(d.Rows)
	var keys []string
	for i := range n {
		row := []model.Datum{{S: fmt.Sprint(i + 1)}, {S: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250)},
			{S: fmt.Sprint(i) + "-1732000000000"}, {S: "2026-11-24"}, {S: "2026-11-24 10:00:00"}}
		pk, err := rt.Put("", row)
		if err != nil {
			b.Fatal(err)
		}
		keys = append(keys, pk)
	}
	i := 0
	for b.Loop() {
		i = (i + 7919) % n
		if _, ok := rt.Get(keys[i]); !ok {
			b.Fatalf("no row %d", i)
		}
	}
}

// TestIntTypeMax: every integer type's largest value, as MariaDB has it.
func TestIntTypeMax(t *testing.T) {
	for _, tc := range []struct {
		kind     model.IntKind
		unsigned bool
		want     uint64
	}{
		{model.TinyInt, false, 127}, {model.TinyInt, true, 255},
		{model.SmallInt, false, 32767}, {model.SmallInt, true, 65535},
		{model.MediumInt, false, 8388607}, {model.MediumInt, true, 16777215},
		{model.Int, false, 2147483647}, {model.Int, true, 4294967295},
		{model.BigInt, false, 9223372036854775807}, {model.BigInt, true, 18446744073709551615},
		{0, false, 9223372036854775807}, {0, true, 18446744073709551615},
	} {
		if got := (model.IntType{Kind: tc.kind, Unsigned: tc.unsigned}).Max(); got != tc.want {
			t.Errorf("kind %d unsigned %v: Max %d, want %d", tc.kind, tc.unsigned, got, tc.want)
		}
	}
}
