package wire

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
)

// Row tables through the row engine (ticket/rows_engine.go): wire binds a
// plan's placeholders, adds the session's sql_mode and pinned time, and
// encodes the answer. Matching, ordering, conversion and aggregation all
// happen in ticket, for SELECT, UPDATE and DELETE alike.

// compareExprOp is the row engine's operator of a comparison (0 for an
// unknown one).
func compareExprOp(name string) ticket.ExprOp {
	switch name {
	case "=":
		return ticket.EEq
	case "<>":
		return ticket.ENe
	case "<":
		return ticket.ELt
	case "<=":
		return ticket.ELe
	case ">":
		return ticket.EGt
	case ">=":
		return ticket.EGe
	case "<=>":
		return ticket.ENullEq
	}
	return 0
}

// logicExprOp is the operator of AND, OR and XOR (0 for another).
func logicExprOp(name string) ticket.ExprOp {
	switch name {
	case "AND":
		return ticket.EAnd
	case "OR":
		return ticket.EOr
	case "XOR":
		return ticket.EXor
	}
	return 0
}

// arithExprOp is the operator of +, - and * (0 for another).
func arithExprOp(op byte) ticket.ExprOp {
	switch op {
	case '+':
		return ticket.EAdd
	case '-':
		return ticket.ESub
	case '*':
		return ticket.EMul
	}
	return 0
}

