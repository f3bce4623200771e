package wire

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql"
)

// The catalogue's expressions: comparisons, AND/OR/XOR/NOT, IS NULL, IN,
// BETWEEN, LIKE, CASE, CAST AS SIGNED/UNSIGNED and the string functions
// Connector/J's DatabaseMetaData sends to information_schema, evaluated
// with MariaDB's rules for the values these views hold (integers and
// utf8mb3_general_ci strings): two strings compare without regard to
// case or trailing spaces, a string and a number as doubles, NULL
// propagates. They evaluate where no table or an information_schema view
// is read (evalCtx.catalog); over a ticket table or a sequence they are
// refused, and row tables have the row engine's evaluator.

// evalCatalog computes a catalogue expression; ok is false for another kind.
func (e *evalCtx) evalCatalog(x *sql.Expr) (v any, ok bool, err error) {
	switch x.Kind {
	case sql.ExprCompare, sql.ExprLogic, sql.ExprNot, sql.ExprIsNull, sql.ExprIn, sql.ExprBetween, sql.ExprLike,
		sql.ExprCase, sql.ExprCast:
	default:
		return nil, false, nil
	}
	if !e.catalog {
		return nil, true, unsupported(x.Describe() + " on a ticket table or sequence")
	}
	switch x.Kind {
	case sql.ExprCase:
		v, err = e.evalCase(x)
	case sql.ExprCast:
		v, err = e.evalCast(x)
	default:
		var t truth
		t, err = e.truth(x)
		v = t.value()
	}
	return v, true, err
}

// truth is SQL's three-valued logic.
type truth uint8

const (
	tFalse truth = iota
	tTrue
	tNull
)

func truthOf(b bool) truth {
	if b {
		return tTrue
	}
	return tFalse
}

func (t truth) value() any {
	switch t {
	case tTrue:
		return int64(1)
	case tFalse:
		return int64(0)
	}
	return nil
}

// bound compares v with one bound of a BETWEEN; NULL when either is.
func (e *evalCtx) bound(v, b any, ok func(int) bool) (truth, error) {
	if v == nil || b == nil {
		return tNull, nil
	}
	c, err := e.compareValues(v, b)
	if err != nil {
		return tNull, err
	}
	return truthOf(ok(c)), nil
}

