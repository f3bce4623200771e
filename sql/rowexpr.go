package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The row engine's expressions: the WHERE of SELECT, UPDATE and DELETE on
// row tables and the values of UPDATE's SET. ticket evaluates them with
// MariaDB's rules (ticket/rowengine/eval.go); here they are only recognised.
// Anything outside this set is refused with 1235 naming it.

var compareOps = map[opcode.Op]string{
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=",
	opcode.GT: ">", opcode.GE: ">=", opcode.NullEQ: "<=>",
}

var logicOps = map[opcode.Op]string{
	opcode.LogicAnd: "AND", opcode.LogicOr: "OR", opcode.LogicXor: "XOR",
}

var arithOps = map[opcode.Op]byte{opcode.Plus: '+', opcode.Minus: '-', opcode.Mul: '*'}

// intervalUnits are the INTERVAL units the engine adds.
var intervalUnits = map[string]bool{"SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true, "WEEK": true}

// rowExpr converts a WHERE condition or a SET value of a row-table
// statement.
func rowExpr(e ast.ExprNode, sc scope) (Expr, error) {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return rowExpr(x.Expr, sc)
	case *ast.ColumnNameExpr:
		name, err := sc.column(x.Name, false)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprColumn, Name: name}, nil
	case *ast.BinaryOperationExpr:
		kind, name, op := ExprKind(0), "", byte(0)
		if n, ok := compareOps[x.Op]; ok {
			kind, name = ExprCompare, n
		} else if n, ok := logicOps[x.Op]; ok {
			kind, name = ExprLogic, n
		} else if o, ok := arithOps[x.Op]; ok {
			kind, op = ExprArith, o
		} else {
			return Expr{}, unsupported("operator " + opSQL(x.Op) + " on a row table")
		}
		l, err := rowExpr(x.L, sc)
		if err != nil {
			return Expr{}, err
		}
		r, err := rowExpr(x.R, sc)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: kind, Name: name, Op: op, Args: []Expr{l, r}}, nil
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Not, opcode.Not2:
			a, err := rowExpr(x.V, sc)
			if err != nil {
				return Expr{}, err
			}
			return Expr{Kind: ExprNot, Args: []Expr{a}}, nil
		case opcode.Minus, opcode.Plus:
			if v, ok, err := literal(x); err != nil {
				return Expr{}, err
			} else if ok {
				return Expr{Kind: ExprValue, Value: v}, nil
			}
			a, err := rowExpr(x.V, sc)
			if err != nil {
				return a, err
			}
			if x.Op == opcode.Plus {
				a.Sign = '+'
				return a, nil
			}
			zero := Expr{Kind: ExprValue, Value: Value{Kind: ValInt}}
			return Expr{Kind: ExprArith, Op: '-', Args: []Expr{zero, a}, Sign: '-'}, nil
		}
		return Expr{}, unsupported("operator " + opSQL(x.Op) + " on a row table")
	case *ast.IsNullExpr:
		a, err := rowExpr(x.Expr, sc)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprIsNull, Not: x.Not, Args: []Expr{a}}, nil
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return Expr{}, unsupported("subquery")
		}
		out := Expr{Kind: ExprIn, Not: x.Not}
		for _, a := range append([]ast.ExprNode{x.Expr}, x.List...) {
			v, err := rowExpr(a, sc)
			if err != nil {
				return Expr{}, err
			}
			out.Args = append(out.Args, v)
		}
		return out, nil
	case *ast.BetweenExpr:
		out := Expr{Kind: ExprBetween, Not: x.Not}
		for _, a := range []ast.ExprNode{x.Expr, x.Left, x.Right} {
			v, err := rowExpr(a, sc)
			if err != nil {
				return Expr{}, err
			}
			out.Args = append(out.Args, v)
		}
		return out, nil
	case *ast.FuncCallExpr:
		return rowFunc(x, sc)
	case *ast.DefaultExpr:
		if x.Name != nil {
			return Expr{}, unsupported("DEFAULT(column)")
		}
		return Expr{Kind: ExprValue, Value: Value{Kind: ValDefault}}, nil
	case *ast.ValuesExpr:
		if !sc.onDup || x.Column == nil {
			return Expr{}, unsupported("VALUES() outside ON DUPLICATE KEY UPDATE")
		}
		name, err := sc.column(x.Column.Name, false)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprValues, Name: name}, nil
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return Expr{}, unsupported("subquery")
	case *ast.AggregateFuncExpr:
		return Expr{}, mysqlerrInvalidGroup()
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return Expr{}, unsupported("ILIKE")
		}
		a, err := rowExpr(x.Expr, sc)
		if err != nil {
			return Expr{}, err
		}
		p, err := rowExpr(x.Pattern, sc)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprLike, Not: x.Not, Op: x.Escape, Args: []Expr{a, p}}, nil
	}
	v, ok, err := literal(e)
	if err != nil {
		return Expr{}, err
	}
	if !ok {
		return Expr{}, unsupported(describe(e) + " on a row table")
	}
	return Expr{Kind: ExprValue, Value: v}, nil
}

