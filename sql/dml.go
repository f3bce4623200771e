package sql

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// scope is what column names in a statement can refer to: the one table of
// its FROM, INSERT or UPDATE. A zero scope has no table.
type scope struct {
	table *TableName
	alias string // AS alias, which then replaces the table name as qualifier
	// onDup allows VALUES(col): ON DUPLICATE KEY UPDATE's expressions.
	onDup bool
	// join lists the views of a join of information_schema views
	// (catalogjoin.go); table is then the first.
	join []JoinTable
}

// column resolves a column reference to its lower-case name.
func (sc scope) column(c *ast.ColumnName, field bool) (string, error) {
	if sc.join != nil {
		return sc.joinColumn(c)
	}
	if sc.table == nil {
		if field {
			return "", mysqlerr.UnknownColumn(columnText(c), "field list")
		}
		return "", unsupported("column reference without a table")
	}
	if c.Table.O != "" {
		ok := false
		if sc.alias != "" {
			ok = c.Schema.O == "" && strings.EqualFold(c.Table.O, sc.alias)
		} else {
			// With no database named in the statement, db.t.col may name
			// the session's database, which only wire knows.
			ok = strings.EqualFold(c.Table.O, sc.table.Name) &&
				(c.Schema.O == "" || sc.table.DB == "" || strings.EqualFold(c.Schema.O, sc.table.DB))
		}
		if !ok {
			return "", unsupported("column of another table")
		}
	}
	return strings.ToLower(c.Name.O), nil
}

func columnText(c *ast.ColumnName) string {
	s := c.Name.O
	if c.Table.O != "" {
		s = c.Table.O + "." + s
		if c.Schema.O != "" {
			s = c.Schema.O + "." + s
		}
	}
	return s
}

// singleTable is the one table of a FROM, INSERT INTO or UPDATE clause.
func singleTable(refs *ast.TableRefsClause) (scope, error) {
	if refs == nil || refs.TableRefs == nil {
		return scope{}, unsupported("statement without a table")
	}
	j := refs.TableRefs
	if j.Right != nil {
		return scope{}, unsupported("JOIN")
	}
	switch left := j.Left.(type) {
	case *ast.TableSource:
		tn, ok := left.Source.(*ast.TableName)
		if !ok {
			return scope{}, unsupported("subquery")
		}
		if len(tn.PartitionNames) > 0 {
			return scope{}, unsupported("PARTITION")
		}
		return scope{table: tableName(tn), alias: left.AsName.O}, nil
	case *ast.Join:
		return scope{}, unsupported("JOIN")
	}
	return scope{}, unsupported("FROM " + nodeSQL(j.Left))
}

func tableName(tn *ast.TableName) *TableName {
	return &TableName{DB: tn.Schema.O, Name: tn.Name.O}
}

