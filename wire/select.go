package wire

import (
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// evalCtx is what an expression can see: the session, the current row of a
// FROM table, and the previous statement's warning count.
type evalCtx struct {
	s            *session
	args         []any
	cols         []column
	row          []any
	prevWarnings int
	// from: the SELECT reads a table, so that MariaDB opens every name in
	// it first and an unknown sequence is 1146, not 4091.
	from bool
	// catalog: the SELECT reads no table or an information_schema view,
	// where the catalogue's expressions evaluate (catalog_expr.go).
	catalog bool
	// rows are the source's (for its columns' types), rd its columns as
	// the row engine reads them (rowsDef).
	rows [][]any
	rd   *model.RowsDef
	// warns collects the row engine's warnings of one evaluation
	// (refuseWarned).
	warns []model.Warning
	ev    rowengine.RowEval
	// branch counts the IF and CASE branches rowExpr is inside.
	branch int
}

// over makes e read the rows of cols.
func (e *evalCtx) over(cols []column, rows [][]any) {
	e.cols, e.rows, e.rd = cols, rows, nil
}

func errUnknownColumn(name, where string) error {
	return mysqlerr.UnknownColumn(name, where)
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[:i]
	}
	return addr
}

func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), x >= 0
	case uint64:
		return x, true
	case float64:
		return uint64(x), x >= 0
	case string:
		n, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= 1<<63-1
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// sysVar reads @@name in MySQL's scope rules.
func (s *session) sysVar(name string, scope sql.Scope, prevWarnings int) (any, error) {
	name = strings.ToLower(name)
	switch name {
	case "identity", "last_insert_id":
		return s.ts.LastInsertID, nil
	case "timestamp":
		return s.timestampVar(), nil
	case "warning_count":
		return int64(prevWarnings), nil
	case ticket.VarIncrement, ticket.VarOffset:
		if scope == sql.ScopeGlobal {
			return int64(s.srv.svc.Global(name, 1)), nil
		}
		if name == ticket.VarIncrement {
			return int64(s.ts.Increment), nil
		}
		return int64(s.ts.Offset), nil
	case "autocommit":
		if scope != sql.ScopeGlobal && !s.conn.HasStatus(mysql.SERVER_STATUS_AUTOCOMMIT) {
			return int64(0), nil
		}
		return int64(1), nil
	}
	v, ok := s.vars[name]
	if !ok {
		return nil, unknownVariable(name)
	}
	if scope != sql.ScopeGlobal {
		if sv, ok := s.setVars[name]; ok {
			return sv, nil
		}
	}
	return v.value, nil
}