// rowExpr converts a plan's row expression, binding its placeholders.
func rowExpr(x *sql.Expr, args []any) (ticket.RowExpr, error) {
	sub := func(kind ticket.ExprOp, list []sql.Expr) (ticket.RowExpr, error) {
		out := ticket.RowExpr{Op: kind, Args: make([]ticket.RowExpr, len(list))}
		for i := range list {
			var err error
			if out.Args[i], err = rowExpr(&list[i], args); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	switch x.Kind {
	case sql.ExprValue:
		v, err := bind(x.Value, args)
		if err != nil {
			return ticket.RowExpr{}, err
		}
		if v.Kind == ticket.ValDefault {
			return ticket.RowExpr{}, unsupported("DEFAULT inside an expression")
		}
		return ticket.RowExpr{Op: ticket.EVal, Val: &v}, nil
	case sql.ExprColumn:
		return ticket.RowExpr{Op: ticket.ECol, Col: x.Name}, nil
	case sql.ExprValues:
		return ticket.RowExpr{Op: ticket.EValues, Col: x.Name}, nil
	case sql.ExprCompare:
		return sub(compareExprOp(x.Name), x.Args)
	case sql.ExprIsNull:
		if x.Not {
			return sub(ticket.EIsNotNull, x.Args)
		}
		return sub(ticket.EIsNull, x.Args)
	case sql.ExprIn:
		if x.Not {
			return sub(ticket.ENotIn, x.Args)
		}
		return sub(ticket.EIn, x.Args)
	case sql.ExprBetween:
		if x.Not {
			return sub(ticket.ENotBetw, x.Args)
		}
		return sub(ticket.EBetween, x.Args)
	case sql.ExprLike:
		op := ticket.ELike
		if x.Not {
			op = ticket.ENotLike
		}
		out, err := sub(op, x.Args)
		out.Escape = x.Op
		return out, err
	case sql.ExprLogic:
		return sub(logicExprOp(x.Name), x.Args)
	case sql.ExprNot:
		return sub(ticket.ENot, x.Args)
	case sql.ExprArith:
		return sub(arithExprOp(x.Op), x.Args)
	case sql.ExprInterval:
		out, err := sub(ticket.EInterval, x.Args)
		if err != nil {
			return out, err
		}
		out.Unit = x.Name
		if x.Op == '-' {
			out.Args[1] = ticket.RowExpr{Op: ticket.ENeg, Args: []ticket.RowExpr{out.Args[1]}}
		}
		return out, nil
	case sql.ExprLastInsertID:
		if len(x.Args) == 0 {
			// A marker the session replaces with its value (bindLastID).
			return ticket.RowExpr{Op: ticket.ELastID}, nil
		}
		if len(x.Args) != 1 {
			return ticket.RowExpr{}, unsupported("LAST_INSERT_ID() in a row-table statement")
		}
		return sub(ticket.ELastID, x.Args)
	}
	return ticket.RowExpr{}, unsupported(x.Describe() + " on a row table")
}

// filterExpr binds a WHERE; nil for none.
func filterExpr(f *sql.Expr, args []any) (*ticket.RowExpr, error) {
	if f == nil {
		return nil, nil
	}
	x, err := rowExpr(f, args)
	return &x, err
}

func rowOrders(by []sql.Order) []ticket.RowOrder {
	if by == nil {
		return nil
	}
	out := make([]ticket.RowOrder, len(by))
	for i, o := range by {
		out[i] = ticket.RowOrder{Col: o.Column, Desc: o.Desc}
	}
	return out
}

// rowsCommand is the row engine's part of a row-table command with the
// session's sql_mode and pinned time.
func (s *session) rowsCommand() *ticket.RowsCommand {
	m := s.mode()
	return &ticket.RowsCommand{
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
func (s *session) ticketInsertMode(p *sql.Insert, t *ticket.Table) error {
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
func (s *session) peekTable(db, name string) *ticket.Table {
	var t *ticket.Table
	if err := s.srv.svc.View(func(st ticket.Store) (err error) {
		t, err = st.Table(db, name)
		return err
	}); err != nil {
		return nil
	}
	return t
}

// isRowTable reports whether db.name is a row table; false for anything
// else, including a table that does not exist (the command then answers).
func (s *session) isRowTable(db, name string) bool {
	return s.srv.svc.IsRowTable(db, name)
}

// defaultMode is MariaDB's default sql_mode, the one ticket tables apply.
const defaultMode = sqlMode("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION")

// updateRowsExpr runs an UPDATE on a row table in expression form.
func (s *session) updateRowsExpr(p *sql.Update, db string, args []any) (ticket.Result, error) {
	if p.RowErr != nil {
		return ticket.Result{}, p.RowErr
	}
	rc := s.rowsCommand()
	var err error
	rc.Assigns = make([]ticket.RowAssign, len(p.Assigns))
	for i, a := range p.Assigns {
		ra := ticket.RowAssign{Col: a.Column}
		if a.Expr.Kind == sql.ExprValue && a.Expr.Value.Kind == sql.ValDefault {
			ra.Default = true
		} else if ra.Expr, err = rowExpr(&a.Expr, args); err != nil {
			return ticket.Result{}, err
		}
		rc.Assigns[i] = ra
	}
	if rc.Filter, err = filterExpr(p.Filter, args); err != nil {
		return ticket.Result{}, err
	}
	xs := []*ticket.RowExpr{rc.Filter}
	for i := range rc.Assigns {
		xs = append(xs, &rc.Assigns[i].Expr)
	}
	if err := bindLastID(s.ts.LastInsertID, xs...); err != nil {
		return ticket.Result{}, err
	}
	rc.OrderBy, rc.HasLimit, rc.Limit = rowOrders(p.OrderBy), p.HasLimit, p.Limit
	return s.exec(&ticket.Command{Op: ticket.OpUpdate, DB: db, Table: p.Table.Name, Rows: rc})
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
	r, err := s.exec(&ticket.Command{Op: ticket.OpDelete, DB: db, Table: p.Table.Name, Rows: rc})
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
	q := &ticket.Query{Filter: src.pred, OrderBy: rowOrders(p.OrderBy), HasLimit: p.HasLimit, Limit: p.Limit, Offset: p.Offset,
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
				a := ticket.Agg{Fn: f.Expr.Name}
				if len(f.Expr.Args) == 1 {
					a.Col = f.Expr.Args[0].Name
				}
				q.Aggs = append(q.Aggs, a)
			case f.Expr.Kind == sql.ExprColumn && p.GroupBy != nil:
				q.Aggs = append(q.Aggs, ticket.Agg{Col: f.Expr.Name})
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
				if a.Kind == ticket.ColString && a.Col == nil {
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
				case a.Kind == ticket.ColInt:
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
func (s *session) selectView(tb *ticket.Table, q *ticket.Query) (*ticket.Table, *ticket.QueryResult, error) {
	// One allocation for what the view's closure writes.
	r := &struct {
		tb  *ticket.Table
		res *ticket.QueryResult
	}{tb: tb}
	err := s.view(func(st ticket.Store) (err error) {
		r.tb, r.res, err = s.ts.Select(st, r.tb.Def.DB, r.tb.Def.Name, q)
		return err
	})
	return r.tb, r.res, err
}

// mode is the session's sql_mode as a set of names.
type sqlMode string

func (m sqlMode) has(name string) bool {
	for _, f := range strings.Split(string(m), ",") {
		if f == name {
			return true
		}
	}
	return false
}

func (s *session) mode() sqlMode {
	if v, ok := s.setVars["sql_mode"].(string); ok {
		return sqlMode(v)
	}
	v, _ := s.vars["sql_mode"].value.(string)
	return sqlMode(v)
}

// sqlModes are MariaDB's sql_mode names in the order it lists them, and
// whether ticketd honours each: a mode that would change an answer
// ticketd gives differently is refused with 1235 rather than shown and
// ignored. Honoured trivially: ERROR_FOR_DIVISION_BY_ZERO (ticketd has
// no division), NO_AUTO_CREATE_USER (no GRANT), NO_ZERO_DATE and
// NO_ZERO_IN_DATE (ticketd stores no zero date in any mode), NO_DIR_IN_CREATE
// (no DATA DIRECTORY), ONLY_FULL_GROUP_BY (no GROUP BY, and aggregates
// beside other columns are refused).
var sqlModes = []struct {
	name string
	ok   bool
}{
	{"REAL_AS_FLOAT", false}, {"PIPES_AS_CONCAT", false}, {"ANSI_QUOTES", false}, {"IGNORE_SPACE", false},
	{"IGNORE_BAD_TABLE_OPTIONS", false}, {"ONLY_FULL_GROUP_BY", true}, {"NO_UNSIGNED_SUBTRACTION", false},
	{"NO_DIR_IN_CREATE", true}, {"POSTGRESQL", false}, {"ORACLE", false}, {"MSSQL", false}, {"DB2", false},
	{"MAXDB", false}, {"NO_KEY_OPTIONS", false}, {"NO_TABLE_OPTIONS", false}, {"NO_FIELD_OPTIONS", false},
	{"MYSQL323", false}, {"MYSQL40", false}, {"ANSI", false}, {"NO_AUTO_VALUE_ON_ZERO", true},
	{"NO_BACKSLASH_ESCAPES", false}, {"STRICT_TRANS_TABLES", true}, {"STRICT_ALL_TABLES", true},
	{"NO_ZERO_IN_DATE", true}, {"NO_ZERO_DATE", true}, {"ALLOW_INVALID_DATES", false},
	{"ERROR_FOR_DIVISION_BY_ZERO", true}, {"TRADITIONAL", true}, {"NO_AUTO_CREATE_USER", true},
	{"HIGH_NOT_PRECEDENCE", false}, {"NO_ENGINE_SUBSTITUTION", true}, {"PAD_CHAR_TO_FULL_LENGTH", false},
	{"EMPTY_STRING_IS_NULL", false}, {"SIMULTANEOUS_ASSIGNMENT", false}, {"TIME_ROUND_FRACTIONAL", false},
}

// traditional is what TRADITIONAL stands for in MariaDB 10.11.
var traditional = []string{"STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
	"ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL", "NO_AUTO_CREATE_USER", "NO_ENGINE_SUBSTITUTION"}

// normalizeMode turns a SET sql_mode value into MariaDB's canonical
// list: known names, upper case, in MariaDB's order, TRADITIONAL
// expanded. An unknown name is 1231; a mode ticketd does not honour 1235.
func normalizeMode(v string) (string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		known := false
		for _, m := range sqlModes {
			if m.name == f {
				known = true
				if !m.ok {
					return "", unsupported("sql_mode " + f)
				}
			}
		}
		if !known {
			return "", mysqlerr.New(mysqlerr.CodeWrongValueForVar, "Variable 'sql_mode' can't be set to the value of '%s'", f)
		}
		want[f] = true
		if f == "TRADITIONAL" {
			for _, t := range traditional {
				want[t] = true
			}
		}
	}
	var out []string
	for _, m := range sqlModes {
		if want[m.name] {
			out = append(out, m.name)
		}
	}
	return strings.Join(out, ","), nil
}

// now is NOW() for the session's statements that are not replicated:
// SET timestamp's value while it is set, else the local clock or the
// replicated clock, whichever is later (Config.Clock).
func (s *session) now() time.Time {
	if s.pinned != 0 {
		return time.UnixMicro(s.pinned).UTC()
	}
	now := time.Now().UTC()
	if s.srv.cfg.Clock != nil {
		if c := s.srv.cfg.Clock(); c.After(now) {
			return c
		}
	}
	return now
}

// setTimestamp is SET timestamp = n (seconds since the epoch, with up to
// six fraction digits); 0 or DEFAULT goes back to the clock.
func (s *session) setTimestamp(val any, isDefault bool) (func() error, error) {
	if isDefault {
		return func() error { s.pinned = 0; return nil }, nil
	}
	var r *big.Rat
	switch x := val.(type) {
	case int64:
		r = new(big.Rat).SetInt64(x)
	case uint64:
		r = new(big.Rat).SetUint64(x)
	case float64:
		r = new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, errWrongType("timestamp")
		}
	case string:
		var ok bool
		if r, ok = new(big.Rat).SetString(strings.TrimSpace(x)); !ok {
			return nil, errWrongType("timestamp")
		}
	default:
		return nil, errWrongType("timestamp")
	}
	micro := new(big.Rat).Mul(r, big.NewRat(1e6, 1))
	us := new(big.Int).Quo(micro.Num(), micro.Denom())
	// MariaDB takes 1 to 2147483647 (2038-01-19); 0 resets.
	if us.Sign() < 0 || !us.IsInt64() || us.Int64() > math.MaxInt32*1e6 {
		t, _ := textValue(val)
		return nil, mysqlerr.New(mysqlerr.CodeWrongValueForVar, "Variable 'timestamp' can't be set to the value of '%s'", t)
	}
	n := us.Int64()
	return func() error { s.pinned = n; return nil }, nil
}

// timestampVar is @@timestamp: the pinned time or the clock, in seconds
// with six fraction digits, as MariaDB's text protocol shows it.
func (s *session) timestampVar() string {
	us := s.pinned
	if us == 0 {
		us = time.Now().UnixMicro()
	}
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

// groupColumns are the columns p groups by: a GROUP BY name is the
// table's column, else (MariaDB's order) the select-list item of that
// alias: a column's alias groups by the column; any other item's would
// group by computed values, which the engine does not (1235).
func groupColumns(rd *ticket.RowsDef, p *sql.Select) ([]string, error) {
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

// rowOnlyKinds are the expressions only the row engine evaluates.
var rowOnlyKinds = []sql.ExprKind{sql.ExprCompare, sql.ExprLogic, sql.ExprNot, sql.ExprIsNull,
	sql.ExprIn, sql.ExprBetween, sql.ExprLike}

// boolKind reports an expression of rowOnlyKinds: its value is 0, 1 or NULL.
func boolKind(k sql.ExprKind) bool { return slices.Contains(rowOnlyKinds, k) }

// hasColumn reports whether x refers to a column.
func hasColumn(x *sql.Expr) bool {
	if x.Kind == sql.ExprColumn {
		return true
	}
	for i := range x.Args {
		if hasColumn(&x.Args[i]) {
			return true
		}
	}
	return false
}

// projectRows computes a select list that has arithmetic over columns
// (v * 2, u - 1), or a comparison, AND/OR/XOR/NOT, IS NULL, IN, BETWEEN
// or LIKE (s > 'x', v IS NULL), through the row engine, as WHERE and SET
// compute them; nil when no item has (the general select path answers
// those: columns, *, CONCAT of columns, items without columns).
func (s *session) projectRows(p *sql.Select, t *ticket.Table, rows [][]ticket.Datum, args []any, bin bool) (*mysql.Result, error) {
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
	exprs := make([]*ticket.RowExpr, len(p.Fields))
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
	ev := ticket.NewRowEval(t, s.now(), &s.warnings)
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
			} else if kind == ticket.ColInt {
				row = append(row, datumValue(&ticket.RowCol{Kind: ticket.ColInt}, d))
			} else {
				row = append(row, d.S)
			}
			col++
		}
		out.rows = append(out.rows, row)
	}
	return out.result(bin, &s.srv.fields), nil
}

func hasKind(x *sql.Expr, k sql.ExprKind) bool {
	if x.Kind == k {
		return true
	}
	for i := range x.Args {
		if hasKind(&x.Args[i], k) {
			return true
		}
	}
	return false
}

func colIndexOf(rd *ticket.RowsDef, name string) int {
	for i := range rd.Cols {
		if strings.EqualFold(rd.Cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// bindLastID writes the session's LAST_INSERT_ID() into the markers
// rowExpr left for it in xs (the value at the statement's start, as
// MariaDB reads it). A statement that also sets it with
// LAST_INSERT_ID(expr) is refused: MariaDB's LAST_INSERT_ID() then reads
// the value the rows before set, row by row.
func bindLastID(id uint64, xs ...*ticket.RowExpr) error {
	var marker, setter bool
	var walk func(x *ticket.RowExpr)
	walk = func(x *ticket.RowExpr) {
		if x.Op == ticket.ELastID {
			if len(x.Args) == 0 {
				marker = true
				v := ticket.Value{Kind: ticket.ValUint, Uint: id}
				*x = ticket.RowExpr{Op: ticket.EVal, Val: &v}
				return
			}
			setter = true
		}
		for i := range x.Args {
			walk(&x.Args[i])
		}
	}
	for _, x := range xs {
		if x != nil {
			walk(x)
		}
	}
	if marker && setter {
		return unsupported("LAST_INSERT_ID() beside LAST_INSERT_ID(expr) in one statement")
	}
	return nil
}

// insertRefusal refuses, before anything is proposed, the INSERTs whose
// answer ticketd would get wrong (found by TestMariaDBRegression):
//
//   - a multi-row INSERT into a row table that gives some rows an
//     AUTO_INCREMENT value and lets others generate one: InnoDB reserves
//     a block of values for the statement and an explicit value moves
//     within it, which ticketd does not reproduce;
//   - NULL for a NOT NULL column after the first row of a multi-row
//     INSERT into a ticket table: MyISAM stores the column's implicit
//     default there, with a warning.
//
// Only statements that could be one of these read the table.
func (s *session) insertRefusal(db string, p *sql.Insert, vals [][]ticket.Value, args []any, isRow bool) error {
	suspect := false
	for i, row := range vals {
		for _, v := range row {
			if v.Kind == ticket.ValNull {
				suspect = suspect || i > 0
			}
		}
	}
	if !suspect && len(vals) < 2 {
		return nil
	}
	if !suspect && !isRow {
		return nil
	}
	t := s.peekTable(db, p.Table.Name)
	if t == nil {
		return nil // the command answers
	}
	colOf := func(j int) string {
		if p.Columns != nil {
			if j < len(p.Columns) {
				return p.Columns[j]
			}
			return ""
		}
		if rd := t.Def.Rows; rd != nil && j < len(rd.Cols) {
			return rd.Cols[j].Name
		}
		return ""
	}
	if rd := t.Def.Rows; rd != nil {
		explicit, generated := false, false
		for _, row := range vals {
			auto := len(row) == 0 // VALUES (): generated
			for j, v := range row {
				name := colOf(j)
				var col *ticket.RowCol
				for k := range rd.Cols {
					if strings.EqualFold(rd.Cols[k].Name, name) {
						col = &rd.Cols[k]
					}
				}
				if col == nil {
					continue
				}
				if t.Def.AutoInc && strings.EqualFold(col.Name, t.Def.IDCol) {
					auto = true
					switch {
					case v.Kind == ticket.ValNull || v.Kind == ticket.ValDefault:
						generated = true
					case v.Kind == ticket.ValInt && v.Int == 0 && !s.rowsCommand().NoAutoValueOnZero:
						generated = true
					default:
						explicit = true
					}
				}
			}
			if !auto && t.Def.AutoInc {
				generated = true
			}
		}
		if explicit && generated && len(vals) > 1 {
			return unsupported("a multi-row INSERT that gives some rows an AUTO_INCREMENT value and generates others")
		}
		return nil
	}
	for i, row := range vals {
		if i == 0 {
			continue
		}
		for j, v := range row {
			if v.Kind != ticket.ValNull {
				continue
			}
			name := colOf(j)
			if name == "" && p.Columns == nil {
				// The ticket table's columns in their order.
				if (j == 0) == !t.Def.StubFirst {
					name = t.Def.IDCol
				} else {
					name = t.Def.StubCol
				}
			}
			switch {
			case strings.EqualFold(name, t.Def.IDCol) && t.Def.IDNotNull && !t.Def.AutoInc,
				strings.EqualFold(name, t.Def.StubCol) && t.Def.StubNotNull:
				return unsupported("NULL for a NOT NULL column after the first row of a multi-row INSERT into a ticket table")
			}
		}
	}
	return nil
}

// doubleExpr reports arithmetic with a DOUBLE parameter, whose result
// MariaDB types DOUBLE (the row engine computes it in double precision).
func doubleExpr(x *ticket.RowExpr) bool {
	switch x.Op {
	case ticket.EVal:
		return x.Val != nil && x.Val.Kind == ticket.ValDouble
	case ticket.EAdd, ticket.ESub, ticket.EMul, ticket.ENeg:
		for i := range x.Args {
			if doubleExpr(&x.Args[i]) {
				return true
			}
		}
	}
	return false
}