func selectStmt(s *ast.SelectStmt) (Plan, error) {
	switch {
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, unsupported("TABLE / VALUES statement")
	case s.With != nil:
		return nil, unsupported("WITH")
	case s.GroupBy != nil && s.GroupBy.Rollup:
		return nil, unsupported("WITH ROLLUP")
	case s.Having != nil:
		return nil, unsupported("HAVING")
	case len(s.WindowSpecs) > 0:
		return nil, unsupported("WINDOW")
	case s.SelectIntoOpt != nil:
		return nil, unsupported("SELECT ... INTO")
	case s.Fields == nil:
		return nil, unsupported("SELECT without fields")
	}
	plan := &Select{}
	var sc scope
	if s.From != nil {
		var err error
		if sc, err = singleTable(s.From); err != nil {
			var u unsupported
			if !errors.As(err, &u) || string(u) != "JOIN" {
				return nil, err
			}
			if sc, s.Where, err = joinScope(s.From, s.Where); err != nil {
				return nil, err
			}
		}
		plan.From, plan.Join = sc.table, sc.join
	}
	plan.Fields = make([]SelectField, 0, len(s.Fields.Fields))
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			if sc.table == nil {
				return nil, mysqlerr.NoTablesUsed()
			}
			if f.WildCard.Table.O != "" {
				if _, err := sc.column(&ast.ColumnName{Schema: f.WildCard.Schema, Table: f.WildCard.Table}, true); err != nil {
					return nil, err
				}
			}
			plan.Fields = append(plan.Fields, SelectField{Expr: Expr{Kind: ExprStar}, Name: "*"})
			continue
		}
		if a, ok, err := aggField(f.Expr, sc); ok {
			if err != nil {
				return nil, err
			}
			if sc.table == nil {
				return nil, unsupported(a.Name + "() without FROM")
			}
			plan.Fields = append(plan.Fields, SelectField{Expr: a, Name: fieldLabel(f)})
			continue
		}
		e, err := expr(f.Expr, sc)
		var u unsupported
		if (errors.As(err, &u) || err == nil && hasPredicate(&e)) && sc.table != nil {
			// A comparison, AND/OR/NOT, IS NULL, IN, BETWEEN or LIKE over
			// a table's columns: a row-table expression, which the row
			// engine evaluates as it does WHERE (a ticket table refuses it).
			if re, rerr := rowExpr(f.Expr, sc); rerr == nil {
				e, err = re, nil
			}
		}
		if err != nil {
			return nil, err
		}
		plan.Fields = append(plan.Fields, SelectField{Expr: e, Name: fieldLabel(f)})
	}
	var err error
	if s.Where != nil {
		if err := selectWhere(plan, s.Where, sc); err != nil {
			return nil, err
		}
	}
	if s.OrderBy != nil {
		if err := selectOrder(plan, s, sc); err != nil {
			return nil, err
		}
	}
	plan.Distinct = s.Distinct
	if s.GroupBy != nil {
		for _, item := range s.GroupBy.Items {
			c, ok := unparen(item.Expr).(*ast.ColumnNameExpr)
			if !ok || item.Desc {
				return nil, unsupported("GROUP BY an expression")
			}
			name, err := sc.column(c.Name, false)
			if err != nil {
				return nil, err
			}
			plan.GroupBy = append(plan.GroupBy, name)
			for j, f := range s.Fields.Fields {
				if f.AsName.O != "" && strings.EqualFold(f.AsName.O, name) && c.Name.Table.O == "" {
					if plan.GroupAliases == nil {
						plan.GroupAliases = map[string]Expr{}
					}
					plan.GroupAliases[name] = plan.Fields[j].Expr
					break
				}
			}
		}
	}
	if (plan.Distinct || plan.GroupBy != nil) && sc.table == nil {
		return nil, unsupported("DISTINCT or GROUP BY without FROM")
	}
	if s.Limit != nil {
		plan.HasLimit = true
		if plan.Limit, err = limitValue(s.Limit.Count); err != nil {
			return nil, err
		}
		if s.Limit.Offset != nil {
			if plan.Offset, err = limitValue(s.Limit.Offset); err != nil {
				return nil, err
			}
		}
	}
	return plan, nil
}

// fieldLabel is MySQL's column label: the alias, a string literal's value,
// or the expression as written.
func fieldLabel(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		// t.col and `col` are labelled col, as MariaDB does.
		return c.Name.Name.O
	}
	if v, ok := f.Expr.(*test_driver.ValueExpr); ok {
		switch x := v.GetValue().(type) {
		case string:
			return x
		case nil:
			return "NULL"
		}
		// MySQL names TRUE and FALSE in upper case however written.
		if t := f.OriginalText(); strings.EqualFold(t, "true") || strings.EqualFold(t, "false") {
			return strings.ToUpper(t)
		}
	}
	// OriginalText, not Text: Text rewrites binary string literals as hex.
	return trimLabel(f.OriginalText())
}

