package wire

import (
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Row tables through the row engine (ticket/rowengine/engine.go): wire binds a
// plan's placeholders (rowexpr.go), adds the session's sql_mode and
// pinned time (sqlmode.go), and encodes the answer. Matching, ordering,
// conversion and aggregation all happen in ticket, for SELECT, UPDATE and
// DELETE alike.

// rowsCommand is the row engine's part of a row-table command with the
// session's sql_mode and pinned time.
func (s *session) rowsCommand() *model.RowsCommand {
	m := s.mode()
	return &model.RowsCommand{
		Engine:            true,
		NotStrict:         !m.has("STRICT_TRANS_TABLES") && !m.has("STRICT_ALL_TABLES"),
		NoAutoValueOnZero: m.has("NO_AUTO_VALUE_ON_ZERO"),
		Now:               s.pinned,
	}
}

// ticketInsertMode refuses an INSERT into a ticket table that gives the id
// column a value when the session's sql_mode would change what MariaDB
// does with it (NO_AUTO_VALUE_ON_ZERO stores 0, a non-strict mode clamps):
// ticket tables apply the default mode only.
func (s *session) ticketInsertMode(p *sql.Insert, t *model.Table) error {
	rc := s.rowsCommand()
	if !rc.NotStrict && !rc.NoAutoValueOnZero {
		return nil
	}
	given := p.Columns == nil
	for _, c := range p.Columns {
		given = given || strings.EqualFold(c, t.Def.IDCol)
	}
	if !given {
		return nil
	}
	return unsupported("sql_mode '" + string(s.mode()) + "' with an id value on a ticket table")
}

// peekTable is db.name as the local state has it now, nil if none, read
// without waiting for the session's own writes: what kind of table it is
// does not depend on them, and a write must not wait for the one before
// it. A table that changes kind meanwhile is the command's to answer.
func (s *session) peekTable(db, name string) *model.Table {
	var t *model.Table
	if err := s.srv.svc.View(func(st ticket.Store) (err error) {
		t, err = st.Table(db, name)
		return err
	}); err != nil {
		return nil
	}
	return t
}

// updateRowsExpr runs an UPDATE on a row table in expression form.
func (s *session) updateRowsExpr(p *sql.Update, db string, args []any) (model.Result, error) {
	rc := s.rowsCommand()
	var err error
	rc.Assigns = make([]model.RowAssign, len(p.Assigns))
	for i, a := range p.Assigns {
		ra := model.RowAssign{Col: a.Column}
		if a.Expr.Kind == sql.ExprValue && a.Expr.Value.Kind == sql.ValDefault {
			ra.Default = true
		} else if ra.Expr, err = rowExpr(&a.Expr, args); err != nil {
			return model.Result{}, err
		}
		rc.Assigns[i] = ra
	}
	if rc.Filter, err = filterExpr(p.Filter, args); err != nil {
		return model.Result{}, err
	}
	xs := []*model.RowExpr{rc.Filter}
	for i := range rc.Assigns {
		xs = append(xs, &rc.Assigns[i].Expr)
	}
	if err := bindLastID(s.ts.LastInsertID, xs...); err != nil {
		return model.Result{}, err
	}
	rc.OrderBy, rc.HasLimit, rc.Limit = rowOrders(p.OrderBy), p.HasLimit, p.Limit
	return s.exec(&model.Command{Op: model.OpUpdate, DB: db, Table: p.Table.Name, Rows: rc})
}

// deleteRows is DELETE on a row table.
func (s *session) deleteRows(p *sql.Delete, args []any) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	rc := s.rowsCommand()
	if rc.Filter, err = filterExpr(p.Filter, args); err != nil {
		return nil, err
	}
	if err := bindLastID(s.ts.LastInsertID, rc.Filter); err != nil {
		return nil, err
	}
	rc.OrderBy, rc.HasLimit, rc.Limit = rowOrders(p.OrderBy), p.HasLimit, p.Limit
	r, err := s.exec(&model.Command{Op: model.OpDelete, DB: db, Table: p.Table.Name, Rows: rc})
	s.warnings = append(s.warnings, r.Warnings...)
	if err != nil {
		return nil, err
	}
	s.noteTxnWrite()
	return okResult(r.Affected, 0), nil
}

