package ticket

import (
	"fmt"
	"math"
	mb "math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Typed values: what a client's binary-protocol parameters (COM_STMT_EXECUTE)
// are when they are neither integers nor strings. MariaDB keeps a
// parameter's type, and its conversions follow it: a DATETIME parameter
// stored into an INT column is 20240102030405 where the string
// '2024-01-02 03:04:05' is cut to 2024 (1265), and a DOUBLE is rounded
// half to even (rint) where a DECIMAL is rounded half away from zero. So
// these values travel as they were sent, in the replicated command, and
// the row engine converts them (litVal) like its other values.
const (
	// ValTemporal is a DATE, DATETIME/TIMESTAMP or TIME parameter. Str
	// holds it in MariaDB's text form: '2024-01-02' (DATE),
	// '2024-01-02 03:04:05' with '.ffffff' when it has microseconds
	// (DATETIME), '[-]hhh:mm:ss[.ffffff]' (TIME).
	ValTemporal ValueKind = 9
	// ValDouble is a DOUBLE or FLOAT parameter (a FLOAT is widened to
	// double, as MariaDB does). Str holds Go's shortest round-trip text
	// of the float64 (strconv 'g', -1), so that every replica reads back
	// the same bits.
	ValDouble ValueKind = 10
)

// DoubleValue is f as a statement value.
func DoubleValue(f float64) Value {
	return Value{Kind: ValDouble, Str: strconv.FormatFloat(f, 'g', -1, 64)}
}

// Temporal kinds of TemporalValue.
const (
	TemporalDate = iota
	TemporalDateTime
	TemporalTime
)

// TemporalValue is a binary-protocol temporal parameter as a statement
// value: kind is TemporalDate, TemporalDateTime or TemporalTime. For a
// TIME, days and hour together are the hours; neg is its sign. A value
// whose fields are out of range (month 13) is sent on as its text, a
// string, which the row engine refuses as MariaDB does a string that is
// no date (1292).
func TemporalValue(kind int, neg bool, year, month, day, hour, minute, second, micro int) Value {
	var b strings.Builder
	switch kind {
	case TemporalTime:
		if neg {
			b.WriteByte('-')
		}
		fmt.Fprintf(&b, "%02d:%02d:%02d", hour, minute, second)
	case TemporalDate:
		fmt.Fprintf(&b, "%04d-%02d-%02d", year, month, day)
	default:
		fmt.Fprintf(&b, "%04d-%02d-%02d %02d:%02d:%02d", year, month, day, hour, minute, second)
	}
	if micro != 0 && kind != TemporalDate {
		fmt.Fprintf(&b, ".%06d", micro)
	}
	valid := minute < 60 && second < 60 && micro < 1000000
	if kind != TemporalTime {
		valid = valid && hour < 24 && month >= 1 && month <= 12 && day >= 1 &&
			day <= time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
		if year == 0 && month == 0 && day == 0 {
			valid = true // the zero date; the engine refuses it (1235)
		}
	}
	if !valid {
		return Value{Kind: ValString, Str: b.String()}
	}
	return Value{Kind: ValTemporal, Str: b.String()}
}

// temporalVal is a ValTemporal as an evaluated value. A TIME is taken on
// the statement's date where a date is needed (MariaDB uses the current
// date), and as itself in text ('12:34:56') and numbers (123456).
func temporalVal(s string, now time.Time) (val, *Error) {
	bad := func() (val, *Error) {
		return val{}, mysqlerr.New(mysqlerr.CodeWrongArguments, "Incorrect arguments to mysqld_stmt_execute (temporal value %q)", s)
	}
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		if zeroDate(s) {
			return val{}, mysqlerr.NotSupported("zero dates")
		}
		if len(s) == 10 {
			t, err := time.Parse(dateFormat, s)
			if err != nil {
				return bad()
			}
			return val{k: vTime, t: t, date: true}, nil
		}
		t, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			return bad()
		}
		return val{k: vTime, t: t}, nil
	}
	// TIME: [-]h+:mm:ss[.ffffff]
	body, neg := strings.CutPrefix(s, "-")
	hms, frac, _ := strings.Cut(body, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return bad()
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 || v > 1<<32 {
			return bad()
		}
		n[i] = v
	}
	var micro int64
	if frac != "" {
		v, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		if err != nil {
			return bad()
		}
		micro = v
	}
	d := time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second + time.Duration(micro)*time.Microsecond
	if neg {
		d = -d
	}
	day := now.UTC().Truncate(24 * time.Hour)
	return val{k: vTime, t: day.Add(d), clock: true, s: s}, nil
}

// clockNumber is a TIME's value in a numeric context: hhmmss.
func clockNumber(s string) *mb.Rat {
	body, neg := strings.CutPrefix(s, "-")
	hms, _, _ := strings.Cut(body, ".")
	r, ok := new(mb.Rat).SetString(strings.ReplaceAll(hms, ":", ""))
	if !ok {
		return new(mb.Rat)
	}
	if neg {
		r.Neg(r)
	}
	return r
}

// doubleVal is a ValDouble as an evaluated value: an exact rational of
// the double's bits (comparisons with it are exact), with MariaDB's text.
func doubleVal(s string) (val, *Error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return val{}, mysqlerr.New(mysqlerr.CodeWrongArguments, "Incorrect arguments to mysqld_stmt_execute (double value %q)", s)
	}
	r, _ := new(mb.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return val{k: vDec, r: r, s: DoubleText(f), dbl: true}, nil
}

// DoubleText is a double as MariaDB renders it in a string context: the
// shortest text that reads back as the same double, in positional form
// unless its exponent is below -4 or 15 and above, then as 1.5e20 or
// 1e-7 (no '+', no leading zero in the exponent).
func DoubleText(f float64) string {
	if f == 0 {
		return "0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, e, _ := strings.Cut(s, "e")
	if exp, _ := strconv.Atoi(e); exp >= -4 && exp < 15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	e = strings.TrimPrefix(e, "+")
	sign := ""
	if strings.HasPrefix(e, "-") {
		sign, e = "-", e[1:]
	}
	e = strings.TrimLeft(e, "0")
	return mant + "e" + sign + e
}

// roundHalfEven rounds r to an integer, halves to even: how MariaDB
// stores a DOUBLE into an integer column (rint).
func roundHalfEven(r *mb.Rat) *mb.Int {
	if r.IsInt() {
		return new(mb.Int).Set(r.Num())
	}
	fl := new(mb.Int).Div(r.Num(), r.Denom()) // floor (Euclidean, denominator > 0)
	frac := new(mb.Rat).Sub(r, new(mb.Rat).SetInt(fl))
	switch frac.Cmp(mb.NewRat(1, 2)) {
	case 1:
		fl.Add(fl, mb.NewInt(1))
	case 0:
		if fl.Bit(0) == 1 {
			fl.Add(fl, mb.NewInt(1))
		}
	}
	return fl
}
