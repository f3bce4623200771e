package sql

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The select list's predicates and the catalogue's expressions: what
// Connector/J's DatabaseMetaData and other tools send to information_schema
// (CASE, IF(), comparisons, LIKE, IN, CAST AS SIGNED/UNSIGNED). expr
// converts them with its own operands, so a function's argument can be a
// comparison and a comparison's operand a function; the wire layer
// evaluates them where no table or an information_schema view is read
// (row tables keep the row engine's conversion, rowExpr).

// predicate converts the predicates and CASE/CAST; ok is false for an
// expression of another kind.
func predicate(e ast.ExprNode, sc scope) (out Expr, ok bool, err error) {
	sub := func(kind ExprKind, list ...ast.ExprNode) (Expr, bool, error) {
		out := Expr{Kind: kind, Args: make([]Expr, len(list))}
		for i, a := range list {
			var err error
			if out.Args[i], err = expr(a, sc); err != nil {
				return Expr{}, true, err
			}
		}
		return out, true, nil
	}
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		if n, isCmp := compareOps[x.Op]; isCmp {
			out, ok, err = sub(ExprCompare, x.L, x.R)
			out.Name = n
			return out, ok, err
		}
		if n, isLogic := logicOps[x.Op]; isLogic {
			out, ok, err = sub(ExprLogic, x.L, x.R)
			out.Name = n
			return out, ok, err
		}
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return sub(ExprNot, x.V)
		}
	case *ast.IsNullExpr:
		out, ok, err = sub(ExprIsNull, x.Expr)
		out.Not = x.Not
		return out, ok, err
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return Expr{}, true, unsupported("subquery")
		}
		out, ok, err = sub(ExprIn, append([]ast.ExprNode{x.Expr}, x.List...)...)
		out.Not = x.Not
		return out, ok, err
	case *ast.BetweenExpr:
		out, ok, err = sub(ExprBetween, x.Expr, x.Left, x.Right)
		out.Not = x.Not
		return out, ok, err
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return Expr{}, true, unsupported("ILIKE")
		}
		out, ok, err = sub(ExprLike, x.Expr, x.Pattern)
		out.Not, out.Op = x.Not, x.Escape
		return out, ok, err
	case *ast.CaseExpr:
		return caseExpr(x, sc)
	case *ast.FuncCastExpr:
		return castExpr(x, sc)
	}
	return Expr{}, false, nil
}

func caseExpr(x *ast.CaseExpr, sc scope) (Expr, bool, error) {
	out := Expr{Kind: ExprCase}
	var list []ast.ExprNode
	if x.Value != nil {
		out.Op |= CaseOperand
		list = append(list, x.Value)
	}
	for _, w := range x.WhenClauses {
		list = append(list, w.Expr, w.Result)
	}
	if x.ElseClause != nil {
		out.Op |= CaseElse
		list = append(list, x.ElseClause)
	}
	out.Args = make([]Expr, len(list))
	for i, a := range list {
		var err error
		if out.Args[i], err = expr(a, sc); err != nil {
			return Expr{}, true, err
		}
	}
	return out, true, nil
}

// castExpr is CAST(x AS SIGNED|UNSIGNED [INTEGER]) and CONVERT(x,
// SIGNED|UNSIGNED [INTEGER]); a cast to another type is refused with its
// text.
func castExpr(x *ast.FuncCastExpr, sc scope) (Expr, bool, error) {
	if x.FunctionType == ast.CastBinaryOperator || x.Tp.GetType() != mysql.TypeLonglong {
		return Expr{}, true, unsupported(describe(x))
	}
	name := "SIGNED"
	if mysql.HasUnsignedFlag(x.Tp.GetFlag()) {
		name = "UNSIGNED"
	}
	a, err := expr(x.Expr, sc)
	if err != nil {
		return Expr{}, true, err
	}
	return Expr{Kind: ExprCast, Name: name, Args: []Expr{a}}, true, nil
}

// constant reports whether x computes the same value for every row: no
// column, aggregate or sequence function in it.
func constant(x *Expr) bool {
	switch x.Kind {
	case ExprColumn, ExprStar, ExprAgg, ExprSequence, ExprValues:
		return false
	}
	for i := range x.Args {
		if !constant(&x.Args[i]) {
			return false
		}
	}
	return true
}

