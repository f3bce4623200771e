package rowengine

import (
	"math"
	"strconv"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Row-table commands from before the row engine (engine.go): log
// entries written by a build of command version 2, which a newer build
// replays, or applies as a follower of an older leader during a rolling
// upgrade. They apply exactly as that build applied them (its WHERE
// matched values converted to the column's type, its stores had other
// edge cases), so that every replica of the log holds the same rows.
// The row engine's commands carry RowsCommand.Engine and a version 3
// presence bit that an older build refuses.

// legacyRowsInsert is INSERT / REPLACE / INSERT IGNORE on a row table in
// a command from before the row engine.
func legacyRowsInsert(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	rd := t.Def.Rows
	if c.OnDup != nil {
		return model.Result{Err: mysqlerr.NotSupported("ON DUPLICATE KEY UPDATE on this table")}, nil
	}
	cols, e := insertColumns(rd, c, make([]int, 0, len(rd.Cols)))
	if e != nil {
		return model.Result{Err: e}, nil
	}
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return model.Result{}, MissingRows(t, err)
	}
	tx := newRowsTx(rd, rows)
	var res model.Result
	var firstGen, explicit uint64
	autoCol := -1
	if t.Def.AutoInc {
		autoCol = rd.ColIndex(t.Def.IDCol)
	}
	fail := func(e *model.Error) (model.Result, error) {
		// Nothing is written; generated values stay used, as InnoDB's
		// auto-increment counter is not rolled back either.
		if err := tx.rollback(); err != nil {
			return model.Result{}, err
		}
		if firstGen != 0 {
			if err := s.PutTable(t); err != nil {
				return model.Result{}, err
			}
		}
		return model.Result{Err: e}, nil
	}
	for n, vals := range c.Values {
		rowNum := n + 1
		if len(vals) != len(cols) {
			return fail(mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", rowNum))
		}
		r := make([]model.Datum, len(rd.Cols))
		given := make([]bool, len(rd.Cols))
		if e := legacyFillGiven(t, c, cols, vals, autoCol, rowNum, r, given); e != nil {
			return fail(e)
		}
		if e := legacyFillMissing(t, c, autoCol, rowNum, r, given, &firstGen); e != nil {
			return fail(e)
		}
		if autoCol >= 0 && given[autoCol] {
			var b big
			b.parse(r[autoCol].S)
			if !b.neg {
				model.Advance(t, b.abs)
				explicit = b.abs
			}
		}
		e, err := legacyWrite(tx, c, r, &res)
		if err != nil {
			return model.Result{}, err
		}
		if e != nil {
			return fail(e)
		}
	}
	if firstGen != 0 {
		res.SetLastID, res.LastID, res.InsertID = true, firstGen, firstGen
	} else {
		res.InsertID = explicit
	}
	return res, s.PutTable(t)
}

// legacyFillGiven stores a row's values into r (given marks them) with
// that build's conversions (convert, not the engine's storeCtx): NULL
// and 0 in the AUTO_INCREMENT column are left to generate.
func legacyFillGiven(t *model.Table, c *model.Command, cols []int, vals []model.Value, autoCol, rowNum int, r []model.Datum, given []bool) *model.Error {
	rd := t.Def.Rows
	for i, j := range cols {
		col := &rd.Cols[j]
		v := vals[i]
		if v.Kind == model.ValDefault {
			continue
		}
		if j == autoCol && (v.Kind == model.ValNull || (v.Kind == model.ValInt && v.Int == 0)) {
			continue
		}
		d, e := convert(col, v, c.Now, rowNum, t.Def.DB, t.Def.Name)
		if e != nil {
			return e
		}
		if d.Null && col.NotNull {
			if col.Kind == model.ColTimestamp {
				// A NULL into TIMESTAMP NOT NULL is the current time.
				d = model.Datum{S: c.Now.UTC().Format(dateTimeFormat)}
			} else {
				return mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)
			}
		}
		r[j], given[j] = d, true
	}
	return nil
}

// legacyFillMissing gives the columns a row did not give their value as
// that build did: a generated id (one per row, the counter past it; the
// statement's first in *firstGen, which decides whether a failure keeps
// the counter), the default, NULL, or 1364.
func legacyFillMissing(t *model.Table, c *model.Command, autoCol, rowNum int, r []model.Datum, given []bool, firstGen *uint64) *model.Error {
	rd := t.Def.Rows
	for j := range rd.Cols {
		if given[j] {
			continue
		}
		col := &rd.Cols[j]
		switch {
		case j == autoCol:
			v, e := model.Generate(t, c.Increment, c.Offset, rowNum)
			if e != nil {
				return e
			}
			r[j] = model.Datum{S: strconv.FormatUint(v, 10)}
			model.Advance(t, v)
			if *firstGen == 0 {
				*firstGen = v
			}
		case col.DefaultNow:
			r[j] = model.Datum{S: c.Now.UTC().Format(dateTimeFormat)}
		case col.HasDefault:
			r[j] = col.Default
		case !col.NotNull:
			r[j] = model.Datum{Null: true}
		default:
			return mysqlerr.New(mysqlerr.CodeNoDefault, "Field '%s' doesn't have a default value", col.Name)
		}
	}
	return nil
}

