package rowengine

import (
	"fmt"
	"math"
	mb "math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// DoubleValue is f as a statement value.
func DoubleValue(f float64) model.Value {
	return model.Value{Kind: model.ValDouble, Str: strconv.FormatFloat(f, 'g', -1, 64)}
}

// Temporal kinds of TemporalValue.
const (
	TemporalDate = iota
	TemporalDateTime
	TemporalTime
)

// TemporalValue is a binary-protocol temporal parameter as a statement
// value: kind is TemporalDate, TemporalDateTime or TemporalTime. For a
// TIME, hour holds the days too; neg is its sign. A date that does not
// exist (February 30th) is sent on as its text, a string, which the row
// engine refuses as MariaDB does (1292); one MariaDB would store as a
// zero date (month 13, month 0, 0000-00-00) is marked for refusal.
func TemporalValue(kind int, neg bool, year, month, day, hour, minute, second, micro int) model.Value {
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
	inRange := minute < 60 && second < 60 && micro < 1000000
	if kind != TemporalTime {
		inRange = inRange && hour < 24 && month <= 12 && day <= 31
	}
	if !inRange {
		// MariaDB stores a zero date for these, with a warning; ticketd
		// holds no zero date.
		return model.Value{Kind: model.ValTemporal, Str: "!" + b.String()}
	}
	if kind == TemporalTime && hour > 838 {
		// Beyond TIME's range: MariaDB cuts it to 838:59:59, with a warning.
		return model.Value{Kind: model.ValTemporal, Str: "!" + b.String()}
	}
	if kind != TemporalTime && (month == 0 || day == 0) {
		// The zero date, or a zero month or day ('2024-00-10'), which
		// MariaDB stores (without NO_ZERO_DATE/NO_ZERO_IN_DATE); ticketd
		// holds none.
		return model.Value{Kind: model.ValTemporal, Str: "!" + b.String()}
	}
	if kind != TemporalTime && day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		// February 30th: MariaDB refuses it as it does the string (1292).
		return model.Value{Kind: model.ValString, Str: b.String()}
	}
	return model.Value{Kind: model.ValTemporal, Str: b.String()}
}

