package wire

import (
	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// SHOW's filters (LIKE on the name, WHERE column = value), COM_FIELD_LIST's
// wildcard and a ticket table's WHERE, as predicates the row engine
// evaluates over the rows (rowengine.NewEval), as information_schema's
// WHERE is (catalog_expr.go).

// nameCols is the one column a LIKE of names reads: a
// utf8mb3_general_ci string, as information_schema's names are.
var nameCols = &model.RowsDef{Collation: model.CollGeneralCI3, Cols: []model.RowCol{{Name: "name", Kind: model.ColString}}}

// likeFilter is `name LIKE pattern` (with \ escapes), evaluated by the row
// engine for one name after another.
func (s *session) likeFilter(pattern string) func(name string) bool {
	v := model.Value{Kind: model.ValString, Str: pattern}
	x := &model.RowExpr{Op: model.ELike, Escape: '\\', Args: []model.RowExpr{{Op: model.ECol, Col: "name"}, {Op: model.EVal, Val: &v}}}
	ev := rowengine.NewEval(nameCols, s.now(), nil)
	row := make([]model.Datum, 1)
	return func(name string) bool {
		row[0] = model.Datum{S: name}
		ok, e := ev.Match(x, row)
		return ok && e == nil
	}
}

// likeAll is likeFilter when has is set, else a filter that keeps all.
func (s *session) likeAll(has bool, pattern string) func(name string) bool {
	if !has {
		return func(string) bool { return true }
	}
	return s.likeFilter(pattern)
}

// condsExpr is a list of column = value terms, ANDed (ORed when or is
// set), as the row engine's expression over cols; where names the clause
// of a 1054.
func condsExpr(cols []column, conds []sql.Cond, args []any, or bool, where string) (*model.RowExpr, error) {
	var out *model.RowExpr
	for _, c := range conds {
		j := colIndexIn(cols, c.Column)
		if j < 0 {
			return nil, errUnknownColumn(c.Column, where)
		}
		v, err := bind(c.Value, args)
		if err != nil {
			return nil, err
		}
		term := model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: cols[j].name}, {Op: model.EVal, Val: &v}}}
		if out == nil {
			out = &term
			continue
		}
		op := model.EAnd
		if or {
			op = model.EOr
		}
		out = &model.RowExpr{Op: op, Args: []model.RowExpr{*out, term}}
	}
	return out, nil
}

// filterConds keeps the rows of rs that the terms conds match (any of
// them when or is set), through the row engine over rd, the rows' columns
// as it reads them; its warnings go to the statement's.
func (s *session) filterConds(rs *rowset, rd *model.RowsDef, conds []sql.Cond, args []any, or bool) error {
	x, err := condsExpr(rs.cols, conds, args, or, "WHERE")
	if err != nil || x == nil {
		return err
	}
	ev := rowengine.NewEval(rd, s.now(), &s.warnings)
	if me := ev.Check(x); me != nil {
		return me
	}
	e := evalCtx{s: s}
	kept := rs.rows[:0]
	for _, r := range rs.rows {
		e.row = r
		ok, me := ev.Match(x, e.datums())
		if me != nil {
			return me
		}
		if ok {
			kept = append(kept, r)
		}
	}
	rs.rows = kept
	return nil
}

// filterShow applies SHOW ... WHERE: terms ANDed, or ORed when the plan
// says so (Connector/J's `Variable_name = 'a' OR Variable_name = 'b'`).
func (s *session) filterShow(rs *rowset, p *sql.Show) error {
	e := evalCtx{s: s}
	e.over(rs.cols, rs.rows)
	return s.filterConds(rs, e.rowsDef(), p.Where, nil, p.WhereOr)
}