// rowFunc is NOW() and its synonyms, UTC_TIMESTAMP() (ticketd's NOW()
// is UTC: the time zone is always +00:00), NOW() ± INTERVAL n unit (which
// the parser writes as DATE_ADD/DATE_SUB), and LAST_INSERT_ID(expr).
func rowFunc(f *ast.FuncCallExpr, sc scope) (Expr, error) {
	if isNow(f) {
		return Expr{Kind: ExprValue, Value: Value{Kind: ValNow}}, nil
	}
	if f.FnName.L == "utc_timestamp" && len(f.Args) == 0 && f.Schema.O == "" {
		// Named: a simple assignment (ColSets) takes NOW() but not it.
		return Expr{Kind: ExprValue, Value: Value{Kind: ValNow}, Name: "UTC_TIMESTAMP"}, nil
	}
	name := f.FnName.L
	switch {
	case f.Schema.O != "":
		return Expr{}, unsupported("stored function")
	case name == "last_insert_id" && len(f.Args) == 0:
		// The session's value: the wire layer writes it in as a literal
		// (the statement's commands must not depend on the session).
		return Expr{Kind: ExprLastInsertID}, nil
	case name == "last_insert_id" && len(f.Args) == 1:
		a, err := rowExpr(f.Args[0], sc)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Kind: ExprLastInsertID, Args: []Expr{a}}, nil
	case (name == "date_add" || name == "date_sub" || name == "adddate" || name == "subdate") && len(f.Args) == 3:
		u, ok := f.Args[2].(*ast.TimeUnitExpr)
		if !ok {
			break
		}
		unit := strings.ToUpper(u.Unit.String())
		if !intervalUnits[unit] {
			return Expr{}, unsupported("INTERVAL " + unit)
		}
		t, err := rowExpr(f.Args[0], sc)
		if err != nil {
			return Expr{}, err
		}
		n, err := rowExpr(f.Args[1], sc)
		if err != nil {
			return Expr{}, err
		}
		op := byte('+')
		if name == "date_sub" || name == "subdate" {
			op = '-'
		}
		return Expr{Kind: ExprInterval, Name: unit, Op: op, Args: []Expr{t, n}}, nil
	}
	return Expr{}, unsupported(strings.ToUpper(name) + "() on a row table")
}

// mysqlerrInvalidGroup is MariaDB's 1111 for an aggregate in WHERE or SET.
func mysqlerrInvalidGroup() error {
	return mysqlerr.New(mysqlerr.CodeInvalidGroup, "Invalid use of group function")
}

// aggField recognises COUNT(*), COUNT(col), MIN(col), MAX(col), SUM(col)
// and AVG(col) in a select list; ok is false for anything else.
func aggField(e ast.ExprNode, sc scope) (Expr, bool, error) {
	a, isAgg := unparen(e).(*ast.AggregateFuncExpr)
	if !isAgg {
		return Expr{}, false, nil
	}
	name := strings.ToUpper(a.F)
	switch name {
	case "COUNT", "MIN", "MAX", "SUM", "AVG":
	default:
		return Expr{}, true, unsupported(name + "()")
	}
	if a.Distinct {
		return Expr{}, true, unsupported(name + "(DISTINCT ...)")
	}
	if len(a.Args) != 1 {
		return Expr{}, true, unsupported(name + "() with these arguments")
	}
	out := Expr{Kind: ExprAgg, Name: name}
	arg := unparen(a.Args[0])
	if v, ok := arg.(interface{ GetValue() any }); ok && name == "COUNT" {
		// COUNT(*) reaches the parser as COUNT(1); COUNT(NULL) is 0.
		if n, isInt := v.GetValue().(int64); isInt && n == 1 {
			return out, true, nil
		}
		return Expr{}, true, unsupported("COUNT of a constant")
	}
	c, ok := arg.(*ast.ColumnNameExpr)
	if !ok {
		return Expr{}, true, unsupported(name + "() of an expression")
	}
	col, err := sc.column(c.Name, true)
	if err != nil {
		return Expr{}, true, err
	}
	out.Args = []Expr{{Kind: ExprColumn, Name: col}}
	return out, true, nil
}
