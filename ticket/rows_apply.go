package ticket

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The statements of row tables (rows.go): INSERT, UPDATE and DELETE, each
// applied entirely or not at all.

// applyRowsInsert is INSERT / REPLACE / INSERT IGNORE on a row table.
func applyRowsInsert(s Store, t *Table, c *Command) (Result, error) {
	rd := t.Def.Rows
	if c.OnDup != nil {
		return Result{Err: mysqlerr.NotSupported("ON DUPLICATE KEY UPDATE on this table")}, nil
	}
	cols := make([]int, 0, len(rd.Cols))
	if c.Columns == nil {
		for i := range rd.Cols {
			cols = append(cols, i)
		}
	} else {
		seen := map[int]bool{}
		for _, name := range c.Columns {
			j := rd.colIndex(name)
			if j < 0 {
				return Result{Err: mysqlerr.UnknownColumn(name, "field list")}, nil
			}
			if seen[j] {
				return Result{Err: mysqlerr.New(mysqlerr.CodeFieldSpecifiedTwice, "Column '%s' specified twice", rd.Cols[j].Name)}, nil
			}
			seen[j] = true
			cols = append(cols, j)
		}
	}
	data := append([][]Datum(nil), t.Data...)
	var res Result
	var firstGen, explicit uint64
	autoCol := -1
	if t.Def.AutoInc {
		autoCol = rd.colIndex(t.Def.IDCol)
	}
	fail := func(e *Error) (Result, error) {
		// Nothing is written; generated values stay used, as InnoDB's
		// auto-increment counter is not rolled back either.
		if firstGen != 0 {
			if err := s.PutTable(t); err != nil {
				return Result{}, err
			}
		}
		return Result{Err: e}, nil
	}
	for n, vals := range c.Values {
		rowNum := n + 1
		if len(vals) != len(cols) {
			return fail(mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", rowNum))
		}
		r := make([]Datum, len(rd.Cols))
		given := make([]bool, len(rd.Cols))
		for i, j := range cols {
			col := &rd.Cols[j]
			v := vals[i]
			if v.Kind == ValDefault {
				continue
			}
			if j == autoCol && (v.Kind == ValNull || (v.Kind == ValInt && v.Int == 0)) {
				continue
			}
			d, e := convert(col, v, c.Now, rowNum, t.Def.DB, t.Def.Name)
			if e != nil {
				return fail(e)
			}
			if d.Null && col.NotNull {
				if col.Kind == ColTimestamp {
					// A NULL into TIMESTAMP NOT NULL is the current time.
					d = Datum{S: c.Now.UTC().Format(dateTimeFormat)}
				} else {
					return fail(mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name))
				}
			}
			r[j], given[j] = d, true
		}
		for j := range rd.Cols {
			if given[j] {
				continue
			}
			col := &rd.Cols[j]
			switch {
			case j == autoCol:
				v, e := generate(t, c.Increment, c.Offset, rowNum)
				if e != nil {
					return fail(e)
				}
				r[j] = Datum{S: strconv.FormatUint(v, 10)}
				advance(t, v)
				if firstGen == 0 {
					firstGen = v
				}
			case col.DefaultNow:
				r[j] = Datum{S: c.Now.UTC().Format(dateTimeFormat)}
			case col.HasDefault:
				r[j] = col.Default
			case !col.NotNull:
				r[j] = Datum{Null: true}
			default:
				return fail(mysqlerr.New(mysqlerr.CodeNoDefault, "Field '%s' doesn't have a default value", col.Name))
			}
		}
		if autoCol >= 0 && given[autoCol] {
			var b big
			b.parse(r[autoCol].S)
			if !b.neg {
				advance(t, b.abs)
				explicit = b.abs
			}
		}
		if c.Replace {
			for {
				i := collide(rd, data, r)
				if i < 0 {
					break
				}
				data = append(data[:i], data[i+1:]...)
				res.Affected++
			}
		} else if e := conflict(rd, data, r, -1, nil); e != nil {
			if c.Ignore {
				res.Warnings = append(res.Warnings, Warning{Level: "Warning", Code: e.Code, Message: e.Message})
				continue
			}
			return fail(e)
		}
		if len(data) >= MaxRows {
			return fail(mysqlerr.New(mysqlerr.CodeRecordFileFull, "The table '%s' is full", t.Def.Name))
		}
		data = insertAt(data, place(rd, data, r), r)
		res.Affected++
		res.Images = append(res.Images, r)
	}
	t.Data = data
	if firstGen != 0 {
		res.SetLastID, res.LastID, res.InsertID = true, firstGen, firstGen
	} else {
		res.InsertID = explicit
	}
	return res, s.PutTable(t)
}