// truth evaluates x as a condition.
func (e *evalCtx) truth(x *sql.Expr) (truth, error) {
	switch x.Kind {
	case sql.ExprCompare:
		a, b, err := e.eval2(x)
		if err != nil {
			return tNull, err
		}
		if x.Name == "<=>" {
			if a == nil || b == nil {
				return truthOf(a == nil && b == nil), nil
			}
			c, err := e.compareValues(a, b)
			return truthOf(c == 0), err
		}
		if a == nil || b == nil {
			return tNull, nil
		}
		c, err := e.compareValues(a, b)
		if err != nil {
			return tNull, err
		}
		switch x.Name {
		case "=":
			return truthOf(c == 0), nil
		case "<>":
			return truthOf(c != 0), nil
		case "<":
			return truthOf(c < 0), nil
		case "<=":
			return truthOf(c <= 0), nil
		case ">":
			return truthOf(c > 0), nil
		case ">=":
			return truthOf(c >= 0), nil
		}
		return tNull, unsupported("operator " + x.Name)
	case sql.ExprLogic:
		a, err := e.truth(&x.Args[0])
		if err != nil {
			return tNull, err
		}
		b, err := e.truth(&x.Args[1])
		if err != nil {
			return tNull, err
		}
		switch x.Name {
		case "AND":
			if a == tFalse || b == tFalse {
				return tFalse, nil
			}
			if a == tNull || b == tNull {
				return tNull, nil
			}
			return tTrue, nil
		case "OR":
			if a == tTrue || b == tTrue {
				return tTrue, nil
			}
			if a == tNull || b == tNull {
				return tNull, nil
			}
			return tFalse, nil
		}
		if a == tNull || b == tNull {
			return tNull, nil
		}
		return truthOf(a != b), nil
	case sql.ExprNot:
		a, err := e.truth(&x.Args[0])
		if err != nil || a == tNull {
			return tNull, err
		}
		return truthOf(a == tFalse), nil
	case sql.ExprIsNull:
		v, err := e.eval(&x.Args[0])
		if err != nil {
			return tNull, err
		}
		return truthOf((v == nil) != x.Not), nil
	case sql.ExprIn:
		return e.in(x)
	case sql.ExprBetween:
		v, err := e.eval(&x.Args[0])
		if err != nil {
			return tNull, err
		}
		lo, err := e.eval(&x.Args[1])
		if err != nil {
			return tNull, err
		}
		hi, err := e.eval(&x.Args[2])
		if err != nil {
			return tNull, err
		}
		// v >= lo AND v <= hi in three-valued logic: one bound that is
		// false makes it false even when the other is NULL (MariaDB: 2
		// BETWEEN NULL AND 1 is 0, not NULL).
		ge, err := e.bound(v, lo, func(c int) bool { return c >= 0 })
		if err != nil {
			return tNull, err
		}
		le, err := e.bound(v, hi, func(c int) bool { return c <= 0 })
		if err != nil {
			return tNull, err
		}
		switch {
		case ge == tFalse || le == tFalse:
			return truthOf(x.Not), nil
		case ge == tNull || le == tNull:
			return tNull, nil
		}
		return truthOf(!x.Not), nil
	case sql.ExprLike:
		if x.Op != '\\' && x.Op != 0 {
			return tNull, unsupported("LIKE ... ESCAPE '" + string(rune(x.Op)) + "'")
		}
		a, b, err := e.eval2(x)
		if err != nil || a == nil || b == nil {
			return tNull, err
		}
		if err := e.checkStrings(a, b); err != nil {
			return tNull, err
		}
		s, _ := textValue(a)
		p, _ := textValue(b)
		return truthOf(likeMatch(p, s) != x.Not), nil
	}
	v, err := e.eval(x)
	if err != nil || v == nil {
		return tNull, err
	}
	f, err := toDouble(v)
	return truthOf(f != 0), err
}

func (e *evalCtx) eval2(x *sql.Expr) (any, any, error) {
	a, err := e.eval(&x.Args[0])
	if err != nil {
		return nil, nil, err
	}
	b, err := e.eval(&x.Args[1])
	return a, b, err
}

// in is [NOT] IN: true on an equal item, else NULL when an item or the
// value is NULL.
func (e *evalCtx) in(x *sql.Expr) (truth, error) {
	v, err := e.eval(&x.Args[0])
	if err != nil {
		return tNull, err
	}
	sawNull := v == nil
	for i := 1; i < len(x.Args); i++ {
		w, err := e.eval(&x.Args[i])
		if err != nil {
			return tNull, err
		}
		if w == nil || v == nil {
			sawNull = true
			continue
		}
		if c, err := e.compareValues(v, w); err != nil || c == 0 {
			return truthOf(!x.Not), err
		}
	}
	if sawNull {
		return tNull, nil
	}
	return truthOf(x.Not), nil
}

func (e *evalCtx) evalCase(x *sql.Expr) (any, error) {
	args := x.Args
	var operand any
	hasOperand := x.Op&sql.CaseOperand != 0
	if hasOperand {
		var err error
		if operand, err = e.eval(&args[0]); err != nil {
			return nil, err
		}
		args = args[1:]
	}
	var elseX *sql.Expr
	if x.Op&sql.CaseElse != 0 {
		elseX, args = &args[len(args)-1], args[:len(args)-1]
	}
	for i := 0; i+1 < len(args); i += 2 {
		var hit bool
		if hasOperand {
			w, err := e.eval(&args[i])
			if err != nil {
				return nil, err
			}
			if operand != nil && w != nil {
				c, err := e.compareValues(operand, w)
				if err != nil {
					return nil, err
				}
				hit = c == 0
			}
		} else {
			t, err := e.truth(&args[i])
			if err != nil {
				return nil, err
			}
			hit = t == tTrue
		}
		if hit {
			return e.eval(&args[i+1])
		}
	}
	if elseX != nil {
		return e.eval(elseX)
	}
	return nil, nil
}

