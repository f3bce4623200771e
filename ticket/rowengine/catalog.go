package rowengine

import (
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
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
	re := new(RowEval)
	re.Reset(rd, now, warns)
	return re
}

// Reset makes re NewEval's evaluator, so that a caller can keep one in a
// structure of its own. Over Dual, whose one row reads each literal
// once, it keeps no cache of them: a SELECT without FROM is a ticket
// server's most frequent statement (SELECT LAST_INSERT_ID()), and the
// cache was most of its allocations.
func (re *RowEval) Reset(rd *model.RowsDef, now time.Time, warns *[]model.Warning) {
	re.env = evalEnv{rd: rd, now: now, warns: warns, inMemory: true}
	if rd != Dual {
		re.env.lit = map[*model.RowExpr]val{}
	}
}

// Match reports whether the predicate x is true on row: not false, not
// NULL (a WHERE's reading), once Check has passed.
func (re *RowEval) Match(x *model.RowExpr, row []model.Datum) (bool, *model.Error) {
	re.env.row = row
	return re.env.matches(x)
}

// Narrow makes re refuse (1235) what the catalogue's evaluation refused
// before it evaluated here, so that those answers stay as they were:
// arithmetic on anything but integers (a string that is one included),
// and, when conn is not "", two strings compared as literals (a SELECT
// without FROM), which MariaDB compares in the connection's collation
// conn where this engine gives a literal utf8mb4_general_ci.
func (re *RowEval) Narrow(conn string) { re.env.narrow, re.env.litColl = true, conn }

// literalStrings refuses comparing two strings under Narrow's conn.
func (env *evalEnv) literalStrings(a, b val) *model.Error {
	if env.litColl == "" || a.k != vStr || b.k != vStr {
		return nil
	}
	return mysqlerr.NotSupported("comparing strings in collation " + env.litColl)
}

// intOperand is an operand of Narrow's integer arithmetic: an integer,
// or a string that reads whole as one.
func intOperand(v val) (val, *model.Error) {
	switch v.k {
	case vInt, vUint:
		return v, nil
	case vStr:
		if i, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64); err == nil {
			return val{k: vInt, i: i}, nil
		}
		return val{}, mysqlerr.NotSupported("arithmetic on the string '" + v.s + "'")
	}
	return val{}, mysqlerr.NotSupported("arithmetic on a decimal or double value")
}

// Out is an evaluated value as a result row shows it.
type Out struct {
	model.Datum
	Kind model.ColKind // ColInt, ColString, ColDate or ColDateTime
	// Decimal: a DECIMAL or DOUBLE, its text in S; Unsigned: an integer
	// typed BIGINT UNSIGNED (above BIGINT's range, an unsigned literal or
	// column, CAST AS UNSIGNED).
	Decimal, Unsigned bool
}

// Value is x over row, once Check has passed.
func (re *RowEval) Value(x *model.RowExpr, row []model.Datum) (Out, *model.Error) {
	re.env.row = row
	v, e := re.env.eval(x)
	if e != nil {
		return Out{}, e
	}
	switch v.k {
	case vNull:
		return Out{Datum: model.Datum{Null: true}, Kind: model.ColString}, nil
	case vInt:
		return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColInt}, nil
	case vUint:
		return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColInt, Unsigned: true}, nil
	case vDec:
		return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColString, Decimal: true}, nil
	case vTime:
		if v.date {
			return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColDate}, nil
		}
		return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColDateTime}, nil
	}
	return Out{Datum: model.Datum{S: v.text()}, Kind: model.ColString}, nil
}

// CompareRows orders rows a and b of rd by their column i as an ORDER BY
// does (a row table's included): NULL first, integers as numbers, strings
// in the column's collation.
func CompareRows(rd *model.RowsDef, i int, a, b []model.Datum) int {
	c := &rd.Cols[i]
	return orderDatum(rd.CollOf(c), c, a[i], b[i])
}
