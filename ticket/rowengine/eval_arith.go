package rowengine

import (
	"math"
	mb "math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Numbers and time in the row engine's expressions (eval.go): a
// string read as a number in a numeric context as MariaDB reads it,
// + - * with MariaDB's result types, and a date plus an INTERVAL.

// numeric is v as a DECIMAL; a string literal's conversion (and its
// warning) is cached for the statement.
func (env *evalEnv) numeric(v val, x *model.RowExpr) *mb.Rat {
	if v.k != vStr {
		return v.rat()
	}
	if x.Op == model.EVal && env.lit != nil {
		if c, ok := env.lit[x]; ok && c.k == vDec {
			return c.r
		}
		r := env.strDecimal(v.s, "DECIMAL")
		env.lit[x] = val{k: vDec, r: r, s: v.s}
		return r
	}
	return env.strDecimal(v.s, "DECIMAL")
}

// strDecimal converts a string to a number as MariaDB does in a numeric
// context: leading spaces skipped, the longest numeric prefix taken;
// warning 1292 if anything but trailing spaces was cut (a note if only
// spaces were).
func (env *evalEnv) strDecimal(s, what string) *mb.Rat {
	prefix, rest := NumericPrefix(s)
	r := new(mb.Rat)
	if prefix != "" {
		if _, ok := r.SetString(prefix); !ok {
			r.SetInt64(0)
		}
	}
	switch {
	case prefix == "" || strings.TrimRight(rest, " ") != "":
		env.warn("Warning", mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect %s value: '%s'", what, s)
	case rest != "":
		env.warn("Note", mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect %s value: '%s'", what, s)
	}
	return r
}

// NumericPrefix splits s (leading whitespace dropped) into the longest
// prefix that is a number ([+-]digits[.digits][e[+-]digits]) and the rest.
func NumericPrefix(s string) (string, string) {
	s = strings.TrimLeft(s, " \t\n\r")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		frac := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			frac++
		}
		if digits+frac > 0 {
			i = j
			digits += frac
		}
	}
	if digits == 0 {
		return "", s
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return s[:i], s[i:]
}

// arith is + - * with MariaDB's result types: integers stay integers
// (BIGINT, unsigned if either side is; 1690 outside its range), anything
// with a decimal is an exact decimal, a string is taken as a number.
func (env *evalEnv) arith(x *model.RowExpr) (val, *model.Error) {
	a, e := env.eval(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	b, e := env.eval(&x.Args[1])
	if e != nil {
		return val{}, e
	}
	if a.k == vNull || b.k == vNull {
		return val{}, nil
	}
	if env.narrow {
		if a, e = intOperand(a); e != nil {
			return val{}, e
		}
		if b, e = intOperand(b); e != nil {
			return val{}, e
		}
	}
	if a.k == vStr || b.k == vStr || a.k == vTime || b.k == vTime {
		return val{}, mysqlerr.NotSupported("arithmetic on a string or a date")
	}
	op := map[model.ExprOp]byte{model.EAdd: '+', model.ESub: '-', model.EMul: '*'}[x.Op]
	if a.dbl || b.dbl {
		return doubleArith(a, b, op, x)
	}
	if a.k == vDec || b.k == vDec {
		var r *mb.Rat
		switch op {
		case '+':
			r = new(mb.Rat).Add(a.rat(), b.rat())
		case '-':
			r = new(mb.Rat).Sub(a.rat(), b.rat())
		default:
			r = new(mb.Rat).Mul(a.rat(), b.rat())
		}
		scale := decScale(a) + decScale(b)
		if op != '*' {
			scale = max(decScale(a), decScale(b))
		}
		return val{k: vDec, r: r, s: r.FloatString(scale)}, nil
	}
	unsigned := a.k == vUint || b.k == vUint
	ra, rb := a.rat(), b.rat()
	var r mb.Int
	switch op {
	case '+':
		r.Add(ra.Num(), rb.Num())
	case '-':
		r.Sub(ra.Num(), rb.Num())
	default:
		r.Mul(ra.Num(), rb.Num())
	}
	if unsigned {
		if r.Sign() >= 0 && r.IsUint64() {
			return val{k: vUint, u: r.Uint64()}, nil
		}
	} else if r.IsInt64() {
		return val{k: vInt, i: r.Int64()}, nil
	}
	what := "BIGINT"
	if unsigned {
		what = "BIGINT UNSIGNED"
	}
	return val{}, mysqlerr.New(mysqlerr.CodeValueOutOfRange, "%s value is out of range in '%s %c %s'", what, exprText(&x.Args[0]), op, exprText(&x.Args[1]))
}

// decScale is the number of fraction digits of a decimal operand.
func decScale(v val) int {
	if v.k != vDec {
		return 0
	}
	s := v.s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return 0
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// exprText renders an operand for an error message.
func exprText(x *model.RowExpr) string {
	switch x.Op {
	case model.ECol:
		return "`" + x.Col + "`"
	case model.EVal:
		if x.Val != nil {
			v, _ := litVal(*x.Val, time.Time{})
			return v.text()
		}
	}
	return "..."
}

// interval is NOW() + INTERVAL n unit (and -).
func (env *evalEnv) interval(x *model.RowExpr) (val, *model.Error) {
	a, e := env.eval(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	n, e := env.eval(&x.Args[1])
	if e != nil {
		return val{}, e
	}
	if a.k == vNull || n.k == vNull {
		return val{}, nil
	}
	var t time.Time
	switch a.k {
	case vTime:
		t = a.t
	case vStr:
		var ok bool
		var e *model.Error
		if t, ok, e = env.parseTime(a); e != nil {
			return val{}, e
		} else if !ok {
			env.warn("Warning", mysqlerr.CodeTruncatedWrongValue, "Incorrect datetime value: '%s'", a.s)
			return val{}, nil
		}
	default:
		return val{}, mysqlerr.NotSupported("INTERVAL arithmetic on a number")
	}
	if n.k != vInt {
		return val{}, mysqlerr.NotSupported("INTERVAL of a non-integer")
	}
	var d time.Duration
	switch x.Unit {
	case "SECOND":
		d = time.Second
	case "MINUTE":
		d = time.Minute
	case "HOUR":
		d = time.Hour
	case "DAY":
		d = 24 * time.Hour
	case "WEEK":
		d = 7 * 24 * time.Hour
	default:
		return val{}, mysqlerr.NotSupported("INTERVAL " + x.Unit)
	}
	if n.i > math.MaxInt64/int64(d) || n.i < math.MinInt64/int64(d) {
		return val{}, mysqlerr.NotSupported("INTERVAL " + strconv.FormatInt(n.i, 10) + " " + x.Unit + " (beyond 292 years)")
	}
	out := t.Add(time.Duration(n.i) * d)
	if out.Year() < 1000 || out.Year() > 9999 {
		return val{}, mysqlerr.NotSupported("a date outside 1000-9999")
	}
	// DATE + INTERVAL of a unit below DAY is a DATETIME.
	date := a.k == vTime && a.date && d >= 24*time.Hour
	return val{k: vTime, t: out, date: date}, nil
}
