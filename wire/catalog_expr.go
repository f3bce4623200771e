package wire

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Expressions outside a row table: a SELECT without FROM, the select
// list and WHERE of an information_schema view, the select list of a
// ticket table or sequence, SET's values. The row engine evaluates them
// (rowengine.NewEval), over the current row of the source as Datum rows
// (rowsDefOf), or over its one-row Dual; this file only makes the
// expression: the session's values (variables, DATABASE(), USER(),
// LAST_INSERT_ID(), NOW(), NEXTVAL) written in as literals, placeholders
// bound, IF and IFNULL as CASE, the catalogue's functions as ECall.
//
// The answers stay those of the catalogue's own evaluator this replaced
// (issue 33): what it refused is still refused (rowengine's Narrow, and
// any conversion MariaDB warns about, whose warnings ticketd did not
// raise here), and over a ticket table or sequence comparisons and the
// catalogue's functions are refused.

// eval computes x for the current row (none without a FROM); values are
// nil, int64, uint64, float64 (a DECIMAL or DOUBLE) or string.
func (e *evalCtx) eval(x *sql.Expr) (any, error) {
	if x.Kind == sql.ExprSequence {
		return e.sequence(x)
	}
	rx, err := e.rowExpr(x, "field list")
	if err != nil {
		return nil, err
	}
	out, err := e.evalRow(&rx)
	if err != nil || out.Null {
		return nil, err
	}
	switch {
	case out.Decimal:
		if f, err := strconv.ParseFloat(out.S, 64); err == nil {
			return f, nil
		}
	case out.Kind == model.ColInt && out.Unsigned:
		return strconv.ParseUint(out.S, 10, 64)
	case out.Kind == model.ColInt:
		return strconv.ParseInt(out.S, 10, 64)
	}
	return out.S, nil
}

// match reports whether the condition x is true for the current row.
func (e *evalCtx) match(x *sql.Expr) (bool, error) {
	rx, err := e.rowExpr(x, "where clause")
	if err != nil {
		return false, err
	}
	ev, row, err := e.evaluator(&rx)
	if err != nil {
		return false, err
	}
	n := len(*ev.warns)
	ok, me := ev.Match(&rx, row)
	if me != nil {
		return false, me
	}
	return ok, ev.refuseWarned(n)
}

// evalRow evaluates rx, written by rowExpr, for the current row.
func (e *evalCtx) evalRow(rx *model.RowExpr) (rowengine.Out, error) {
	ev, row, err := e.evaluator(rx)
	if err != nil {
		return rowengine.Out{}, err
	}
	n := len(*ev.warns)
	out, me := ev.Value(rx, row)
	if me != nil {
		return out, me
	}
	return out, ev.refuseWarned(n)
}

// narrowEval is the row engine's evaluator with the warnings it raised.
type narrowEval struct {
	*rowengine.RowEval
	warns *[]model.Warning
}

// refuseWarned refuses an answer whose evaluation warned (from the n-th
// warning on): the catalogue's evaluator refused those conversions, and
// its answers stay as they were.
func (ev narrowEval) refuseWarned(n int) error {
	if w := *ev.warns; len(w) > n {
		return unsupported("a conversion MariaDB warns about here (" + w[n].Message + ")")
	}
	return nil
}

// evaluator is the row engine's evaluator over e's rows, with the row to
// read (Dual's without a FROM).
func (e *evalCtx) evaluator(rx *model.RowExpr) (narrowEval, []model.Datum, error) {
	rd, row := rowengine.Dual, rowengine.DualRow
	if e.cols != nil {
		rd, row = e.rowsDef(), e.datums()
	}
	e.warns = e.warns[:0]
	e.ev.Reset(rd, e.s.now(), &e.warns)
	ev := narrowEval{&e.ev, &e.warns}
	conn := ""
	if !e.from {
		// Two literals compare in the connection's collation, which the
		// row engine gives only as utf8mb4_general_ci.
		v, err := e.s.sysVar("collation_connection", sql.ScopeSession, 0)
		if err != nil {
			return ev, nil, err
		}
		if c, _ := v.(string); !strings.HasSuffix(c, "_ci") {
			conn = c
		}
	}
	ev.Narrow(conn)
	if me := ev.Check(rx); me != nil {
		return ev, nil, me
	}
	return ev, row, nil
}

