package ticket

import "github.com/ticketd/ticketd/sql/mysqlerr"

// Which collation two strings of a row-engine expression (rows_eval.go)
// compare by, and MariaDB's refusal of a mix of collations it cannot
// convert between.

// strColl is the collation of x's value when x is a string column
// (ECol, VALUES(col)): derivation IMPLICIT in MariaDB's terms. ok is
// false for anything else; a literal's collation is the connection's
// (COERCIBLE), which gives way to a column's.
func (rd *RowsDef) strColl(x *RowExpr) (c Collation, ok bool) {
	if x.Op != ECol && x.Op != EValues {
		return 0, false
	}
	j := rd.colIndex(x.Col)
	if j < 0 || rd.Cols[j].Kind != ColString {
		return 0, false
	}
	return rd.collOf(&rd.Cols[j]), true
}

// colColls reports a column with a collation of its own.
func (rd *RowsDef) colColls() bool {
	for i := range rd.Cols {
		if rd.Cols[i].Collation != CollLegacy {
			return true
		}
	}
	return false
}

// collFor is the collation two strings among the operands group of one
// operation compare by: the string columns' aggregated (aggColl), or,
// with none, the connection's, utf8mb4_general_ci (CollLegacy in a table
// of that folding, which it keeps for all its comparisons).
func (rd *RowsDef) collFor(group []RowExpr) Collation {
	if rd.Collation == CollLegacy {
		return CollLegacy
	}
	if rd.Collation == CollGeneralCI && !rd.colColls() {
		return CollGeneralCI // every column's, and the literals'
	}
	c, seen := CollGeneralCI, false
	for i := range group {
		if gc, ok := rd.strColl(&group[i]); ok {
			if !seen {
				c, seen = gc, true
				continue
			}
			c = aggColl(c, gc)
		}
	}
	return c
}

// collOps names the operations whose operands MariaDB aggregates a
// collation over, as its "Illegal mix of collations" says them.
var collOps = map[ExprOp]string{
	EEq: "=", ENe: "<>", ELt: "<", ELe: "<=", EGt: ">", EGe: ">=", ENullEq: "<=>",
	EIn: "in", ENotIn: "in", EBetween: "between", ENotBetw: "between", ELike: "like", ENotLike: "like",
}

// checkCollMix is MariaDB's refusal of an operation that compares a
// utf8mb3 column with a string literal holding a character beyond the
// BMP: the literal cannot be converted to the column's character set
// (1267, 1270 or 1271, whether or not any row is read).
func checkCollMix(rd *RowsDef, x *RowExpr) *Error {
	op, ok := collOps[x.Op]
	if !ok || rd.Collation == CollLegacy {
		return nil
	}
	var c Collation
	seen, wide := false, false
	for i := range x.Args {
		a := &x.Args[i]
		if ac, ok := rd.strColl(a); ok {
			if !seen {
				c, seen = ac, true
			} else {
				c = aggColl(c, ac)
			}
			continue
		}
		if a.Op != EVal || a.Val == nil || a.Val.Kind != ValString {
			continue // a number, a date or NULL: no collation to convert to
		}
		for _, r := range a.Val.Str {
			wide = wide || r > 0xFFFF
		}
	}
	if !seen || !wide || !c.MB3() {
		return nil
	}
	names := make([]string, len(x.Args))
	for i := range x.Args {
		a := &x.Args[i]
		ac, isCol := rd.strColl(a)
		switch {
		case isCol:
			names[i] = "(" + ac.String() + ",IMPLICIT)"
		case a.Op == EVal && a.Val != nil && a.Val.Kind == ValString:
			names[i] = "(" + CollGeneralCI.String() + ",COERCIBLE)"
		case a.Op == EVal && (a.Val == nil || a.Val.Kind == ValNull):
			names[i] = "(binary,IGNORABLE)"
		default:
			// MariaDB's numbers and dates: my_charset_numeric.
			names[i] = "(latin1_swedish_ci,NUMERIC)"
		}
	}
	switch len(names) {
	case 2:
		return mysqlerr.New(mysqlerr.CodeCollationMix2, "Illegal mix of collations %s and %s for operation '%s'", names[0], names[1], op)
	case 3:
		return mysqlerr.New(mysqlerr.CodeCollationMix3, "Illegal mix of collations %s, %s, %s for operation '%s'", names[0], names[1], names[2], op)
	}
	return mysqlerr.New(mysqlerr.CodeCollationMixN, "Illegal mix of collations for operation '%s'", op)
}
