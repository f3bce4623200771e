package ticket

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The statements of row tables (rows.go): INSERT, UPDATE and DELETE, each
// applied entirely or not at all.

// applyRowsInsert is INSERT / REPLACE / INSERT IGNORE on a row table.
func applyRowsInsert(s Store, t *Table, c *Command) (Result, error) {
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsInsert(s, t, c)
	}
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
	now := statementNow(c)
	rc := c.Rows
	if rc == nil {
		rc = &RowsCommand{}
	}
	noAutoZero := rc.NoAutoValueOnZero
	// INSERT IGNORE and a non-strict sql_mode clamp with warnings.
	sc := &storeCtx{strict: !rc.NotStrict && !c.Ignore, db: t.Def.DB, table: t.Def.Name, warns: &res.Warnings}
	// reuse is a generated id an ignored row left for the next row, and
	// reserved how many more the statement takes from the counter: InnoDB
	// reserves one per row of a simple INSERT and hands an ignored row's
	// value to the next (handler::restore_auto_increment).
	var reuse uint64
	reserved := 0
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
		rowCols := cols
		if len(vals) == 0 && c.Columns == nil {
			// VALUES (): every column takes its default.
			rowCols = nil
		}
		if len(vals) != len(rowCols) {
			return fail(mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", rowNum))
		}
		r := make([]Datum, len(rd.Cols))
		given := make([]bool, len(rd.Cols))
		for i, j := range rowCols {
			col := &rd.Cols[j]
			v := vals[i]
			if v.Kind == ValDefault {
				continue
			}
			lv, e := litVal(v, now)
			if e != nil {
				return fail(e)
			}
			d, e := sc.store(col, lv, rowNum)
			if e != nil {
				return fail(e)
			}
			if j == autoCol && (d.Null || (d.S == "0" && !noAutoZero)) {
				// NULL and 0 generate the next value (0 is stored under
				// NO_AUTO_VALUE_ON_ZERO).
				continue
			}
			if d.Null && col.NotNull {
				switch {
				case col.Kind == ColTimestamp:
					// A NULL into TIMESTAMP NOT NULL is the current time.
					d = Datum{S: now.UTC().Format(dateTimeFormat)}
				case sc.strict || len(c.Values) == 1 && !c.Ignore:
					// Outside strict mode a single-row INSERT still fails.
					return fail(mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name))
				default:
					sc.warn("Warning", mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)
					d, _ = implicitDefault(col, now)
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
				v := reuse
				if v == 0 {
					var e *Error
					if v, e = generate(t, c.Increment, c.Offset, rowNum); e != nil {
						return fail(e)
					}
					advance(t, v)
				} else {
					reserved++
				}
				reuse = 0
				r[j] = Datum{S: strconv.FormatUint(v, 10)}
				if firstGen == 0 {
					firstGen = v
				}
			case col.DefaultNow:
				r[j] = Datum{S: now.UTC().Format(dateTimeFormat)}
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
			} else {
				// The OK packet carries a negative id as its two's
				// complement, as MariaDB's does.
				explicit = -b.abs
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
					if autoCol >= 0 && !given[autoCol] {
						var b big
						b.parse(r[autoCol].S)
						reuse = b.abs
						if firstGen == b.abs {
							firstGen = 0
						}
					}
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
	for ; reserved > 0; reserved-- {
		v, e := generate(t, c.Increment, c.Offset, len(c.Values))
		if e != nil {
			break // the counter is at the type's top: nothing more to reserve
		}
		advance(t, v)
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
// nothing (rows_engine.go).
func applyRowsUpdate(s Store, t *Table, c *Command) (Result, error) {
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsUpdate(s, t, c)
	}
	return applyRowsUpdateExpr(s, t, c, c.Rows)
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
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsDelete(s, t, c)
	}
	return applyRowsDeleteExpr(s, t, c, c.Rows)
}
