package ticket

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The statements of row tables (rows.go): INSERT, UPDATE and DELETE, each
// applied entirely or not at all.

// applyRowsInsert is INSERT / REPLACE / INSERT IGNORE / INSERT ... ON
// DUPLICATE KEY UPDATE on a row table, as MariaDB's write_record does it:
// each row in turn, the first unique key it collides on (in key order)
// decides what happens; the counts are MariaDB's (copied, deleted,
// updated, touched).
func applyRowsInsert(s Store, t *Table, c *Command) (Result, error) {
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsInsert(s, t, c)
	}
	rd := t.Def.Rows
	rc := c.Rows
	if c.OnDup != nil {
		// The ticket form of ON DUPLICATE KEY UPDATE: wire sends row
		// tables the row form (rc.OnDup).
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
	onDup := make([]int, len(rc.OnDup))
	for i := range rc.OnDup {
		if onDup[i] = rd.colIndex(rc.OnDup[i].Col); onDup[i] < 0 {
			return Result{Err: mysqlerr.UnknownColumn(rc.OnDup[i].Col, "field list")}, nil
		}
		if e := checkCols(rd, &rc.OnDup[i].Expr, "field list"); e != nil {
			return Result{Err: e}, nil
		}
	}
	for _, row := range rc.Exprs {
		for i := range row {
			if e := checkCols(rd, &row[i], "VALUES"); e != nil {
				return Result{Err: e}, nil
			}
		}
	}
	rows, err := s.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return Result{}, rowsMissing(t, err)
	}
	tx := newRowsTx(rd, rows)
	var res Result
	now := statementNow(c)
	noAutoZero := rc.NoAutoValueOnZero
	// INSERT IGNORE and a non-strict sql_mode clamp with warnings.
	older := !c.rulesAt(RulesV11)
	sc := &storeCtx{strict: !rc.NotStrict && !c.Ignore, db: t.Def.DB, table: t.Def.Name, warns: &res.Warnings, rd: rd, older: older}
	env := &evalEnv{rd: rd, db: t.Def.DB, table: t.Def.Name, now: now, warns: &res.Warnings, lit: map[*RowExpr]val{}, older: older,
		strictWarn: sc.strict && !older}
	// MariaDB's counts: copied (rows inserted, and rows an ON DUPLICATE
	// KEY UPDATE changed), deleted (rows REPLACE removed or overwrote),
	// updated (rows ON DUPLICATE KEY UPDATE changed) and touched (rows it
	// found, changed or not). Affected is copied+deleted+updated;
	// CLIENT_FOUND_ROWS sees touched instead of updated (Matched).
	var copied, deleted, updated, touched uint64
	// firstGen is the first generated id of a row actually inserted, and
	// lastAuto the AUTO_INCREMENT column of the last row written (the OK
	// packet's id when nothing was generated).
	var firstGen uint64
	var lastAuto Datum
	// keepCounter is what builds before this one kept to decide whether a
	// failing statement's generated ids stay used: the first generated
	// id, unless its row was ignored (the state must not depend on the
	// build).
	var keepCounter uint64
	// reuse is a generated id an ignored or updated row left for the next
	// row, and reserved how many more the statement takes from the
	// counter: InnoDB reserves one per row of a simple INSERT and hands
	// such a row's value to the next (handler::restore_auto_increment).
	var reuse uint64
	reserved := 0
	autoCol := -1
	if t.Def.AutoInc {
		autoCol = rd.colIndex(t.Def.IDCol)
	}
	ac := autoCounter{t: t, c: c, startAt: t.AutoInc, startEx: t.Exhausted}
	fail := func(e *Error) (Result, error) {
		// Nothing is written; generated values stay used, as InnoDB's
		// auto-increment counter is not rolled back either.
		if err := tx.rollback(); err != nil {
			return Result{}, err
		}
		if ac.keepOnFailure(keepCounter, e) {
			if err := s.PutTable(t); err != nil {
				return Result{}, err
			}
		}
		return Result{Err: e}, nil
	}
	rowColsOf := func(vals []Value) []int {
		if len(vals) == 0 && c.Columns == nil {
			// VALUES (): every column takes its default.
			return nil
		}
		return cols
	}
	for n, vals := range c.Values {
		if len(vals) != len(rowColsOf(vals)) {
			return Result{Err: mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", n+1)}, nil
		}
	}
	// MariaDB's check_that_all_fields_are_given_values, once for the
	// statement: a NOT NULL column without a default that it gives no
	// value, in its column list or in ON DUPLICATE KEY UPDATE, is 1364 in
	// strict mode; rows take the column's implicit default (0, '', ...),
	// silently for a column the update assigns. Outside strict mode (and
	// with IGNORE) MariaDB warns and stores the implicit default; builds
	// before command version 6 answered 1364 there, and a replica of one
	// must change nothing where this one would insert: ticketd refuses it
	// (1235) until a command version says otherwise.
	unlisted := make([]bool, len(rd.Cols))
	if len(c.Values) > 0 {
		for j := range unlisted {
			unlisted[j] = true
		}
		for _, j := range rowColsOf(c.Values[0]) {
			unlisted[j] = false
		}
	}
	for _, j := range onDup {
		unlisted[j] = false
	}
	for j := range rd.Cols {
		col := &rd.Cols[j]
		if !unlisted[j] || j == autoCol || col.DefaultNow || col.HasDefault || !col.NotNull {
			continue
		}
		if sc.strict {
			return Result{Err: mysqlerr.New(mysqlerr.CodeNoDefault, "Field '%s' doesn't have a default value", col.Name)}, nil
		}
		return Result{Err: noDefaultLax(col)}, nil
	}
	assigned := make([]bool, len(rd.Cols))
	for _, j := range onDup {
		assigned[j] = true
	}
	for n, vals := range c.Values {
		rowNum := n + 1
		rowCols := rowColsOf(vals)
		r := make([]Datum, len(rd.Cols))
		given := make([]bool, len(rd.Cols))
		var exprs []RowExpr
		if n < len(rc.Exprs) {
			exprs = rc.Exprs[n]
		}
		// view is the row as an expression in VALUES sees it (id + 1):
		// the values given so far, other columns as they were before the
		// row was filled (made only for a row with an expression).
		var view []Datum
		if exprs != nil {
			view, env.unknown = preInsertRow(rd)
		}
		for i, j := range rowCols {
			col := &rd.Cols[j]
			v := vals[i]
			var lv val
			var e *Error
			if i < len(exprs) && exprs[i].Op != 0 {
				env.row = view
				lv, e = env.evalStrict(&exprs[i])
			} else if v.Kind == ValDefault {
				continue
			} else {
				lv, e = litVal(v, now)
			}
			if e != nil {
				return fail(e)
			}
			d, e := sc.store(col, lv, rowNum)
			if e != nil {
				return fail(e)
			}
			if view != nil {
				view[j], env.unknown[j] = d, false
				if d.Null && col.NotNull {
					view[j] = Datum{S: "0"} // a NOT NULL field holds no NULL
					env.unknown[j] = col.Kind != ColInt
				}
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
		env.unknown = nil
		rowGen := uint64(0) // the id generated for this row
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
					if v, e = ac.take(rowNum); e != nil {
						return fail(e)
					}
				} else {
					reserved++
				}
				reuse = 0
				if keepCounter == 0 {
					keepCounter = v
				}
				r[j] = Datum{S: strconv.FormatUint(v, 10)}
				rowGen = v
			case col.DefaultNow:
				r[j] = Datum{S: now.UTC().Format(dateTimeFormat)}
			case col.HasDefault:
				r[j] = col.Default
			case !col.NotNull:
				r[j] = Datum{Null: true}
			case slices.Contains(onDup, j):
				// A column ON DUPLICATE KEY UPDATE assigns counts as given
				// (MariaDB checks the statement's write set): a new row
				// takes its implicit default (main/insert_update).
				d, ok := implicitDefault(col, now)
				if !ok {
					return fail(mysqlerr.NotSupported("zero dates"))
				}
				r[j] = d
			default:
				// No value and no default: unlisted, the statement's check
				// above answered; DEFAULT for it is that row's 1364.
				if !unlisted[j] && !assigned[j] {
					if sc.strict {
						return fail(mysqlerr.New(mysqlerr.CodeNoDefault, "Field '%s' doesn't have a default value", col.Name))
					}
					return fail(noDefaultLax(col))
				}
				d, ok := implicitDefault(col, now)
				if !ok || col.Kind == ColTimestamp {
					// MariaDB stores a zero date; ticketd holds none.
					return fail(mysqlerr.NotSupported("zero dates (a date or time column without a value or default)"))
				}
				r[j] = d
			}
		}
		if autoCol >= 0 && given[autoCol] {
			var b big
			b.parse(r[autoCol].S)
			if !b.neg {
				advance(t, b.abs)
			}
		}
		// giveBack hands this row's generated id to the next row: the row
		// was not inserted.
		giveBack := func() {
			if rowGen != 0 {
				reuse = rowGen
				if keepCounter == rowGen {
					keepCounter = 0
				}
			}
		}
		switch {
		case c.Replace:
			same := false
			for !same {
				pk, k, found, err := tx.conflict(r, "", nil)
				if err != nil {
					return Result{}, err
				}
				if !found {
					break
				}
				if old, _ := tx.rows.Get(pk); lastUniqueKey(rd, k) && slices.Equal(old, r) {
					// MariaDB overwrites the row in place when the key is
					// the last unique one, and InnoDB reports an identical
					// row as not updated: nothing deleted, one row copied.
					if tx.cluster >= 0 {
						same = true
						break
					}
					// Clustered by hidden row id: the row is written again
					// under a new one, as builds before this did (the state
					// must not depend on the build); only the count is
					// MariaDB's.
					if err := tx.del(pk); err != nil {
						return Result{}, err
					}
					continue
				}
				if err := tx.del(pk); err != nil {
					return Result{}, err
				}
				deleted++
			}
			if same {
				copied++
				if autoCol >= 0 {
					lastAuto = r[autoCol]
				}
				if rowGen != 0 && firstGen == 0 {
					firstGen = rowGen
				}
				res.Images = append(res.Images, r)
				continue
			}
		case rc.OnDup != nil:
			pk, _, found, err := tx.conflict(r, "", nil)
			if err != nil {
				return Result{}, err
			}
			if !found {
				break
			}
			giveBack()
			touched++
			old, _ := tx.rows.Get(pk)
			nr, e := env.onDupRow(rd, sc, rc.OnDup, onDup, old, r, now, rowNum)
			if e != nil {
				return fail(e)
			}
			if autoCol >= 0 {
				lastAuto = nr[autoCol]
			}
			if slices.Equal(nr, old) {
				continue
			}
			changed := make([]bool, len(nr))
			assigned := make([]bool, len(nr))
			for _, j := range onDup {
				assigned[j] = true
			}
			for j := range nr {
				changed[j] = nr[j] != old[j]
			}
			for j := range rd.Cols {
				if rd.Cols[j].OnUpdateNow && !assigned[j] {
					nr[j] = Datum{S: now.UTC().Format(dateTimeFormat)}
					changed[j] = true
				}
			}
			_, k, dup, err := tx.conflict(nr, pk, changed)
			if err != nil {
				return Result{}, err
			}
			if dup {
				e := dupEntry(keyText(&rd.Keys[k], nr), rd.Keys[k].Name)
				if c.Ignore {
					res.Warnings = append(res.Warnings, Warning{Level: "Warning", Code: e.Code, Message: e.Message})
					continue
				}
				return fail(e)
			}
			if err := tx.replace(pk, nr); err != nil {
				return Result{}, err
			}
			if autoCol >= 0 && assigned[autoCol] {
				// An id set by the update moves the counter past it
				// (adjust_next_insert_id_after_explicit_value).
				var b big
				b.parse(nr[autoCol].S)
				if !b.neg {
					advance(t, b.abs)
				}
			}
			copied++
			updated++
			res.Images = append(res.Images, nr)
			continue
		default:
			_, k, found, err := tx.conflict(r, "", nil)
			if err != nil {
				return Result{}, err
			}
			if found {
				e := dupEntry(keyText(&rd.Keys[k], r), rd.Keys[k].Name)
				if c.Ignore {
					res.Warnings = append(res.Warnings, Warning{Level: "Warning", Code: e.Code, Message: e.Message})
					giveBack()
					if autoCol >= 0 {
						lastAuto = r[autoCol]
					}
					continue
				}
				return fail(e)
			}
		}
		if _, err := tx.put("", r); err != nil {
			return Result{}, err
		}
		copied++
		if autoCol >= 0 {
			lastAuto = r[autoCol]
		}
		if rowGen != 0 && firstGen == 0 {
			firstGen = rowGen
		}
		res.Images = append(res.Images, r)
	}
	for ; reserved > 0; reserved-- {
		if _, e := ac.take(len(c.Values)); e != nil {
			break // the counter is at the type's top: nothing more to reserve
		}
	}
	res.Affected = copied + deleted + updated
	res.Matched = copied + deleted + touched
	// The OK packet's id and LAST_INSERT_ID(), as mysql_insert sets them:
	// the first generated id inserted; else LAST_INSERT_ID(x)'s x; else
	// the AUTO_INCREMENT value of the last row written.
	switch {
	case firstGen != 0:
		res.SetLastID, res.LastID, res.InsertID = true, firstGen, firstGen
	case env.setLastID:
		res.SetLastID, res.LastID, res.InsertID = true, env.lastID, env.lastID
	case autoCol >= 0 && copied > 0 && !lastAuto.Null:
		var b big
		b.parse(lastAuto.S)
		// The OK packet carries a negative id as its two's complement,
		// as MariaDB's does.
		res.InsertID = b.abs
		if b.neg {
			res.InsertID = -b.abs
		}
	}
	return res, s.PutTable(t)
}