// collide is the index of a row colliding with r on a unique key, or -1.
func collide(rd *RowsDef, data [][]Datum, r []Datum) int {
	for ki := range rd.Keys {
		k := &rd.Keys[ki]
		if !k.Unique {
			continue
		}
		want, ok := keyOf(rd, k, r)
		if !ok {
			continue
		}
		for i, o := range data {
			if got, ok := keyOf(rd, k, o); ok && got == want {
				return i
			}
		}
	}
	return -1
}

// where is a WHERE conjunction on a row table; probe holds the primary
// key's values when the conjunction binds all of them, so matching rows
// are found by binary search instead of a scan.
type where struct {
	match func([]Datum) bool
	probe []Datum
}

func newWhere(t *Table, conds []RowCond) (*where, *Error) {
	m, e := rowsMatch(t, conds)
	if e != nil {
		return nil, e
	}
	w := &where{match: m}
	rd := t.Def.Rows
	if pk := rd.primary(); pk != nil {
		probe := make([]Datum, len(rd.Cols))
		bound := 0
		for _, c := range pk.Cols {
			for _, cd := range conds {
				if strings.EqualFold(cd.Col, rd.Cols[c].Name) {
					d, e := convert(&rd.Cols[c], cd.Val, time.Time{}, 1, t.Def.DB, t.Def.Name)
					if e == nil && !d.Null {
						probe[c] = d
						bound++
					}
					break
				}
			}
		}
		if bound == len(pk.Cols) {
			w.probe = probe
		}
	}
	return w, nil
}

// rows are the rows of data the WHERE matches, in order.
func (w *where) rows(rd *RowsDef, data [][]Datum) [][]Datum {
	var out [][]Datum
	if w.probe != nil {
		pk := rd.primary()
		for i := place(rd, data, w.probe); i < len(data); i++ {
			same := true
			for _, c := range pk.Cols {
				if compareDatum(&rd.Cols[c], data[i][c], w.probe[c]) != 0 {
					same = false
				}
			}
			if !same {
				break
			}
			if w.match(data[i]) {
				out = append(out, data[i])
			}
		}
		return out
	}
	for _, r := range data {
		if w.match(r) {
			out = append(out, r)
		}
	}
	return out
}

// rowsMatch resolves a WHERE conjunction into a row predicate. A value
// that cannot be converted to its column's type matches nothing.
func rowsMatch(t *Table, conds []RowCond) (func([]Datum) bool, *Error) {
	rd := t.Def.Rows
	type test struct {
		col  int
		want Datum
		none bool
	}
	tests := make([]test, len(conds))
	for i, cd := range conds {
		j := rd.colIndex(cd.Col)
		if j < 0 {
			return nil, mysqlerr.UnknownColumn(cd.Col, "where clause")
		}
		d, e := convert(&rd.Cols[j], cd.Val, time.Time{}, 1, t.Def.DB, t.Def.Name)
		tests[i] = test{col: j, want: d, none: e != nil || d.Null}
	}
	return func(r []Datum) bool {
		for _, ts := range tests {
			if ts.none || r[ts.col].Null || compareDatum(&rd.Cols[ts.col], r[ts.col], ts.want) != 0 {
				return false
			}
		}
		return true
	}, nil
}

