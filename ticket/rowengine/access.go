package rowengine

import (
	"slices"
	"strings"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// Access paths of the row engine: which rows of a row table a WHERE can
// match, read through which key, in which order. The rows a path yields
// are candidates: the whole WHERE is still evaluated on each, so a path
// may yield more rows than match (a bound rounded outwards, a NULL), never
// fewer. A bound that does not convert to its column's key as MariaDB
// compares (a string with trailing junk on an integer column, NULL, a
// number on a string column) binds nothing, and the path is wider.

// PlanAccess picks the access path of a WHERE and ORDER BY on t: the
// narrowest key range its top-level conjunction bounds (equalities on a
// key's leading columns, then <, <=, >, >=, BETWEEN on the next one, with
// literals or expressions of no column such as NOW() - INTERVAL 7 DAY),
// preferring a point lookup of the whole clustering key, then a whole
// unique key. The path is Ordered when its key order is the ORDER BY's,
// so that a LIMIT stops the scan; an ORDER BY LIMIT that matches a key
// and no bound is a scan of that key. now is NOW() for the statement.
func PlanAccess(t *model.Table, filter *model.RowExpr, order []model.RowOrder, hasLimit bool, now time.Time) RowsAccess {
	rd := t.Def.Rows
	full := RowsAccess{Index: ClusterIndex}
	if rd == nil {
		return full
	}
	var buf [4]*model.RowExpr
	b := accessBounds{eq: map[int]model.Datum{}, cluster: ClusterKey(rd)}
	for _, x := range Conjuncts(filter, buf[:0]) {
		if !b.add(rd, x, now) {
			return full // the statement fails; no need for a path
		}
	}
	best, bestN, bestScore, bestRange := b.bestKey(rd)
	if a, ok := b.inLookup(rd, bestScore); ok {
		return a
	}
	if best < 0 {
		return orderedScan(rd, b.cluster, order, hasLimit)
	}
	return b.keyRange(rd, best, bestN, bestRange, order)
}

// accessBounds is what the top-level conjunction of a WHERE says of each
// column a key could read: PlanAccess gathers it once, then weighs every
// key against it.
type accessBounds struct {
	cluster int // the clustering key, which wins ties
	eq      map[int]model.Datum
	// The greatest lower and least upper bound's key bytes of each
	// column, inclusive (nil until a range is seen: a point SELECT makes
	// neither).
	lo, hi map[int]string
	// in holds the key bytes of each column's IN list, sorted, when every
	// value converts as the comparison does.
	in map[int][]string
}

// add notes what the conjunct x bounds; one it cannot use leaves the
// path wider, never narrower. ok is false for an unknown column: the
// statement fails, and no path is needed.
func (b *accessBounds) add(rd *model.RowsDef, x *model.RowExpr, now time.Time) (ok bool) {
	switch x.Op {
	case model.EEq:
		return b.addEq(rd, x)
	case model.ELt, model.ELe, model.EGt, model.EGe:
		return b.addCompare(rd, x, now)
	case model.EIn, model.EOr:
		return b.addIn(rd, x)
	case model.EBetween:
		return b.addBetween(rd, x, now)
	}
	return true
}

// addEq notes col = literal, the first one of a column: an equality
// binds a key's leading columns.
func (b *accessBounds) addEq(rd *model.RowsDef, x *model.RowExpr) bool {
	col, val, ok := colEqualsValue(x)
	if !ok {
		return true
	}
	j := rd.ColIndex(col)
	if j < 0 {
		return false
	}
	if _, dup := b.eq[j]; dup {
		return true
	}
	if d, ok := indexValue(&rd.Cols[j], *val); ok {
		b.eq[j] = d
	}
	return true
}

// addCompare notes a bound of <, <=, > or >= on a column, either side.
func (b *accessBounds) addCompare(rd *model.RowsDef, x *model.RowExpr, now time.Time) bool {
	a, v := &x.Args[0], &x.Args[1]
	op := x.Op
	if a.Op != model.ECol {
		// 5 < id is id > 5.
		a, v = v, a
		op = map[model.ExprOp]model.ExprOp{model.ELt: model.EGt, model.ELe: model.EGe, model.EGt: model.ELt, model.EGe: model.ELe}[op]
	}
	if a.Op != model.ECol {
		return true
	}
	j := rd.ColIndex(a.Col)
	if j < 0 {
		return false
	}
	k, ok := boundKey(rd, j, v, now)
	if !ok {
		return true
	}
	if op == model.EGt || op == model.EGe {
		tighten(&b.lo, j, k, true)
	} else {
		tighten(&b.hi, j, k, false)
	}
	return true
}

// addIn notes col IN (literals), or its OR form, when every value
// converts to the column's key as the comparison does.
func (b *accessBounds) addIn(rd *model.RowsDef, x *model.RowExpr) bool {
	col, list := inList(x)
	if col == "" {
		return true
	}
	j := rd.ColIndex(col)
	if j < 0 {
		return false
	}
	if _, dup := b.in[j]; dup {
		return true
	}
	var keys []string
	ok := true
	for _, v := range list {
		if v.Op != model.EVal || v.Val == nil {
			ok = false
			break
		}
		if v.Val.Kind == model.ValNull {
			continue // matches no row
		}
		var d model.Datum
		if d, ok = indexValue(&rd.Cols[j], *v.Val); ok {
			keys = append(keys, string(keyBytes(nil, rd.CollOf(&rd.Cols[j]), &rd.Cols[j], d)))
		}
	}
	if ok {
		if b.in == nil {
			b.in = map[int][]string{}
		}
		slices.Sort(keys)
		b.in[j] = slices.Compact(keys)
	}
	return true
}

// addBetween notes col BETWEEN lo AND hi as two bounds, unless the
// comparison's collation is not the column's.
func (b *accessBounds) addBetween(rd *model.RowsDef, x *model.RowExpr, now time.Time) bool {
	a := &x.Args[0]
	if a.Op != model.ECol {
		return true
	}
	j := rd.ColIndex(a.Col)
	if j < 0 {
		return false
	}
	if rd.Cols[j].Kind == model.ColString && collFor(rd, x.Args) != rd.CollOf(&rd.Cols[j]) {
		// c BETWEEN 'x' AND b compares in b's collation when it is
		// c's _bin one: c's keys do not bound it.
		return true
	}
	if k, ok := boundKey(rd, j, &x.Args[1], now); ok {
		tighten(&b.lo, j, k, true)
	}
	if k, ok := boundKey(rd, j, &x.Args[2], now); ok {
		tighten(&b.hi, j, k, false)
	}
	return true
}

// bestKey weighs every key against the bounds: best is the key to read
// (-1: none is bound), bestN how many of its leading columns equalities
// bind, bestRange whether the next one has a range; bestScore is what
// an IN lookup must beat.
func (b *accessBounds) bestKey(rd *model.RowsDef) (best, bestN, bestScore int, bestRange bool) {
	best = -1
	for k, key := range rd.Keys {
		n := 0
		for _, c := range key.Cols {
			if _, ok := b.eq[c]; !ok {
				break
			}
			n++
		}
		ranged := false
		if n < len(key.Cols) {
			_, l := b.lo[key.Cols[n]]
			_, h := b.hi[key.Cols[n]]
			ranged = l || h
		}
		if n == 0 && !ranged {
			continue
		}
		// A whole clustering key, then a whole unique key, then the most
		// bound columns, a range counting half a column; the clustering
		// key wins ties (no second lookup per row).
		score := 2*n + 1
		if ranged {
			score++
		}
		if n == len(key.Cols) && key.Unique {
			score = 1 << 20
		}
		if k == b.cluster {
			score++
		}
		if score > bestScore {
			best, bestN, bestScore, bestRange = k, n, score, ranged
		}
	}
	return best, bestN, bestScore, bestRange
}

// inLookup is col IN (list) on a key of that one column: a lookup per
// value, when no bound bestKey found is narrower (bestScore).
func (b *accessBounds) inLookup(rd *model.RowsDef, bestScore int) (RowsAccess, bool) {
	for k, key := range rd.Keys {
		keys, ok := b.in[key.Cols[0]]
		if !ok || len(key.Cols) != 1 {
			continue
		}
		score := 3
		if key.Unique {
			score = 1 << 19
		}
		if k == b.cluster {
			score++
		}
		if score <= bestScore {
			continue
		}
		a := RowsAccess{Index: k, In: keys, Empty: len(keys) == 0}
		if k == b.cluster {
			a.Index, a.Point = ClusterIndex, true
		}
		return a, true
	}
	return RowsAccess{}, false
}

// orderedScan is the path of a WHERE that bounds no key: an ORDER BY
// LIMIT that a key's order gives reads that key in order and stops at
// the LIMIT; anything else scans the table.
func orderedScan(rd *model.RowsDef, cluster int, order []model.RowOrder, hasLimit bool) RowsAccess {
	if hasLimit && len(order) > 0 {
		for k := range rd.Keys {
			if ok, desc := orderedBy(rd, k, 0, nil, order); ok {
				a := RowsAccess{Index: k, Ordered: true, Desc: desc}
				if k == cluster {
					a.Index = ClusterIndex
				}
				return a
			}
		}
	}
	return RowsAccess{Index: ClusterIndex}
}

// keyRange is the path through key best: the prefix its first bestN
// columns' equalities give, narrowed by the next column's range when
// bestRange; Ordered when the key's order is the ORDER BY's.
func (b *accessBounds) keyRange(rd *model.RowsDef, best, bestN int, bestRange bool, order []model.RowOrder) RowsAccess {
	key := &rd.Keys[best]
	vals := make([]model.Datum, bestN)
	for i := range vals {
		vals[i] = b.eq[key.Cols[i]]
	}
	prefix := ValueKey(rd, best, vals)
	a := RowsAccess{Index: best, Lo: prefix, Hi: PrefixEnd(prefix)}
	if bestRange {
		c := key.Cols[bestN]
		if l, ok := b.lo[c]; ok {
			a.Lo = prefix + l
		} else {
			// Not NULL: NULL is below every bound and matches none.
			a.Lo = prefix + "\x01"
		}
		if h, ok := b.hi[c]; ok {
			a.Hi = PrefixEnd(prefix + h)
		}
		if a.Hi != "" && a.Lo >= a.Hi {
			a.Empty = true
		}
	}
	if len(order) > 0 {
		a.Ordered, a.Desc = orderedBy(rd, best, bestN, b.eq, order)
	}
	if best == b.cluster {
		a.Index = ClusterIndex
		a.Point = bestN == len(key.Cols) && !bestRange
	}
	return a
}

// maxPointCols bounds the clustering-key columns pointAccess binds.
const maxPointCols = 4

// pointAccess is PlanAccess's path for the commonest WHERE, found without
// its maps: a conjunction that binds every column of the clustering key
// with an equality (id = 5, or a = 1 AND b = 'x' on PRIMARY KEY (a, b)),
// and no ORDER BY. PlanAccess gives such a WHERE a point lookup, whatever
// its other conjuncts (a whole clustering key outscores every other
// path), with the same key bytes. ok is false whenever the answer is not
// plainly that (a key column bound twice or by a value that binds no key,
// an ORDER BY): PlanAccess then decides. Hi is left empty: a point lookup
// reads Lo only.
func pointAccess(rd *model.RowsDef, filter *model.RowExpr, order []model.RowOrder) (RowsAccess, bool) {
	if rd == nil || filter == nil || len(order) > 0 {
		return RowsAccess{}, false
	}
	cluster := ClusterKey(rd)
	if cluster < 0 || len(rd.Keys[cluster].Cols) > maxPointCols {
		return RowsAccess{}, false
	}
	key := rd.Keys[cluster].Cols
	var vals [maxPointCols]model.Datum
	var bound [maxPointCols]bool
	var buf [4]*model.RowExpr
	for _, x := range Conjuncts(filter, buf[:0]) {
		col, val, ok := colEqualsValue(x)
		if !ok {
			continue
		}
		j := rd.ColIndex(col)
		if j < 0 {
			return RowsAccess{}, false
		}
		i := slices.Index(key, j)
		if i < 0 {
			continue
		}
		if bound[i] {
			return RowsAccess{}, false
		}
		d, ok := indexValue(&rd.Cols[j], *val)
		if !ok {
			return RowsAccess{}, false
		}
		vals[i], bound[i] = d, true
	}
	for i := range key {
		if !bound[i] {
			return RowsAccess{}, false
		}
	}
	return RowsAccess{Index: ClusterIndex, Lo: ValueKey(rd, cluster, vals[:len(key)]), Point: true}, true
}

// inList reads col IN (values) and col = v1 OR col = v2 ... (ORs of
// equalities of one column): the column, and the values' expressions;
// col "" for anything else.
func inList(x *model.RowExpr) (col string, list []*model.RowExpr) {
	if x.Op == model.EIn {
		if x.Args[0].Op != model.ECol {
			return "", nil
		}
		for i := 1; i < len(x.Args); i++ {
			list = append(list, &x.Args[i])
		}
		return x.Args[0].Col, list
	}
	var walk func(x *model.RowExpr) bool
	walk = func(x *model.RowExpr) bool {
		switch x.Op {
		case model.EOr:
			return walk(&x.Args[0]) && walk(&x.Args[1])
		case model.EEq:
			a, b := &x.Args[0], &x.Args[1]
			if a.Op != model.ECol {
				a, b = b, a
			}
			if a.Op != model.ECol || (col != "" && !strings.EqualFold(col, a.Col)) {
				return false
			}
			col = a.Col
			list = append(list, b)
			return true
		}
		return false
	}
	if !walk(x) {
		return "", nil
	}
	return col, list
}

// colEqualsValue reports whether x is column = value, either way round,
// and returns both.
func colEqualsValue(x *model.RowExpr) (col string, val *model.Value, ok bool) {
	if x.Op != model.EEq {
		return "", nil, false
	}
	a, b := &x.Args[0], &x.Args[1]
	if a.Op != model.ECol {
		a, b = b, a
	}
	if a.Op != model.ECol || b.Op != model.EVal || b.Val == nil {
		return "", nil, false
	}
	return a.Col, b.Val, true
}

// Conjuncts appends the terms ANDed at the top of x to out.
func Conjuncts(x *model.RowExpr, out []*model.RowExpr) []*model.RowExpr {
	if x == nil {
		return out
	}
	if x.Op == model.EAnd {
		out = Conjuncts(&x.Args[0], out)
		return Conjuncts(&x.Args[1], out)
	}
	return append(out, x)
}

// tighten keeps the narrower of two inclusive bounds of column j.
func tighten(bounds *map[int]string, j int, k string, lower bool) {
	if *bounds == nil {
		*bounds = map[int]string{}
	}
	old, ok := (*bounds)[j]
	if !ok || (lower && k > old) || (!lower && k < old) {
		(*bounds)[j] = k
	}
}

// orderedBy reports whether key k's order, after its first n columns
// (bound to single values by eq), is order's: every remaining column of
// the key, in order, all ascending or all descending (desc; ORDER BY may
// also name columns bound to one value).
// Only then do rows that tie on the ORDER BY come in the order a full
// scan and a stable sort give them (the clustering key's), so that a
// LIMIT picks the same rows.
func orderedBy(rd *model.RowsDef, k, n int, eq map[int]model.Datum, order []model.RowOrder) (ok, desc bool) {
	key := &rd.Keys[k]
	rest := key.Cols[n:]
	i := 0
	for x, o := range order {
		j := rd.ColIndex(o.Col)
		if j < 0 || (x > 0 && o.Desc != desc) {
			return false, false
		}
		desc = o.Desc
		if _, bound := eq[j]; bound {
			// One value in every matching row (equal as ORDER BY
			// compares, by the same collation).
			continue
		}
		if i >= len(rest) || rest[i] != j {
			return false, false
		}
		i++
	}
	if i != len(rest) {
		return false, false
	}
	if desc {
		// A descending scan gives tied rows last first, where a stable
		// sort keeps them in clustering order: only a key without ties
		// (unique, no NULL) may be read backwards.
		if !key.Unique {
			return false, false
		}
		for _, c := range key.Cols {
			if !rd.Cols[c].NotNull {
				return false, false
			}
		}
	}
	return true, desc
}

// boundKey is the key bytes of a range bound x on column j: a literal, or
// an expression of no column (NOW() - INTERVAL 7 DAY, -5, 2 * 3). The
// bound is inclusive and may be rounded outwards (an integer column's
// 2.5 is 3 as a lower bound and as an upper one, which the WHERE then
// decides); ok is false when x does not convert as the comparison does.
func boundKey(rd *model.RowsDef, j int, x *model.RowExpr, now time.Time) (string, bool) {
	if hasColumn(x) {
		return "", false
	}
	col := &rd.Cols[j]
	var warns []model.Warning
	env := &evalEnv{rd: rd, now: now, warns: &warns}
	v, e := env.eval(x)
	if e != nil || len(warns) > 0 || v.k == vNull {
		return "", false
	}
	sc := &storeCtx{strict: false, warns: &warns}
	switch col.Kind {
	case model.ColInt:
		switch v.k {
		case vInt, vUint, vDec:
		case vStr:
			// Only a clean number: '5abc' compares as 5 with a warning
			// that the rows' evaluation must raise as MariaDB does.
			if p, rest := NumericPrefix(v.s); p == "" || rest != "" || strings.TrimLeft(v.s, " \t\n\r") != v.s {
				return "", false
			}
		default:
			return "", false
		}
	case model.ColString:
		// A string column against a number compares as numbers.
		if v.k != vStr {
			return "", false
		}
		return string(keyBytes(nil, rd.CollOf(col), col, model.Datum{S: v.s})), true
	case model.ColDate, model.ColDateTime, model.ColTimestamp:
		switch v.k {
		case vTime:
		case vStr, vInt, vUint:
			if _, ok, e := readTimeVal(v); !ok || e != nil {
				return "", false
			}
		default:
			return "", false
		}
	default:
		return "", false
	}
	// Stored as the column holds it: an integer rounded half away from
	// zero and clamped to the type's range, a date's time of day or a
	// datetime's fraction cut (all monotonic, off by less than one step,
	// so an inclusive bound on the result keeps every matching row).
	d, e := sc.store(col, v, 1)
	if e != nil || d.Null {
		return "", false
	}
	return string(keyBytes(nil, rd.CollOf(col), col, d)), true
}

// hasColumn reports whether x reads a column (or VALUES(col)).
func hasColumn(x *model.RowExpr) bool {
	if x.Op == model.ECol || x.Op == model.EValues || x.Op == model.ELastID {
		return true
	}
	for i := range x.Args {
		if hasColumn(&x.Args[i]) {
			return true
		}
	}
	return false
}

// scanPick is pick over the candidates of access a, read as they come:
// each row the filter matches is kept; with a LIMIT and no ORDER BY, or
// an ORDER BY the path's order gives, the scan stops once offset+limit
// rows matched (InnoDB's early end: rows never read raise no warnings).
// over, when not nil, may replace a stored row (a session's own write).
func (env *evalEnv) scanPick(rows TableRows, a RowsAccess, over func(pk string, r []model.Datum) []model.Datum, filter *model.RowExpr,
	order []model.RowOrder, hasLimit bool, offset, limit uint64) ([]matched, *model.Error, error) {
	var out []matched
	var e *model.Error
	early := hasLimit && !a.Resort && (len(order) == 0 || a.Ordered)
	want := offset + limit
	if want < offset {
		early = false // no end within reach
	}
	if early && want == 0 {
		return nil, nil, nil
	}
	if a.Point && a.In == nil && !a.Empty {
		// One probe, as ScanAccess makes it, without its callback; one
		// candidate needs no order, and pick's LIMIT keeps it at OFFSET 0
		// only.
		r, ok := rows.Get(a.Lo)
		if !ok {
			return nil, nil, nil
		}
		if over != nil {
			r = over(a.Lo, r)
		}
		env.row = r
		ok, e := env.matches(filter)
		if e != nil || !ok || hasLimit && (offset > 0 || limit == 0) {
			return nil, e, nil
		}
		return []matched{{a.Lo, r}}, nil, nil
	}
	err := ScanAccess(rows, a, func(pk string, r []model.Datum) bool {
		if over != nil {
			r = over(pk, r)
		}
		env.row = r
		ok, ee := env.matches(filter)
		if ee != nil {
			e = ee
			return false
		}
		if ok {
			out = append(out, matched{pk, r})
		}
		return !early || uint64(len(out)) < want
	})
	if err != nil || e != nil {
		return nil, e, err
	}
	if a.Resort {
		slices.SortFunc(out, func(x, y matched) int { return strings.Compare(x.pk, y.pk) })
	}
	if a.Ordered {
		order = nil // already in order
	}
	picked, e := env.pick(out, nil, order, hasLimit, offset, limit)
	return picked, e, nil
}

// ApplyAccess is the access path of an UPDATE or DELETE, which the state
// machine applies: the order its rows come in decides which rows a LIMIT
// takes and, through unique keys, whether the statement succeeds, so it
// must be the order every build gives, including builds from before key
// ranges (ChooseAccess of the WHERE's equalities, then a stable sort by
// ORDER BY). PlanAccess's path is used as it is when its order is that
// one (a narrower range of the same index; an ORDER BY it gives, where
// the older path read the clustering key: the same rows in the same order
// as the stable sort); where the older path read the clustering key, any
// other path's rows are put back in clustering order (Resort) before
// ORDER BY and LIMIT; otherwise the older path.
func ApplyAccess(t *model.Table, filter *model.RowExpr, order []model.RowOrder, hasLimit bool, now time.Time) RowsAccess {
	old := ChooseAccess(t, EqualityConds(filter))
	a := PlanAccess(t, filter, order, hasLimit, now)
	switch {
	case a.Empty:
		return a // no row matches, in any order
	case a.Index == old.Index && a.In == nil && !a.Desc:
		return a
	case old.Index == ClusterIndex:
		if !a.Ordered {
			a.Resort = true
		}
		return a
	}
	return old
}