// evalCast is CAST(x AS SIGNED|UNSIGNED): a string is read as a number
// (its leading digits), a number wraps to the type.
func (e *evalCtx) evalCast(x *sql.Expr) (any, error) {
	v, err := e.eval(&x.Args[0])
	if err != nil || v == nil {
		return nil, err
	}
	// Where MariaDB warns (a string with trailing garbage, a value
	// outside the type, which it wraps with note 1105), this refuses.
	if str, ok := v.(string); ok {
		p, whole := numberPrefix(str)
		if !whole {
			return nil, unsupported("CAST of the string '" + str + "'")
		}
		if u, err := strconv.ParseUint(p, 10, 64); err == nil {
			v = u
		} else if i, err := strconv.ParseInt(p, 10, 64); err == nil {
			v = i
		} else {
			f, _ := strconv.ParseFloat(p, 64)
			v = f
		}
	}
	var n int64
	switch a := v.(type) {
	case int64:
		n = a
		if a < 0 && x.Name == "UNSIGNED" {
			return nil, unsupported("CAST of a negative value AS UNSIGNED")
		}
	case uint64:
		if a > math.MaxInt64 && x.Name == "SIGNED" {
			return nil, unsupported("CAST of a value above 2^63-1 AS SIGNED")
		}
		if x.Name == "UNSIGNED" {
			return a, nil
		}
		n = int64(a)
	case float64:
		if a < math.MinInt64 || a >= math.MaxInt64 || a < 0 && x.Name == "UNSIGNED" {
			return nil, unsupported("CAST of a double outside the integer range")
		}
		n = int64(math.Round(a))
	}
	if x.Name == "UNSIGNED" {
		return uint64(n), nil
	}
	return n, nil
}

// catalogCall computes the catalogue's functions; ok is false for another.
func (e *evalCtx) catalogCall(x *sql.Expr) (v any, ok bool, err error) {
	switch x.Name {
	case "IF", "IFNULL", "UCASE", "UPPER", "LCASE", "LOWER", "SUBSTRING", "SUBSTR", "LOCATE", "LEAST", "GREATEST":
	default:
		return nil, false, nil
	}
	if x.Name == "IF" {
		t, err := e.truth(&x.Args[0])
		if err != nil {
			return nil, true, err
		}
		if t == tTrue {
			v, err = e.eval(&x.Args[1])
		} else {
			v, err = e.eval(&x.Args[2])
		}
		return v, true, err
	}
	args := make([]any, len(x.Args))
	for i := range x.Args {
		if args[i], err = e.eval(&x.Args[i]); err != nil {
			return nil, true, err
		}
	}
	if x.Name == "IFNULL" {
		if args[0] != nil {
			return args[0], true, nil
		}
		return args[1], true, nil
	}
	for _, a := range args {
		if a == nil {
			return nil, true, nil
		}
	}
	s, _ := textValue(args[0])
	switch x.Name {
	case "UCASE", "UPPER":
		return strings.ToUpper(s), true, nil
	case "LCASE", "LOWER":
		return strings.ToLower(s), true, nil
	case "SUBSTRING", "SUBSTR", "LOCATE":
		n := make([]int64, len(args))
		for i := 1; i < len(args); i++ {
			if x.Name == "LOCATE" && i == 1 {
				continue
			}
			if n[i], err = intArg(args[i]); err != nil {
				return nil, true, err
			}
		}
		if x.Name == "LOCATE" {
			if err := e.checkStrings(args[0], args[1]); err != nil {
				return nil, true, err
			}
			t, _ := textValue(args[1])
			return locate(s, t, n[2:]), true, nil
		}
		return substring(s, n[1:]), true, nil
	}
	best := args[0]
	for _, a := range args[1:] {
		c, err := e.compareValues(a, best)
		if err != nil {
			return nil, true, err
		}
		if x.Name == "LEAST" && c < 0 || x.Name == "GREATEST" && c > 0 {
			best = a
		}
	}
	return best, true, nil
}