// setsFromTicket turns the ticket form of an UPDATE (one id assignment, at
// most one WHERE term) into the row-table form.
func setsFromTicket(c *Command) *RowsCommand {
	rc := &RowsCommand{}
	u := &c.Set
	set := RowSet{Col: u.Column, SetLastID: u.SetLastID}
	switch {
	case u.Absolute:
		set.A = RowOperand{Val: Value{Kind: ValUint, Uint: u.Value}}
		if u.Value <= math.MaxInt64 {
			set.A.Val = Value{Kind: ValInt, Int: int64(u.Value)}
		}
	case u.Delta == 0:
		set.A = RowOperand{Col: u.Column}
	default:
		set.A, set.Op = RowOperand{Col: u.Column}, '+'
		set.B = RowOperand{Val: Value{Kind: ValInt, Int: u.Delta}}
	}
	rc.Sets = []RowSet{set}
	if c.HasWhere {
		rc.Where = []RowCond{{Col: c.WhereCol, Val: c.Where}}
	}
	return rc
}

// applyRowsUpdate is UPDATE on a row table: every matching row, all or
// nothing.
func applyRowsUpdate(s Store, t *Table, c *Command) (Result, error) {
	rd := t.Def.Rows
	rc := c.Rows
	if rc == nil {
		rc = setsFromTicket(c)
	}
	w, e := newWhere(t, rc.Where)
	if e != nil {
		return Result{Err: e}, nil
	}
	sets := make([]int, len(rc.Sets))
	for i, st := range rc.Sets {
		if sets[i] = rd.colIndex(st.Col); sets[i] < 0 {
			return Result{Err: mysqlerr.UnknownColumn(st.Col, "field list")}, nil
		}
		for _, o := range []RowOperand{st.A, st.B} {
			if o.Col != "" && rd.colIndex(o.Col) < 0 {
				return Result{Err: mysqlerr.UnknownColumn(o.Col, "field list")}, nil
			}
		}
	}
	data := t.Data
	copied := false
	var res Result
	for _, old := range w.rows(rd, t.Data) {
		res.Matched++
		r := append([]Datum(nil), old...)
		explicit := make([]bool, len(rd.Cols))
		for k, st := range rc.Sets {
			j := sets[k]
			col := &rd.Cols[j]
			d, e := evalSet(rd, col, &st, r, c.Now, int(res.Matched), t)
			if e != nil {
				return Result{Err: e}, nil
			}
			if d.Null && col.NotNull {
				if col.Kind != ColTimestamp {
					return Result{Err: mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)}, nil
				}
				d = Datum{S: c.Now.UTC().Format(dateTimeFormat)}
			}
			r[j], explicit[j] = d, true
			if st.SetLastID && !d.Null {
				var b big
				b.parse(d.S)
				res.SetLastID, res.LastID, res.InsertID = true, b.abs, b.abs
			}
		}
		changed := false
		cols := make([]bool, len(r))
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
				r[j] = Datum{S: c.Now.UTC().Format(dateTimeFormat)}
			}
		}
		if !copied {
			// Copy before the first change: a failing statement leaves
			// the table as it was.
			data, copied = append([][]Datum(nil), data...), true
		}
		at := indexOfRow(data, old)
		if e := conflict(rd, data, r, at, cols); e != nil {
			return Result{Err: e}, nil
		}
		data = append(data[:at], data[at+1:]...)
		data = insertAt(data, place(rd, data, r), r)
		res.Affected++
		res.Images = append(res.Images, r)
		if t.Def.AutoInc {
			if a := rd.colIndex(t.Def.IDCol); a >= 0 && explicit[a] {
				var b big
				b.parse(r[a].S)
				if !b.neg {
					advance(t, b.abs)
				}
			}
		}
	}
	if res.Affected == 0 {
		return res, nil
	}
	t.Data = data
	return res, s.PutTable(t)
}

