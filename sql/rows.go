package sql

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Statements of row tables: DELETE, and the simple view of UPDATE's
// assignments (ColSets).

// ValNow is NOW() / CURRENT_TIMESTAMP used as a value (model.ValNow).
const ValNow ValueKind = 8

// Operand is one side of a simple assignment: a column or a value.
type Operand struct {
	Column string // lower case; "" for Value
	Value  Value
}

// ColSet is one simple assignment of UPDATE: Column = A, or Column = A Op
// B with Op '+' or '-', wrapped in LAST_INSERT_ID() if SetLastID; A and B
// are columns, literals, '?' or NOW().
type ColSet struct {
	Column    string // lower case
	A         Operand
	Op        byte
	B         Operand
	SetLastID bool
}

// ColSets is u's assignments as simple assignments, or nil when one of
// them is more (a product, a function, a sign before a column, DEFAULT):
// which refusal an UPDATE no table takes gets (updateRefusal) depends on
// it. What the alloc role may do to a counter is CounterStep's to say,
// whatever the other assignments are.
func (u *Update) ColSets() []ColSet {
	out := make([]ColSet, 0, len(u.Assigns))
	for i := range u.Assigns {
		set, ok := colSet(&u.Assigns[i])
		if !ok {
			return nil
		}
		out = append(out, set)
	}
	return out
}

func colSet(a *ColAssign) (ColSet, bool) {
	set := ColSet{Column: a.Column}
	e := &a.Expr
	if e.Kind == ExprLastInsertID && e.Sign == 0 && len(e.Args) == 1 {
		set.SetLastID = true
		e = &e.Args[0]
	}
	var ok bool
	if e.Kind == ExprArith && e.Sign == 0 && (e.Op == '+' || e.Op == '-') {
		set.Op = e.Op
		if set.A, ok = operand(&e.Args[0]); !ok {
			return ColSet{}, false
		}
		if set.B, ok = operand(&e.Args[1]); !ok {
			return ColSet{}, false
		}
		if set.B.Column == "" && set.Op == '-' && set.B.Value.Kind == ValInt && set.B.Value.Int == math.MinInt64 {
			return ColSet{}, false
		}
	} else if set.A, ok = operand(e); !ok {
		return ColSet{}, false
	}
	return set, true
}

// operand is a column, a literal, '?' or NOW() and its synonyms other
// than UTC_TIMESTAMP(), as written (no sign before it).
func operand(e *Expr) (Operand, bool) {
	switch {
	case e.Sign != 0:
		return Operand{}, false
	case e.Kind == ExprColumn:
		return Operand{Column: e.Name}, true
	case e.Kind == ExprValue && e.Value.Kind == ValNow && e.Name == "":
		return Operand{Value: e.Value}, true
	case isLiteral(e):
		return Operand{Value: e.Value}, true
	}
	return Operand{}, false
}

// Delete is DELETE FROM t [WHERE ...] [ORDER BY ...] [LIMIT n]: Filter
// is the WHERE (nil: every row). Only row tables take it.
type Delete struct {
	Table    TableName
	Filter   *Expr
	OrderBy  []Order
	HasLimit bool
	Limit    uint64
}

func (*Delete) isPlan() {}

// isNow reports NOW(), CURRENT_TIMESTAMP and their synonyms without
// arguments (the precision argument of NOW(6) is not kept).
func isNow(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.Schema.O != "" {
		return false
	}
	switch f.FnName.L {
	case "now", "current_timestamp", "localtime", "localtimestamp", "sysdate":
		return len(f.Args) == 0
	}
	return false
}

// valueOrNow is a literal, a placeholder or NOW().
func valueOrNow(e ast.ExprNode) (Value, bool, error) {
	if isNow(e) {
		return Value{Kind: ValNow}, true, nil
	}
	return literal(e)
}

func deleteStmt(s *ast.DeleteStmt) (Plan, error) {
	switch {
	case s.IsMultiTable || s.Tables != nil:
		return nil, unsupported("multiple-table DELETE")
	case s.With != nil:
		return nil, unsupported("WITH")
	case s.IgnoreErr:
		return nil, unsupported("DELETE IGNORE")
	}
	sc, err := singleTable(s.TableRefs)
	if err != nil {
		return nil, err
	}
	plan := &Delete{Table: *sc.table}
	if s.Where != nil {
		f, err := rowExpr(s.Where, sc)
		if err != nil {
			return nil, err
		}
		plan.Filter = &f
	}
	if s.Order != nil {
		if plan.OrderBy, err = orderBy(s.Order, sc); err != nil {
			return nil, err
		}
	}
	if s.Limit != nil {
		if s.Limit.Offset != nil {
			return nil, mysqlerr.Syntax("OFFSET", 1)
		}
		plan.HasLimit = true
		if plan.Limit, err = limitValue(s.Limit.Count); err != nil {
			return nil, err
		}
	}
	return plan, nil
}