// selectRowTable answers a SELECT on a row table through the engine
// (ticket.Session.Select: the access path, the session's own writes over
// the stored rows, the WHERE, order, LIMIT and aggregates).
func (s *session) selectRowTable(p *sql.Select, src *source, args []any, bin bool) (*mysql.Result, error) {
	groupBy, err := groupColumns(src.rowTable.Def.Rows, p)
	if err != nil {
		return nil, err
	}
	q := &rowengine.Query{Filter: src.pred, OrderBy: rowOrders(p.OrderBy), HasLimit: p.HasLimit, Limit: p.Limit, Offset: p.Offset,
		GroupBy: groupBy, Distinct: p.Distinct, Now: s.now()}
	grouped := p.GroupBy != nil
	for i := range p.Fields {
		if p.Fields[i].Expr.Kind == sql.ExprAgg {
			grouped = true
		}
	}
	if grouped {
		if p.Distinct {
			return nil, unsupported("DISTINCT with aggregates or GROUP BY")
		}
		for i := range p.Fields {
			f := &p.Fields[i]
			switch {
			case f.Expr.Kind == sql.ExprAgg:
				a := rowengine.Agg{Fn: f.Expr.Name}
				if len(f.Expr.Args) == 1 {
					a.Col = f.Expr.Args[0].Name
				}
				q.Aggs = append(q.Aggs, a)
			case f.Expr.Kind == sql.ExprColumn && p.GroupBy != nil:
				q.Aggs = append(q.Aggs, rowengine.Agg{Col: f.Expr.Name})
			case p.GroupBy != nil:
				return nil, unsupported(f.Expr.Describe() + " in a select list with GROUP BY")
			default:
				return nil, unsupported("aggregates beside other select items without GROUP BY")
			}
		}
	} else if p.Distinct {
		for i := range p.Fields {
			switch f := &p.Fields[i]; f.Expr.Kind {
			case sql.ExprColumn:
				q.DistinctCols = append(q.DistinctCols, f.Expr.Name)
			case sql.ExprStar:
				q.DistinctCols = nil
			default:
				return nil, unsupported("SELECT DISTINCT of an expression")
			}
			if p.Fields[i].Expr.Kind == sql.ExprStar {
				break
			}
		}
	}
	tb, res, err := s.selectView(src.rowTable, q)
	if err != nil {
		return nil, err
	}
	if tb.Def.Rows != src.rowTable.Def.Rows {
		// Read again with the rows: its columns as they are now.
		*src = *s.rowsSource(tb, src.pred)
	}
	s.warnings = append(s.warnings, res.Warnings...)
	if grouped {
		out := rowset{cols: make([]column, len(p.Fields))}
		for i := range p.Fields {
			out.cols[i] = column{name: p.Fields[i].Name}
		}
		for _, g := range res.Groups {
			row := make([]any, len(g))
			for i, a := range g {
				out.cols[i].typ = colType(a.Kind)
				if a.Kind == model.ColString && a.Col == nil {
					out.cols[i].typ = mysql.MYSQL_TYPE_NEWDECIMAL
				}
				if a.Col != nil {
					c := rowColumn(&tb.Def, a.Col)
					out.cols[i].typ, out.cols[i].flag = c.typ, c.flag
				}
				switch {
				case a.Col != nil:
					row[i] = datumValue(a.Col, a.Value)
				case a.Value.Null:
					row[i] = nil
				case a.Kind == model.ColInt:
					n, _ := strconv.ParseInt(a.Value.S, 10, 64)
					row[i] = n
				default:
					row[i] = a.Value.S
				}
			}
			out.rows = append(out.rows, row)
		}
		return out.result(bin, &s.srv.fields), nil
	}
	rd := tb.Def.Rows
	if out, err := s.projectRows(p, tb, res.Rows, args, bin); out != nil || err != nil {
		return out, err
	}
	src.rows = src.rows[:0]
	for _, r := range res.Rows {
		row := make([]any, len(r))
		for i, d := range r {
			row[i] = datumValue(&rd.Cols[i], d)
		}
		src.rows = append(src.rows, row)
	}
	return nil, nil
}

// selectView runs q on the row table tb's rows in a view (Session.Select):
// the table as read in that view and the answer.
func (s *session) selectView(tb *model.Table, q *rowengine.Query) (*model.Table, *rowengine.QueryResult, error) {
	// One allocation for what the view's closure writes.
	r := &struct {
		tb  *model.Table
		res *rowengine.QueryResult
	}{tb: tb}
	err := s.view(func(st ticket.Store) (err error) {
		r.tb, r.res, err = s.ts.Select(st, r.tb.Def.DB, r.tb.Def.Name, q)
		return err
	})
	return r.tb, r.res, err
}

// groupColumns are the columns p groups by: a GROUP BY name is the
// table's column, else (MariaDB's order) the select-list item of that
// alias: a column's alias groups by the column; any other item's would
// group by computed values, which the engine does not (1235).
func groupColumns(rd *model.RowsDef, p *sql.Select) ([]string, error) {
	if len(p.GroupAliases) == 0 {
		return p.GroupBy, nil
	}
	out := slices.Clone(p.GroupBy)
	for i, name := range out {
		x, ok := p.GroupAliases[name]
		if !ok || colIndexOf(rd, name) >= 0 {
			continue
		}
		if x.Kind != sql.ExprColumn {
			return nil, unsupported("GROUP BY an alias of an expression")
		}
		out[i] = x.Name
	}
	return out, nil
}

