package ticket

import "github.com/ticketd/ticketd/ticket/model"

// CASPoint tells the allocation service's compare-and-set queue
// (alloc/casgate.go) what the row-table UPDATE c may change on t, the
// table it names (nil: none found): point says it names one row by its
// whole clustering key, pk that key's text, and cas that its WHERE says
// more than the key (a compare-and-set of that row).
func CASPoint(c *model.Command, t *model.Table) (pk string, point, cas bool) {
	if c.Op != model.OpUpdate || t == nil || t.Def.Rows == nil || c.Rows == nil || !c.Rows.Engine || c.Rows.Filter == nil {
		return "", false, false
	}
	a := applyAccess(t, c.Rows.Filter, c.Rows.OrderBy, c.Rows.HasLimit, statementNow(c))
	if !a.Point || a.Index != ClusterIndex {
		return "", false, false
	}
	keys := 0
	for _, k := range t.Def.Rows.Keys {
		if k.Primary {
			keys = len(k.Cols)
		}
	}
	var buf [8]*model.RowExpr
	return a.Lo, true, len(conjuncts(c.Rows.Filter, buf[:0])) > keys
}

// UpdateMatchesNothing reports whether the row UPDATE c would match no
// row of st and warn of nothing: then applying it changes nothing and
// answers Result{} (applyRowsUpdateExpr, through the same
// pickUpdateRows). Only the engine's own form is answered so; an older
// build's is proposed.
func UpdateMatchesNothing(st Store, c *model.Command) bool {
	t, err := st.Table(c.DB, c.Table)
	if err != nil || t == nil || t.Def.Rows == nil || c.Rows.Assigns == nil || c.Rows.Filter == nil {
		return false
	}
	var warns []model.Warning
	u, e, err := pickUpdateRows(st, t, c, c.Rows, &warns)
	return err == nil && e == nil && len(u.sel) == 0 && len(warns) == 0
}