func orderBy(o *ast.OrderByClause, sc scope) ([]Order, error) {
	out := make([]Order, 0, len(o.Items))
	for _, item := range o.Items {
		c, ok := unparen(item.Expr).(*ast.ColumnNameExpr)
		if !ok {
			return nil, unsupported("ORDER BY an expression")
		}
		name, err := sc.column(c.Name, false)
		if err != nil {
			return nil, err
		}
		out = append(out, Order{Column: name, Desc: item.Desc})
	}
	return out, nil
}

func limitValue(e ast.ExprNode) (uint64, error) {
	v, ok, err := literal(e)
	if err != nil || !ok {
		return 0, unsupported("LIMIT with an expression")
	}
	switch v.Kind {
	case ValInt:
		if v.Int >= 0 {
			return uint64(v.Int), nil
		}
	case ValUint:
		return v.Uint, nil
	}
	return 0, unsupported("LIMIT with an expression")
}

// conds turns `a = 1 AND b = 'x'` into its terms.
func conds(e ast.ExprNode, sc scope) ([]Cond, error) {
	out, _, err := terms(e, sc, false)
	return out, err
}

// terms takes the `column = value` terms of a condition joined by AND,
// or, when allowOr, joined by OR (not both); or reports whether they were
// ORed.
func terms(e ast.ExprNode, sc scope, allowOr bool) ([]Cond, bool, error) {
	var out []Cond
	var join opcode.Op
	var walk func(e ast.ExprNode) error
	walk = func(e ast.ExprNode) error {
		b, ok := unparen(e).(*ast.BinaryOperationExpr)
		if !ok {
			return unsupported("WHERE condition other than column = value")
		}
		if b.Op == opcode.LogicAnd || (allowOr && b.Op == opcode.LogicOr) {
			if join != 0 && join != b.Op {
				return unsupported("WHERE with AND and OR")
			}
			join = b.Op
			if err := walk(b.L); err != nil {
				return err
			}
			return walk(b.R)
		}
		c, err := cond(b, sc)
		if err != nil {
			return err
		}
		out = append(out, c)
		return nil
	}
	if err := walk(e); err != nil {
		return nil, false, err
	}
	return out, join == opcode.LogicOr, nil
}

// cond is one `column = value` or `value = column` term.
func cond(b *ast.BinaryOperationExpr, sc scope) (Cond, error) {
	bad := unsupported("WHERE condition other than column = value")
	if b.Op != opcode.EQ {
		return Cond{}, bad
	}
	l, r := unparen(b.L), unparen(b.R)
	if _, ok := l.(*ast.ColumnNameExpr); !ok {
		l, r = r, l
	}
	c, ok := l.(*ast.ColumnNameExpr)
	if !ok {
		return Cond{}, bad
	}
	v, ok, err := literal(r)
	if err != nil || !ok {
		return Cond{}, bad
	}
	name, err := sc.column(c.Name, false)
	if err != nil {
		return Cond{}, err
	}
	return Cond{Column: name, Value: v}, nil
}

