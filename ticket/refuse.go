package ticket

import (
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// The INSERTs whose answer ticketd would get wrong, refused (1235) before
// anything is proposed (found by TestMariaDBRegression): the wire asks
// InsertNeedsTable with the bound values, and only then reads the table
// for RefuseInsert, so that the common single-row INSERT reads nothing.

// InsertNeedsTable reports whether an INSERT with these bound values
// could be refused by RefuseInsert: a multi-row INSERT into a row table,
// or a NULL after the first row.
func InsertNeedsTable(vals [][]model.Value, rowTable bool) bool {
	if rowTable && len(vals) > 1 {
		return true
	}
	for _, row := range vals[min(1, len(vals)):] {
		for _, v := range row {
			if v.Kind == model.ValNull {
				return true
			}
		}
	}
	return false
}

// RefuseInsert is the refusal of an INSERT into t, by t's kind: for a row
// table the row engine's (rowengine.RefuseInsert); for a ticket table a
// NULL for a NOT NULL column after the first row of a multi-row INSERT,
// where MyISAM stores the column's implicit default with a warning. cols
// are the statement's column list (nil: the table's own order).
func RefuseInsert(t *model.Table, cols []string, vals [][]model.Value, noAutoValueOnZero bool) error {
	if t.Def.Rows != nil {
		return rowengine.RefuseInsert(t, cols, vals, noAutoValueOnZero)
	}
	for _, row := range vals[min(1, len(vals)):] {
		for j, v := range row {
			if v.Kind != model.ValNull {
				continue
			}
			name := ""
			switch {
			case cols != nil && j < len(cols):
				name = cols[j]
			case cols == nil && (j == 0) == !t.Def.StubFirst:
				name = t.Def.IDCol
			case cols == nil:
				name = t.Def.StubCol
			}
			if strings.EqualFold(name, t.Def.IDCol) && t.Def.IDNotNull && !t.Def.AutoInc ||
				strings.EqualFold(name, t.Def.StubCol) && t.Def.StubNotNull {
				return mysqlerr.NotSupported("NULL for a NOT NULL column after the first row of a multi-row INSERT into a ticket table")
			}
		}
	}
	return nil
}