// noDefaultLax refuses a row that would take col's implicit default
// outside strict mode (MariaDB: warning 1364 and 0 or an empty string), which
// replicas of builds before command version 6 answer with 1364 and
// nothing written.
func noDefaultLax(col *RowCol) *Error {
	return mysqlerr.NotSupported("an INSERT without a value for NOT NULL column " + col.Name + " that has no default, outside strict mode")
}

// preInsertRow is a row before INSERT fills it (MariaDB's record of
// default values): each column's constant default, NULL, or for a NOT
// NULL column without one 0 or the empty string; unknown marks the columns whose value
// there ticketd cannot hold (a zero date, a DEFAULT CURRENT_TIMESTAMP not
// yet computed), which an expression may not read.
func preInsertRow(rd *RowsDef) (row []Datum, unknown []bool) {
	row = make([]Datum, len(rd.Cols))
	unknown = make([]bool, len(rd.Cols))
	for j := range rd.Cols {
		col := &rd.Cols[j]
		switch {
		case col.AutoInc:
			row[j] = Datum{S: "0"}
		case col.DefaultNow:
			unknown[j] = true
		case col.HasDefault:
			row[j] = col.Default
		case !col.NotNull:
			row[j] = Datum{Null: true}
		case col.Kind == ColInt:
			row[j] = Datum{S: "0"}
		case col.Kind == ColString:
			row[j] = Datum{S: ""}
		default:
			unknown[j] = true
		}
	}
	return row, unknown
}