// projectRows computes a select list that has arithmetic over columns
// (v * 2, u - 1), or a comparison, AND/OR/XOR/NOT, IS NULL, IN, BETWEEN
// or LIKE (s > 'x', v IS NULL), through the row engine, as WHERE and SET
// compute them; nil when no item has (the general select path answers
// those: columns, *, CONCAT of columns, items without columns).
func (s *session) projectRows(p *sql.Select, t *model.Table, rows [][]model.Datum, args []any, bin bool) (*mysql.Result, error) {
	complex := false
	for i := range p.Fields {
		x := &p.Fields[i].Expr
		if hasColumn(x) && (hasKind(x, sql.ExprArith) || hasKind(x, sql.ExprInterval)) {
			complex = true
		}
		for _, k := range rowOnlyKinds {
			complex = complex || hasKind(x, k)
		}
	}
	if !complex {
		return nil, nil
	}
	rd := t.Def.Rows
	exprs := make([]*model.RowExpr, len(p.Fields))
	var out rowset
	for i := range p.Fields {
		x := &p.Fields[i].Expr
		switch x.Kind {
		case sql.ExprStar:
			for _, c := range rowsColumns(&t.Def) {
				c.table, c.db = t.Def.Name, t.Def.DB
				out.cols = append(out.cols, c)
			}
			continue
		case sql.ExprColumn:
			j := colIndexOf(rd, x.Name)
			if j < 0 {
				return nil, errUnknownColumn(x.Name, "field list")
			}
			c := rowColumn(&t.Def, &rd.Cols[j])
			c.name, c.table, c.db = p.Fields[i].Name, t.Def.Name, t.Def.DB
			out.cols = append(out.cols, c)
			continue
		}
		if hasKind(x, sql.ExprLastInsertID) {
			return nil, unsupported("LAST_INSERT_ID() over columns in a select list")
		}
		rx, err := rowExpr(x, args)
		if err != nil {
			return nil, err
		}
		exprs[i] = &rx
		c := column{name: p.Fields[i].Name}
		if boolKind(x.Kind) {
			// A comparison, a logical operator, IS NULL, IN, BETWEEN and
			// LIKE are INT (MariaDB's Item_bool_func), whatever the rows.
			c.typ = mysql.MYSQL_TYPE_LONG
		}
		out.cols = append(out.cols, c)
	}
	ev := rowengine.NewRowEval(t, s.now(), &s.warnings)
	for _, x := range exprs {
		if x != nil {
			if e := ev.Check(x); e != nil {
				return nil, e
			}
		}
	}
	for _, r := range rows {
		var row []any
		col := 0
		for i := range p.Fields {
			x := &p.Fields[i].Expr
			switch {
			case x.Kind == sql.ExprStar:
				for j, d := range r {
					row = append(row, datumValue(&rd.Cols[j], d))
				}
				col += len(r)
				continue
			case x.Kind == sql.ExprColumn:
				j := colIndexOf(rd, x.Name)
				row = append(row, datumValue(&rd.Cols[j], r[j]))
				col++
				continue
			}
			d, kind, dec, e := ev.Eval(exprs[i], r)
			if e != nil {
				return nil, e
			}
			if !boolKind(x.Kind) {
				out.cols[col].typ = colType(kind)
			}
			if dec {
				out.cols[col].typ = mysql.MYSQL_TYPE_NEWDECIMAL
				if doubleExpr(exprs[i]) {
					out.cols[col].typ = mysql.MYSQL_TYPE_DOUBLE
				}
			}
			if d.Null {
				row = append(row, nil)
			} else if kind == model.ColInt {
				row = append(row, datumValue(&model.RowCol{Kind: model.ColInt}, d))
			} else {
				row = append(row, d.S)
			}
			col++
		}
		out.rows = append(out.rows, row)
	}
	return out.result(bin, &s.srv.fields), nil
}

func colIndexOf(rd *model.RowsDef, name string) int {
	for i := range rd.Cols {
		if strings.EqualFold(rd.Cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// insertRefusal is ticket.RefuseInsert for an INSERT into db, read from
// the local state only when ticket.InsertNeedsTable says it could refuse.
func (s *session) insertRefusal(db string, p *sql.Insert, vals [][]model.Value, isRow bool) error {
	if !ticket.InsertNeedsTable(vals, isRow) {
		return nil
	}
	t := s.peekTable(db, p.Table.Name)
	if t == nil {
		return nil // the command answers
	}
	return ticket.RefuseInsert(t, p.Columns, vals, s.rowsCommand().NoAutoValueOnZero)
}