// indexOfRow finds the row (by identity of its backing array) in data.
func indexOfRow(data [][]Datum, r []Datum) int {
	for i, o := range data {
		if len(o) > 0 && len(r) > 0 && &o[0] == &r[0] {
			return i
		}
	}
	return -1
}

// evalSet computes one assignment against the row as updated so far
// (MySQL evaluates single-table UPDATE assignments left to right).
func evalSet(rd *RowsDef, col *RowCol, st *RowSet, r []Datum, now time.Time, row int, t *Table) (Datum, *Error) {
	operand := func(o RowOperand) (Datum, *RowCol, *Error) {
		if o.Col != "" {
			j := rd.colIndex(o.Col)
			return r[j], &rd.Cols[j], nil
		}
		if st.Op == 0 {
			d, e := convert(col, o.Val, now, row, t.Def.DB, t.Def.Name)
			return d, col, e
		}
		// An arithmetic operand is a number whatever the column.
		tmp := RowCol{Name: col.Name, Kind: ColInt, Int: IntType{Kind: BigInt}}
		if o.Val.Kind == ValUint {
			tmp.Int.Unsigned = true
		}
		d, e := convert(&tmp, o.Val, now, row, t.Def.DB, t.Def.Name)
		return d, &tmp, e
	}
	a, acol, e := operand(st.A)
	if e != nil {
		return Datum{}, e
	}
	unsigned := acol.Kind == ColInt && acol.Int.Unsigned
	if st.Op == 0 {
		if acol != col && !a.Null {
			return convert(col, Value{Kind: ValString, Str: a.S}, now, row, t.Def.DB, t.Def.Name)
		}
		return a, nil
	}
	b, bcol, e := operand(st.B)
	if e != nil {
		return Datum{}, e
	}
	unsigned = unsigned || bcol.Kind == ColInt && bcol.Int.Unsigned
	if a.Null || b.Null {
		return Datum{Null: true}, nil
	}
	var x, y big
	if !x.parse(a.S) || !y.parse(b.S) {
		return Datum{}, mysqlerr.NotSupported("arithmetic on a non-numeric value")
	}
	sum := x.add(&y, st.Op == '-')
	// MySQL computes in BIGINT, unsigned if either side is: a result
	// outside that range is 1690 whatever the column.
	if sum.bad || (unsigned && sum.neg && sum.abs != 0) || (!unsigned && !sum.neg && sum.abs > math.MaxInt64) {
		what := "BIGINT"
		if unsigned {
			what = "BIGINT UNSIGNED"
		}
		return Datum{}, mysqlerr.New(mysqlerr.CodeValueOutOfRange, "%s value is out of range in '%s %c ...'", what, colName(t.Def.DB, t.Def.Name, st.A.Col), st.Op)
	}
	if col.Kind != ColInt {
		return convert(col, Value{Kind: ValString, Str: sum.text()}, now, row, t.Def.DB, t.Def.Name)
	}
	return intDatum(col, &sum, row)
}

// applyRowsDelete is DELETE on a row table.
func applyRowsDelete(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		return Result{Err: noTable(c.DB, c.Table)}, nil
	}
	if t.Def.Rows == nil {
		return Result{Err: mysqlerr.NotSupported("DELETE from a ticket table or sequence")}, nil
	}
	var where []RowCond
	if c.Rows != nil {
		where = c.Rows.Where
	}
	match, e := rowsMatch(t, where)
	if e != nil {
		return Result{Err: e}, nil
	}
	kept := make([][]Datum, 0, len(t.Data))
	var res Result
	for _, r := range t.Data {
		if match(r) {
			res.Affected++
			continue
		}
		kept = append(kept, r)
	}
	if res.Affected == 0 {
		return res, nil
	}
	t.Data = kept
	return res, s.PutTable(t)
}