// selectRows answers SELECT, with or without a FROM table.
func (s *session) selectRows(p *sql.Select, args []any, bin bool, prevWarnings int) (*mysql.Result, error) {
	e := &evalCtx{s: s, args: args, prevWarnings: prevWarnings, from: p.From != nil, catalog: p.From == nil}
	if p.From == nil {
		rs := rowset{cols: make([]column, len(p.Fields))}
		row := make([]any, len(p.Fields))
		for i := range p.Fields {
			if p.Fields[i].Expr.Kind == sql.ExprStar {
				return nil, mysqlerr.NoTablesUsed()
			}
			rs.cols[i].name = p.Fields[i].Name
			if x := &p.Fields[i].Expr; x.Kind == sql.ExprValue && x.Value.Kind == sql.ValParam && x.Value.Param < len(args) {
				// SELECT ?: typed as the parameter (params.go).
				var err error
				if rs.cols[i].typ, rs.cols[i].flag, row[i], err = paramColumn(args[x.Value.Param]); err != nil {
					return nil, err
				}
				continue
			}
			v, err := e.eval(&p.Fields[i].Expr)
			if err != nil {
				return nil, err
			}
			row[i] = v
		}
		if !p.HasLimit || (p.Limit > 0 && p.Offset == 0) {
			rs.rows = append(rs.rows, row)
		}
		return rs.result(bin, &s.srv.fields), nil
	}
	src, err := s.source(p.From, p, args)
	if err != nil {
		return nil, err
	}
	late := lateOrder(p)
	if late && !src.catalog {
		return nil, unsupported("ORDER BY an expression's alias or position outside information_schema")
	}
	if src.rowTable != nil {
		// Row tables: the row engine filters, orders, limits and
		// aggregates (aggregates answer here).
		if r, err := s.selectRowTable(p, src, args, bin); r != nil || err != nil {
			return r, err
		}
	} else if err := src.narrow(p, e, args); err != nil {
		return nil, err
	} else if src.counted {
		return src.result(bin, &s.srv.fields), nil
	}
	// Project the select list over the remaining rows.
	var out rowset
	if !hasStar(p) {
		out.cols = make([]column, 0, len(p.Fields))
	}
	for i := range p.Fields {
		f := &p.Fields[i]
		if f.Expr.Kind == sql.ExprStar {
			out.cols = append(out.cols, src.cols...)
			continue
		}
		c := column{name: f.Name}
		if f.Expr.Kind == sql.ExprColumn {
			if j := src.colIndex(f.Expr.Name); j >= 0 {
				c = src.cols[j]
				c.name = f.Name
			}
		}
		if x := &f.Expr; x.Kind == sql.ExprValue && x.Value.Kind == sql.ValParam && x.Value.Param < len(args) {
			// SELECT ? FROM t: typed as the parameter (params.go).
			var err error
			if c.typ, c.flag, _, err = paramColumn(args[x.Value.Param]); err != nil {
				return nil, err
			}
		}
		out.cols = append(out.cols, c)
	}
	e.over(src.cols, src.rows)
	if len(src.rows) > 0 {
		out.rows = make([][]any, 0, len(src.rows))
	}
	for _, r := range src.rows {
		e.row = r
		row := make([]any, 0, len(out.cols))
		for i := range p.Fields {
			if p.Fields[i].Expr.Kind == sql.ExprStar {
				row = append(row, r...)
				continue
			}
			if x := &p.Fields[i].Expr; x.Kind == sql.ExprValue && x.Value.Kind == sql.ValParam && x.Value.Param < len(args) {
				_, _, v, _ := paramColumn(args[x.Value.Param])
				row = append(row, v)
				continue
			}
			v, err := e.eval(&p.Fields[i].Expr)
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		out.rows = append(out.rows, row)
	}
	if late {
		if err := orderProjected(p, src, &out); err != nil {
			return nil, err
		}
	}
	// A column-less empty result still needs its columns' names resolved.
	if len(src.rows) == 0 {
		for i := range p.Fields {
			if x := &p.Fields[i].Expr; x.Kind == sql.ExprColumn && src.colIndex(x.Name) < 0 {
				return nil, errColumn(src.cols, x.Name, "field list")
			}
		}
	}
	return out.result(bin, &s.srv.fields), nil
}

// narrow applies a SELECT's WHERE, ORDER BY and LIMIT to the rows of a
// ticket table, sequence or information_schema view.
func (src *source) narrow(p *sql.Select, e *evalCtx, args []any) error {
	if src.catalog {
		e.catalog = true
	} else if p.WhereErr != nil {
		return p.WhereErr
	}
	agg := false
	for i := range p.Fields {
		if p.Fields[i].Expr.Kind == sql.ExprAgg {
			if !src.catalog {
				return unsupported(p.Fields[i].Expr.Name + "() on a ticket table or sequence")
			}
			agg = true
		}
	}
	if p.GroupBy != nil || p.Distinct {
		return unsupported("GROUP BY or DISTINCT on a ticket table, sequence or information_schema view")
	}
	var err error
	if src.catalog {
		err = src.catalogFilter(e, p.Filter)
	} else {
		err = e.s.filter(src, p.Where, args)
	}
	if err != nil {
		return err
	}
	if agg {
		return src.count(p)
	}
	if lateOrder(p) {
		return nil // ordered and cut once projected (orderProjected)
	}
	if err := src.order(p.OrderBy); err != nil {
		return err
	}
	if p.HasLimit {
		lo := min(p.Offset, uint64(len(src.rows)))
		hi := min(lo+p.Limit, uint64(len(src.rows)))
		src.rows = src.rows[lo:hi]
	}
	return nil
}

// hasStar reports whether p's select list has a *.
func hasStar(p *sql.Select) bool {
	for i := range p.Fields {
		if p.Fields[i].Expr.Kind == sql.ExprStar {
			return true
		}
	}
	return false
}

// source is a FROM table materialised as rows.
type source struct {
	rowset
	where string // name used in "Unknown column ... in 'where clause'"
	// rowTable is set for a row table, whose rows the row engine selects
	// with pred, the bound WHERE (selectRowTable).
	rowTable *model.Table
	pred     *model.RowExpr
	// catalog: an information_schema view, which catalogFilter filters.
	catalog bool
	// counted: the rows were replaced by their COUNT()s (count).
	counted bool
}

func (src *source) colIndex(name string) int { return colIndexIn(src.cols, name) }

// errColumn is 1052 for a bare name several views of a join have, else
// 1054.
func errColumn(cols []column, name, where string) error {
	n := 0
	for _, c := range cols {
		if j := strings.LastIndexByte(c.name, '.'); j >= 0 && strings.EqualFold(c.name[j+1:], name) {
			n++
		}
	}
	if n > 1 {
		return mysqlerr.New(mysql.ER_NON_UNIQ_ERROR, "Column '%s' in %s is ambiguous", name, where)
	}
	return errUnknownColumn(name, where)
}

// colIndexIn finds the column name in cols: by its name, or, in a join of
// information_schema views (whose columns are named alias.column), a
// bare name by the one column of that name; -1 when none or several.
func colIndexIn(cols []column, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c.name, name) {
			return i
		}
	}
	found := -1
	for i, c := range cols {
		if j := strings.LastIndexByte(c.name, '.'); j >= 0 && strings.EqualFold(c.name[j+1:], name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// filter keeps the rows of a ticket table or sequence that the WHERE's
// column = value terms match, through the row engine (filterConds); a
// stub compares as the table's unique key does (ticket.SameStub: case
// and trailing spaces aside), which is CollLegacy's folding.
func (s *session) filter(src *source, conds []sql.Cond, args []any) error {
	e := evalCtx{s: s}
	e.over(src.cols, src.rows)
	rd := e.rowsDef()
	rd.Collation = model.CollLegacy
	return s.filterConds(&src.rowset, rd, conds, args, false)
}

func (src *source) order(by []sql.Order) error {
	if len(by) == 0 {
		return nil
	}
	keys := make([]orderKey, len(by))
	for i, o := range by {
		if keys[i].col = src.colIndex(o.Column); keys[i].col < 0 {
			return errUnknownColumn(o.Column, "order clause")
		}
		keys[i].desc = o.Desc
	}
	rd, rows := src.datums()
	idx := sortRows(len(rows), func(a, b int) int {
		for _, k := range keys {
			if c := rowengine.CompareRows(rd, k.col, rows[a], rows[b]); c != 0 {
				return k.sign(c)
			}
		}
		return 0
	})
	ordered := make([][]any, len(idx))
	for i, j := range idx {
		ordered[i] = src.rows[j]
	}
	src.rows = ordered
	return nil
}

// orderKey is one ORDER BY term: a column, or in orderProjected a select
// item (field).
type orderKey struct {
	col, field int
	desc       bool
}

func (k orderKey) sign(c int) int {
	if k.desc {
		return -c
	}
	return c
}

// sortRows is the stable order of n rows by cmp.
func sortRows(n int, cmp func(a, b int) int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return cmp(idx[a], idx[b]) < 0 })
	return idx
}