// temporalVal is a ValTemporal as an evaluated value. A TIME is taken on
// the statement's date where a date is needed (MariaDB uses the current
// date), and as itself in text ('12:34:56') and numbers (123456).
func temporalVal(s string, now time.Time) (val, *model.Error) {
	bad := func() (val, *model.Error) {
		return val{}, mysqlerr.New(mysqlerr.CodeWrongArguments, "Incorrect arguments to mysqld_stmt_execute (temporal value %q)", s)
	}
	if strings.HasPrefix(s, "!") {
		return val{}, mysqlerr.NotSupported("a temporal parameter that is a zero date or out of range (MariaDB stores a zero date, or 838:59:59, for " + s[1:] + ")")
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
	d, ok := clockDuration(s)
	if !ok {
		return bad()
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

// doubleVal is a ValDouble as an evaluated value: the shortest decimal
// that reads back as the double (0.1 is 1/10), with MariaDB's text.
func doubleVal(s string) (val, *model.Error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return val{}, mysqlerr.New(mysqlerr.CodeWrongArguments, "Incorrect arguments to mysqld_stmt_execute (double value %q)", s)
	}
	return dblVal(f), nil
}

// dblVal is a double as an evaluated value.
func dblVal(f float64) val {
	r, _ := new(mb.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return val{k: vDec, r: r, s: DoubleText(f), dbl: true}
}

// doubleArith is + - * with a DOUBLE operand: computed in double
// precision with a DOUBLE result, as MariaDB does (max_id + ? with a
// double 1000 is exact below 2^53, as there); out of the double's range
// is 1690.
func doubleArith(a, b val, op byte, x *model.RowExpr) (val, *model.Error) {
	fa, _ := a.rat().Float64()
	fb, _ := b.rat().Float64()
	var f float64
	switch op {
	case '+':
		f = fa + fb
	case '-':
		f = fa - fb
	default:
		f = fa * fb
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return val{}, mysqlerr.New(mysqlerr.CodeValueOutOfRange, "DOUBLE value is out of range in '%s %c %s'", exprText(&x.Args[0]), op, exprText(&x.Args[1]))
	}
	return dblVal(f), nil
}

// DoubleText is a double as MariaDB renders it in a string context
// (SELECT, comparisons with strings): DoubleTextIn a wide string.
func DoubleText(f float64) string { return DoubleTextIn(f, wideDouble) }

// wideDouble is the width MariaDB renders a double in outside a column
// (its String::set_real buffer): wide enough for any double's digits.
const wideDouble = 300

// DoubleTextIn is a double as MariaDB writes it into width characters
// (a CHAR or VARCHAR column of that length; its my_gcvt): the shortest
// digits that read back as the same double (fewer, rounded, if they do
// not fit), positional ("0.00000015", "123456789012345") unless the
// exponent form is needed to fit, or the number is 1e16 and above
// without a fraction or below 1e-15 ("1e20", "1.234567890123456e15"
// for 1234567890123456).
func DoubleTextIn(f float64, width int) string {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
		width--
	}
	width = max(width, 1)
	digits, decpt := decimalDigits(f, -1)
	if len(digits) > width {
		digits, decpt = decimalDigits(f, width)
	}
	n := len(digits)
	expLen := 1
	if decpt >= 101 || decpt <= -99 {
		expLen++
	}
	if decpt >= 11 || decpt <= -9 {
		expLen++
	}
	fixed := decpt // "NNN00"
	switch {
	case decpt <= 0:
		fixed = n - decpt + 2 // "0.000NNN"
	case decpt < n:
		fixed = n + 1 // "NN.NN"
	}
	haveSpace := fixed <= width
	forceE := decpt <= 0 && width <= 2-decpt && width >= 3+expLen
	const dblDig = 15
	useF := (haveSpace || (decpt <= width && (decpt >= -1 || (decpt == -2 && (n > 1 || !forceE))) && !forceE)) &&
		(!haveSpace || (decpt >= -dblDig+1 && (decpt <= dblDig || n > decpt)))
	if useF {
		w := width
		if decpt < n {
			w--
		}
		if decpt <= 0 {
			w -= 1 - decpt
		}
		if w < n {
			// Fewer digits after the point, rounded.
			s := strconv.FormatFloat(f, 'f', max(w, decpt)-decpt, 64)
			if strings.Contains(s, ".") {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
			if s == "0" {
				return "0"
			}
			return sign + s
		}
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt < n:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
		return sign + digits + strings.Repeat("0", decpt-n)
	}
	w := width - 1 - expLen
	if decpt-1 < 0 {
		w--
	}
	if n > 1 {
		w--
	}
	if w < n {
		digits, decpt = decimalDigits(f, max(w, 1))
		n = len(digits)
	}
	out := sign + digits[:1]
	if n > 1 {
		out += "." + digits[1:]
	}
	return out + "e" + strconv.Itoa(decpt-1)
}

// decimalDigits are f's significant digits (f > 0), the shortest that
// read back as f when prec is -1, else rounded to prec digits, without
// trailing zeros; f is 0.DIGITS times 10^decpt.
func decimalDigits(f float64, prec int) (digits string, decpt int) {
	p := prec - 1
	if prec < 0 {
		p = -1
	}
	s := strconv.FormatFloat(f, 'e', p, 64)
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	return digits, exp + 1
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

// isDate reports a DATE or DATETIME value (not a TIME).
func isDate(v val) bool { return v.k == vTime && !v.clock }

// compareClock compares a TIME parameter with a string, a number or
// another TIME as MariaDB does: as TIME ('12:34:56' and 123456 are
// 12:34:56); a value that is no time matches nothing, with warning 1292.
func (env *evalEnv) compareClock(a, b val) (int, bool, *model.Error) {
	da, ok := env.toClock(a)
	if !ok {
		return 0, true, nil
	}
	db, ok := env.toClock(b)
	if !ok {
		return 0, true, nil
	}
	return cmpInt(int64(da), int64(db)), false, nil
}

// toClock is v as a TIME, read as MariaDB reads a string or a number
// as a TIME: '12:34:56', 123456, '2.5' (seconds), '-1 02:03:04', a
// DATETIME's time of day; a fraction of more than six digits is cut
// with a note; anything else matches nothing, with warning 1292.
func (env *evalEnv) toClock(v val) (time.Duration, bool) {
	if v.k == vTime {
		if v.clock {
			d, _ := clockDuration(v.s)
			return d, true
		}
		return v.t.Sub(v.t.Truncate(24 * time.Hour)), true
	}
	text := strings.TrimSpace(v.text())
	d, level := textClock(text)
	if level != "" {
		env.warn(level, mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect time value: '%s'", v.text())
	}
	return d, level != "Warning"
}

// textClock reads a TIME from a string; level is "" when it is clean,
// "Note" when digits were cut, "Warning" when it is no time.
func textClock(s string) (time.Duration, string) {
	if strings.ContainsAny(s, ":") {
		if t, ok := parseTime(s); ok && len(s) > 10 {
			return t.Sub(t.Truncate(24 * time.Hour)), ""
		}
		body, neg := strings.CutPrefix(s, "-")
		days := int64(0)
		if d, rest, ok := strings.Cut(body, " "); ok {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n > 34 {
				return 0, "Warning"
			}
			days, body = n, rest
		}
		if strings.Count(body, ":") == 1 {
			body += ":00"
		}
		d, ok := clockDuration(body)
		if !ok {
			return 0, "Warning"
		}
		d += time.Duration(days) * 24 * time.Hour
		if neg {
			d = -d
		}
		return d, ""
	}
	body, neg := strings.CutPrefix(s, "-")
	whole, frac, _ := strings.Cut(body, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" || len(whole) > 14 {
		return 0, "Warning"
	}
	level := ""
	if len(frac) > 6 {
		frac, level = frac[:6], "Note"
	}
	n, _ := strconv.ParseInt(whole, 10, 64)
	micro, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if n > 8385959 {
		// YYYYMMDD or YYYYMMDDhhmmss: a datetime's time of day.
		t, ok := parseTime(whole)
		if !ok || (len(whole) != 8 && len(whole) != 14) {
			return 0, "Warning"
		}
		return t.Sub(t.Truncate(24 * time.Hour)), level
	}
	h, m, sec := n/10000, n/100%100, n%100
	if m > 59 || sec > 59 {
		return 0, "Warning"
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(micro)*time.Microsecond
	if neg {
		d = -d
	}
	return d, level
}

// bigintConst is MariaDB's rule for a BIGINT column compared with a
// constant (its convert_const_to_int): the constant is taken as a BIGINT
// when it converts exactly, so that a DATE or DATETIME parameter is
// compared as 20240102 or 20240102030405, without a warning. ok is false
// when the rule does not apply.
func (env *evalEnv) bigintConst(a, b val, ax, bx *model.RowExpr) (c int, ok bool) {
	col, k := ax, b
	if ax.Op != model.ECol {
		col, k = bx, a
	}
	if col.Op != model.ECol || (ax.Op == model.ECol && bx.Op == model.ECol) || !isDate(k) || k.t.Nanosecond() != 0 {
		return 0, false
	}
	j := env.rd.ColIndex(col.Col)
	if j < 0 || env.rd.Cols[j].Kind != model.ColInt || env.rd.Cols[j].Int.Kind != model.BigInt {
		return 0, false
	}
	layout := "20060102150405"
	if k.date {
		layout = "20060102"
	}
	n, _ := new(mb.Rat).SetString(k.t.Format(layout))
	colV := a
	if col == bx {
		colV = b
	}
	c = colV.rat().Cmp(n)
	if col == bx {
		c = -c
	}
	return c, true
}

// clockDuration reads a TIME's text, [-]h:mm:ss[.ffffff].
func clockDuration(s string) (time.Duration, bool) {
	body, neg := strings.CutPrefix(s, "-")
	hms, frac, _ := strings.Cut(body, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 || (i > 0 && (v > 59 || len(p) != 2)) || v > 1<<32 {
			return 0, false
		}
		n[i] = v
	}
	var micro int64
	if frac != "" {
		v, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		if err != nil {
			return 0, false
		}
		micro = v
	}
	d := time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second + time.Duration(micro)*time.Microsecond
	if neg {
		d = -d
	}
	return d, true
}

// cmpDouble compares two numbers as MariaDB does when one is a DOUBLE
// and the other a string or a decimal: both as doubles (the string
// '0.10000000000000001' equals the double 0.1). Against an integer
// the comparison stays exact: MariaDB converts a whole DOUBLE constant to
// the BIGINT it equals (9007199254740993 is not 9007199254740992.0), and
// smaller integers are exact as doubles.
//
// isInt reports an integer value.
func (v val) isInt() bool { return v.k == vInt || v.k == vUint }

// cmpDouble is the comparison itself.
func cmpDouble(a, b *mb.Rat) int {
	fa, _ := a.Float64()
	fb, _ := b.Float64()
	switch {
	case fa < fb:
		return -1
	case fa > fb:
		return 1
	}
	return 0
}
