package ticket

import (
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Apply executes one command against the store. It is deterministic: the
// same command on the same state gives the same result and state on every
// replica. A returned error is a storage failure, not a statement error
// (those are in Result.Err).
//
// The reference for every answer is MariaDB with MyISAM ticket tables
// (DESIGN §2), including MyISAM's non-transactional multi-row statements:
// rows before a failing row stay written.
func Apply(s Store, c *Command) (Result, error) {
	if isSeqOp(c.Op) {
		return applySequence(s, c)
	}
	switch c.Op {
	case OpInsert:
		return applyInsert(s, c)
	case OpUpdate:
		return applyUpdate(s, c)
	case OpCreateDB:
		return applyCreateDB(s, c)
	case OpDropDB:
		return applyDropDB(s, c)
	case OpCreateTable:
		return applyCreateTable(s, c)
	case OpDropTable:
		return applyDropTable(s, c)
	case OpAlterTable:
		return applyAlterTable(s, c)
	case OpSetGlobal:
		return Result{}, s.PutGlobal(c.Name, c.Value)
	case OpReserve:
		return applyReserve(s, c)
	case OpRestore:
		return applyRestore(s, c)
	case OpDelete:
		return applyRowsDelete(s, c)
	case OpRestoreRows:
		return applyRestoreRows(s, c)
	case OpKeys:
		return applyKeys(s, c)
	default:
		return Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "unknown command %d", c.Op)}, nil
	}
}

// NextID is MySQL's rule for the next generated value: the least value v >=
// autoInc with v ≡ off (mod inc), computed exactly as MySQL's
// compute_next_insert_id(autoInc-1) does, unsigned wrap-around included
// (that is what gives auto_increment_offset > auto_increment_increment its
// documented-as-ignored behaviour). ok is false when no value is left.
func NextID(autoInc, inc, off uint64) (v uint64, ok bool) {
	if autoInc == 0 {
		autoInc = 1
	}
	if inc == 0 {
		inc = 1
	}
	if off == 0 {
		off = 1
	}
	nr := autoInc - 1
	if inc == 1 {
		v = nr + 1
	} else {
		v = (nr+inc-off)/inc*inc + off
	}
	if v <= nr {
		return 0, false
	}
	return v, true
}

// generate takes the next id of an AUTO_INCREMENT table and advances the
// counter past it. The counter is unchanged on error.
func generate(t *Table, inc, off uint64, row int) (uint64, *Error) {
	v, ok := NextID(t.AutoInc, inc, off)
	if t.Exhausted || !ok || v > t.Def.IDType.Max() {
		return 0, mysqlerr.AutoincExhausted(t.Def.IDCol, row)
	}
	return v, nil
}

// advance moves the counter past id, never backwards (MyISAM keeps the
// counter above the largest id ever stored, whichever way it got there).
func advance(t *Table, id uint64) {
	if id == ^uint64(0) {
		t.Exhausted = true
		t.AutoInc = id
		return
	}
	if id+1 > t.AutoInc {
		t.AutoInc = id + 1
	}
}

func noTable(db, name string) *Error {
	return mysqlerr.NoSuchTable(db, name)
}

// findRow returns the index of the first row whose unique keys collide with
// (id, stub), and which key collided, or -1.
func findRow(t *Table, id uint64, checkID bool, stub string, skip int) (int, string) {
	for i := range t.Rows {
		if i == skip {
			continue
		}
		r := &t.Rows[i]
		if checkID && t.Def.IDKey != "" && r.ID == id {
			return i, t.Def.IDKey
		}
		if t.Def.StubKey != "" && t.Def.StubCol != "" && SameStub(r.Stub, stub) {
			return i, t.Def.StubKey
		}
	}
	return -1, ""
}

func dupEntry(val, key string) *Error {
	return mysqlerr.New(mysqlerr.CodeDupEntry, "Duplicate entry '%s' for key '%s'", val, key)
}

func removeRow(t *Table, i int) {
	t.Rows = append(t.Rows[:i], t.Rows[i+1:]...)
}

func putRow(t *Table, r Row) {
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].ID > r.ID })
	t.Rows = append(t.Rows, Row{})
	copy(t.Rows[i+1:], t.Rows[i:])
	t.Rows[i] = r
}

