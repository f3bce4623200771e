package rowengine

import (
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// RefuseInsert refuses, before anything is proposed, a multi-row INSERT
// into the row table t that gives some rows an AUTO_INCREMENT value and
// lets others generate one (found by TestMariaDBRegression): InnoDB
// reserves a block of values for the statement and an explicit value moves
// within it, which this engine does not reproduce. cols are the
// statement's column list (nil: the table's columns in order), vals its
// bound VALUES; noAutoValueOnZero is the session's NO_AUTO_VALUE_ON_ZERO.
func RefuseInsert(t *model.Table, cols []string, vals [][]model.Value, noAutoValueOnZero bool) error {
	rd := t.Def.Rows
	if rd == nil || !t.Def.AutoInc || len(vals) < 2 {
		return nil
	}
	explicit, generated := false, false
	for _, row := range vals {
		given := false
		for j, v := range row {
			if !strings.EqualFold(columnAt(rd, cols, j), t.Def.IDCol) {
				continue
			}
			given = true
			switch {
			case v.Kind == model.ValNull || v.Kind == model.ValDefault:
				generated = true
			case v.Kind == model.ValInt && v.Int == 0 && !noAutoValueOnZero:
				generated = true
			default:
				explicit = true
			}
		}
		if !given {
			// VALUES () or a column list without the column.
			generated = true
		}
	}
	if explicit && generated {
		return mysqlerr.NotSupported("a multi-row INSERT that gives some rows an AUTO_INCREMENT value and generates others")
	}
	return nil
}

// columnAt is the name of the j-th value's column: cols[j], or the
// table's j-th column without a column list; "" past either.
func columnAt(rd *model.RowsDef, cols []string, j int) string {
	if cols != nil {
		if j < len(cols) {
			return cols[j]
		}
		return ""
	}
	if j < len(rd.Cols) {
		return rd.Cols[j].Name
	}
	return ""
}
