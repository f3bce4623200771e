package sql

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Statements of row tables (the Leaf, Tinyid and UidGenerator schemas):
// UPDATE with several assignments and DELETE. The wire layer decides,
// from the table, whether an UPDATE runs in ticket form (Update.Set) or
// row form (Update.Sets).

// ValNow is NOW() / CURRENT_TIMESTAMP used as a value (model.ValNow).
const ValNow ValueKind = 8

// Operand is one side of a row-table assignment: a column or a value.
type Operand struct {
	Column string // lower case; "" for Value
	Value  Value
}

// ColSet is one assignment of UPDATE in row form: Column = A, or Column =
// A Op B with Op '+' or '-', wrapped in LAST_INSERT_ID() if SetLastID.
type ColSet struct {
	Column    string // lower case
	A         Operand
	Op        byte
	B         Operand
	SetLastID bool
}

// Delete is DELETE FROM t [WHERE ...] [ORDER BY ...] [LIMIT n]. Where
// holds the WHERE's `column = value` terms when it is only those; Filter
// is the whole WHERE (nil: every row).
type Delete struct {
	Table    TableName
	Where    []Cond
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

// colSets reads the assignments of an UPDATE in row form.
func colSets(list []*ast.Assignment, sc scope) ([]ColSet, error) {
	out := make([]ColSet, 0, len(list))
	for _, a := range list {
		col, err := sc.column(a.Column, false)
		if err != nil {
			return nil, err
		}
		set := ColSet{Column: col}
		e := unparen(a.Expr)
		if f, ok := e.(*ast.FuncCallExpr); ok && f.FnName.L == "last_insert_id" && f.Schema.O == "" && len(f.Args) == 1 {
			set.SetLastID = true
			e = unparen(f.Args[0])
		}
		bad := unsupported("SET " + col + " = expression")
		if b, ok := e.(*ast.BinaryOperationExpr); ok && (b.Op == opcode.Plus || b.Op == opcode.Minus) {
			set.Op = '+'
			if b.Op == opcode.Minus {
				set.Op = '-'
			}
			if set.A, err = operand(b.L, sc); err != nil {
				return nil, bad
			}
			if set.B, err = operand(b.R, sc); err != nil {
				return nil, bad
			}
			if set.B.Column == "" && set.Op == '-' && set.B.Value.Kind == ValInt && set.B.Value.Int == math.MinInt64 {
				return nil, bad
			}
		} else if set.A, err = operand(e, sc); err != nil {
			return nil, bad
		}
		out = append(out, set)
	}
	return out, nil
}

func operand(e ast.ExprNode, sc scope) (Operand, error) {
	if c, ok := unparen(e).(*ast.ColumnNameExpr); ok {
		name, err := sc.column(c.Name, false)
		return Operand{Column: name}, err
	}
	v, ok, err := valueOrNow(e)
	if err != nil {
		return Operand{}, err
	}
	if !ok {
		return Operand{}, unsupported(describe(e))
	}
	return Operand{Value: v}, nil
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
		plan.Where, _ = conds(s.Where, sc)
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
