package ticket

import (
	"fmt"
	"math"
	"strconv"
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
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return Result{}, rowsMissing(t, err)
	}
	tx := newRowsTx(rd, rows)
	var res Result
	var firstGen, explicit uint64
	autoCol := -1
	if t.Def.AutoInc {
		autoCol = rd.colIndex(t.Def.IDCol)
	}
	fail := func(e *Error) (Result, error) {
		// Nothing is written; generated values stay used, as InnoDB's
		// auto-increment counter is not rolled back either.
		if err := tx.rollback(); err != nil {
			return Result{}, err
		}
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
				pk, _, found, err := tx.conflict(r, "", nil)
				if err != nil {
					return Result{}, err
				}
				if !found {
					break
				}
				if err := tx.del(pk); err != nil {
					return Result{}, err
				}
				res.Affected++
			}
		} else {
			_, k, found, err := tx.conflict(r, "", nil)
			if err != nil {
				return Result{}, err
			}
			if found {
				e := dupEntry(keyText(&rd.Keys[k], r), rd.Keys[k].Name)
				if c.Ignore {
					res.Warnings = append(res.Warnings, Warning{Level: "Warning", Code: e.Code, Message: e.Message})
					continue
				}
				return fail(e)
			}
		}
		if _, err := tx.put("", r); err != nil {
			return Result{}, err
		}
		res.Affected++
		res.Images = append(res.Images, r)
	}
	if firstGen != 0 {
		res.SetLastID, res.LastID, res.InsertID = true, firstGen, firstGen
	} else {
		res.InsertID = explicit
	}
	return res, s.PutTable(t)
}

// rowsMissing is the storage error of a row table whose rows the store
// does not have (a bug: PutTable creates them).
func rowsMissing(t *Table, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("ticket: row table %s has no rows in the store", t.Def.Key())
}

// rowsTx writes a statement's rows through TableRows and can undo them
// all, so that a failing statement leaves the table as it was.
type rowsTx struct {
	rd      *RowsDef
	rows    TableRows
	cluster int
	undo    []undoRow
}

// undoRow is what a write replaced: the row under pk before it (had
// false: none).
type undoRow struct {
	pk  string
	old []Datum
	had bool
}

func newRowsTx(rd *RowsDef, rows TableRows) *rowsTx {
	return &rowsTx{rd: rd, rows: rows, cluster: rd.ClusterKey()}
}

// put stores r (pk: its hidden row id, "" for a new row) and returns its
// clustering key.
func (tx *rowsTx) put(pk string, r []Datum) (string, error) {
	key := pk
	if tx.cluster >= 0 {
		key, _ = tx.rd.IndexKey(tx.cluster, r)
	}
	var old []Datum
	had := false
	if key != "" {
		old, had = tx.rows.Get(key)
	}
	got, err := tx.rows.Put(pk, r)
	if err != nil {
		return "", err
	}
	tx.undo = append(tx.undo, undoRow{pk: got, old: old, had: had})
	return got, nil
}

func (tx *rowsTx) del(pk string) error {
	old, had := tx.rows.Get(pk)
	if !had {
		return nil
	}
	if err := tx.rows.Delete(pk); err != nil {
		return err
	}
	tx.undo = append(tx.undo, undoRow{pk: pk, old: old, had: true})
	return nil
}

// rollback undoes every write, last first.
func (tx *rowsTx) rollback() error {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		u := tx.undo[i]
		var err error
		if u.had {
			_, err = tx.rows.Put(u.pk, u.old)
		} else {
			err = tx.rows.Delete(u.pk)
		}
		if err != nil {
			return fmt.Errorf("ticket: undo a failed statement's rows: %w", err)
		}
	}
	tx.undo = tx.undo[:0]
	return nil
}

// conflict finds a row other than the one stored under skip that
// collides with r on a unique key, by key lookups. Only keys over a
// column in changed are checked (nil: every key): an UPDATE of other
// columns cannot make a duplicate. k is the key that collided.
func (tx *rowsTx) conflict(r []Datum, skip string, changed []bool) (pk string, k int, found bool, err error) {
	for k := range tx.rd.Keys {
		key := &tx.rd.Keys[k]
		if !key.Unique || !touches(key, changed) {
			continue
		}
		want, null := tx.rd.IndexKey(k, r)
		if null {
			continue
		}
		if k == tx.cluster {
			if want != skip {
				if _, ok := tx.rows.Get(want); ok {
					return want, k, true, nil
				}
			}
			continue
		}
		err = tx.rows.Scan(k, want, PrefixEnd(want), func(p string, _ []Datum) bool {
			if p != skip {
				pk, found = p, true
			}
			return !found
		})
		if err != nil || found {
			return pk, k, found, err
		}
	}
	return "", 0, false, nil
}

// matched is a row a WHERE selected, with its clustering key.
type matched struct {
	pk  string
	row []Datum
}

// whereRows are the rows of a row table the WHERE conjunction matches,
// in the order of the access path ChooseAccess picks.
func whereRows(t *Table, rows TableRows, conds []RowCond) ([]matched, *Error, error) {
	match, e := rowsMatch(t, conds)
	if e != nil {
		return nil, e, nil
	}
	var out []matched
	err := ScanAccess(rows, ChooseAccess(t, conds), func(pk string, r []Datum) bool {
		if match(r) {
			out = append(out, matched{pk, r})
		}
		return true
	})
	return out, nil, err
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
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return Result{}, rowsMissing(t, err)
	}
	found, e, err := whereRows(t, rows, rc.Where)
	if err != nil {
		return Result{}, err
	}
	if e != nil {
		return Result{Err: e}, nil
	}
	tx := newRowsTx(rd, rows)
	fail := func(e *Error) (Result, error) {
		if err := tx.rollback(); err != nil {
			return Result{}, err
		}
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
	var res Result
	for _, m := range found {
		old := m.row
		res.Matched++
		r := append([]Datum(nil), old...)
		explicit := make([]bool, len(rd.Cols))
		for k, st := range rc.Sets {
			j := sets[k]
			col := &rd.Cols[j]
			d, e := evalSet(rd, col, &st, r, c.Now, int(res.Matched), t)
			if e != nil {
				return fail(e)
			}
			if d.Null && col.NotNull {
				if col.Kind != ColTimestamp {
					return fail(mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name))
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
		_, k, dup, err := tx.conflict(r, m.pk, cols)
		if err != nil {
			return Result{}, err
		}
		if dup {
			return fail(dupEntry(keyText(&rd.Keys[k], r), rd.Keys[k].Name))
		}
		if err := tx.del(m.pk); err != nil {
			return Result{}, err
		}
		if _, err := tx.put(m.pk, r); err != nil {
			return Result{}, err
		}
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
	return res, s.PutTable(t)
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
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return Result{}, rowsMissing(t, err)
	}
	found, e, err := whereRows(t, rows, where)
	if err != nil {
		return Result{}, err
	}
	if e != nil {
		return Result{Err: e}, nil
	}
	var res Result
	for _, m := range found {
		if err := rows.Delete(m.pk); err != nil {
			return Result{}, err
		}
		res.Affected++
	}
	return res, nil
}
