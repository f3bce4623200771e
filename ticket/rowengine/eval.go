package rowengine

import (
	"cmp"
	mb "math/big"
	"strconv"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
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
	rd        *model.RowsDef
	db, table string
	row       []model.Datum
	now       time.Time
	warns     *[]model.Warning
	// lit caches literal conversions (per statement, as MariaDB converts
	// a constant once): key is the node.
	lit map[*model.RowExpr]val
	bad map[*model.RowExpr]bool // literals that are no date
	// lastID is set by LAST_INSERT_ID(expr).
	lastID    uint64
	setLastID bool
	// values is the row an INSERT ... ON DUPLICATE KEY UPDATE would have
	// inserted, which VALUES(col) reads (nil elsewhere).
	values []model.Datum
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
	// narrow keeps the catalogue's answers what they were before it
	// evaluated here (RowEval.Narrow): integer arithmetic only, and
	// litColl, when set, the connection collation in which two literal
	// strings are not compared.
	narrow  bool
	litColl string
	// inMemory: NewEval's evaluator (catalog.go), of rows read locally by
	// no replicated command, where the catalogue's ECase and ECall
	// evaluate.
	inMemory bool
}

// evalStrict is eval of a value an INSERT or UPDATE writes: under
// strictWarn, the first warning it raises is the statement's error.
func (env *evalEnv) evalStrict(x *model.RowExpr) (val, *model.Error) {
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
	*env.warns = append(*env.warns, model.Warning{Level: level, Code: code, Message: e.Message})
}

// colVal is a stored value as an evaluated one.
func colVal(c *model.RowCol, d model.Datum) val {
	if d.Null {
		return val{}
	}
	switch c.Kind {
	case model.ColInt:
		// An UNSIGNED column's values are unsigned in arithmetic (u - 10
		// below 0 is 1690, as in MariaDB).
		if n, err := strconv.ParseInt(d.S, 10, 64); err == nil && !(c.Int.Unsigned && n >= 0) {
			return val{k: vInt, i: n}
		}
		n, _ := strconv.ParseUint(d.S, 10, 64)
		return val{k: vUint, u: n}
	case model.ColDate:
		t, _ := time.Parse(dateFormat, d.S)
		return val{k: vTime, t: t, date: true}
	case model.ColDateTime, model.ColTimestamp:
		t, _ := time.Parse(dateTimeFormat, d.S)
		return val{k: vTime, t: t}
	}
	return val{k: vStr, s: d.S}
}

// litVal is a statement's literal as an evaluated value.
func litVal(v model.Value, now time.Time) (val, *model.Error) {
	switch v.Kind {
	case model.ValNull:
		return val{}, nil
	case model.ValInt:
		return val{k: vInt, i: v.Int}, nil
	case model.ValUint:
		return val{k: vUint, u: v.Uint}, nil
	case model.ValString:
		return val{k: vStr, s: v.Str}, nil
	case model.ValDecimal:
		r, ok := new(mb.Rat).SetString(v.Str)
		if !ok {
			return val{}, mysqlerr.NotSupported("the number " + v.Str)
		}
		return val{k: vDec, r: r, s: v.Str}, nil
	case model.ValNow:
		return val{k: vTime, t: now.UTC().Truncate(time.Second), now: true}, nil
	case model.ValTemporal:
		return temporalVal(v.Str, now)
	case model.ValDouble:
		return doubleVal(v.Str)
	}
	return val{}, mysqlerr.NotSupported("DEFAULT in an expression")
}

// eval computes x for the current row. It only dispatches: each
// operator's rules are the step named for it below, so that the
// operators a WHERE uses read one at a time.
func (env *evalEnv) eval(x *model.RowExpr) (val, *model.Error) {
	switch x.Op {
	case model.EVal:
		return env.literal(x)
	case model.ECol:
		return env.column(x)
	case model.EValues:
		return env.valuesCol(x)
	case model.EEq, model.ENe, model.ELt, model.ELe, model.EGt, model.EGe, model.ENullEq:
		return env.comparison(x)
	case model.ELike, model.ENotLike:
		return env.like(x)
	case model.EIsNull, model.EIsNotNull:
		v, e := env.eval(&x.Args[0])
		if e != nil {
			return val{}, e
		}
		return boolVal((v.k == vNull) == (x.Op == model.EIsNull)), nil
	case model.EIn, model.ENotIn:
		return env.in(x)
	case model.EBetween, model.ENotBetw:
		return env.between(x)
	case model.EAnd, model.EOr, model.EXor:
		return env.logic(x)
	case model.ENot:
		a, e := env.truth(&x.Args[0])
		if e != nil {
			return val{}, e
		}
		return not3(a).val(), nil
	case model.EAdd, model.ESub, model.EMul:
		return env.arith(x)
	case model.ENeg:
		zero := model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValInt}}
		return env.arith(&model.RowExpr{Op: model.ESub, Args: []model.RowExpr{zero, x.Args[0]}})
	case model.EInterval:
		return env.constInterval(x)
	case model.ELastID:
		return env.lastInsertID(x)
	case model.ECase, model.ECall:
		if !env.inMemory {
			// A replicated command never holds them (the wire layer's
			// row-table expressions refuse them), and a replica of an
			// older build could not apply one: refused alike everywhere.
			return val{}, mysqlerr.NotSupported("a catalogue function in a row-table statement")
		}
		if x.Op == model.ECase {
			return env.caseOf(x)
		}
		return env.call(x)
	}
	return val{}, mysqlerr.NotSupported("row expression operator " + strconv.Itoa(int(x.Op)))
}