// datums are the source's rows as the row engine reads them, with their
// definition: information_schema's strings in utf8mb3_general_ci, a
// ticket table's stub as its unique key compares it (CollLegacy).
func (src *source) datums() (*model.RowsDef, [][]model.Datum) {
	e := evalCtx{}
	e.over(src.cols, src.rows)
	rd := e.rowsDef()
	if !src.catalog {
		rd.Collation = model.CollLegacy
	}
	rows := make([][]model.Datum, len(src.rows))
	for i, r := range src.rows {
		e.row = r
		rows[i] = e.datums()
	}
	return rd, rows
}

// source materialises a FROM table: a ticket table or
// information_schema.TABLES. Of a row table it reads the rows the WHERE
// conjunction where can match by key (all of them when it binds no
// key); the caller filters them.
func (s *session) source(t *sql.TableName, p *sql.Select, args []any) (*source, error) {
	db, err := s.dbFor(*t)
	if err != nil {
		return nil, err
	}
	if len(p.Join) > 0 {
		return s.joinViews(p, args)
	}
	if strings.EqualFold(db, "information_schema") {
		return s.infoSchema(t.Name)
	}
	tb, err := s.table(db, t.Name)
	if err != nil {
		return nil, err
	}
	if tb.Def.Seq != nil {
		return sequenceSource(tb), nil
	}
	if tb.Def.Rows != nil {
		if p.FilterErr != nil {
			return nil, p.FilterErr
		}
		filter, err := filterExpr(p.Filter, args)
		if err != nil {
			return nil, err
		}
		if err := bindLastID(s.ts.LastInsertID, filter); err != nil {
			return nil, err
		}
		return s.rowsSource(tb, filter), nil
	}
	src := &source{}
	src.cols = tableColumns(&tb.Def)
	for i := range src.cols {
		src.cols[i].table, src.cols[i].db = tb.Def.Name, tb.Def.DB
	}
	for _, r := range tb.Rows {
		row := make([]any, len(src.cols))
		for i, c := range src.cols {
			if strings.EqualFold(c.name, tb.Def.IDCol) {
				row[i] = r.ID
			} else {
				row[i] = r.Stub
			}
		}
		src.rows = append(src.rows, row)
	}
	return src, nil
}

// tableColumns lists a ticket table's columns in declaration order.
func tableColumns(d *model.TableDef) []column {
	if d.Seq != nil {
		return sequenceColumns()
	}
	if d.Rows != nil {
		return rowsColumns(d)
	}
	// The id column typed as MariaDB types it (binary rows' size and
	// signedness: a BIGINT UNSIGNED id above 2^63 is not negative).
	id := column{name: d.IDCol, typ: intColType[d.IDType.Kind]}
	if id.typ == 0 {
		id.typ = mysql.MYSQL_TYPE_LONGLONG
	}
	if d.IDType.Unsigned {
		id.flag = mysql.UNSIGNED_FLAG
	}
	if d.StubCol == "" {
		return []column{id}
	}
	stub := column{name: d.StubCol, typ: mysql.MYSQL_TYPE_VAR_STRING}
	if strings.HasPrefix(d.StubType, "char") {
		stub.typ = mysql.MYSQL_TYPE_STRING
	}
	if d.StubFirst {
		return []column{stub, id}
	}
	return []column{id, stub}
}

// autoIncValue is the AUTO_INCREMENT a table shows: NULL without an
// AUTO_INCREMENT column.
func autoIncValue(t *model.Table) any {
	if !t.Def.AutoInc {
		return nil
	}
	return t.AutoInc
}
