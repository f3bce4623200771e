package wire

import (
	"slices"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket/model"
)

// The row engine's expressions made from sql's plans: operators mapped,
// placeholders bound, LAST_INSERT_ID() written in; what the expressions
// mean is ticket's (ticket/rowengine/eval.go).

// compareExprOp is the row engine's operator of a comparison (0 for an
// unknown one).
func compareExprOp(name string) model.ExprOp {
	switch name {
	case "=":
		return model.EEq
	case "<>":
		return model.ENe
	case "<":
		return model.ELt
	case "<=":
		return model.ELe
	case ">":
		return model.EGt
	case ">=":
		return model.EGe
	case "<=>":
		return model.ENullEq
	}
	return 0
}

// logicExprOp is the operator of AND, OR and XOR (0 for another).
func logicExprOp(name string) model.ExprOp {
	switch name {
	case "AND":
		return model.EAnd
	case "OR":
		return model.EOr
	case "XOR":
		return model.EXor
	}
	return 0
}

// arithExprOp is the operator of +, - and * (0 for another).
func arithExprOp(op byte) model.ExprOp {
	switch op {
	case '+':
		return model.EAdd
	case '-':
		return model.ESub
	case '*':
		return model.EMul
	}
	return 0
}

// predicateOp is the row engine's operator for the predicates whose
// operands convert one by one, the same in both converters (rowExpr for
// row tables, evalCtx.expr for the catalogue and session values): written
// once so that the two cannot read a predicate differently.
func predicateOp(x *sql.Expr) (model.ExprOp, bool) {
	switch x.Kind {
	case sql.ExprCompare:
		return compareExprOp(x.Name), true
	case sql.ExprLogic:
		return logicExprOp(x.Name), true
	case sql.ExprNot:
		return model.ENot, true
	case sql.ExprIsNull:
		if x.Not {
			return model.EIsNotNull, true
		}
		return model.EIsNull, true
	case sql.ExprIn:
		if x.Not {
			return model.ENotIn, true
		}
		return model.EIn, true
	case sql.ExprBetween:
		if x.Not {
			return model.ENotBetw, true
		}
		return model.EBetween, true
	}
	return 0, false
}

// rowExpr converts a plan's row expression, binding its placeholders.
func rowExpr(x *sql.Expr, args []any) (model.RowExpr, error) {
	sub := func(kind model.ExprOp, list []sql.Expr) (model.RowExpr, error) {
		out := model.RowExpr{Op: kind, Args: make([]model.RowExpr, len(list))}
		for i := range list {
			var err error
			if out.Args[i], err = rowExpr(&list[i], args); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	if op, ok := predicateOp(x); ok {
		return sub(op, x.Args)
	}
	switch x.Kind {
	case sql.ExprValue:
		v, err := bind(x.Value, args)
		if err != nil {
			return model.RowExpr{}, err
		}
		if v.Kind == model.ValDefault {
			return model.RowExpr{}, unsupported("DEFAULT inside an expression")
		}
		return model.RowExpr{Op: model.EVal, Val: &v}, nil
	case sql.ExprColumn:
		return model.RowExpr{Op: model.ECol, Col: x.Name}, nil
	case sql.ExprValues:
		return model.RowExpr{Op: model.EValues, Col: x.Name}, nil
	case sql.ExprLike:
		op := model.ELike
		if x.Not {
			op = model.ENotLike
		}
		out, err := sub(op, x.Args)
		out.Escape = x.Op
		return out, err
	case sql.ExprArith:
		return sub(arithExprOp(x.Op), x.Args)
	case sql.ExprInterval:
		out, err := sub(model.EInterval, x.Args)
		if err != nil {
			return out, err
		}
		out.Unit = x.Name
		if x.Op == '-' {
			out.Args[1] = model.RowExpr{Op: model.ENeg, Args: []model.RowExpr{out.Args[1]}}
		}
		return out, nil
	case sql.ExprLastInsertID:
		if len(x.Args) == 0 {
			// A marker the session replaces with its value (bindLastID).
			return model.RowExpr{Op: model.ELastID}, nil
		}
		if len(x.Args) != 1 {
			return model.RowExpr{}, unsupported("LAST_INSERT_ID() in a row-table statement")
		}
		return sub(model.ELastID, x.Args)
	}
	return model.RowExpr{}, unsupported(x.Describe() + " on a row table")
}

// filterExpr binds a WHERE; nil for none.
func filterExpr(f *sql.Expr, args []any) (*model.RowExpr, error) {
	if f == nil {
		return nil, nil
	}
	x, err := rowExpr(f, args)
	return &x, err
}

func rowOrders(by []sql.Order) []model.RowOrder {
	if by == nil {
		return nil
	}
	out := make([]model.RowOrder, len(by))
	for i, o := range by {
		out[i] = model.RowOrder{Col: o.Column, Desc: o.Desc}
	}
	return out
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

// bindLastID writes the session's LAST_INSERT_ID() into the markers
// rowExpr left for it in xs (the value at the statement's start, as
// MariaDB reads it). A statement that also sets it with
// LAST_INSERT_ID(expr) is refused: MariaDB's LAST_INSERT_ID() then reads
// the value the rows before set, row by row.
func bindLastID(id uint64, xs ...*model.RowExpr) error {
	var marker, setter bool
	var walk func(x *model.RowExpr)
	walk = func(x *model.RowExpr) {
		if x.Op == model.ELastID {
			if len(x.Args) == 0 {
				marker = true
				v := model.Value{Kind: model.ValUint, Uint: id}
				*x = model.RowExpr{Op: model.EVal, Val: &v}
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

// doubleExpr reports arithmetic with a DOUBLE parameter, whose result
// MariaDB types DOUBLE (the row engine computes it in double precision).
func doubleExpr(x *model.RowExpr) bool {
	switch x.Op {
	case model.EVal:
		return x.Val != nil && x.Val.Kind == model.ValDouble
	case model.EAdd, model.ESub, model.EMul, model.ENeg:
		for i := range x.Args {
			if doubleExpr(&x.Args[i]) {
				return true
			}
		}
	}
	return false
}