// legacyWrite writes a filled row as that build did: REPLACE deletes
// every row it collides with (each counted), INSERT refuses a duplicate
// (IGNORE: a warning and the row skipped). e is the statement's error,
// err a storage error.
func legacyWrite(tx *rowsTx, c *model.Command, r []model.Datum, res *model.Result) (e *model.Error, err error) {
	rd := tx.rd
	if c.Replace {
		for {
			pk, _, found, err := tx.conflict(r, "", nil)
			if err != nil {
				return nil, err
			}
			if !found {
				break
			}
			if err := tx.del(pk); err != nil {
				return nil, err
			}
			res.Affected++
		}
	} else {
		_, k, found, err := tx.conflict(r, "", nil)
		if err != nil {
			return nil, err
		}
		if found {
			e := model.DupEntry(KeyText(&rd.Keys[k], r), rd.Keys[k].Name)
			if c.Ignore {
				res.Warnings = append(res.Warnings, model.Warning{Level: "Warning", Code: e.Code, Message: e.Message})
				return nil, nil
			}
			return e, nil
		}
	}
	if _, err := tx.put("", r); err != nil {
		return nil, err
	}
	res.Affected++
	res.Images = append(res.Images, r)
	return nil, nil
}

// whereRows are the rows of a row table the WHERE conjunction matches,
// in the order of the access path ChooseAccess picks.
func whereRows(t *model.Table, rows TableRows, conds []model.RowCond) ([]matched, *model.Error, error) {
	match, e := rowsMatch(t, conds)
	if e != nil {
		return nil, e, nil
	}
	var out []matched
	err := ScanAccess(rows, ChooseAccess(t, conds), func(pk string, r []model.Datum) bool {
		if match(r) {
			out = append(out, matched{pk, r})
		}
		return true
	})
	return out, nil, err
}

// rowsMatch resolves a WHERE conjunction into a row predicate. A value
// that cannot be converted to its column's type matches nothing.
func rowsMatch(t *model.Table, conds []model.RowCond) (func([]model.Datum) bool, *model.Error) {
	rd := t.Def.Rows
	type test struct {
		col  int
		want model.Datum
		none bool
	}
	tests := make([]test, len(conds))
	for i, cd := range conds {
		j := rd.ColIndex(cd.Col)
		if j < 0 {
			return nil, mysqlerr.UnknownColumn(cd.Col, "where clause")
		}
		d, e := convert(&rd.Cols[j], cd.Val, time.Time{}, 1, t.Def.DB, t.Def.Name)
		tests[i] = test{col: j, want: d, none: e != nil || d.Null}
	}
	return func(r []model.Datum) bool {
		for _, ts := range tests {
			if ts.none || r[ts.col].Null || compareDatum(rd.CollOf(&rd.Cols[ts.col]), &rd.Cols[ts.col], r[ts.col], ts.want) != 0 {
				return false
			}
		}
		return true
	}, nil
}