func applyInsert(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		return Result{Err: noTable(c.DB, c.Table)}, nil
	}
	if t.Def.Seq != nil {
		return Result{Err: errSequenceRows}, nil
	}
	if t.Def.Rows != nil {
		return applyRowsInsert(s, t, c)
	}
	for _, vs := range c.Values {
		for _, v := range vs {
			if v.Kind == ValNow {
				return Result{Err: mysqlerr.NotSupported("NOW() in a ticket table's VALUES")}, nil
			}
		}
	}
	rows, e := mapRows(&t.Def, c.Columns, c.Values)
	if e == nil && c.OnDup != nil {
		e = CheckAssign(&t.Def, c.OnDup)
	}
	if e != nil {
		return Result{Err: e}, nil
	}
	var (
		res Result
		st  insertState
	)
	changed := false
	for i := range c.Values {
		in, e := rows.row(&t.Def, c.Values[i], i+1)
		if e == nil {
			e = insertOne(t, c, in, i+1, &res, &st)
		}
		if e != nil {
			res.Err = e
			break
		}
		changed = true
	}
	switch {
	case st.exprSet:
		// LAST_INSERT_ID(expr) sets the session's value, unless a row
		// generated an id: at the statement's end MariaDB makes the first
		// generated id LAST_INSERT_ID() (THD::cleanup_after_query), and
		// its OK packet carries it.
		res.SetLastID, res.LastID, res.InsertID = true, st.exprID, st.exprID
		if st.firstGen != 0 {
			res.LastID, res.InsertID = st.firstGen, st.firstGen
		}
	case st.firstGen != 0:
		// MySQL sets LAST_INSERT_ID to the first generated id even when a
		// later row of a non-transactional statement fails.
		res.SetLastID, res.LastID, res.InsertID = true, st.firstGen, st.firstGen
	default:
		res.InsertID = st.explicitID
	}
	if changed {
		if err := s.PutTable(t); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// insertState is what a multi-row INSERT remembers for its insert id:
// the first generated id, the last explicit id written to an
// AUTO_INCREMENT column, and a LAST_INSERT_ID(expr) of ON DUPLICATE KEY
// UPDATE, which wins over both.
type insertState struct {
	firstGen   uint64
	explicitID uint64
	exprSet    bool
	exprID     uint64
}

// insertOne inserts one VALUES row.
func insertOne(t *Table, c *Command, in insertRow, rowNum int, res *Result, st *insertState) *Error {
	def := &t.Def
	stub := def.StubDefault
	if in.HasStub {
		stub = in.Stub
	}
	if def.StubCol != "" && def.StubLen > 0 && utf8.RuneCountInString(stub) > def.StubLen {
		return mysqlerr.New(mysqlerr.CodeDataTooLong, "Data too long for column '%s' at row %d", def.StubCol, rowNum)
	}
	var id uint64
	generated := false
	switch {
	case in.HasID && in.ID != 0:
		id = in.ID
		if id > def.IDType.Max() {
			return mysqlerr.OutOfRange(def.IDCol, rowNum)
		}
	case def.AutoInc:
		v, e := generate(t, c.Increment, c.Offset, rowNum)
		if e != nil {
			return e
		}
		id, generated = v, true
	case in.HasID:
		id = 0
	default:
		return mysqlerr.NoDefault(def.IDCol)
	}

	for {
		i, key := findRow(t, id, true, stub, -1)
		if i < 0 {
			break
		}
		switch {
		case c.Replace:
			removeRow(t, i)
			res.Affected++
			continue
		case c.OnDup != nil:
			return onDuplicate(t, c.OnDup, i, rowNum, res, st)
		case c.Ignore:
			val := stub
			if key == def.IDKey {
				val = strconv.FormatUint(id, 10)
			}
			res.Warnings = append(res.Warnings, Warning{Level: "Warning", Code: mysqlerr.CodeDupEntry, Message: dupEntry(val, key).Message})
			return nil
		default:
			if key == def.IDKey {
				return dupEntry(strconv.FormatUint(id, 10), key)
			}
			return dupEntry(stub, key)
		}
	}
	putRow(t, Row{ID: id, Stub: stub})
	res.Affected++
	if def.AutoInc {
		advance(t, id)
	}
	if generated {
		if st.firstGen == 0 {
			st.firstGen = id
		}
	} else if def.AutoInc {
		st.explicitID = id
	}
	return nil
}

// onDuplicate runs ON DUPLICATE KEY UPDATE on row i. MySQL counts 2
// affected rows when the row changed, 0 when it did not.
func onDuplicate(t *Table, u *Update, i, rowNum int, res *Result, st *insertState) *Error {
	old := t.Rows[i].ID
	v, e := assign(t, u, old, i, rowNum)
	if e != nil {
		return e
	}
	if u.SetLastID {
		st.exprSet, st.exprID = true, v
	}
	if v != old {
		res.Affected += 2
		setRowID(t, i, v)
	}
	return nil
}

// assign computes the new id of row i under u, checking range and keys.
func assign(t *Table, u *Update, old uint64, i, rowNum int) (uint64, *Error) {
	def := &t.Def
	var v uint64
	outOfRange := mysqlerr.OutOfRange(def.IDCol, rowNum)
	if u.Absolute {
		v = u.Value
	} else if u.Delta >= 0 {
		v = old + uint64(u.Delta)
		if v < old {
			return 0, outOfRange
		}
	} else {
		d := uint64(-u.Delta)
		if d > old {
			return 0, outOfRange
		}
		v = old - d
	}
	if v > def.IDType.Max() {
		return 0, outOfRange
	}
	if v != old && def.IDKey != "" {
		for j := range t.Rows {
			if j != i && t.Rows[j].ID == v {
				return 0, dupEntry(strconv.FormatUint(v, 10), def.IDKey)
			}
		}
	}
	return v, nil
}

func setRowID(t *Table, i int, v uint64) {
	r := t.Rows[i]
	removeRow(t, i)
	r.ID = v
	putRow(t, r)
	if t.Def.AutoInc {
		advance(t, v)
	}
}

func applyUpdate(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		return Result{Err: noTable(c.DB, c.Table)}, nil
	}
	if t.Def.Seq != nil {
		return Result{Err: errSequenceRows}, nil
	}
	if t.Def.Rows != nil {
		return applyRowsUpdate(s, t, c)
	}
	if c.Rows != nil {
		return Result{Err: errRowsShape}, nil
	}
	if e := CheckAssign(&t.Def, &c.Set); e != nil {
		return Result{Err: e}, nil
	}
	var where cond
	if c.HasWhere {
		var e *Error
		if where, e = makeCond(&t.Def, c.WhereCol, c.Where); e != nil {
			return Result{Err: e}, nil
		}
	}
	var res Result
	// Collect the matching rows first: setRowID reorders Rows.
	var targets []Row
	for _, r := range t.Rows {
		if c.HasWhere && !where.match(r) {
			continue
		}
		targets = append(targets, r)
	}
	changed := false
	for n, r := range targets {
		i := indexOf(t, r)
		v, e := assign(t, &c.Set, r.ID, i, n+1)
		if e != nil {
			res.Err = e
			break
		}
		res.Matched++
		if c.Set.SetLastID {
			res.SetLastID = true
			res.LastID = v
			res.InsertID = v
		}
		if v != r.ID {
			res.Affected++
			setRowID(t, i, v)
			changed = true
		}
	}
	if changed {
		if err := s.PutTable(t); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

func indexOf(t *Table, r Row) int {
	for i := range t.Rows {
		if t.Rows[i] == r {
			return i
		}
	}
	return -1
}

func applyCreateDB(s Store, c *Command) (Result, error) {
	ok, err := s.Database(c.DB)
	if err != nil {
		return Result{}, err
	}
	if ok {
		e := mysqlerr.New(mysqlerr.CodeDBCreateExists, "Can't create database '%s'; database exists", c.DB)
		if c.IfExists {
			return noted(e), nil
		}
		return Result{Err: e}, nil
	}
	return Result{Affected: 1}, s.PutDatabase(c.DB)
}

func applyDropDB(s Store, c *Command) (Result, error) {
	ok, err := s.Database(c.DB)
	if err != nil {
		return Result{}, err
	}
	if !ok {
		e := mysqlerr.New(mysqlerr.CodeDBDropExists, "Can't drop database '%s'; database doesn't exist", c.DB)
		if c.IfExists {
			return noted(e), nil
		}
		return Result{Err: e}, nil
	}
	tables, err := s.Tables(c.DB)
	if err != nil {
		return Result{}, err
	}
	for _, name := range tables {
		t, err := s.Table(c.DB, name)
		if err != nil {
			return Result{}, err
		}
		if t != nil {
			if err := markDropped(s, t); err != nil {
				return Result{}, err
			}
		}
	}
	return Result{Affected: uint64(len(tables))}, s.DeleteDatabase(c.DB)
}

// nameFree checks that CREATE TABLE or CREATE SEQUENCE may take def's
// name: its database exists and nothing in it has the name. done is the
// statement's answer when it may not (a note under IF NOT EXISTS).
func nameFree(s Store, def *TableDef, ifNotExists bool) (done *Result, err error) {
	ok, err := s.Database(def.DB)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Result{Err: mysqlerr.UnknownDB(def.DB)}, nil
	}
	old, err := s.Table(def.DB, def.Name)
	if err != nil {
		return nil, err
	}
	if old != nil {
		e := mysqlerr.New(mysqlerr.CodeTableExists, "Table '%s' already exists", def.Name)
		r := Result{Err: e}
		if ifNotExists {
			r = noted(e)
		}
		return &r, nil
	}
	return nil, nil
}

func applyCreateTable(s Store, c *Command) (Result, error) {
	def := *c.Def
	if done, err := nameFree(s, &def, c.IfExists); done != nil || err != nil {
		if err != nil {
			return Result{}, err
		}
		return *done, nil
	}
	t := &Table{Def: def, AutoInc: 1}
	if c.CreateAutoInc > 1 {
		t.AutoInc = c.CreateAutoInc
	}
	if err := startAbove(s, t); err != nil {
		return Result{}, err
	}
	return Result{}, s.PutTable(t)
}

func applyDropTable(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		e := mysqlerr.New(mysqlerr.CodeBadTable, "Unknown table '%s.%s'", c.DB, c.Table)
		if c.IfExists {
			return noted(e), nil
		}
		return Result{Err: e}, nil
	}
	if err := markDropped(s, t); err != nil {
		return Result{}, err
	}
	return Result{}, s.DeleteTable(c.DB, c.Table)
}

