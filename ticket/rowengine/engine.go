package rowengine

import (
	mb "math/big"
	"slices"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// The row engine: which rows a SELECT, UPDATE or DELETE touches (one
// predicate evaluator, one order, one LIMIT), and how UPDATE's
// assignments and SELECT's aggregates compute. wire builds a Query or a
// RowsCommand from the statement's plan; everything with MariaDB's
// semantics happens here.

// Query is a SELECT on a row table.
type Query struct {
	Filter   *model.RowExpr
	OrderBy  []model.RowOrder
	HasLimit bool
	Limit    uint64
	Offset   uint64
	// Aggs, when not nil, makes the answer rows of groups: one per
	// distinct value of the GroupBy columns, in their order (MariaDB sorts
	// GROUP BY), or one over all matching rows without GroupBy. Each Agg
	// is an output column: an aggregate, or (Fn "") a GroupBy column.
	Aggs    []Agg
	GroupBy []string
	// Distinct drops repeated rows of the Distinct columns (SELECT
	// DISTINCT cols; nil: every column), keeping each first one, before
	// OFFSET and LIMIT.
	Distinct     bool
	DistinctCols []string
	// Now is NOW() for the statement.
	Now time.Time
}

// Agg is an item of a grouped select list: Fn is COUNT, MIN, MAX, SUM or
// AVG (Col "" for COUNT(*)), or "" for the GroupBy column Col itself.
type Agg struct {
	Fn  string
	Col string
}

// AggResult is a grouped item's value and the column kind it has.
type AggResult struct {
	Value model.Datum
	// Kind is the result's type: ColInt for COUNT, the column's own for
	// MIN, MAX and a GROUP BY column, ColString (a decimal's text) for SUM
	// and AVG.
	Kind model.ColKind
	// Col is the column of MIN, MAX or a GROUP BY column (nil otherwise).
	Col *model.RowCol
}

// QueryResult is a SELECT's answer: rows, or rows of groups.
type QueryResult struct {
	Rows     [][]model.Datum
	Groups   [][]AggResult
	Warnings []model.Warning
}

// checkQuery reports q's first unknown column, as MariaDB names it even
// when no row is read.
func checkQuery(rd *model.RowsDef, q *Query) *model.Error {
	if rd == nil {
		return mysqlerr.NotSupported("a row-table query on a table without row columns")
	}
	if e := checkCols(rd, q.Filter, "where clause"); e != nil {
		return e
	}
	for _, c := range q.GroupBy {
		if rd.ColIndex(c) < 0 {
			return mysqlerr.UnknownColumn(c, "group statement")
		}
	}
	for _, o := range q.OrderBy {
		if rd.ColIndex(o.Col) < 0 {
			return mysqlerr.UnknownColumn(o.Col, "order clause")
		}
	}
	for _, a := range q.Aggs {
		if a.Col != "" && rd.ColIndex(a.Col) < 0 {
			return mysqlerr.UnknownColumn(a.Col, "field list")
		}
	}
	return nil
}

// SelectFrom answers q over a row table's stored rows: through the access
// path PlanAccess picks, read as they come (an ORDER BY LIMIT the path's
// order gives stops the scan). over, when not nil, lays a session's own
// writes over the stored rows; the path is then a whole scan, since an
// own write may match where the stored row does not.
func SelectFrom(t *model.Table, rows TableRows, over func(pk string, r []model.Datum) []model.Datum, q *Query) (*QueryResult, *model.Error, error) {
	rd := t.Def.Rows
	if e := checkQuery(rd, q); e != nil {
		return nil, e, nil
	}
	plain := q.Aggs == nil && !q.Distinct
	access := RowsAccess{Index: ClusterIndex}
	if over == nil {
		var ok bool
		if access, ok = pointAccess(rd, q.Filter, q.OrderBy); !ok {
			access = PlanAccess(t, q.Filter, q.OrderBy, q.HasLimit && plain, q.Now)
		}
	}
	if !plain {
		var cands [][]model.Datum
		err := ScanAccess(rows, access, func(pk string, r []model.Datum) bool {
			if over != nil {
				r = over(pk, r)
			}
			cands = append(cands, r)
			return true
		})
		if err != nil {
			return nil, nil, err
		}
		res, e := SelectRows(t, cands, q)
		return res, e, nil
	}
	res := &QueryResult{}
	env := &evalEnv{rd: rd, db: t.Def.DB, table: t.Def.Name, now: q.Now, warns: &res.Warnings, lit: map[*model.RowExpr]val{}}
	picked, e, err := env.scanPick(rows, access, over, q.Filter, q.OrderBy, q.HasLimit, q.Offset, q.Limit)
	if err != nil || e != nil {
		return nil, e, err
	}
	if len(picked) > 0 {
		res.Rows = make([][]model.Datum, len(picked))
		for i, m := range picked {
			res.Rows[i] = m.row
		}
	}
	return res, nil, nil
}

// SelectRows answers q over rows: the candidates of an access path, in
// that path's order (SelectFrom reads them).
func SelectRows(t *model.Table, rows [][]model.Datum, q *Query) (*QueryResult, *model.Error) {
	rd := t.Def.Rows
	if e := checkQuery(rd, q); e != nil {
		return nil, e
	}
	res := &QueryResult{}
	env := &evalEnv{rd: rd, db: t.Def.DB, table: t.Def.Name, now: q.Now, warns: &res.Warnings, lit: map[*model.RowExpr]val{}}
	cands := make([]matched, len(rows))
	for i, r := range rows {
		cands[i].row = r
	}
	if q.Aggs != nil {
		return res, env.groups(q, cands, res)
	}
	if q.Distinct {
		picked, e := env.pick(cands, q.Filter, q.OrderBy, false, 0, 0)
		if e != nil {
			return nil, e
		}
		cols := make([]int, 0, len(rd.Cols))
		for _, c := range q.DistinctCols {
			cols = append(cols, rd.ColIndex(c))
		}
		if q.DistinctCols == nil {
			for j := range rd.Cols {
				cols = append(cols, j)
			}
		}
		seen := map[string]bool{}
		for _, m := range picked {
			k := groupKey(rd, cols, m.row)
			if !seen[k] {
				seen[k] = true
				res.Rows = append(res.Rows, m.row)
			}
		}
		res.Rows = limitRows(res.Rows, q)
		return res, nil
	}
	picked, e := env.pick(cands, q.Filter, q.OrderBy, q.HasLimit, q.Offset, q.Limit)
	if e != nil {
		return nil, e
	}
	for _, m := range picked {
		res.Rows = append(res.Rows, m.row)
	}
	return res, nil
}

// groupKey is the values of cols in r as the collation compares them
// (the unique keys' encoding): equal keys are the same group.
func groupKey(rd *model.RowsDef, cols []int, r []model.Datum) string {
	var b []byte
	for _, c := range cols {
		b = keyBytes(b, rd.CollOf(&rd.Cols[c]), &rd.Cols[c], r[c])
	}
	return string(b)
}

func limitRows[T any](rows []T, q *Query) []T {
	if !q.HasLimit {
		return rows
	}
	lo := min(q.Offset, uint64(len(rows)))
	hi := uint64(len(rows))
	if lo+q.Limit >= lo {
		hi = min(lo+q.Limit, hi)
	}
	return rows[lo:hi]
}

// groups answers a grouped query: the matching rows grouped by the
// GroupBy columns (all in one group without them, even none), sorted by
// them, each group's items, then ORDER BY (of GroupBy columns), OFFSET
// and LIMIT.
func (env *evalEnv) groups(q *Query, cands []matched, res *QueryResult) *model.Error {
	rd := env.rd
	picked, e := env.pick(cands, q.Filter, nil, false, 0, 0)
	if e != nil {
		return e
	}
	gcols := make([]int, len(q.GroupBy))
	inGroup := map[int]bool{}
	for i, c := range q.GroupBy {
		gcols[i] = rd.ColIndex(c)
		inGroup[gcols[i]] = true
	}
	for _, a := range q.Aggs {
		if a.Fn == "" && !inGroup[rd.ColIndex(a.Col)] {
			return mysqlerr.NotSupported("a column outside GROUP BY beside aggregates")
		}
	}
	for _, o := range q.OrderBy {
		if !inGroup[rd.ColIndex(o.Col)] {
			return mysqlerr.NotSupported("ORDER BY a column outside GROUP BY")
		}
	}
	var groups [][][]model.Datum
	if q.GroupBy == nil {
		rows := make([][]model.Datum, len(picked))
		for i, m := range picked {
			rows[i] = m.row
		}
		groups = [][][]model.Datum{rows}
	} else {
		at := map[string]int{}
		for _, m := range picked {
			k := groupKey(rd, gcols, m.row)
			i, ok := at[k]
			if !ok {
				i = len(groups)
				at[k] = i
				groups = append(groups, nil)
			}
			groups[i] = append(groups[i], m.row)
		}
		// MariaDB sorts GROUP BY's groups by its columns, then ORDER BY
		// reorders them.
		cmpBy := func(order []model.RowOrder) func(a, b [][]model.Datum) int {
			return func(a, b [][]model.Datum) int {
				for _, o := range order {
					j := rd.ColIndex(o.Col)
					c := orderDatum(rd.CollOf(&rd.Cols[j]), &rd.Cols[j], a[0][j], b[0][j])
					if o.Desc {
						c = -c
					}
					if c != 0 {
						return c
					}
				}
				return 0
			}
		}
		natural := make([]model.RowOrder, len(q.GroupBy))
		for i, c := range q.GroupBy {
			natural[i] = model.RowOrder{Col: c}
		}
		slices.SortStableFunc(groups, cmpBy(natural))
		if len(q.OrderBy) > 0 {
			slices.SortStableFunc(groups, cmpBy(q.OrderBy))
		}
	}
	for _, g := range groups {
		out := make([]AggResult, len(q.Aggs))
		for i, a := range q.Aggs {
			if a.Fn == "" {
				col := &rd.Cols[rd.ColIndex(a.Col)]
				out[i] = AggResult{Value: g[0][rd.ColIndex(a.Col)], Kind: col.Kind, Col: col}
				continue
			}
			r, e := aggregate(rd, a, g)
			if e != nil {
				return e
			}
			out[i] = r
		}
		res.Groups = append(res.Groups, out)
	}
	res.Groups = limitRows(res.Groups, q)
	return nil
}

// checkCols reports the first unknown column of x, as MariaDB names it
// even when no row is read, or the first illegal mix of collations
// (checkCollMix).
func checkCols(rd *model.RowsDef, x *model.RowExpr, where string) *model.Error {
	if x == nil {
		return nil
	}
	if x.Op == model.ECol && rd.ColIndex(x.Col) < 0 {
		return mysqlerr.UnknownColumn(x.Col, where)
	}
	for i := range x.Args {
		if e := checkCols(rd, &x.Args[i], where); e != nil {
			return e
		}
	}
	return checkCollMix(rd, x)
}

// pick is the rows of cands matching filter, ordered (stably, over the
// order the candidates come in: the access path's), then offset and
// limited.
func (env *evalEnv) pick(cands []matched, filter *model.RowExpr, order []model.RowOrder, hasLimit bool, offset, limit uint64) ([]matched, *model.Error) {
	var out []matched
	// Without ORDER BY, a LIMIT stops the scan early, as InnoDB does: the
	// warnings of rows never read are never raised.
	early := hasLimit && len(order) == 0
	for _, m := range cands {
		if early && uint64(len(out)) >= offset+limit && offset+limit >= offset {
			break
		}
		env.row = m.row
		ok, e := env.matches(filter)
		if e != nil {
			return nil, e
		}
		if ok {
			out = append(out, m)
		}
	}
	if len(order) > 0 {
		idx := make([]int, len(order))
		for i, o := range order {
			idx[i] = env.rd.ColIndex(o.Col)
		}
		slices.SortStableFunc(out, func(a, b matched) int {
			for i, o := range order {
				c := orderDatum(env.rd.CollOf(&env.rd.Cols[idx[i]]), &env.rd.Cols[idx[i]], a.row[idx[i]], b.row[idx[i]])
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if hasLimit {
		lo := min(offset, uint64(len(out)))
		hi := uint64(len(out))
		if lo+limit >= lo { // no overflow
			hi = min(lo+limit, hi)
		}
		out = out[lo:hi]
	}
	return out, nil
}

// EqualityConds are the `column = literal` terms ANDed at the top of a
// WHERE: what an index lookup can use (ChooseAccess). The predicate still
// decides on every row found.
func EqualityConds(f *model.RowExpr) []model.RowCond {
	if f == nil {
		return nil
	}
	switch f.Op {
	case model.EAnd:
		return append(EqualityConds(&f.Args[0]), EqualityConds(&f.Args[1])...)
	case model.EEq:
		a, b := &f.Args[0], &f.Args[1]
		if a.Op != model.ECol {
			a, b = b, a
		}
		if a.Op == model.ECol && b.Op == model.EVal && b.Val != nil {
			return []model.RowCond{{Col: a.Col, Val: *b.Val}}
		}
	}
	return nil
}

// orderDatum orders two values of a column as ORDER BY does: NULL first,
// numbers numerically, strings in the table's collation coll, dates by
// time.
func orderDatum(coll model.Collation, c *model.RowCol, a, b model.Datum) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	return compareDatum(coll, c, a, b)
}

// aggregate computes one aggregate over the selected rows.
func aggregate(rd *model.RowsDef, a Agg, rows [][]model.Datum) (AggResult, *model.Error) {
	if a.Col == "" {
		if a.Fn != "COUNT" {
			return AggResult{}, mysqlerr.NotSupported(a.Fn + "(*)")
		}
		return AggResult{Value: model.Datum{S: itoa(len(rows))}, Kind: model.ColInt}, nil
	}
	j := rd.ColIndex(a.Col)
	col := &rd.Cols[j]
	switch a.Fn {
	case "COUNT":
		n := 0
		for _, r := range rows {
			if !r[j].Null {
				n++
			}
		}
		return AggResult{Value: model.Datum{S: itoa(n)}, Kind: model.ColInt}, nil
	case "MIN", "MAX":
		out := AggResult{Value: model.Datum{Null: true}, Kind: col.Kind, Col: col}
		for _, r := range rows {
			if r[j].Null {
				continue
			}
			if out.Value.Null {
				out.Value = r[j]
				continue
			}
			c := orderDatum(rd.CollOf(col), col, r[j], out.Value)
			if (a.Fn == "MIN" && c < 0) || (a.Fn == "MAX" && c > 0) {
				out.Value = r[j]
			}
		}
		return out, nil
	case "SUM", "AVG":
		if col.Kind != model.ColInt {
			return AggResult{}, mysqlerr.NotSupported(a.Fn + "() of a non-integer column")
		}
		sum := new(mb.Rat)
		n := 0
		for _, r := range rows {
			if r[j].Null {
				continue
			}
			v, _ := new(mb.Rat).SetString(r[j].S)
			sum.Add(sum, v)
			n++
		}
		if n == 0 {
			return AggResult{Value: model.Datum{Null: true}, Kind: model.ColString}, nil
		}
		if a.Fn == "SUM" {
			return AggResult{Value: model.Datum{S: sum.FloatString(0)}, Kind: model.ColString}, nil
		}
		// AVG of an integer is a DECIMAL with 4 fraction digits, rounded
		// half away from zero.
		avg := new(mb.Rat).Quo(sum, new(mb.Rat).SetInt64(int64(n)))
		scaled := new(mb.Rat).Mul(avg, new(mb.Rat).SetInt64(10000))
		q := roundHalfAway(scaled)
		return AggResult{Value: model.Datum{S: new(mb.Rat).SetFrac(q, mb.NewInt(10000)).FloatString(4)}, Kind: model.ColString}, nil
	}
	return AggResult{}, mysqlerr.NotSupported(a.Fn + "()")
}

func itoa(n int) string { return new(mb.Int).SetInt64(int64(n)).String() }

// StatementNow is the time NOW() has in c: the Raft entry's, unless the
// session pinned it with SET timestamp.
func StatementNow(c *model.Command) time.Time {
	if c.Rows != nil && c.Rows.Now != 0 {
		return time.UnixMicro(c.Rows.Now).UTC()
	}
	return c.Now
}

// applyRowsUpdateExpr is UPDATE on a row table in expression form: every
// matching row (in ORDER BY order, up to LIMIT), all or nothing.
func applyRowsUpdateExpr(s Store, t *model.Table, c *model.Command, rc *model.RowsCommand) (model.Result, error) {
	rd := t.Def.Rows
	var res model.Result
	u, e, err := pickUpdateRows(s, t, c, rc, &res.Warnings)
	if err != nil {
		return model.Result{}, err
	}
	if e != nil {
		return model.Result{Err: e}, nil
	}
	// In strict mode MariaDB fails an UPDATE on the first warning met
	// evaluating its WHERE or SET ('5abc' against an INT column: 1292),
	// changing nothing; a SELECT or DELETE warns and goes on.
	strictEval := !rc.NotStrict && c.RulesAt(model.RulesV11)
	if strictEval {
		if e := firstWarning(res.Warnings, 0); e != nil {
			return model.Result{Err: e}, nil
		}
	}
	assigns, targets, env, rows, sel, now := u.assigns, u.targets, u.env, u.rows, u.sel, u.now
	sc := &storeCtx{strict: !rc.NotStrict, db: t.Def.DB, table: t.Def.Name, warns: &res.Warnings, rd: rd, older: !c.RulesAt(model.RulesV11)}
	tx := newRowsTx(rd, rows)
	fail := func(e *model.Error) (model.Result, error) {
		if err := tx.rollback(); err != nil {
			return model.Result{}, err
		}
		return model.Result{Err: e}, nil
	}
	for _, m := range sel {
		old := m.row
		res.Matched++
		rowNum := int(res.Matched)
		r := append([]model.Datum(nil), old...)
		explicit := make([]bool, len(rd.Cols))
		for k := range assigns {
			j := targets[k]
			col := &rd.Cols[j]
			var d model.Datum
			if assigns[k].Default {
				var ok bool
				if d, ok = columnDefault(col, now); !ok {
					return fail(mysqlerr.NotSupported("SET " + col.Name + " = DEFAULT on a column without a default"))
				}
			} else {
				env.row = r
				env.strictWarn = strictEval
				v, e := env.evalStrict(&assigns[k].Expr)
				if e != nil {
					return fail(e)
				}
				if d, e = sc.store(col, v, rowNum); e != nil {
					return fail(e)
				}
			}
			if d.Null && col.NotNull {
				if col.Kind == model.ColTimestamp {
					d = model.Datum{S: now.UTC().Format(dateTimeFormat)}
				} else if sc.strict {
					return fail(mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name))
				} else {
					sc.warn("Warning", mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)
					d, _ = implicitDefault(col, now)
				}
			}
			r[j], explicit[j] = d, true
		}
		if env.setLastID {
			res.SetLastID, res.LastID, res.InsertID = true, env.lastID, env.lastID
		}
		cols := make([]bool, len(r))
		changed := false
		for j := range r {
			if r[j] != old[j] {
				changed, cols[j] = true, true
			}
		}
		if !changed {
			res.Images = append(res.Images, r)
			continue
		}
		for j := range rd.Cols {
			if rd.Cols[j].OnUpdateNow && !explicit[j] {
				r[j] = model.Datum{S: now.UTC().Format(dateTimeFormat)}
				cols[j] = true
			}
		}
		_, k, dup, err := tx.conflict(r, m.pk, cols)
		if err != nil {
			return model.Result{}, err
		}
		if dup {
			return fail(model.DupEntry(KeyText(&rd.Keys[k], r), rd.Keys[k].Name))
		}
		if err := tx.replace(m.pk, r); err != nil {
			return model.Result{}, err
		}
		res.Affected++
		res.Images = append(res.Images, r)
		if t.Def.AutoInc {
			if a := rd.ColIndex(t.Def.IDCol); a >= 0 && explicit[a] {
				var b big
				b.parse(r[a].S)
				if !b.neg {
					model.Advance(t, b.abs)
				}
			}
		}
	}
	if res.Affected == 0 {
		return res, nil
	}
	return res, s.PutTable(t)
}

// firstWarning is the first warning (not note) of warns from index from
// on, as the error strict mode makes of it.
func firstWarning(warns []model.Warning, from int) *model.Error {
	for _, w := range warns[from:] {
		if w.Level == "Warning" {
			return mysqlerr.New(w.Code, "%s", w.Message)
		}
	}
	return nil
}

// updatePick is an UPDATE's first half (pickUpdateRows): its assignments,
// their columns, the evaluator, the table's rows and the rows picked.
type updatePick struct {
	assigns []model.RowAssign
	targets []int
	env     *evalEnv
	rows    TableRows
	sel     []matched
	now     time.Time
}

// UpdateMatchesNothing reports whether the UPDATE c (in expression form)
// of t would match no row of st and warn of nothing: then applying it
// changes nothing and answers Result{}. The leader's compare-and-set
// queue (ticket/alloc/casgate.go) asks it through the same pickUpdateRows that
// applyRowsUpdateExpr runs, so the two cannot disagree.
func UpdateMatchesNothing(st Store, t *model.Table, c *model.Command) bool {
	var warns []model.Warning
	u, e, err := pickUpdateRows(st, t, c, c.Rows, &warns)
	return err == nil && e == nil && len(u.sel) == 0 && len(warns) == 0
}

// pickUpdateRows checks the columns of an UPDATE in expression form on t
// and picks the rows its WHERE, ORDER BY and LIMIT match in st, warnings
// into warns. applyRowsUpdateExpr goes on to write them; the leader's
// compare-and-set queue runs it alone to learn that nothing matches
// (matchesNothing), so the two cannot disagree.
func pickUpdateRows(st Store, t *model.Table, c *model.Command, rc *model.RowsCommand, warns *[]model.Warning) (updatePick, *model.Error, error) {
	rd := t.Def.Rows
	u := updatePick{assigns: rc.Assigns, now: StatementNow(c)}
	if u.assigns == nil {
		u.assigns = legacyAssigns(rc.Sets)
	}
	filter := rc.Filter
	if filter == nil {
		filter = legacyFilter(rc.Where)
	}
	u.targets = make([]int, len(u.assigns))
	for i := range u.assigns {
		if u.targets[i] = rd.ColIndex(u.assigns[i].Col); u.targets[i] < 0 {
			return u, mysqlerr.UnknownColumn(u.assigns[i].Col, "field list"), nil
		}
		if e := checkCols(rd, &u.assigns[i].Expr, "field list"); e != nil {
			return u, e, nil
		}
	}
	if e := checkCols(rd, filter, "where clause"); e != nil {
		return u, e, nil
	}
	for _, o := range rc.OrderBy {
		if rd.ColIndex(o.Col) < 0 {
			return u, mysqlerr.UnknownColumn(o.Col, "order clause"), nil
		}
	}
	u.env = &evalEnv{rd: rd, db: t.Def.DB, table: t.Def.Name, now: u.now, warns: warns, lit: map[*model.RowExpr]val{}, older: !c.RulesAt(model.RulesV11)}
	rows, err := st.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return u, nil, MissingRows(t, err)
	}
	u.rows = rows
	access := ApplyAccess(t, filter, rc.OrderBy, rc.HasLimit, u.now)
	sel, e, err := u.env.scanPick(rows, access, nil, filter, rc.OrderBy, rc.HasLimit, 0, rc.Limit)
	u.sel = sel
	return u, e, err
}

// columnDefault is what DEFAULT stores in col.
func columnDefault(col *model.RowCol, now time.Time) (model.Datum, bool) {
	switch {
	case col.DefaultNow:
		return model.Datum{S: now.UTC().Format(dateTimeFormat)}, true
	case col.HasDefault:
		return col.Default, true
	case !col.NotNull:
		return model.Datum{Null: true}, true
	}
	return model.Datum{}, false
}

// applyRowsDeleteExpr is DELETE on a row table in expression form.
func applyRowsDeleteExpr(s Store, t *model.Table, c *model.Command, rc *model.RowsCommand) (model.Result, error) {
	rd := t.Def.Rows
	filter := rc.Filter
	if filter == nil {
		filter = legacyFilter(rc.Where)
	}
	if e := checkCols(rd, filter, "where clause"); e != nil {
		return model.Result{Err: e}, nil
	}
	for _, o := range rc.OrderBy {
		if rd.ColIndex(o.Col) < 0 {
			return model.Result{Err: mysqlerr.UnknownColumn(o.Col, "order clause")}, nil
		}
	}
	var res model.Result
	env := &evalEnv{rd: rd, db: t.Def.DB, table: t.Def.Name, now: StatementNow(c), warns: &res.Warnings, lit: map[*model.RowExpr]val{}, older: !c.RulesAt(model.RulesV11)}
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return model.Result{}, MissingRows(t, err)
	}
	access := ApplyAccess(t, filter, rc.OrderBy, rc.HasLimit, env.now)
	sel, e, err := env.scanPick(rows, access, nil, filter, rc.OrderBy, rc.HasLimit, 0, rc.Limit)
	if err != nil {
		return model.Result{}, err
	}
	if e != nil {
		return model.Result{Err: e}, nil
	}
	for _, m := range sel {
		if err := rows.Delete(m.pk); err != nil {
			return model.Result{}, err
		}
		res.Affected++
	}
	return res, nil
}
