package ticket

import (
	mb "math/big"
	"testing"
	"time"
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
		v        Value
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
		var warns []Warning
		sc := &storeCtx{strict: true, warns: &warns}
		d, e := sc.store(&RowCol{Name: "b", Kind: ColInt, Int: IntType{Kind: BigInt}}, v, 1)
		if e != nil || d.S != tc.storeInt {
			t.Errorf("%+v into BIGINT: %q %v, want %s", tc.v, d.S, e, tc.storeInt)
		}
	}
	if v := TemporalValue(TemporalDate, false, 2024, 2, 30, 0, 0, 0, 0); v.Kind != ValString || v.Str != "2024-02-30" {
		t.Errorf("February 30th: %+v, want the string", v)
	}
}