// lastUniqueKey reports whether no unique key follows key k (MariaDB's
// last_uniq_key: REPLACE then overwrites the row in place).
func lastUniqueKey(rd *RowsDef, k int) bool {
	for _, o := range rd.Keys[k+1:] {
		if o.Unique {
			return false
		}
	}
	return true
}

// onDupRow is the row ON DUPLICATE KEY UPDATE makes of old: the
// assignments left to right, each seeing the ones before it, VALUES(col)
// the row that was to be inserted; strict mode errors as UPDATE's.
func (env *evalEnv) onDupRow(rd *RowsDef, sc *storeCtx, assigns []RowAssign, targets []int, old, values []Datum, now time.Time, rowNum int) ([]Datum, *Error) {
	r := append([]Datum(nil), old...)
	env.values = values
	defer func() { env.values = nil }()
	for k := range assigns {
		j := targets[k]
		col := &rd.Cols[j]
		var d Datum
		if assigns[k].Default {
			var ok bool
			if d, ok = columnDefault(col, now); !ok {
				return nil, mysqlerr.NotSupported("SET " + col.Name + " = DEFAULT on a column without a default")
			}
		} else {
			env.row = r
			v, e := env.evalStrict(&assigns[k].Expr)
			if e != nil {
				return nil, e
			}
			if d, e = sc.store(col, v, rowNum); e != nil {
				return nil, e
			}
		}
		if d.Null && col.NotNull {
			switch {
			case col.Kind == ColTimestamp:
				d = Datum{S: now.UTC().Format(dateTimeFormat)}
			case sc.strict:
				return nil, mysqlerr.New(mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)
			default:
				sc.warn("Warning", mysqlerr.CodeBadNull, "Column '%s' cannot be null", col.Name)
				d, _ = implicitDefault(col, now)
			}
		}
		r[j] = d
	}
	return r, nil
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

// replace stores r in place of the row under pk, which it updates: a
// put over it when r keeps that clustering key (the usual UPDATE, and
// what the tree does in one lookup and one write), else a delete of pk
// and a put. A delete and a put for every updated row cost an UPDATE by
// key two more lookups, a removal and two row decodes on every replica.
// The undo log restores the old row either way.
func (tx *rowsTx) replace(pk string, r []Datum) error {
	if tx.cluster < 0 {
		// Clustered by hidden row id: r stays under pk.
		_, err := tx.put(pk, r)
		return err
	}
	if key, _ := tx.rd.IndexKey(tx.cluster, r); key != pk {
		if err := tx.del(pk); err != nil {
			return err
		}
	}
	_, err := tx.put(pk, r)
	return err
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
