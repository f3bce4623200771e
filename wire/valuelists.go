package wire

import (
	"strings"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// valueLists applies MariaDB's rules for the widths of an INSERT's VALUES
// lists where the command's apply would answer otherwise, before anything
// is proposed (so every build applies what is proposed alike):
//
//   - the first list's width is the statement's: a later list of another
//     width is 1136 at its row, after the table (1146) and the column
//     list (1054, 1110) are checked; the row engine took an empty list
//     among full ones as "every column its default";
//   - VALUES (), (), ... without a column list gives every column its
//     default, on a ticket table too (whose apply knows only full lists):
//     each list becomes DEFAULT for each of the table's columns.
//
// vals are the command's lists, changed in place.
func (s *session) valueLists(db string, p *sql.Insert, vals [][]model.Value) error {
	if len(vals) == 0 {
		return nil
	}
	width := len(vals[0])
	uneven := false
	for _, row := range vals {
		uneven = uneven || len(row) != width
	}
	if !uneven && (width > 0 || len(p.Columns) > 0) {
		return nil
	}
	t := s.peekTable(db, p.Table.Name)
	if t == nil {
		return nil // the command answers 1146
	}
	if !knownColumns(t, p.Columns) {
		return nil // the command answers 1054 or 1110
	}
	if uneven {
		if len(p.Columns) > 0 && width != len(p.Columns) || len(p.Columns) == 0 && width > 0 && width != tableWidth(t) {
			return nil // the command answers 1136 at row 1
		}
		for i, row := range vals {
			if len(row) != width {
				return mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", i+1)
			}
		}
	}
	if t.Def.Rows != nil || len(p.Columns) > 0 {
		return nil // the row engine takes VALUES (); a column list is 1136
	}
	for i := range vals {
		vals[i] = make([]model.Value, tableWidth(t))
		for j := range vals[i] {
			vals[i][j] = model.Value{Kind: model.ValDefault}
		}
	}
	return nil
}

// tableWidth is how many columns t has.
func tableWidth(t *model.Table) int {
	if rd := t.Def.Rows; rd != nil {
		return len(rd.Cols)
	}
	if t.Def.StubCol != "" {
		return 2
	}
	return 1
}

// knownColumns reports whether every name in cols is one of t's
// columns, none twice.
func knownColumns(t *model.Table, cols []string) bool {
	var names []string
	if rd := t.Def.Rows; rd != nil {
		for i := range rd.Cols {
			names = append(names, rd.Cols[i].Name)
		}
	} else {
		names = append(names, t.Def.IDCol)
		if t.Def.StubCol != "" {
			names = append(names, t.Def.StubCol)
		}
	}
	seen := map[string]bool{}
	for _, c := range cols {
		k := strings.ToLower(c)
		found := false
		for _, n := range names {
			found = found || strings.EqualFold(n, c)
		}
		if !found || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}