func insertStmt(s *ast.InsertStmt) (Plan, error) {
	if s.Select != nil {
		if s.IsReplace {
			return nil, unsupported("REPLACE ... SELECT")
		}
		return nil, unsupported("INSERT ... SELECT")
	}
	if len(s.PartitionNames) > 0 {
		return nil, unsupported("PARTITION")
	}
	sc, err := singleTable(s.Table)
	if err != nil {
		return nil, err
	}
	plan := &Insert{Table: *sc.table, Replace: s.IsReplace, Ignore: s.IgnoreErr}
	if len(s.Columns) > 0 {
		plan.Columns = make([]string, len(s.Columns))
		for i, c := range s.Columns {
			if plan.Columns[i], err = sc.column(c, false); err != nil {
				return nil, err
			}
		}
	}
	plan.Rows = make([][]Value, len(s.Lists))
	for i, list := range s.Lists {
		row := make([]Value, len(list))
		for j, e := range list {
			if d, ok := e.(*ast.DefaultExpr); ok && d.Name == nil {
				row[j] = Value{Kind: ValDefault}
				continue
			}
			v, ok, err := valueOrNow(e)
			if err != nil {
				return nil, err
			}
			if !ok {
				// An expression, which row tables compute (MariaDB's
				// VALUES (NOW() + INTERVAL 1 DAY, 1+1)).
				// A column reads the value given it earlier in the row
				// (VALUES (10, id + 1)).
				x, err := rowExpr(e, sc)
				if err != nil {
					return nil, err
				}
				if plan.Exprs == nil {
					plan.Exprs = make([][]Expr, len(s.Lists))
				}
				if plan.Exprs[i] == nil {
					plan.Exprs[i] = make([]Expr, len(list))
				}
				plan.Exprs[i][j] = x
				v = Value{Kind: ValExpr}
			}
			row[j] = v
		}
		plan.Rows[i] = row
	}
	if len(s.OnDuplicate) == 0 {
		return plan, nil
	}
	odku := sc
	odku.onDup = true
	plan.OnDup = make([]ColAssign, 0, len(s.OnDuplicate))
	for _, a := range s.OnDuplicate {
		col, err := sc.column(a.Column, false)
		if err != nil {
			return nil, err
		}
		ca := ColAssign{Column: col}
		if d, ok := a.Expr.(*ast.DefaultExpr); ok && d.Name == nil {
			ca.Expr = Expr{Kind: ExprValue, Value: Value{Kind: ValDefault}}
		} else if ca.Expr, err = rowExpr(a.Expr, odku); err != nil {
			if u := unsupported(""); !errors.As(err, &u) {
				return nil, err // a MySQL error such as 1054
			}
			// No table takes the clause: it is named as a ticket
			// table refuses it (TicketOnDup), as when plans carried
			// both forms.
			if len(s.OnDuplicate) > 1 {
				return nil, unsupported("ON DUPLICATE KEY UPDATE of several columns on a ticket table")
			}
			return nil, unsupported("SET " + col + " = expression")
		}
		plan.OnDup = append(plan.OnDup, ca)
	}
	return plan, nil
}

func updateStmt(s *ast.UpdateStmt) (Plan, error) {
	switch {
	case s.MultipleTable || s.TableRefs != nil && s.TableRefs.TableRefs != nil && s.TableRefs.TableRefs.Right != nil:
		return nil, unsupported("multiple-table UPDATE")
	case s.With != nil:
		return nil, unsupported("WITH")
	case s.IgnoreErr:
		return nil, unsupported("UPDATE IGNORE")
	}
	sc, err := singleTable(s.TableRefs)
	if err != nil {
		return nil, err
	}
	plan := &Update{Table: *sc.table}
	err = updateRowForm(plan, s, sc)
	if err == nil {
		return plan, nil
	}
	if u := unsupported(""); !errors.As(err, &u) {
		return nil, err // a MySQL error such as 1111 or 1054
	}
	return nil, updateRefusal(plan, s, sc, err)
}

// updateRefusal is the error of an UPDATE that no table takes, rowErr
// being why a row table does not (plan holds what updateRowForm
// converted before it failed): the ticket table's refusal (TicketForm's),
// unless the WHERE is outside both forms and the assignments are not
// simple ones (ColSets), where the row table's names the construct. The
// choice is the one ticketd made when plans carried both forms, kept so
// that no answer changes.
func updateRefusal(plan *Update, s *ast.UpdateStmt, sc scope, rowErr error) error {
	// updateRowForm converts the assignments first, then the WHERE, then
	// ORDER BY and LIMIT: all assignments are there when the error was
	// in another part.
	assigned := len(plan.Assigns) == len(s.List)
	var ticketErr error
	switch {
	case s.Order != nil:
		ticketErr = unsupported("UPDATE ... ORDER BY on a ticket table")
	case s.Limit != nil:
		ticketErr = unsupported("UPDATE ... LIMIT on a ticket table")
	case len(s.List) != 1:
		ticketErr = unsupported("UPDATE of several columns")
	case assigned:
		_, ticketErr = ticketAssign(&plan.Assigns[0], false)
	default:
		col, err := sc.column(s.List[0].Column, false)
		if err != nil {
			ticketErr = err
		} else {
			ticketErr = unsupported("SET " + col + " = expression")
		}
	}
	whereTerms := false
	if s.Where != nil {
		_, werr := conds(s.Where, sc)
		whereTerms = werr == nil
		if ticketErr == nil {
			ticketErr = werr
		}
	}
	simple := assigned && plan.ColSets() != nil
	if ticketErr == nil || !simple && !whereTerms && s.Where != nil {
		return rowErr
	}
	return ticketErr
}

