package sql

// CounterStep reads a as a move of its own column by a step, the one
// form in which the ID schemes write a counter: Column = [LAST_INSERT_ID](
// Column | Column + n | n + Column | Column - n), or VALUES(Column) in
// ON DUPLICATE KEY UPDATE (onDup), a unary plus anywhere read as if it
// were not written. ok is false for every other expression: a product, a
// negation, another column, a function, a literal or '?' alone (a value
// chosen by hand). step is nil when a keeps the value (Column,
// VALUES(Column)), else n as written; which n it takes is the caller's
// to say (the alloc role's check, wire/privileges.go, takes an integer).
func (a *ColAssign) CounterStep(onDup bool) (step *Expr, ok bool) {
	plain := func(x *Expr) bool { return x.Sign == 0 || x.Sign == '+' }
	own := func(x *Expr) bool { return plain(x) && x.Kind == ExprColumn && x.Name == a.Column }
	e := &a.Expr
	if e.Kind == ExprLastInsertID && plain(e) && len(e.Args) == 1 {
		e = &e.Args[0]
	}
	if !plain(e) {
		return nil, false
	}
	switch e.Kind {
	case ExprColumn:
		return nil, own(e)
	case ExprValues:
		return nil, onDup && e.Name == a.Column
	case ExprArith:
		var n *Expr
		switch {
		case (e.Op == '+' || e.Op == '-') && own(&e.Args[0]):
			n = &e.Args[1]
		case e.Op == '+' && own(&e.Args[1]):
			n = &e.Args[0]
		default:
			return nil, false
		}
		return n, plain(n)
	}
	return nil, false
}