// substring is SUBSTRING(s, pos[, n]) in characters: pos 1 is the first,
// a negative pos counts from the end, pos 0 is the empty string.
func substring(s string, args []int64) string {
	r := []rune(s)
	pos := args[0]
	switch {
	case pos > 0:
		pos--
	case pos < 0:
		pos += int64(len(r))
		if pos < 0 {
			return ""
		}
	default:
		return ""
	}
	if pos >= int64(len(r)) {
		return ""
	}
	end := int64(len(r))
	if len(args) > 1 {
		n := args[1]
		if n <= 0 {
			return ""
		}
		end = min(end, pos+n)
	}
	return string(r[pos:end])
}

// locate is LOCATE(sub, s[, pos]): the 1-based character position of sub
// in s from pos on, 0 when absent; compared without regard to case.
func locate(sub, s string, args []int64) int64 {
	start := int64(1)
	if len(args) > 0 {
		start = args[0]
		if start < 1 {
			return 0
		}
	}
	r := []rune(strings.ToLower(s))
	if start > int64(len(r))+1 {
		return 0
	}
	rest := string(r[start-1:])
	i := strings.Index(rest, strings.ToLower(sub))
	if i < 0 {
		return 0
	}
	return start + int64(utf8.RuneCountInString(rest[:i]))
}

// checkStrings refuses comparing two strings where this evaluator's
// utf8mb3_general_ci would not be MariaDB's collation: without a FROM,
// two literals compare in the connection's collation, and a session may
// have set a case-sensitive one (SET NAMES ... COLLATE utf8mb4_bin). A view's column decides for itself (general_ci).
func (e *evalCtx) checkStrings(a, b any) error {
	_, aStr := a.(string)
	_, bStr := b.(string)
	if e.from || !aStr || !bStr {
		return nil
	}
	v, err := e.s.sysVar("collation_connection", sql.ScopeSession, 0)
	if err != nil {
		return err
	}
	if c, _ := v.(string); !strings.HasSuffix(c, "_ci") {
		return unsupported("comparing strings in collation " + c)
	}
	return nil
}

// compareValues orders two non-NULL values: two strings as
// utf8mb3_general_ci does (case and trailing spaces aside), two integers
// exactly, anything else as doubles.
func (e *evalCtx) compareValues(a, b any) (int, error) {
	if err := e.checkStrings(a, b); err != nil {
		return 0, err
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		return strings.Compare(strings.ToLower(strings.TrimRight(as, " ")), strings.ToLower(strings.TrimRight(bs, " "))), nil
	}
	if !aStr && !bStr {
		if _, ok := a.(float64); !ok {
			if _, ok := b.(float64); !ok {
				return compareInts(a, b), nil
			}
		}
	}
	x, err := toDouble(a)
	if err != nil {
		return 0, err
	}
	y, err := toDouble(b)
	switch {
	case err != nil:
		return 0, err
	case x < y:
		return -1, nil
	case x > y:
		return 1, nil
	}
	return 0, nil
}

// compareInts orders two int64/uint64 values exactly.
func compareInts(a, b any) int {
	sign := func(v any) (neg bool, mag uint64) {
		switch n := v.(type) {
		case int64:
			if n < 0 {
				return true, uint64(-n)
			}
			return false, uint64(n)
		case uint64:
			return false, n
		}
		return false, 0
	}
	an, am := sign(a)
	bn, bm := sign(b)
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case am == bm:
		return 0
	case (am < bm) != an:
		return -1
	}
	return 1
}

// toDouble reads a value as MariaDB does in numeric context. A string
// that is not a number all through is refused: MariaDB reads its numeric
// prefix ('12abc' is 12) with warning 1292, which this evaluator does not
// raise.
func toDouble(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		p, whole := numberPrefix(x)
		if !whole {
			return 0, unsupported("the string '" + x + "' as a number")
		}
		f, _ := strconv.ParseFloat(p, 64)
		return f, nil
	}
	return 0, nil
}

// intArg reads a function's integer argument (a position, a length).
func intArg(v any) (int64, error) {
	if n, ok := toInt(v); ok {
		return n, nil
	}
	f, err := toDouble(v)
	return int64(math.Round(f)), err
}

// numberPrefix is the longest prefix of s (after leading spaces) that
// reads as a decimal number, and whether it is all of s.
func numberPrefix(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t\n")
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
		digits++
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "0", false
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		if j < len(t) && t[j] >= '0' && t[j] <= '9' {
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return t[:i], i == len(t)
}