// updateRowForm fills the row form of an UPDATE (Assigns, Filter, ORDER
// BY, LIMIT), or says why the statement has none.
func updateRowForm(plan *Update, s *ast.UpdateStmt, sc scope) error {
	for _, a := range s.List {
		col, err := sc.column(a.Column, false)
		if err != nil {
			return err
		}
		x, err := rowExpr(a.Expr, sc)
		if err != nil {
			return err
		}
		plan.Assigns = append(plan.Assigns, ColAssign{Column: col, Expr: x})
	}
	if s.Where != nil {
		f, err := rowExpr(s.Where, sc)
		if err != nil {
			return err
		}
		plan.Filter = &f
	}
	var err error
	if s.Order != nil {
		if plan.OrderBy, err = orderBy(s.Order, sc); err != nil {
			return err
		}
	}
	if s.Limit != nil {
		if s.Limit.Offset != nil {
			return mysqlerr.Syntax("OFFSET", 1)
		}
		plan.HasLimit = true
		if plan.Limit, err = limitValue(s.Limit.Count); err != nil {
			return err
		}
	}
	return nil
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// literal reads a constant or placeholder, folding a leading sign. ok is
// false for anything else. err is set only for a literal of a kind ticketd
// does not take (hexadecimal, bit).
func literal(e ast.ExprNode) (Value, bool, error) {
	switch x := unparen(e).(type) {
	case *test_driver.ParamMarkerExpr:
		return Value{Kind: ValParam, Param: x.Order}, true, nil
	case *test_driver.ValueExpr:
		switch v := x.GetValue().(type) {
		case nil:
			return Value{Kind: ValNull}, true, nil
		case int64:
			return Value{Kind: ValInt, Int: v}, true, nil
		case uint64:
			if v <= math.MaxInt64 {
				return Value{Kind: ValInt, Int: int64(v)}, true, nil
			}
			return Value{Kind: ValUint, Uint: v}, true, nil
		case string:
			// A character set introducer (_latin1'...') says how the
			// bytes are to be read; ticketd reads every string as UTF-8,
			// which utf8mb4, utf8mb3 and binary (compared with a string
			// column, in the column's character set) agree with.
			switch cs := strings.ToLower(x.Type.GetCharset()); cs {
			case "", "utf8mb4", "utf8", "utf8mb3", "binary":
			default:
				return Value{}, false, unsupported("the character set introducer _" + cs)
			}
			return Value{Kind: ValString, Str: v}, true, nil
		case *test_driver.MyDecimal:
			return Value{Kind: ValDecimal, Str: v.String()}, true, nil
		case float64:
			return Value{Kind: ValDecimal, Str: strconv.FormatFloat(v, 'g', -1, 64), Approx: true}, true, nil
		case float32:
			return Value{Kind: ValDecimal, Str: strconv.FormatFloat(float64(v), 'g', -1, 32), Approx: true}, true, nil
		}
		// Hexadecimal and bit literals are strings or numbers depending on
		// context, which ticketd does not track.
		return Value{}, false, unsupported("hexadecimal or bit literal")
	case *ast.UnaryOperationExpr:
		if x.Op != opcode.Minus && x.Op != opcode.Plus {
			return Value{}, false, nil
		}
		v, ok, err := literal(x.V)
		if err != nil || !ok {
			return Value{}, ok, err
		}
		if x.Op == opcode.Plus {
			return v, true, nil
		}
		return negate(v)
	}
	return Value{}, false, nil
}

// negate folds a minus sign into a numeric literal; -9223372036854775808
// arrives as minus 9223372036854775808, which is a Uint.
func negate(v Value) (Value, bool, error) {
	switch v.Kind {
	case ValNull:
		return v, true, nil
	case ValInt:
		if v.Int == math.MinInt64 {
			return Value{Kind: ValUint, Uint: 1 << 63}, true, nil
		}
		return Value{Kind: ValInt, Int: -v.Int}, true, nil
	case ValUint:
		if v.Uint <= 1<<63 {
			return Value{Kind: ValInt, Int: int64(-v.Uint)}, true, nil
		}
		return Value{Kind: ValDecimal, Str: "-" + strconv.FormatUint(v.Uint, 10)}, true, nil
	case ValDecimal:
		// A DOUBLE literal stays one (-1.37e+0).
		if s, ok := strings.CutPrefix(v.Str, "-"); ok {
			return Value{Kind: ValDecimal, Str: s, Approx: v.Approx}, true, nil
		}
		return Value{Kind: ValDecimal, Str: "-" + v.Str, Approx: v.Approx}, true, nil
	}
	return Value{}, false, nil
}

// expr converts a select-list or SET value expression.
func expr(e ast.ExprNode, sc scope) (Expr, error) {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return expr(x.Expr, sc)
	case *ast.ColumnNameExpr:
		name, err := sc.column(x.Name, true)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprColumn, Name: name}, nil
	case *ast.VariableExpr:
		if x.Value != nil {
			return Expr{}, unsupported("variable assignment in an expression")
		}
		if !x.IsSystem {
			return Expr{Kind: ExprUserVar, Name: strings.ToLower(x.Name)}, nil
		}
		if x.IsInstance {
			return Expr{}, unsupported("@@instance")
		}
		out := Expr{Kind: ExprSysVar, Name: strings.ToLower(x.Name)}
		switch {
		case x.IsGlobal:
			out.Scope = ScopeGlobal
		case x.ExplicitScope:
			out.Scope = ScopeSession
		}
		return out, nil
	case *ast.FuncCallExpr:
		return funcCall(x, sc)
	case *ast.BinaryOperationExpr, *ast.UnaryOperationExpr, *ast.IsNullExpr, *ast.PatternInExpr, *ast.BetweenExpr,
		*ast.PatternLikeOrIlikeExpr, *ast.CaseExpr, *ast.FuncCastExpr:
		if p, ok, err := predicate(e, sc); ok {
			return p, err
		}
	}
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		var op byte
		switch x.Op {
		case opcode.Plus:
			op = '+'
		case opcode.Minus:
			op = '-'
		case opcode.Mul:
			op = '*'
		default:
			return Expr{}, unsupported("operator " + opSQL(x.Op))
		}
		l, err := expr(x.L, sc)
		if err != nil {
			return Expr{}, err
		}
		r, err := expr(x.R, sc)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprArith, Op: op, Args: []Expr{l, r}}, nil
	case *ast.UnaryOperationExpr:
		if x.Op != opcode.Minus && x.Op != opcode.Plus {
			return Expr{}, unsupported("operator " + opSQL(x.Op))
		}
		if v, ok, err := literal(x); err != nil {
			return Expr{}, err
		} else if ok {
			return Expr{Kind: ExprValue, Value: v}, nil
		}
		inner, err := expr(x.V, sc)
		if err != nil || x.Op == opcode.Plus {
			return inner, err
		}
		zero := Expr{Kind: ExprValue, Value: Value{Kind: ValInt}}
		return Expr{Kind: ExprArith, Op: '-', Args: []Expr{zero, inner}}, nil
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return Expr{}, unsupported("subquery")
	case *ast.AggregateFuncExpr:
		return Expr{}, unsupported(strings.ToUpper(x.F) + "()")
	}
	v, ok, err := literal(e)
	if err != nil {
		return Expr{}, err
	}
	if !ok {
		return Expr{}, unsupported(describe(e))
	}
	return Expr{Kind: ExprValue, Value: v}, nil
}