// rowsDefOf describes e's columns to the row engine: an integer column as
// BIGINT (UNSIGNED when flagged), anything else as a utf8mb3_general_ci
// string, as information_schema's views are.
func (e *evalCtx) rowsDef() *model.RowsDef {
	if e.rd != nil {
		return e.rd
	}
	rs := rowset{cols: e.cols, rows: e.rows}
	rd := &model.RowsDef{Collation: model.CollGeneralCI3, Cols: make([]model.RowCol, len(e.cols))}
	for i, c := range e.cols {
		rd.Cols[i] = model.RowCol{Name: c.name, Kind: model.ColString}
		if typ, flag := rs.typeOf(i); isIntType(typ) {
			rd.Cols[i].Kind = model.ColInt
			rd.Cols[i].Int = model.IntType{Kind: model.BigInt, Unsigned: flag&mysql.UNSIGNED_FLAG != 0}
		}
	}
	e.rd = rd
	return rd
}

// datums is the current row as the row engine reads it.
func (e *evalCtx) datums() []model.Datum {
	row := make([]model.Datum, len(e.row))
	for i, v := range e.row {
		s, ok := textValue(v)
		row[i] = model.Datum{Null: !ok, S: s}
	}
	return row
}

// literal is a session's value as an expression's constant.
func literal(v any) model.RowExpr {
	val := model.Value{Kind: model.ValNull}
	switch x := v.(type) {
	case int64:
		val = model.Value{Kind: model.ValInt, Int: x}
	case uint64:
		val = model.Value{Kind: model.ValUint, Uint: x}
	case float64:
		val = model.Value{Kind: model.ValDecimal, Str: strconv.FormatFloat(x, 'g', -1, 64)}
	case string:
		val = model.Value{Kind: model.ValString, Str: x}
	}
	return model.RowExpr{Op: model.EVal, Val: &val}
}

// catalogKinds are the expressions evaluated where no table or an
// information_schema view is read, and refused over a ticket table or a
// sequence.
var catalogKinds = []sql.ExprKind{sql.ExprCompare, sql.ExprLogic, sql.ExprNot, sql.ExprIsNull, sql.ExprIn,
	sql.ExprBetween, sql.ExprLike, sql.ExprCase, sql.ExprCast}

// rowExpr makes x the row engine's expression over e's rows (where names
// the clause in a 1054); see the file's comment.
func (e *evalCtx) rowExpr(x *sql.Expr, where string) (model.RowExpr, error) {
	return e.expr(x, where, false)
}

// condExpr is rowExpr of IF's condition, where a comparison, AND, OR,
// XOR, NOT, IS NULL, IN, BETWEEN and LIKE were taken over a ticket table
// or sequence too (the catalogue's evaluator read a condition apart).
func (e *evalCtx) condExpr(x *sql.Expr, where string) (model.RowExpr, error) {
	switch x.Kind {
	case sql.ExprLogic, sql.ExprNot:
		out := model.RowExpr{Op: logicExprOp(x.Name), Args: make([]model.RowExpr, len(x.Args))}
		if x.Kind == sql.ExprNot {
			out.Op = model.ENot
		}
		for i := range x.Args {
			var err error
			if out.Args[i], err = e.condExpr(&x.Args[i], where); err != nil {
				return out, err
			}
		}
		return out, nil
	case sql.ExprCase, sql.ExprCast:
		return e.rowExpr(x, where)
	}
	return e.expr(x, where, true)
}