// catalogFuncs are the functions of the catalogue's queries, with their
// {min, max} argument counts (funcArgs' form).
var catalogFuncs = map[string][2]int{
	"if": {3, 3}, "ifnull": {2, 2},
	"ucase": {1, 1}, "upper": {1, 1}, "lcase": {1, 1}, "lower": {1, 1},
	"substring": {2, 3}, "substr": {2, 3}, "locate": {2, 3},
	"least": {2, -1}, "greatest": {2, -1},
}

// hasPredicate reports whether x has a predicate in it: the row engine
// then evaluates it over a row table's columns, as in its WHERE.
func hasPredicate(x *Expr) bool {
	switch x.Kind {
	case ExprCompare, ExprLogic, ExprNot, ExprIsNull, ExprIn, ExprBetween, ExprLike:
		return true
	}
	for i := range x.Args {
		if hasPredicate(&x.Args[i]) {
			return true
		}
	}
	return false
}

// selectWhere sets plan's WHERE in the forms the executors take: the
// `column = value` terms (ticket tables), the row engine's predicate (row
// tables) and, when the row engine cannot hold it, the select list's
// language (DATABASE(), CASE, IF: information_schema's views), with
// FilterErr still set so that row tables refuse it.
func selectWhere(plan *Select, where ast.ExprNode, sc scope) error {
	if sc.table == nil {
		return unsupported("WHERE without FROM")
	}
	var werr error
	plan.Where, werr = conds(where, sc)
	f, ferr := rowExpr(where, sc)
	if werr != nil && ferr != nil {
		g, gerr := expr(where, sc)
		if gerr != nil {
			return ferr
		}
		plan.Filter = &g
	}
	plan.WhereErr, plan.FilterErr = planErr(werr), planErr(ferr)
	if ferr == nil {
		plan.Filter = &f
	}
	return nil
}

// selectOrder sets plan's ORDER BY. A name is a select-list alias before
// a column (MariaDB): an alias of a column orders by that column, of a
// constant (Connector/J's `NULL TABLE_SCHEM`, `3 TYPE`) by nothing, of
// another expression by its value (Order.Field); so does a position.
func selectOrder(plan *Select, s *ast.SelectStmt, sc scope) error {
	for _, item := range s.OrderBy.Items {
		if pos, ok := unparen(item.Expr).(*ast.PositionExpr); ok {
			if pos.P != nil {
				return unsupported("ORDER BY ?")
			}
			if pos.N < 1 || pos.N > len(plan.Fields) {
				return mysqlerr.UnknownColumn(strconv.Itoa(pos.N), "order clause")
			}
			if o, keep, err := fieldOrder(plan, pos.N-1, item.Desc); err != nil || keep {
				plan.OrderBy = append(plan.OrderBy, o)
				if err != nil {
					return err
				}
			}
			continue
		}
		o, err := orderBy(&ast.OrderByClause{Items: []*ast.ByItem{item}}, sc)
		if err != nil {
			return err
		}
		keep := true
		for j, f := range s.Fields.Fields {
			if f.AsName.O != "" && strings.EqualFold(f.AsName.O, o[0].Column) {
				if o[0], keep, err = fieldOrder(plan, j, item.Desc); err != nil {
					return err
				}
				break
			}
		}
		if keep {
			plan.OrderBy = append(plan.OrderBy, o[0])
		}
	}
	return nil
}

// fieldOrder is the ORDER BY term of select item j: its column, nothing
// (keep false) for a constant, else the item itself.
func fieldOrder(plan *Select, j int, desc bool) (o Order, keep bool, err error) {
	switch x := &plan.Fields[j].Expr; {
	case x.Kind == ExprColumn:
		return Order{Column: x.Name, Desc: desc}, true, nil
	case x.Kind == ExprStar:
		return Order{}, false, unsupported("ORDER BY the position of *")
	case constant(x):
		return Order{}, false, nil
	}
	return Order{Field: j + 1, Desc: desc}, true, nil
}
