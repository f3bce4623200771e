package rowengine

import (
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// Evaluation over rows that belong to no stored table: the catalogue's
// (information_schema's views, SHOW's outputs) and the one empty row of a
// SELECT without FROM, which the wire layer builds in memory as Datum
// rows described by a RowsDef. They go through the same evalEnv as a row
// table's WHERE and SET, so that ticketd has one evaluator of
// expressions; what a session knows (its variables, DATABASE(), USER(),
// LAST_INSERT_ID()) the caller writes into the expression as literals
// first, so that this package needs to know no session.

// Dual is the row definition of a SELECT without FROM: no column, and
// DualRow its one row.
var Dual = &model.RowsDef{Collation: model.CollGeneralCI}

// DualRow is Dual's one row.
var DualRow = []model.Datum{}

// NewEval is an evaluator of one statement's expressions over in-memory
// rows of rd: literals convert once per statement, warnings go to warns,
// NOW() is now.
func NewEval(rd *model.RowsDef, now time.Time, warns *[]model.Warning) *RowEval {
	return &RowEval{env: evalEnv{rd: rd, now: now, warns: warns, lit: map[*model.RowExpr]val{}}}
}

// Match reports whether the predicate x is true on row: not false, not
// NULL (a WHERE's reading), once Check has passed.
func (re *RowEval) Match(x *model.RowExpr, row []model.Datum) (bool, *model.Error) {
	re.env.row = row
	return re.env.matches(x)
}

// LastInsertID is the value the statement's LAST_INSERT_ID(expr) set, if
// it set one, which the session then keeps as its LAST_INSERT_ID().
func (re *RowEval) LastInsertID() (uint64, bool) { return re.env.lastID, re.env.setLastID }
