package ticket

import "time"

// EvalRow computes x (a select-list expression over row's columns) as
// the row engine evaluates WHERE and SET: the value's text, or NULL, and
// whether it is an integer, a decimal or another value.
func EvalRow(t *Table, x *RowExpr, row []Datum, now time.Time, warns *[]Warning) (d Datum, kind ColKind, decimal bool, e *Error) {
	re := NewRowEval(t, now, warns)
	if e := re.Check(x); e != nil {
		return Datum{}, 0, false, e
	}
	return re.Eval(x, row)
}

// RowEval evaluates a statement's select-list expressions row after row;
// like WHERE, it converts a literal once per statement (a '5abc' compared
// with an INT column warns once, as in MariaDB, not once per row).
type RowEval struct{ env evalEnv }

// NewRowEval is an evaluator of t's rows for one statement.
func NewRowEval(t *Table, now time.Time, warns *[]Warning) *RowEval {
	return &RowEval{env: evalEnv{rd: t.Def.Rows, db: t.Def.DB, table: t.Def.Name, now: now, warns: warns, lit: map[*RowExpr]val{}}}
}

// Check is the error MariaDB gives x before reading any row: an unknown
// column, an illegal mix of collations.
func (re *RowEval) Check(x *RowExpr) *Error { return checkCols(re.env.rd, x, "field list") }

// Eval is EvalRow of x over row, once Check has passed.
func (re *RowEval) Eval(x *RowExpr, row []Datum) (d Datum, kind ColKind, decimal bool, e *Error) {
	env := &re.env
	env.row = row
	v, e := env.eval(x)
	if e != nil {
		return Datum{}, 0, false, e
	}
	switch v.k {
	case vNull:
		return Datum{Null: true}, ColString, false, nil
	case vInt, vUint:
		return Datum{S: v.text()}, ColInt, false, nil
	case vDec:
		return Datum{S: v.text()}, ColString, true, nil
	case vTime:
		if v.date {
			return Datum{S: v.text()}, ColDate, false, nil
		}
		return Datum{S: v.text()}, ColDateTime, false, nil
	}
	return Datum{S: v.text()}, ColString, false, nil
}
