package rowengine

import (
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Which collation two strings of a row-engine expression (eval.go)
// compare by, and MariaDB's refusal of a mix of collations it cannot
// convert between.

// strColl is the collation of x's value when x is a string column
// (ECol, VALUES(col)): derivation IMPLICIT in MariaDB's terms. ok is
// false for anything else; a literal's collation is the connection's
// (COERCIBLE), which gives way to a column's.
func strColl(rd *model.RowsDef, x *model.RowExpr) (c model.Collation, ok bool) {
	if x.Op != model.ECol && x.Op != model.EValues {
		return 0, false
	}
	j := rd.ColIndex(x.Col)
	if j < 0 || rd.Cols[j].Kind != model.ColString {
		return 0, false
	}
	return rd.CollOf(&rd.Cols[j]), true
}

// colColls reports a column with a collation of its own.
func colColls(rd *model.RowsDef) bool {
	for i := range rd.Cols {
		if rd.Cols[i].Collation != model.CollLegacy {
			return true
		}
	}
	return false
}

// collFor is the collation two strings among the operands group of one
// operation compare by: the string columns' aggregated (aggColl), or,
// with none, the connection's, utf8mb4_general_ci (CollLegacy in a table
// of that folding, which it keeps for all its comparisons).
func collFor(rd *model.RowsDef, group []model.RowExpr) model.Collation {
	if rd.Collation == model.CollLegacy {
		return model.CollLegacy
	}
	if rd.Collation == model.CollGeneralCI && !colColls(rd) {
		return model.CollGeneralCI // every column's, and the literals'
	}
	c, seen := model.CollGeneralCI, false
	for i := range group {
		if gc, ok := strColl(rd, &group[i]); ok {
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
var collOps = map[model.ExprOp]string{
	model.EEq: "=", model.ENe: "<>", model.ELt: "<", model.ELe: "<=", model.EGt: ">", model.EGe: ">=", model.ENullEq: "<=>",
	model.EIn: "in", model.ENotIn: "in", model.EBetween: "between", model.ENotBetw: "between", model.ELike: "like", model.ENotLike: "like",
}

// checkCollMix is MariaDB's refusal of an operation that compares a
// utf8mb3 column with a string literal holding a character beyond the
// BMP: the literal cannot be converted to the column's character set
// (1267, 1270 or 1271, whether or not any row is read).
func checkCollMix(rd *model.RowsDef, x *model.RowExpr) *model.Error {
	op, ok := collOps[x.Op]
	if !ok || rd.Collation == model.CollLegacy {
		return nil
	}
	var c model.Collation
	seen, wide := false, false
	for i := range x.Args {
		a := &x.Args[i]
		if ac, ok := strColl(rd, a); ok {
			if !seen {
				c, seen = ac, true
			} else {
				c = aggColl(c, ac)
			}
			continue
		}
		if a.Op != model.EVal || a.Val == nil || a.Val.Kind != model.ValString {
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
		ac, isCol := strColl(rd, a)
		switch {
		case isCol:
			names[i] = "(" + ac.String() + ",IMPLICIT)"
		case a.Op == model.EVal && a.Val != nil && a.Val.Kind == model.ValString:
			names[i] = "(" + model.CollGeneralCI.String() + ",COERCIBLE)"
		case a.Op == model.EVal && (a.Val == nil || a.Val.Kind == model.ValNull):
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
