package sql

import "math"

// The ticket form: what a ticket table (one integer id, at most one stub)
// takes of an UPDATE or of ON DUPLICATE KEY UPDATE. A plan holds every
// statement in its one, general form (Update, Insert.OnDup); the ticket
// form is a restriction of it, derived here by whoever runs the
// statement on a ticket table (the wire layer, which alone knows the
// table's kind). It is read from the plan and not from the command ticket
// applies because the restriction is about what was written: id = id + 1
// is the ticket form, id = id + ? is not, though both bind to the same
// command.

// Assign is the id assignment of the ticket form:
// Column = [LAST_INSERT_ID](Value) when Absolute, or
// Column = [LAST_INSERT_ID](Column + Delta) otherwise (model.Update's
// polarity and names).
type Assign struct {
	Column    string // lower case
	SetLastID bool
	Absolute  bool
	Delta     int64
	Value     Value
	// FromValues is ON DUPLICATE KEY UPDATE Column = VALUES(Column): the
	// value the new row would have had. Absolute, Delta, SetLastID and
	// Value are then unset.
	FromValues bool
}

// TicketUpdate is an UPDATE in the ticket form: one id assignment, and
// the WHERE's one `column = value` term (nil without a WHERE).
type TicketUpdate struct {
	Set   Assign
	Where *Cond
}

// TicketForm is u in the ticket form, or the error (a 1235 *Error, or the
// column's error) a ticket table answers u with: ORDER BY, LIMIT,
// several assignments, an assignment other than
// id = [LAST_INSERT_ID](id ± n | n + id | value), a WHERE other than
// `column = value` terms ANDed, a WHERE of several such terms (a ticket
// table's UPDATE matches one column), in that order.
func (u *Update) TicketForm() (TicketUpdate, error) {
	tf, err := u.ticketForm()
	return tf, planErr(err)
}

func (u *Update) ticketForm() (TicketUpdate, error) {
	var tf TicketUpdate
	var err error
	switch {
	case u.OrderBy != nil:
		err = unsupported("UPDATE ... ORDER BY on a ticket table")
	case u.HasLimit:
		err = unsupported("UPDATE ... LIMIT on a ticket table")
	case len(u.Assigns) == 1:
		tf.Set, err = ticketAssign(&u.Assigns[0], false)
	default:
		err = unsupported("UPDATE of several columns")
	}
	if err != nil {
		return TicketUpdate{}, err
	}
	if u.Filter != nil {
		where, err := ticketConds(u.Filter)
		if err != nil {
			return TicketUpdate{}, err
		}
		if len(where) > 1 {
			return TicketUpdate{}, unsupported("WHERE of several conditions on a ticket table")
		}
		tf.Where = &where[0]
	}
	return tf, nil
}

// TicketOnDup is p's ON DUPLICATE KEY UPDATE in the ticket form (nil
// without the clause), or the 1235 a ticket table answers it with.
func (p *Insert) TicketOnDup() (*Assign, error) {
	a, err := p.ticketOnDup()
	return a, planErr(err)
}

func (p *Insert) ticketOnDup() (*Assign, error) {
	switch len(p.OnDup) {
	case 0:
		return nil, nil
	case 1:
		a, err := ticketAssign(&p.OnDup[0], true)
		if err != nil {
			return nil, err
		}
		return &a, nil
	}
	return nil, unsupported("ON DUPLICATE KEY UPDATE of several columns on a ticket table")
}

// ticketAssign reads the assignment forms of the ticket and sequence
// idioms: col = [LAST_INSERT_ID](col ± n | n + col | value) with n an
// integer literal (no placeholder), and col = VALUES(col) in ON DUPLICATE
// KEY UPDATE.
func ticketAssign(ca *ColAssign, onDup bool) (Assign, error) {
	col := ca.Column
	out := Assign{Column: col}
	bad := unsupported("SET " + col + " = expression")
	e := &ca.Expr
	if e.Kind == ExprLastInsertID && e.Sign == 0 {
		if len(e.Args) != 1 {
			return Assign{}, bad
		}
		out.SetLastID = true
		e = &e.Args[0]
	}
	if e.Sign != 0 {
		return Assign{}, bad
	}
	isCol := func(x *Expr) bool { return x.Kind == ExprColumn && x.Sign == 0 && x.Name == col }
	switch e.Kind {
	case ExprValues:
		if !onDup || out.SetLastID || e.Name != col {
			return Assign{}, bad
		}
		out.FromValues = true
		return out, nil
	case ExprColumn:
		if !isCol(e) {
			return Assign{}, bad
		}
		return out, nil
	case ExprArith:
		var n *Expr
		switch {
		case (e.Op == '+' || e.Op == '-') && isCol(&e.Args[0]):
			n = &e.Args[1]
		case e.Op == '+' && isCol(&e.Args[1]):
			n = &e.Args[0]
		default:
			return Assign{}, bad
		}
		if !isLiteral(n) || n.Value.Kind != ValInt {
			return Assign{}, bad
		}
		d := n.Value.Int
		if e.Op == '-' {
			if d == math.MinInt64 {
				return Assign{}, bad
			}
			d = -d
		}
		out.Delta = d
		return out, nil
	}
	if !isLiteral(e) {
		return Assign{}, bad
	}
	out.Absolute, out.Value = true, e.Value
	return out, nil
}

// isLiteral reports a literal or '?' as written (not NOW(), DEFAULT or a
// signed expression).
func isLiteral(e *Expr) bool {
	if e.Kind != ExprValue || e.Sign != 0 {
		return false
	}
	switch e.Value.Kind {
	case ValNow, ValDefault, ValExpr:
		return false
	}
	return true
}

// ticketConds reads a WHERE as `column = value` terms (either side)
// joined by AND.
func ticketConds(f *Expr) ([]Cond, error) {
	var out []Cond
	var walk func(e *Expr) error
	walk = func(e *Expr) error {
		if e.Kind == ExprLogic && e.Name == "AND" && e.Sign == 0 {
			if err := walk(&e.Args[0]); err != nil {
				return err
			}
			return walk(&e.Args[1])
		}
		bad := unsupported("WHERE condition other than column = value")
		if e.Kind != ExprCompare || e.Name != "=" || e.Sign != 0 {
			return bad
		}
		isCol := func(x *Expr) bool { return x.Kind == ExprColumn && x.Sign == 0 }
		l, r := &e.Args[0], &e.Args[1]
		if !isCol(l) {
			l, r = r, l
		}
		if !isCol(l) || !isLiteral(r) {
			return bad
		}
		out = append(out, Cond{Column: l.Name, Value: r.Value})
		return nil
	}
	if err := walk(f); err != nil {
		return nil, err
	}
	return out, nil
}
