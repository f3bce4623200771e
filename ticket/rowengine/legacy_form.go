package rowengine

import "github.com/ticketd/ticketd/ticket/model"

// legacyFilter turns the older WHERE form (a conjunction of col = value)
// into a predicate.
func legacyFilter(where []model.RowCond) *model.RowExpr {
	var f *model.RowExpr
	for _, w := range where {
		v := w.Val
		eq := model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: w.Col}, {Op: model.EVal, Val: &v}}}
		if f == nil {
			f = &eq
			continue
		}
		f = &model.RowExpr{Op: model.EAnd, Args: []model.RowExpr{*f, eq}}
	}
	return f
}

// legacyAssigns turns the older SET form into assignments.
func legacyAssigns(sets []model.RowSet) []model.RowAssign {
	out := make([]model.RowAssign, len(sets))
	operand := func(o model.RowOperand) model.RowExpr {
		if o.Col != "" {
			return model.RowExpr{Op: model.ECol, Col: o.Col}
		}
		v := o.Val
		return model.RowExpr{Op: model.EVal, Val: &v}
	}
	for i, st := range sets {
		x := operand(st.A)
		switch st.Op {
		case '+':
			x = model.RowExpr{Op: model.EAdd, Args: []model.RowExpr{x, operand(st.B)}}
		case '-':
			x = model.RowExpr{Op: model.ESub, Args: []model.RowExpr{x, operand(st.B)}}
		}
		if st.SetLastID {
			x = model.RowExpr{Op: model.ELastID, Args: []model.RowExpr{x}}
		}
		out[i] = model.RowAssign{Col: st.Col, Expr: x}
	}
	return out
}
