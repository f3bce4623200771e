package rowengine

import (
	mb "math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// How a statement reaches the rows of a row table (store.go): the
// access path (RowsAccess), the scan of its candidates, the key value a
// literal can look up, and the equality-only choice of the commands from
// before the row engine (ChooseAccess; PlanAccess is access.go).

// RowsAccess is how a statement reaches the rows its WHERE can match:
// one index and a key range of it. The rows found are candidates; the
// whole WHERE is still evaluated on each.
type RowsAccess struct {
	// Index is ClusterIndex or a position in RowsDef.Keys.
	Index int
	// Lo and Hi bound the index keys (Hi "" none).
	Lo, Hi string
	// Point: Lo is a whole clustering key, found with one Get.
	Point bool
	// Empty: the bounds exclude every row (id > 5 AND id < 3).
	Empty bool
	// Ordered: the index order (descending when Desc) is the
	// statement's ORDER BY (PlanAccess), so that a LIMIT can stop the
	// scan.
	Ordered bool
	Desc    bool
	// Resort puts the candidates in clustering order before ORDER BY and
	// LIMIT, as a scan of the table gives them (applyAccess).
	Resort bool
	// In, when not nil, lists whole values of the one-column key Index
	// (sorted): the candidates are the rows of each (col IN (list)).
	In []string
}

// ChooseAccess picks the narrowest access the WHERE's equalities allow:
// the whole clustering key (a point lookup), else a whole unique key,
// else the longest run of leading columns of any key bound by equalities
// (a range of that index), else a scan of the whole table in clustering
// order. A condition whose value does not convert to its column's type
// binds nothing (the WHERE then decides, row by row).
func ChooseAccess(t *model.Table, conds []model.RowCond) RowsAccess {
	rd := t.Def.Rows
	full := RowsAccess{Index: ClusterIndex}
	if rd == nil || len(conds) == 0 {
		return full
	}
	eq := make(map[int]model.Datum, len(conds))
	for _, cd := range conds {
		j := rd.ColIndex(cd.Col)
		if j < 0 {
			return full
		}
		if _, dup := eq[j]; dup {
			continue
		}
		d, ok := indexValue(&rd.Cols[j], cd.Val)
		if !ok {
			continue
		}
		eq[j] = d
	}
	cluster := ClusterKey(rd)
	best, bestN, bestScore := -1, 0, 0
	for k, key := range rd.Keys {
		n := 0
		for _, c := range key.Cols {
			if _, ok := eq[c]; !ok {
				break
			}
			n++
		}
		if n == 0 {
			continue
		}
		// A whole clustering key, then a whole unique key, then the
		// most bound columns.
		score := n
		if n == len(key.Cols) && key.Unique {
			score = 1 << 20
			if k == cluster {
				score++
			}
		}
		if score > bestScore {
			best, bestN, bestScore = k, n, score
		}
	}
	if best < 0 {
		return full
	}
	vals := make([]model.Datum, bestN)
	for i := range vals {
		vals[i] = eq[rd.Keys[best].Cols[i]]
	}
	lo := ValueKey(rd, best, vals)
	a := RowsAccess{Index: best, Lo: lo, Hi: PrefixEnd(lo)}
	if best == cluster {
		a.Index = ClusterIndex
		a.Point = bestN == len(rd.Keys[best].Cols)
	}
	return a
}

// ScanAccess visits the candidate rows of an access, in index order.
func ScanAccess(rows TableRows, a RowsAccess, fn func(pk string, row []model.Datum) bool) error {
	if a.Empty {
		return nil
	}
	if a.In != nil {
		for _, k := range a.In {
			if a.Point {
				if r, ok := rows.Get(k); ok && !fn(k, r) {
					return nil
				}
				continue
			}
			stop := false
			if err := rows.Scan(a.Index, k, PrefixEnd(k), func(pk string, r []model.Datum) bool {
				stop = !fn(pk, r)
				return !stop
			}); err != nil || stop {
				return err
			}
		}
		return nil
	}
	if a.Point {
		if r, ok := rows.Get(a.Lo); ok {
			fn(a.Lo, r)
		}
		return nil
	}
	if a.Desc {
		return rows.ScanDesc(a.Index, a.Lo, a.Hi, fn)
	}
	return rows.Scan(a.Index, a.Lo, a.Hi, fn)
}

// indexValue is the key value an equality `col = v` can look up, when
// the row engine's comparison (eval.go) matches exactly the rows
// whose key equals it; ok is false otherwise, and the WHERE is then
// decided row by row over a wider scan. A string column compared with a
// number compares as a number ('5abc' = 5), so a number binds no string
// key; a fraction (5.5) matches no integer.
func indexValue(col *model.RowCol, v model.Value) (model.Datum, bool) {
	if col.Kind == model.ColInt && (v.Kind == model.ValInt || v.Kind == model.ValUint) {
		// An integer in the column's range is stored as its decimal text
		// (storeInt's answer, without its big.Rat); out of range, strict
		// storing fails and so does the lookup.
		if d, ok := intKeyValue(col.Int, v); ok {
			return d, true
		}
		return model.Datum{}, false
	}
	switch {
	case v.Kind == model.ValNull || v.Kind == model.ValNow || v.Kind == model.ValDefault:
		return model.Datum{}, false
	case col.Kind == model.ColString && v.Kind != model.ValString:
		return model.Datum{}, false
	case col.Kind == model.ColInt && (v.Kind == model.ValDecimal || v.Kind == model.ValDouble):
		r, ok := new(mb.Rat).SetString(v.Str)
		if !ok || !r.IsInt() {
			return model.Datum{}, false
		}
	case v.Kind == model.ValTemporal:
		// A DATE or DATETIME parameter on a temporal column, without a
		// time of day or microseconds the stored form would drop; a TIME
		// (on the statement's date) and other columns are scanned.
		if col.Kind == model.ColInt || strings.Contains(v.Str, ".") || !(len(v.Str) >= 10 && v.Str[4] == '-') ||
			(col.Kind == model.ColDate && len(v.Str) > 10 && !strings.HasSuffix(v.Str, " 00:00:00")) {
			return model.Datum{}, false
		}
	case col.Kind == model.ColInt && v.Kind == model.ValString:
		// Only a clean number: '5abc' compares as 5 but with a warning
		// the scan raises.
		p, rest := NumericPrefix(v.Str)
		if p == "" || strings.TrimRight(rest, " ") != "" {
			return model.Datum{}, false
		}
	}
	var warns []model.Warning
	sc := &storeCtx{strict: true, warns: &warns}
	lv, e := litVal(v, time.Time{})
	if e != nil {
		return model.Datum{}, false
	}
	d, e := sc.store(col, lv, 1)
	if e != nil || d.Null || len(warns) > 0 {
		return model.Datum{}, false
	}
	return d, true
}

// intKeyValue is the Datum of an integer value v in a column of type it, ok
// false when v is out of the type's range.
func intKeyValue(it model.IntType, v model.Value) (model.Datum, bool) {
	max := it.Max()
	switch {
	case v.Kind == model.ValUint:
		if v.Uint > max {
			return model.Datum{}, false
		}
		return model.Datum{S: strconv.FormatUint(v.Uint, 10)}, true
	case v.Int >= 0:
		if uint64(v.Int) > max {
			return model.Datum{}, false
		}
	case it.Unsigned || uint64(-(v.Int+1)) > max:
		// A signed type's least value is -max-1.
		return model.Datum{}, false
	}
	return model.Datum{S: strconv.FormatInt(v.Int, 10)}, true
}
