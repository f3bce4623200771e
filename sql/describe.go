package sql

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// describe names an expression ticketd does not evaluate, for the 1235
// that refuses it: the construct (CASE, REGEXP, a function's name), so a
// client's user sees what to rewrite. A refusal that read "this
// expression" named nothing (issue 34).
func describe(e ast.ExprNode) string {
	switch x := unparen(e).(type) {
	case *ast.CaseExpr:
		return "CASE"
	case *ast.FuncCastExpr:
		if x.FunctionType == ast.CastBinaryOperator {
			return "BINARY"
		}
		return nodeSQL(x)
	case *ast.FuncCallExpr:
		return strings.ToUpper(x.FnName.O) + "()"
	case *ast.AggregateFuncExpr:
		return strings.ToUpper(x.F) + "()"
	case *ast.WindowFuncExpr:
		return "window function " + strings.ToUpper(x.Name) + "()"
	case *ast.PatternRegexpExpr:
		return "REGEXP"
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return "ILIKE"
		}
		return "LIKE"
	case *ast.PatternInExpr:
		return "IN"
	case *ast.BetweenExpr:
		return "BETWEEN"
	case *ast.IsNullExpr:
		return "IS NULL"
	case *ast.IsTruthExpr:
		if x.True != 0 {
			return "IS TRUE"
		}
		return "IS FALSE"
	case *ast.RowExpr:
		return "row constructor (a, b)"
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return "subquery"
	case *ast.BinaryOperationExpr:
		return "operator " + opSQL(x.Op)
	case *ast.UnaryOperationExpr:
		return "operator " + opSQL(x.Op)
	case *ast.SetCollationExpr:
		return "COLLATE"
	case *ast.DefaultExpr:
		return "DEFAULT"
	case *ast.ValuesExpr:
		return "VALUES()"
	case *ast.MatchAgainst:
		return "MATCH ... AGAINST"
	case *ast.TimeUnitExpr:
		return "INTERVAL"
	case *ast.ColumnNameExpr:
		return "column " + columnText(x.Name) + " here"
	case *ast.VariableExpr:
		if x.IsSystem {
			return "@@" + x.Name + " here"
		}
		return "@" + x.Name + " here"
	}
	return "the expression " + nodeSQL(e)
}

// opSQL is an operator as SQL writes it (DIV, not intdiv).
func opSQL(op opcode.Op) string {
	var b strings.Builder
	op.Format(&b)
	return strings.TrimSpace(b.String())
}

// nodeSQL is n written back as SQL, cut to a length a message can quote.
func nodeSQL(n interface {
	Restore(*format.RestoreCtx) error
}) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil || b.Len() == 0 {
		return "(unprintable)"
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Describe names an expression, for a 1235 refusing it where it cannot
// be evaluated: the function, operator or construct, not "this
// expression".
func (x *Expr) Describe() string {
	switch x.Kind {
	case ExprFunc, ExprAgg, ExprSequence:
		return x.Name + "()"
	case ExprCompare:
		return "operator " + x.Name
	case ExprLogic:
		return x.Name
	case ExprArith:
		return "operator " + string(x.Op)
	case ExprColumn:
		return "column " + x.Name
	case ExprSysVar:
		return "@@" + x.Name
	case ExprUserVar:
		return "@" + x.Name
	case ExprIdent:
		return "the word " + x.Name
	case ExprInterval:
		return "INTERVAL ... " + x.Name
	case ExprCast:
		return "CAST(... AS " + x.Name + ")"
	}
	if n, ok := exprKindNames[x.Kind]; ok {
		return n
	}
	return "an expression of kind " + strconv.Itoa(int(x.Kind))
}

var exprKindNames = map[ExprKind]string{
	ExprValue: "literal", ExprLastInsertID: "LAST_INSERT_ID()", ExprStar: "*",
	ExprIsNull: "IS NULL", ExprIn: "IN", ExprBetween: "BETWEEN", ExprNot: "NOT",
	ExprLike: "LIKE", ExprValues: "VALUES()", ExprCase: "CASE",
}

// String names a value's kind, for a 1235 refusing it where it cannot
// be used.
func (k ValueKind) String() string {
	switch k {
	case ValNull:
		return "NULL"
	case ValDefault:
		return "DEFAULT"
	case ValInt, ValUint:
		return "integer"
	case ValString:
		return "string"
	case ValDecimal:
		return "decimal or double"
	case ValParam:
		return "'?' placeholder"
	case ValNow:
		return "CURRENT_TIMESTAMP"
	case ValExpr:
		return "expression"
	}
	return "value of kind " + strconv.Itoa(int(k))
}