// applyAlterTable changes table options. AUTO_INCREMENT never moves the
// counter backwards: MyISAM would let it drop to max(id)+1 after rows were
// replaced by lower explicit ids, and a ticket server must not reissue.
func applyAlterTable(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		return Result{Err: noTable(c.DB, c.Table)}, nil
	}
	var res Result
	if len(c.DropKeys)+len(c.AddKeys) > 0 {
		// Keys first: a refused key change leaves the options alone too.
		var e *Error
		var err error
		if res, e, err = alterKeys(s, t, c); err != nil || e != nil {
			return Result{Err: e}, err
		}
	}
	if c.HasAutoInc && c.AutoInc > t.AutoInc && !t.Exhausted {
		t.AutoInc = c.AutoInc
	}
	if c.HasCache {
		t.Def.Cache = c.Cache
	}
	if c.HasComment {
		t.Def.Comment = c.Comment
	}
	if t.Def.Rows == nil {
		res.Affected = uint64(len(t.Rows))
	}
	return res, s.PutTable(t)
}

// applyReserve takes up to Count counter positions for a leader's cache:
// ids First..Last are then the leader's to hand out (with the session's
// increment and offset applied within the range), and nobody else's.
func applyReserve(s Store, c *Command) (Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return Result{}, err
	}
	if t == nil {
		return Result{Err: noTable(c.DB, c.Table)}, nil
	}
	max := t.Def.IDType.Max()
	if t.Exhausted || t.AutoInc > max || c.Count == 0 {
		return Result{Err: mysqlerr.AutoincExhausted(t.Def.IDCol, 1)}, nil
	}
	first := t.AutoInc
	last := first + c.Count - 1
	if last < first || last > max {
		last = max
	}
	advance(t, last)
	return Result{First: first, Last: last}, s.PutTable(t)
}

// String renders a command for logs and test failures.
func (c *Command) String() string {
	return fmt.Sprintf("%d %s.%s rows=%d", c.Op, c.DB, c.Table, len(c.Values))
}

// noted is the answer to an IF [NOT] EXISTS statement that did nothing:
// the error it would have been, as a note.
func noted(e *Error) Result {
	return Result{Warnings: []Warning{{Level: "Note", Code: e.Code, Message: e.Message}}}
}
