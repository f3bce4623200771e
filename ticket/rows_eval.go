package ticket

import (
	"math"
	mb "math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The row engine's expression language: the WHERE predicates, SET
// expressions and aggregates of SELECT, UPDATE and DELETE on row tables,
// evaluated with MariaDB 10.11's type rules. It is part of the replicated
// command (RowsCommand), so its numbers are part of the log format: never
// renumber an ExprOp, only append.
//
// The rules implemented, each checked against MariaDB in the integration
// differential test:
//   - a comparison of two strings uses the collation of the string
//     columns among its operands (collFor): the column's, of two columns
//     of one character set the _bin one, of utf8mb3 and utf8mb4 the
//     utf8mb4 one; of literals only, the connection's,
//     utf8mb4_general_ci (case-insensitive, trailing spaces ignored: PAD
//     SPACE); a literal beyond utf8mb3 against a utf8mb3 column is
//     MariaDB's "Illegal mix of collations" (checkCollMix);
//   - a number compared with a string compares as DECIMAL: the string is
//     converted (leading spaces skipped, its numeric prefix taken) with
//     warning 1292 when something was cut (a Note when only spaces were);
//     a literal is converted once per statement, a column's value once per
//     row, as MariaDB's warnings show;
//   - a DATE/DATETIME/TIMESTAMP compared with a string or a number
//     compares as DATETIME ('2024-01-01' is midnight; 20240101 too); a
//     string that is no date matches nothing, with warning 1292;
//   - integers compare exactly (signed against unsigned too), decimals
//     exactly (a math/mb.Rat), an integer with a decimal exactly;
//   - NULL: comparisons are unknown, <=> is NULL-safe, IN and BETWEEN and
//     AND/OR/NOT follow SQL's three-valued logic.

// ExprOp says what a RowExpr computes.
type ExprOp uint8

// Expression operators. The numbers are part of the replicated log format.
const (
	EVal       ExprOp = 1  // Val
	ECol       ExprOp = 2  // the column Col of the current row
	EEq        ExprOp = 3  // Args[0] = Args[1]
	ENe        ExprOp = 4  // <>, !=
	ELt        ExprOp = 5  // <
	ELe        ExprOp = 6  // <=
	EGt        ExprOp = 7  // >
	EGe        ExprOp = 8  // >=
	ENullEq    ExprOp = 9  // <=>
	EIsNull    ExprOp = 10 // Args[0] IS NULL
	EIsNotNull ExprOp = 11 // Args[0] IS NOT NULL
	EIn        ExprOp = 12 // Args[0] IN (Args[1:])
	ENotIn     ExprOp = 13 // Args[0] NOT IN (Args[1:])
	EBetween   ExprOp = 14 // Args[0] BETWEEN Args[1] AND Args[2]
	ENotBetw   ExprOp = 15 // NOT BETWEEN
	EAnd       ExprOp = 16
	EOr        ExprOp = 17
	ENot       ExprOp = 18
	EAdd       ExprOp = 19
	ESub       ExprOp = 20
	EMul       ExprOp = 21
	EInterval  ExprOp = 22 // Args[0] + INTERVAL Args[1] Unit (Args[1] negated for -)
	ELastID    ExprOp = 23 // LAST_INSERT_ID(Args[0])
	ENeg       ExprOp = 24 // -Args[0]
	EXor       ExprOp = 25
	ELike      ExprOp = 26 // Args[0] LIKE Args[1] ESCAPE Escape
	ENotLike   ExprOp = 27
	// EValues is VALUES(Col) in ON DUPLICATE KEY UPDATE: the value the
	// row being inserted would have had (NULL elsewhere, as in MariaDB).
	EValues ExprOp = 28
)

// RowExpr is one node of a row-table expression.
type RowExpr struct {
	Op   ExprOp
	Col  string `json:",omitempty"`
	Val  *Value `json:",omitempty"`
	Unit string `json:",omitempty"` // EInterval: SECOND, MINUTE, HOUR, DAY, WEEK
	// Escape is ELike's escape character (0: none).
	Escape byte      `json:",omitempty"`
	Args   []RowExpr `json:",omitempty"`
}

// RowAssign is one assignment of an UPDATE in expression form: Col = Expr,
// or Col = DEFAULT when Default is set.
type RowAssign struct {
	Col     string
	Expr    RowExpr
	Default bool `json:",omitempty"`
}

// RowOrder is one ORDER BY term of an UPDATE or DELETE.
type RowOrder struct {
	Col  string
	Desc bool `json:",omitempty"`
}

// Mode is the part of the session's sql_mode that changes what a write
// does. Its zero value is MariaDB's default (strict); it travels in the
// command because every replica must apply the statement alike.
type Mode struct {
	NotStrict         bool `json:",omitempty"` // neither STRICT_TRANS_TABLES nor STRICT_ALL_TABLES
	NoAutoValueOnZero bool `json:",omitempty"` // NO_AUTO_VALUE_ON_ZERO
}

// vkind is the type of an evaluated value.
type vkind uint8

const (
	vNull vkind = iota
	vInt        // i
	vUint       // u (above the int64 range, or an unsigned column's value)
	vDec        // r, with text: the literal as written or the computed value
	vStr        // s
	vTime       // t; date says DATE (no time part)
)

// val is an evaluated value.
type val struct {
	k    vkind
	i    int64
	u    uint64
	r    *mb.Rat
	s    string // vStr; vDec's text
	t    time.Time
	date bool
	// now marks NOW() itself, the entry's time, which is stored as it is
	// (a test's log entry may carry none).
	now bool
	// dbl marks a vDec that is a DOUBLE parameter (values_typed.go): r is
	// its exact value, s MariaDB's text of it.
	dbl bool
	// clock marks a vTime that is a TIME parameter: t is it on the
	// statement's date, s its text.
	clock bool
}

func (v val) isNum() bool { return v.k == vInt || v.k == vUint || v.k == vDec }

// rat is a numeric value as an exact rational.
func (v val) rat() *mb.Rat {
	switch v.k {
	case vInt:
		return new(mb.Rat).SetInt64(v.i)
	case vUint:
		return new(mb.Rat).SetUint64(v.u)
	case vDec:
		return v.r
	}
	return new(mb.Rat)
}

// text is the value as MariaDB renders it in a string context.
func (v val) text() string {
	switch v.k {
	case vInt:
		return strconv.FormatInt(v.i, 10)
	case vUint:
		return strconv.FormatUint(v.u, 10)
	case vDec:
		return v.s
	case vTime:
		switch {
		case v.clock:
			return v.s
		case v.date:
			return v.t.Format(dateFormat)
		case v.t.Nanosecond() != 0:
			// A parameter's microseconds, shown as MariaDB shows them.
			return v.t.Format(dateTimeFormat + ".000000")
		}
		return v.t.Format(dateTimeFormat)
	}
	return v.s
}

// evalEnv is what an expression sees: the table, the current row, the
// statement's time, and where warnings go.
type evalEnv struct {
	rd        *RowsDef
	db, table string
	row       []Datum
	now       time.Time
	warns     *[]Warning
	// lit caches literal conversions (per statement, as MariaDB converts
	// a constant once): key is the node.
	lit map[*RowExpr]val
	bad map[*RowExpr]bool // literals that are no date
	// lastID is set by LAST_INSERT_ID(expr).
	lastID    uint64
	setLastID bool
	// values is the row an INSERT ... ON DUPLICATE KEY UPDATE would have
	// inserted, which VALUES(col) reads (nil elsewhere).
	values []Datum
	// unknown, when not nil, marks columns of row that an expression in
	// an INSERT's VALUES may not read (preInsertRow).
	unknown []bool
	// older applies the rules of builds before RulesV11 (temporal
	// literals in the padded forms only).
	older bool
	// strictWarn makes the first warning of an INSERT's or UPDATE's
	// expression the statement's error (evalStrict), as MariaDB's strict
	// mode does (RulesV11).
	strictWarn bool
}

// evalStrict is eval of a value an INSERT or UPDATE writes: under
// strictWarn, the first warning it raises is the statement's error.
func (env *evalEnv) evalStrict(x *RowExpr) (val, *Error) {
	n := len(*env.warns)
	v, e := env.eval(x)
	if e == nil && env.strictWarn {
		e = firstWarning(*env.warns, n)
	}
	return v, e
}

func (env *evalEnv) warn(level string, code uint16, format string, args ...any) {
	if env.warns == nil {
		return
	}
	e := mysqlerr.New(code, format, args...)
	*env.warns = append(*env.warns, Warning{Level: level, Code: code, Message: e.Message})
}

// colVal is a stored value as an evaluated one.
func colVal(c *RowCol, d Datum) val {
	if d.Null {
		return val{}
	}
	switch c.Kind {
	case ColInt:
		// An UNSIGNED column's values are unsigned in arithmetic (u - 10
		// below 0 is 1690, as in MariaDB).
		if n, err := strconv.ParseInt(d.S, 10, 64); err == nil && !(c.Int.Unsigned && n >= 0) {
			return val{k: vInt, i: n}
		}
		n, _ := strconv.ParseUint(d.S, 10, 64)
		return val{k: vUint, u: n}
	case ColDate:
		t, _ := time.Parse(dateFormat, d.S)
		return val{k: vTime, t: t, date: true}
	case ColDateTime, ColTimestamp:
		t, _ := time.Parse(dateTimeFormat, d.S)
		return val{k: vTime, t: t}
	}
	return val{k: vStr, s: d.S}
}

// litVal is a statement's literal as an evaluated value.
func litVal(v Value, now time.Time) (val, *Error) {
	switch v.Kind {
	case ValNull:
		return val{}, nil
	case ValInt:
		return val{k: vInt, i: v.Int}, nil
	case ValUint:
		return val{k: vUint, u: v.Uint}, nil
	case ValString:
		return val{k: vStr, s: v.Str}, nil
	case ValDecimal:
		r, ok := new(mb.Rat).SetString(v.Str)
		if !ok {
			return val{}, mysqlerr.NotSupported("the number " + v.Str)
		}
		return val{k: vDec, r: r, s: v.Str}, nil
	case ValNow:
		return val{k: vTime, t: now.UTC().Truncate(time.Second), now: true}, nil
	case ValTemporal:
		return temporalVal(v.Str, now)
	case ValDouble:
		return doubleVal(v.Str)
	}
	return val{}, mysqlerr.NotSupported("DEFAULT in an expression")
}

// eval computes x for the current row. It only dispatches: each
// operator's rules are the step named for it below, so that the
// operators a WHERE uses read one at a time.
func (env *evalEnv) eval(x *RowExpr) (val, *Error) {
	switch x.Op {
	case EVal:
		return env.literal(x)
	case ECol:
		return env.column(x)
	case EValues:
		return env.valuesCol(x)
	case EEq, ENe, ELt, ELe, EGt, EGe, ENullEq:
		return env.comparison(x)
	case ELike, ENotLike:
		return env.like(x)
	case EIsNull, EIsNotNull:
		v, e := env.eval(&x.Args[0])
		if e != nil {
			return val{}, e
		}
		return boolVal((v.k == vNull) == (x.Op == EIsNull)), nil
	case EIn, ENotIn:
		return env.in(x)
	case EBetween, ENotBetw:
		return env.between(x)
	case EAnd, EOr, EXor:
		return env.logic(x)
	case ENot:
		a, e := env.truth(&x.Args[0])
		if e != nil {
			return val{}, e
		}
		return not3(a).val(), nil
	case EAdd, ESub, EMul:
		return env.arith(x)
	case ENeg:
		zero := RowExpr{Op: EVal, Val: &Value{Kind: ValInt}}
		return env.arith(&RowExpr{Op: ESub, Args: []RowExpr{zero, x.Args[0]}})
	case EInterval:
		return env.constInterval(x)
	case ELastID:
		return env.lastInsertID(x)
	}
	return val{}, mysqlerr.NotSupported("row expression operator " + strconv.Itoa(int(x.Op)))
}

// literal is a constant, converted once per statement (env.lit): MariaDB
// converts a constant once, and its warnings show it.
func (env *evalEnv) literal(x *RowExpr) (val, *Error) {
	if v, ok := env.lit[x]; ok {
		return v, nil
	}
	if x.Val == nil {
		return val{}, nil
	}
	v, e := litVal(*x.Val, env.now)
	if e == nil && env.lit != nil {
		env.lit[x] = v
	}
	return v, e
}

// column is a column of the current row; where there is no row, or an
// INSERT's VALUES reads a column not yet filled, ticketd refuses what
// MariaDB would answer from a record it does not have.
func (env *evalEnv) column(x *RowExpr) (val, *Error) {
	j := env.rd.colIndex(x.Col)
	if j < 0 {
		return val{}, mysqlerr.UnknownColumn(x.Col, "field list")
	}
	if env.row == nil {
		return val{}, mysqlerr.NotSupported("a column reference here")
	}
	if env.unknown != nil && env.unknown[j] {
		return val{}, mysqlerr.NotSupported("a column in VALUES that holds no value yet (a zero date or a CURRENT_TIMESTAMP default)")
	}
	return colVal(&env.rd.Cols[j], env.row[j]), nil
}

// valuesCol is VALUES(col) in ON DUPLICATE KEY UPDATE: the row that was
// to be inserted, NULL anywhere else (as MariaDB answers).
func (env *evalEnv) valuesCol(x *RowExpr) (val, *Error) {
	j := env.rd.colIndex(x.Col)
	if j < 0 {
		return val{}, mysqlerr.UnknownColumn(x.Col, "field list")
	}
	if env.values == nil {
		return val{}, nil
	}
	return colVal(&env.rd.Cols[j], env.values[j]), nil
}

// comparison is =, <>, <, <=, >, >= and <=>: one compare under the
// pair's type rules, then the operator's reading of its outcome (NULL
// unknown, except for <=>).
func (env *evalEnv) comparison(x *RowExpr) (val, *Error) {
	c, null, e := env.compare(&x.Args[0], &x.Args[1], x.Args)
	if e != nil {
		return val{}, e
	}
	if x.Op == ENullEq {
		return boolVal(c == 0 && !null || null && c == 2), nil
	}
	if null {
		return val{}, nil
	}
	var b bool
	switch x.Op {
	case EEq:
		b = c == 0
	case ENe:
		b = c != 0
	case ELt:
		b = c < 0
	case ELe:
		b = c <= 0
	case EGt:
		b = c > 0
	case EGe:
		b = c >= 0
	}
	return boolVal(b), nil
}

// like is LIKE and NOT LIKE, matched in the collation of the operands'
// string columns, as a comparison is.
func (env *evalEnv) like(x *RowExpr) (val, *Error) {
	a, e := env.eval(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	p, e := env.eval(&x.Args[1])
	if e != nil || a.k == vNull || p.k == vNull {
		return val{}, e
	}
	coll := env.rd.collFor(x.Args)
	m := likeMatch(likeRunes(coll, a.text()), likePattern(coll, p.text()), rune(x.Escape))
	return boolVal(m == (x.Op == ELike)), nil
}

// in is IN and NOT IN: each item compared in turn under the group's
// type rules, a NULL among the items unknown when none matched.
func (env *evalEnv) in(x *RowExpr) (val, *Error) {
	sawNull := false
	for i := 1; i < len(x.Args); i++ {
		c, null, e := env.compare(&x.Args[0], &x.Args[i], x.Args)
		if e != nil {
			return val{}, e
		}
		if null {
			sawNull = true
			continue
		}
		if c == 0 {
			return boolVal(x.Op == EIn), nil
		}
	}
	if sawNull {
		return val{}, nil
	}
	return boolVal(x.Op == ENotIn), nil
}

// between is BETWEEN and NOT BETWEEN as SQL's three-valued AND of the
// two bounds' comparisons.
func (env *evalEnv) between(x *RowExpr) (val, *Error) {
	lo, nlo, e := env.compare(&x.Args[0], &x.Args[1], x.Args)
	if e != nil {
		return val{}, e
	}
	hi, nhi, e := env.compare(&x.Args[0], &x.Args[2], x.Args)
	if e != nil {
		return val{}, e
	}
	// Three-valued AND of x >= lo and x <= hi.
	r := and3(tv(lo >= 0, nlo), tv(hi <= 0, nhi))
	if x.Op == ENotBetw {
		r = not3(r)
	}
	return r.val(), nil
}

// logic is AND, OR and XOR in three-valued logic; AND and OR do not
// evaluate their right side when the left decides, so that its errors
// and warnings are MariaDB's.
func (env *evalEnv) logic(x *RowExpr) (val, *Error) {
	a, e := env.truth(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	if x.Op == EAnd && a == tFalse {
		return boolVal(false), nil
	}
	if x.Op == EOr && a == tTrue {
		return boolVal(true), nil
	}
	b, e := env.truth(&x.Args[1])
	if e != nil {
		return val{}, e
	}
	switch x.Op {
	case EAnd:
		return and3(a, b).val(), nil
	case EOr:
		return not3(and3(not3(a), not3(b))).val(), nil
	}
	if a == tNull || b == tNull {
		return val{}, nil
	}
	return boolVal(a != b), nil
}

// constInterval is date + INTERVAL, computed once per statement when
// constant (NOW() - INTERVAL 2 SECOND against every row of a scan): it
// was over half the CPU of a worker-id claim's 1,024-row scan. One that
// warned is computed again, so that its warnings stay per row.
func (env *evalEnv) constInterval(x *RowExpr) (val, *Error) {
	if v, ok := env.lit[x]; ok {
		return v, nil
	}
	warns := env.warnCount()
	v, e := env.interval(x)
	if e == nil && env.lit != nil && env.warnCount() == warns && constExpr(x) {
		env.lit[x] = v
	}
	return v, e
}

// lastInsertID is LAST_INSERT_ID(expr): its value, which the statement's
// result then carries as the session's LAST_INSERT_ID().
func (env *evalEnv) lastInsertID(x *RowExpr) (val, *Error) {
	if len(x.Args) == 0 {
		// LAST_INSERT_ID() without an argument is the session's, which
		// the wire layer writes in as a literal wherever it allows it.
		return val{}, mysqlerr.NotSupported("LAST_INSERT_ID() here")
	}
	v, e := env.eval(&x.Args[0])
	if e != nil || v.k == vNull {
		return v, e
	}
	n, ok := toUint64(v)
	if !ok {
		return val{}, mysqlerr.NotSupported("LAST_INSERT_ID() of this value")
	}
	env.lastID, env.setLastID = n, true
	return v, nil
}

func toUint64(v val) (uint64, bool) {
	switch v.k {
	case vInt:
		return uint64(v.i), true // MariaDB keeps the two's complement
	case vUint:
		return v.u, true
	}
	return 0, false
}

// truth values of three-valued logic.
type truth uint8

const (
	tFalse truth = iota
	tTrue
	tNull
)

func tv(b, null bool) truth {
	switch {
	case null:
		return tNull
	case b:
		return tTrue
	}
	return tFalse
}

func and3(a, b truth) truth {
	switch {
	case a == tFalse || b == tFalse:
		return tFalse
	case a == tNull || b == tNull:
		return tNull
	}
	return tTrue
}

func not3(a truth) truth {
	switch a {
	case tTrue:
		return tFalse
	case tFalse:
		return tTrue
	}
	return tNull
}

func (t truth) val() val {
	if t == tNull {
		return val{}
	}
	return boolVal(t == tTrue)
}

func boolVal(b bool) val {
	if b {
		return val{k: vInt, i: 1}
	}
	return val{k: vInt}
}

// truth evaluates x as a condition: a number is true when not zero, a
// string by its numeric value (with MariaDB's warning), NULL unknown.
func (env *evalEnv) truth(x *RowExpr) (truth, *Error) {
	v, e := env.eval(x)
	if e != nil {
		return tFalse, e
	}
	switch v.k {
	case vNull:
		return tNull, nil
	case vInt:
		return tv(v.i != 0, false), nil
	case vUint:
		return tv(v.u != 0, false), nil
	case vDec:
		return tv(v.r.Sign() != 0, false), nil
	case vTime:
		return tTrue, nil
	}
	r := env.strDecimal(v.s, "DOUBLE")
	return tv(r.Sign() != 0, false), nil
}

// Matches evaluates a WHERE predicate on a row: true only when it is
// true (not false, not NULL).
func (env *evalEnv) matches(x *RowExpr) (bool, *Error) {
	if x == nil {
		return true, nil
	}
	t, e := env.truth(x)
	return t == tTrue, e
}

// compare evaluates and compares two operands of the operation over
// group (a comparison's two, IN's or BETWEEN's all) with MariaDB's rules.
// c is -1, 0 or 1; null is set when either side is NULL (c is then 2 if
// both are, for <=>).
func (env *evalEnv) compare(ax, bx *RowExpr, group []RowExpr) (c int, null bool, e *Error) {
	a, e := env.eval(ax)
	if e != nil {
		return 0, false, e
	}
	b, e := env.eval(bx)
	if e != nil {
		return 0, false, e
	}
	if a.k == vNull || b.k == vNull {
		if a.k == vNull && b.k == vNull {
			return 2, true, nil
		}
		return 0, true, nil
	}
	switch {
	case a.k == vStr && b.k == vStr:
		return compareColl(env.rd.collFor(group), a.s, b.s), false, nil
	case (a.clock && !isDate(b)) || (b.clock && !isDate(a)):
		return env.compareClock(a, b)
	case (isDate(a) && b.isNum()) || (isDate(b) && a.isNum()):
		if c, ok := env.bigintConst(a, b, ax, bx); ok {
			return c, false, nil
		}
		fallthrough
	case a.k == vTime || b.k == vTime:
		if (a.k != vTime && zeroDate(a.text())) || (b.k != vTime && zeroDate(b.text())) {
			return 0, false, mysqlerr.NotSupported("zero dates")
		}
		ta, ok, e := env.toTime(a, ax)
		if e != nil || !ok {
			return 0, true, e
		}
		tb, ok, e := env.toTime(b, bx)
		if e != nil || !ok {
			return 0, true, e
		}
		return ta.Compare(tb), false, nil
	case a.k == vInt && b.k == vInt:
		return cmpInt(a.i, b.i), false, nil
	case a.k == vUint && b.k == vUint:
		return cmpUint(a.u, b.u), false, nil
	case a.k == vInt && b.k == vUint:
		if a.i < 0 {
			return -1, false, nil
		}
		return cmpUint(uint64(a.i), b.u), false, nil
	case a.k == vUint && b.k == vInt:
		if b.i < 0 {
			return 1, false, nil
		}
		return cmpUint(a.u, uint64(b.i)), false, nil
	}
	// A number against a number or a string: as DECIMAL (as DOUBLE with
	// a DOUBLE operand, but against an integer: values_typed.go).
	ra := env.numeric(a, ax)
	rb := env.numeric(b, bx)
	if (a.dbl && !b.isInt()) || (b.dbl && !a.isInt()) {
		return cmpDouble(ra, rb), false, nil
	}
	return ra.Cmp(rb), false, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// numeric is v as a DECIMAL; a string literal's conversion (and its
// warning) is cached for the statement.
func (env *evalEnv) numeric(v val, x *RowExpr) *mb.Rat {
	if v.k != vStr {
		return v.rat()
	}
	if x.Op == EVal && env.lit != nil {
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
	prefix, rest := numericPrefix(s)
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

// numericPrefix splits s (leading whitespace dropped) into the longest
// prefix that is a number ([+-]digits[.digits][e[+-]digits]) and the rest.
func numericPrefix(s string) (string, string) {
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
func (env *evalEnv) arith(x *RowExpr) (val, *Error) {
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
	if a.k == vStr || b.k == vStr || a.k == vTime || b.k == vTime {
		return val{}, mysqlerr.NotSupported("arithmetic on a string or a date")
	}
	op := map[ExprOp]byte{EAdd: '+', ESub: '-', EMul: '*'}[x.Op]
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
func exprText(x *RowExpr) string {
	switch x.Op {
	case ECol:
		return "`" + x.Col + "`"
	case EVal:
		if x.Val != nil {
			v, _ := litVal(*x.Val, time.Time{})
			return v.text()
		}
	}
	return "..."
}

// interval is NOW() + INTERVAL n unit (and -).
func (env *evalEnv) interval(x *RowExpr) (val, *Error) {
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
		var e *Error
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

// warnCount is the number of warnings raised so far.
func (env *evalEnv) warnCount() int {
	if env.warns == nil {
		return 0
	}
	return len(*env.warns)
}

// constExpr reports an expression whose value is the same for every row
// of a statement: no column, no VALUES(col), no LAST_INSERT_ID(expr)
// (which sets the session's value as it goes).
func constExpr(x *RowExpr) bool {
	switch x.Op {
	case ECol, EValues, ELastID:
		return false
	}
	for i := range x.Args {
		if !constExpr(&x.Args[i]) {
			return false
		}
	}
	return true
}

// strColl is the collation of x's value when x is a string column
// (ECol, VALUES(col)): derivation IMPLICIT in MariaDB's terms. ok is
// false for anything else; a literal's collation is the connection's
// (COERCIBLE), which gives way to a column's.
func (rd *RowsDef) strColl(x *RowExpr) (c Collation, ok bool) {
	if x.Op != ECol && x.Op != EValues {
		return 0, false
	}
	j := rd.colIndex(x.Col)
	if j < 0 || rd.Cols[j].Kind != ColString {
		return 0, false
	}
	return rd.collOf(&rd.Cols[j]), true
}

// colColls reports a column with a collation of its own.
func (rd *RowsDef) colColls() bool {
	for i := range rd.Cols {
		if rd.Cols[i].Collation != CollLegacy {
			return true
		}
	}
	return false
}

// collFor is the collation two strings among the operands group of one
// operation compare by: the string columns' aggregated (aggColl), or,
// with none, the connection's, utf8mb4_general_ci (CollLegacy in a table
// of that folding, which it keeps for all its comparisons).
func (rd *RowsDef) collFor(group []RowExpr) Collation {
	if rd.Collation == CollLegacy {
		return CollLegacy
	}
	if rd.Collation == CollGeneralCI && !rd.colColls() {
		return CollGeneralCI // every column's, and the literals'
	}
	c, seen := CollGeneralCI, false
	for i := range group {
		if gc, ok := rd.strColl(&group[i]); ok {
			if !seen {
				c, seen = gc, true
				continue
			}
			c = aggColl(c, gc)
		}
	}
	return c
}

// collOps names the operations whose operands MariaDB aggregates a
// collation over, as its "Illegal mix of collations" says them.
var collOps = map[ExprOp]string{
	EEq: "=", ENe: "<>", ELt: "<", ELe: "<=", EGt: ">", EGe: ">=", ENullEq: "<=>",
	EIn: "in", ENotIn: "in", EBetween: "between", ENotBetw: "between", ELike: "like", ENotLike: "like",
}

// checkCollMix is MariaDB's refusal of an operation that compares a
// utf8mb3 column with a string literal holding a character beyond the
// BMP: the literal cannot be converted to the column's character set
// (1267, 1270 or 1271, whether or not any row is read).
func checkCollMix(rd *RowsDef, x *RowExpr) *Error {
	op, ok := collOps[x.Op]
	if !ok || rd.Collation == CollLegacy {
		return nil
	}
	var c Collation
	seen, wide := false, false
	for i := range x.Args {
		a := &x.Args[i]
		if ac, ok := rd.strColl(a); ok {
			if !seen {
				c, seen = ac, true
			} else {
				c = aggColl(c, ac)
			}
			continue
		}
		if a.Op != EVal || a.Val == nil || a.Val.Kind != ValString {
			continue // a number, a date or NULL: no collation to convert to
		}
		for _, r := range a.Val.Str {
			wide = wide || r > 0xFFFF
		}
	}
	if !seen || !wide || !c.MB3() {
		return nil
	}
	names := make([]string, len(x.Args))
	for i := range x.Args {
		a := &x.Args[i]
		ac, isCol := rd.strColl(a)
		switch {
		case isCol:
			names[i] = "(" + ac.String() + ",IMPLICIT)"
		case a.Op == EVal && a.Val != nil && a.Val.Kind == ValString:
			names[i] = "(" + CollGeneralCI.String() + ",COERCIBLE)"
		case a.Op == EVal && (a.Val == nil || a.Val.Kind == ValNull):
			names[i] = "(binary,IGNORABLE)"
		default:
			// MariaDB's numbers and dates: my_charset_numeric.
			names[i] = "(latin1_swedish_ci,NUMERIC)"
		}
	}
	switch len(names) {
	case 2:
		return mysqlerr.New(mysqlerr.CodeCollationMix2, "Illegal mix of collations %s and %s for operation '%s'", names[0], names[1], op)
	case 3:
		return mysqlerr.New(mysqlerr.CodeCollationMix3, "Illegal mix of collations %s, %s, %s for operation '%s'", names[0], names[1], names[2], op)
	}
	return mysqlerr.New(mysqlerr.CodeCollationMixN, "Illegal mix of collations for operation '%s'", op)
}