// expr is rowExpr; cond allows the catalogue's kinds at x itself (condExpr).
func (e *evalCtx) expr(x *sql.Expr, where string, cond bool) (model.RowExpr, error) {
	sub := func(op model.ExprOp, list []sql.Expr) (model.RowExpr, error) {
		out := model.RowExpr{Op: op, Args: make([]model.RowExpr, len(list))}
		for i := range list {
			var err error
			if out.Args[i], err = e.rowExpr(&list[i], where); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	for _, k := range catalogKinds {
		if x.Kind == k && !e.catalog && !cond {
			return model.RowExpr{}, unsupported(x.Describe() + " on a ticket table or sequence")
		}
	}
	if op, ok := predicateOp(x); ok {
		return sub(op, x.Args)
	}
	switch x.Kind {
	case sql.ExprValue:
		v, err := bind(x.Value, e.args)
		if err != nil {
			return model.RowExpr{}, err
		}
		if v.Kind == model.ValDefault {
			return model.RowExpr{}, unsupported("DEFAULT here")
		}
		return model.RowExpr{Op: model.EVal, Val: &v}, nil
	case sql.ExprColumn:
		i := colIndexIn(e.cols, x.Name)
		if i < 0 {
			return model.RowExpr{}, errColumn(e.cols, x.Name, where)
		}
		return model.RowExpr{Op: model.ECol, Col: e.cols[i].name}, nil
	case sql.ExprIdent:
		return model.RowExpr{}, errUnknownColumn(x.Name, where)
	case sql.ExprSysVar:
		v, err := e.s.sysVar(x.Name, x.Scope, e.prevWarnings)
		return literal(v), err
	case sql.ExprUserVar:
		return literal(e.s.userVars[strings.ToLower(x.Name)]), nil
	case sql.ExprSequence, sql.ExprLastInsertID:
		if e.branch > 0 && (x.Kind == sql.ExprSequence || len(x.Args) > 0) {
			// Written in before the row engine picks a branch, it would
			// take a value (or set LAST_INSERT_ID) where MariaDB, and
			// the catalogue's evaluator before, did not.
			return model.RowExpr{}, unsupported(x.Describe() + " in a branch of IF or CASE")
		}
		if x.Kind == sql.ExprLastInsertID {
			return e.lastInsertID(x)
		}
		v, err := e.sequence(x)
		return literal(v), err
	case sql.ExprArith:
		op := arithExprOp(x.Op)
		if op == 0 {
			return model.RowExpr{}, unsupported("operator " + string(x.Op))
		}
		if len(x.Args) != 2 {
			return model.RowExpr{}, unsupported(x.Describe() + " with " + strconv.Itoa(len(x.Args)) + " operands")
		}
		return sub(op, x.Args)
	case sql.ExprLike:
		if x.Op != '\\' && x.Op != 0 {
			return model.RowExpr{}, unsupported("LIKE ... ESCAPE '" + string(rune(x.Op)) + "'")
		}
		op := model.ELike
		if x.Not {
			op = model.ENotLike
		}
		out, err := sub(op, x.Args)
		out.Escape = '\\'
		return out, err
	case sql.ExprCase:
		return e.caseExpr(x, where)
	case sql.ExprCast:
		out, err := sub(model.ECall, x.Args)
		out.Unit = rowengine.FnSigned
		if x.Name == "UNSIGNED" {
			out.Unit = rowengine.FnUnsigned
		}
		return out, err
	case sql.ExprFunc:
		return e.call(x, where)
	}
	return model.RowExpr{}, unsupported(x.Describe())
}

// lastInsertID is LAST_INSERT_ID() (the session's, written in) or
// LAST_INSERT_ID(expr), which sets the session's to expr's value as the
// walk reaches it, left to right, as the select list is evaluated.
func (e *evalCtx) lastInsertID(x *sql.Expr) (model.RowExpr, error) {
	if len(x.Args) == 0 {
		return literal(e.s.ts.LastInsertID), nil
	}
	v, err := e.eval(&x.Args[0])
	if err != nil || v == nil {
		return literal(v), err
	}
	n, ok := toUint(v)
	if !ok {
		return model.RowExpr{}, mysqlerr.New(mysqlerr.CodeDataOutOfRange, "Out of range value for LAST_INSERT_ID()")
	}
	e.s.ts.LastInsertID = n
	return literal(n), nil
}

// caseExpr is CASE as the row engine's ECase: CASE v WHEN w compares v = w.
// What follows the operand and the first WHEN is a branch (e.branch).
func (e *evalCtx) caseExpr(x *sql.Expr, where string) (model.RowExpr, error) {
	args := make([]model.RowExpr, len(x.Args))
	first := 1
	if x.Op&sql.CaseOperand != 0 {
		first = 2
	}
	defer func(b int) { e.branch = b }(e.branch)
	for i := range x.Args {
		if i == first {
			e.branch++
		}
		var err error
		if args[i], err = e.rowExpr(&x.Args[i], where); err != nil {
			return model.RowExpr{}, err
		}
	}
	var operand *model.RowExpr
	if x.Op&sql.CaseOperand != 0 {
		operand, args = &args[0], args[1:]
	}
	out := model.RowExpr{Op: model.ECase}
	var elseX *model.RowExpr
	if x.Op&sql.CaseElse != 0 {
		elseX, args = &args[len(args)-1], args[:len(args)-1]
	}
	for i := 0; i+1 < len(args); i += 2 {
		cond := args[i]
		if operand != nil {
			cond = model.RowExpr{Op: model.EEq, Args: []model.RowExpr{*operand, args[i]}}
		}
		out.Args = append(out.Args, cond, args[i+1])
	}
	if elseX != nil {
		out.Args = append(out.Args, *elseX)
	}
	return out, nil
}

// call is a function: the session's written in as their values, IF and
// IFNULL as CASE, the catalogue's string functions as ECall.
func (e *evalCtx) call(x *sql.Expr, where string) (model.RowExpr, error) {
	s := e.s
	switch x.Name {
	case "DATABASE", "SCHEMA":
		return literal(nullable(s.db)), nil
	case "VERSION":
		return literal(s.srv.cfg.Version), nil
	case "CONNECTION_ID":
		return literal(uint64(s.id)), nil
	case "USER", "SESSION_USER", "SYSTEM_USER":
		return literal(s.user + "@" + hostOf(s.conn.RemoteAddr().String())), nil
	case "CURRENT_USER":
		return literal(s.user + "@%"), nil
	case "NOW", "CURRENT_TIMESTAMP", "SYSDATE", "LOCALTIME", "LOCALTIMESTAMP":
		return literal(s.now().Local().Format("2006-01-02 15:04:05")), nil
	case "UTC_TIMESTAMP":
		return literal(s.now().Format("2006-01-02 15:04:05")), nil
	case "ROW_COUNT":
		return literal(s.rowCount), nil
	case "FOUND_ROWS":
		return literal(s.found), nil
	}
	fn, ok := map[string]string{"CONCAT": rowengine.FnConcat, "UCASE": rowengine.FnUpper, "UPPER": rowengine.FnUpper,
		"LCASE": rowengine.FnLower, "LOWER": rowengine.FnLower, "SUBSTRING": rowengine.FnSubstring, "SUBSTR": rowengine.FnSubstring,
		"LOCATE": rowengine.FnLocate, "LEAST": rowengine.FnLeast, "GREATEST": rowengine.FnGreatest, "IF": "IF", "IFNULL": "IFNULL"}[x.Name]
	if !ok {
		return model.RowExpr{}, unsupported("function " + x.Name)
	}
	args := make([]model.RowExpr, len(x.Args))
	defer func(b int) { e.branch = b }(e.branch)
	for i := range x.Args {
		if i == 1 && fn == "IF" {
			e.branch++ // IF's results
		}
		var err error
		if i == 0 && fn == "IF" {
			args[i], err = e.condExpr(&x.Args[i], where)
		} else {
			args[i], err = e.rowExpr(&x.Args[i], where)
		}
		if err != nil {
			return model.RowExpr{}, err
		}
	}
	switch fn {
	case "IF":
		return model.RowExpr{Op: model.ECase, Args: args}, nil
	case "IFNULL":
		notNull := model.RowExpr{Op: model.EIsNotNull, Args: []model.RowExpr{args[0]}}
		return model.RowExpr{Op: model.ECase, Args: []model.RowExpr{notNull, args[0], args[1]}}, nil
	}
	return model.RowExpr{Op: model.ECall, Unit: fn, Args: args}, nil
}