// legacyRowsUpdate is UPDATE on a row table in a command from before the
// row engine: every matching row, all or nothing.
func legacyRowsUpdate(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	rd := t.Def.Rows
	rc := c.Rows
	if rc == nil {
		rc = setsFromTicket(c)
	}
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return model.Result{}, MissingRows(t, err)
	}
	found, e, err := whereRows(t, rows, rc.Where)
	if err != nil {
		return model.Result{}, err
	}
	if e != nil {
		return model.Result{Err: e}, nil
	}
	tx := newRowsTx(rd, rows)
	fail := func(e *model.Error) (model.Result, error) {
		if err := tx.rollback(); err != nil {
			return model.Result{}, err
		}
		return model.Result{Err: e}, nil
	}
	sets := make([]int, len(rc.Sets))
	for i, st := range rc.Sets {
		if sets[i] = rd.ColIndex(st.Col); sets[i] < 0 {
			return model.Result{Err: mysqlerr.UnknownColumn(st.Col, "field list")}, nil
		}
		for _, o := range []model.RowOperand{st.A, st.B} {
			if o.Col != "" && rd.ColIndex(o.Col) < 0 {
				return model.Result{Err: mysqlerr.UnknownColumn(o.Col, "field list")}, nil
			}
		}
	}
	var res model.Result
	for _, m := range found {
		old := m.row
		res.Matched++
		r := append([]model.Datum(nil), old...)
		explicit := make([]bool, len(rd.Cols))
		for k, st := range rc.Sets {
			j := sets[k]
			col := &rd.Cols[j]
			d, e := evalSet(rd, col, &st, r, c.Now, int(res.Matched), t)
			if e != nil {
				return fail(e)
			}
			if d.Null && col.NotNull {
				if col.Kind != model.ColTimestamp {
					return fail(mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name))
				}
				d = model.Datum{S: c.Now.UTC().Format(dateTimeFormat)}
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
				r[j] = model.Datum{S: c.Now.UTC().Format(dateTimeFormat)}
			}
		}
		_, k, dup, err := tx.conflict(r, m.pk, cols)
		if err != nil {
			return model.Result{}, err
		}
		if dup {
			return fail(model.DupEntry(KeyText(&rd.Keys[k], r), rd.Keys[k].Name))
		}
		if err := tx.del(m.pk); err != nil {
			return model.Result{}, err
		}
		if _, err := tx.put(m.pk, r); err != nil {
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

// evalSet computes one assignment against the row as updated so far
// (MySQL evaluates single-table UPDATE assignments left to right).
func evalSet(rd *model.RowsDef, col *model.RowCol, st *model.RowSet, r []model.Datum, now time.Time, row int, t *model.Table) (model.Datum, *model.Error) {
	operand := func(o model.RowOperand) (model.Datum, *model.RowCol, *model.Error) {
		if o.Col != "" {
			j := rd.ColIndex(o.Col)
			return r[j], &rd.Cols[j], nil
		}
		if st.Op == 0 {
			d, e := convert(col, o.Val, now, row, t.Def.DB, t.Def.Name)
			return d, col, e
		}
		// An arithmetic operand is a number whatever the column.
		tmp := model.RowCol{Name: col.Name, Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt}}
		if o.Val.Kind == model.ValUint {
			tmp.Int.Unsigned = true
		}
		d, e := convert(&tmp, o.Val, now, row, t.Def.DB, t.Def.Name)
		return d, &tmp, e
	}
	a, acol, e := operand(st.A)
	if e != nil {
		return model.Datum{}, e
	}
	unsigned := acol.Kind == model.ColInt && acol.Int.Unsigned
	if st.Op == 0 {
		if acol != col && !a.Null {
			return convert(col, model.Value{Kind: model.ValString, Str: a.S}, now, row, t.Def.DB, t.Def.Name)
		}
		return a, nil
	}
	b, bcol, e := operand(st.B)
	if e != nil {
		return model.Datum{}, e
	}
	unsigned = unsigned || bcol.Kind == model.ColInt && bcol.Int.Unsigned
	if a.Null || b.Null {
		return model.Datum{Null: true}, nil
	}
	var x, y big
	if !x.parse(a.S) || !y.parse(b.S) {
		return model.Datum{}, mysqlerr.NotSupported("arithmetic on a non-numeric value")
	}
	sum := x.add(&y, st.Op == '-')
	// MySQL computes in BIGINT, unsigned if either side is: a result
	// outside that range is 1690 whatever the column.
	if sum.bad || (unsigned && sum.neg && sum.abs != 0) || (!unsigned && !sum.neg && sum.abs > math.MaxInt64) {
		what := "BIGINT"
		if unsigned {
			what = "BIGINT UNSIGNED"
		}
		return model.Datum{}, mysqlerr.New(mysqlerr.CodeValueOutOfRange, "%s value is out of range in '%s %c ...'", what, colName(t.Def.DB, t.Def.Name, st.A.Col), st.Op)
	}
	if col.Kind != model.ColInt {
		return convert(col, model.Value{Kind: model.ValString, Str: sum.text()}, now, row, t.Def.DB, t.Def.Name)
	}
	return intDatum(col, &sum, row)
}

// legacyRowsDelete is DELETE on a row table in a command from before the
// row engine.
func legacyRowsDelete(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	var where []model.RowCond
	if c.Rows != nil {
		where = c.Rows.Where
	}
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return model.Result{}, MissingRows(t, err)
	}
	found, e, err := whereRows(t, rows, where)
	if err != nil {
		return model.Result{}, err
	}
	if e != nil {
		return model.Result{Err: e}, nil
	}
	var res model.Result
	for _, m := range found {
		if err := rows.Delete(m.pk); err != nil {
			return model.Result{}, err
		}
		res.Affected++
	}
	return res, nil
}