// literal is a constant, converted once per statement (env.lit): MariaDB
// converts a constant once, and its warnings show it.
func (env *evalEnv) literal(x *model.RowExpr) (val, *model.Error) {
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
func (env *evalEnv) column(x *model.RowExpr) (val, *model.Error) {
	j := env.rd.ColIndex(x.Col)
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
func (env *evalEnv) valuesCol(x *model.RowExpr) (val, *model.Error) {
	j := env.rd.ColIndex(x.Col)
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
func (env *evalEnv) comparison(x *model.RowExpr) (val, *model.Error) {
	c, null, e := env.compare(&x.Args[0], &x.Args[1], x.Args)
	if e != nil {
		return val{}, e
	}
	if x.Op == model.ENullEq {
		return boolVal(c == 0 && !null || null && c == 2), nil
	}
	if null {
		return val{}, nil
	}
	var b bool
	switch x.Op {
	case model.EEq:
		b = c == 0
	case model.ENe:
		b = c != 0
	case model.ELt:
		b = c < 0
	case model.ELe:
		b = c <= 0
	case model.EGt:
		b = c > 0
	case model.EGe:
		b = c >= 0
	}
	return boolVal(b), nil
}

// like is LIKE and NOT LIKE, matched in the collation of the operands'
// string columns, as a comparison is.
func (env *evalEnv) like(x *model.RowExpr) (val, *model.Error) {
	a, e := env.eval(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	p, e := env.eval(&x.Args[1])
	if e != nil || a.k == vNull || p.k == vNull {
		return val{}, e
	}
	if e := env.literalStrings(a, p); e != nil {
		return val{}, e
	}
	coll := collFor(env.rd, x.Args)
	m := likeMatch(likeRunes(coll, a.text()), likePattern(coll, p.text()), rune(x.Escape))
	return boolVal(m == (x.Op == model.ELike)), nil
}

// in is IN and NOT IN: each item compared in turn under the group's
// type rules, a NULL among the items unknown when none matched.
func (env *evalEnv) in(x *model.RowExpr) (val, *model.Error) {
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
			return boolVal(x.Op == model.EIn), nil
		}
	}
	if sawNull {
		return val{}, nil
	}
	return boolVal(x.Op == model.ENotIn), nil
}

// between is BETWEEN and NOT BETWEEN as SQL's three-valued AND of the
// two bounds' comparisons.
func (env *evalEnv) between(x *model.RowExpr) (val, *model.Error) {
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
	if x.Op == model.ENotBetw {
		r = not3(r)
	}
	return r.val(), nil
}

// logic is AND, OR and XOR in three-valued logic; AND and OR do not
// evaluate their right side when the left decides, so that its errors
// and warnings are MariaDB's.
func (env *evalEnv) logic(x *model.RowExpr) (val, *model.Error) {
	a, e := env.truth(&x.Args[0])
	if e != nil {
		return val{}, e
	}
	if x.Op == model.EAnd && a == tFalse {
		return boolVal(false), nil
	}
	if x.Op == model.EOr && a == tTrue {
		return boolVal(true), nil
	}
	b, e := env.truth(&x.Args[1])
	if e != nil {
		return val{}, e
	}
	switch x.Op {
	case model.EAnd:
		return and3(a, b).val(), nil
	case model.EOr:
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
func (env *evalEnv) constInterval(x *model.RowExpr) (val, *model.Error) {
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
func (env *evalEnv) lastInsertID(x *model.RowExpr) (val, *model.Error) {
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
func (env *evalEnv) truth(x *model.RowExpr) (truth, *model.Error) {
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
func (env *evalEnv) matches(x *model.RowExpr) (bool, *model.Error) {
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
func (env *evalEnv) compare(ax, bx *model.RowExpr, group []model.RowExpr) (c int, null bool, e *model.Error) {
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
		if e := env.literalStrings(a, b); e != nil {
			return 0, false, e
		}
		return compareColl(collFor(env.rd, group), a.s, b.s), false, nil
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
		return cmp.Compare(a.u, b.u), false, nil
	case a.k == vInt && b.k == vUint:
		if a.i < 0 {
			return -1, false, nil
		}
		return cmp.Compare(uint64(a.i), b.u), false, nil
	case a.k == vUint && b.k == vInt:
		if b.i < 0 {
			return 1, false, nil
		}
		return cmp.Compare(a.u, uint64(b.i)), false, nil
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
func constExpr(x *model.RowExpr) bool {
	switch x.Op {
	case model.ECol, model.EValues, model.ELastID:
		return false
	}
	for i := range x.Args {
		if !constExpr(&x.Args[i]) {
			return false
		}
	}
	return true
}
