package rowengine

import (
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// EvalRow computes x (a select-list expression over row's columns) as
// the row engine evaluates WHERE and SET: the value's text, or NULL, and
// whether it is an integer, a decimal or another value.
func EvalRow(t *model.Table, x *model.RowExpr, row []model.Datum, now time.Time, warns *[]model.Warning) (d model.Datum, kind model.ColKind, decimal bool, e *model.Error) {
	re := NewRowEval(t, now, warns)
	if e := re.Check(x); e != nil {
		return model.Datum{}, 0, false, e
	}
	return re.Eval(x, row)
}

// RowEval evaluates a statement's select-list expressions row after row;
// like WHERE, it converts a literal once per statement (a '5abc' compared
// with an INT column warns once, as in MariaDB, not once per row).
type RowEval struct{ env evalEnv }

// NewRowEval is an evaluator of t's rows for one statement.
func NewRowEval(t *model.Table, now time.Time, warns *[]model.Warning) *RowEval {
	re := NewEval(t.Def.Rows, now, warns)
	re.env.db, re.env.table = t.Def.DB, t.Def.Name
	return re
}

// Check is the error MariaDB gives x before reading any row: an unknown
// column, an illegal mix of collations.
func (re *RowEval) Check(x *model.RowExpr) *model.Error { return checkCols(re.env.rd, x, "field list") }

// Eval is EvalRow of x over row, once Check has passed.
func (re *RowEval) Eval(x *model.RowExpr, row []model.Datum) (d model.Datum, kind model.ColKind, decimal bool, e *model.Error) {
	o, e := re.Value(x, row)
	return o.Datum, o.Kind, o.Decimal, e
}
