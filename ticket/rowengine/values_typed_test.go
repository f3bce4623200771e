package rowengine

import (
	"math"
	mb "math/big"
	"strconv"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

func TestTypedValues(t *testing.T) {
	for in, want := range map[string]string{"2.5": "2", "3.5": "4", "-2.5": "-2", "-3.5": "-4", "2.4999": "2", "-0.5": "0", "7": "7"} {
		r, _ := new(mb.Rat).SetString(in)
		if got := roundHalfEven(r).String(); got != want {
			t.Errorf("roundHalfEven(%s) = %s, want %s", in, got, want)
		}
	}
	for f, want := range map[float64]string{0.1: "0.1", 1e20: "1e20", 1.5e-7: "0.00000015", -2.5: "-2.5", 123456789012345: "123456789012345",
		1e15: "1e15", 0.0001: "0.0001", float64(float32(0.1)): "0.10000000149011612", 1234567890123456: "1.234567890123456e15",
		-0.000012345: "-0.000012345", 1e-15: "0.000000000000001", 1e-16: "1e-16", 1e-14: "0.00000000000001", 1e16: "1e16"} {
		if got := DoubleText(f); got != want {
			t.Errorf("DoubleText(%v) = %s, want %s", f, got, want)
		}
	}
	for _, tc := range []struct {
		f     float64
		width int
		want  string
	}{{1.0 / 3, 5, "0.333"}, {1.0 / 3, 40, "0.3333333333333333"}, {123456.789, 4, "1e5"}, {2.0 / 3, 3, "0.7"}, {-2.5, 4, "-2.5"}} {
		if got := DoubleTextIn(tc.f, tc.width); got != tc.want {
			t.Errorf("DoubleTextIn(%v, %d) = %s, want %s", tc.f, tc.width, got, tc.want)
		}
	}
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		v        model.Value
		text     string
		storeInt string
	}{
		{TemporalValue(TemporalDate, false, 2024, 1, 2, 0, 0, 0, 0), "2024-01-02", "20240102"},
		{TemporalValue(TemporalDateTime, false, 2024, 1, 2, 3, 4, 5, 0), "2024-01-02 03:04:05", "20240102030405"},
		{TemporalValue(TemporalDateTime, false, 2024, 1, 2, 3, 4, 5, 678), "2024-01-02 03:04:05.000678", "20240102030405"},
		{TemporalValue(TemporalTime, false, 0, 0, 0, 12, 34, 56, 0), "12:34:56", "123456"},
		{TemporalValue(TemporalTime, true, 0, 0, 0, 100, 0, 1, 0), "-100:00:01", "-1000001"},
		{DoubleValue(2.5), "2.5", "2"},
	} {
		v, e := litVal(tc.v, now)
		if e != nil {
			t.Fatalf("%+v: %v", tc.v, e)
		}
		if v.text() != tc.text {
			t.Errorf("%+v: text %q, want %q", tc.v, v.text(), tc.text)
		}
		var warns []model.Warning
		sc := &storeCtx{strict: true, warns: &warns}
		d, e := sc.store(&model.RowCol{Name: "b", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt}}, v, 1)
		if e != nil || d.S != tc.storeInt {
			t.Errorf("%+v into BIGINT: %q %v, want %s", tc.v, d.S, e, tc.storeInt)
		}
	}
	if v := TemporalValue(TemporalDate, false, 2024, 2, 30, 0, 0, 0, 0); v.Kind != model.ValString || v.Str != "2024-02-30" {
		t.Errorf("February 30th: %+v, want the string", v)
	}
}

// FuzzTypedValues: a typed parameter's text, whatever it holds (a log
// entry is trusted, but a client's bytes decide it), converts into every
// column kind and compares with every kind of value without panicking;
// DoubleTextIn renders any double at any width within the width.
//
//	go test -run '^$' -fuzz '^FuzzTypedValues$' -fuzztime 1m ./ticket
func FuzzTypedValues(f *testing.F) {
	for _, s := range []string{"2024-01-02", "2024-01-02 03:04:05.000678", "-838:59:59", "12:34:56.5", "!2024-13-01", "0.1", "1e20", "-2.5", "0000-00-00"} {
		f.Add(uint8(model.ValTemporal), s, 0.1, 10)
		f.Add(uint8(model.ValDouble), s, -1e-300, 3)
	}
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	cols := []model.RowCol{
		{Name: "i", Kind: model.ColInt, Int: model.IntType{Kind: model.TinyInt}},
		{Name: "u", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt, Unsigned: true}},
		{Name: "s", Kind: model.ColString, Type: "varchar(5)", Len: 5},
		{Name: "c", Kind: model.ColString, Type: "char(3)", Len: 3},
		{Name: "d", Kind: model.ColDate}, {Name: "t", Kind: model.ColDateTime}, {Name: "ts", Kind: model.ColTimestamp},
	}
	rd := &model.RowsDef{Cols: cols}
	f.Fuzz(func(t *testing.T, kind uint8, s string, x float64, width int) {
		if w := width % 400; w > 0 {
			out := DoubleTextIn(x, w)
			if _, err := strconv.ParseFloat(out, 64); err != nil {
				t.Errorf("DoubleTextIn(%v, %d) = %q: no number", x, w, out)
			}
			if w >= 25 && out != DoubleText(x) {
				if y, _ := strconv.ParseFloat(out, 64); y != x && !math.IsNaN(x) && !math.IsInf(x, 0) {
					t.Errorf("DoubleTextIn(%v, %d) = %q: does not read back", x, w, out)
				}
			}
		}
		v := model.Value{Kind: model.ValTemporal, Str: s}
		if kind%2 == 1 {
			v.Kind = model.ValDouble
		}
		lv, e := litVal(v, now)
		if e != nil {
			return
		}
		_ = lv.text()
		var warns []model.Warning
		for _, strict := range []bool{true, false} {
			sc := &storeCtx{strict: strict, warns: &warns}
			for i := range cols {
				_, _ = sc.store(&cols[i], lv, 1)
			}
		}
		env := &evalEnv{rd: rd, row: []model.Datum{{S: "5"}, {S: "18446744073709551615"}, {S: "12:3"}, {S: "x"}, {S: "2024-01-02"}, {S: "2024-01-02 03:04:05"}, {S: "2024-01-02 03:04:05"}},
			now: now, warns: &warns, lit: map[*model.RowExpr]val{}}
		lit := &model.RowExpr{Op: model.EVal, Val: &v}
		for i := range cols {
			cx := model.RowExpr{Op: model.ECol, Col: cols[i].Name}
			_, _, _ = env.compare(&cx, lit, []model.RowExpr{cx, *lit})
		}
		_, _ = env.arith(&model.RowExpr{Op: model.EAdd, Args: []model.RowExpr{{Op: model.ECol, Col: "i"}, *lit}})
	})
}
