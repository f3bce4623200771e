package ticket

import (
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Apply executes one command against the store. It is deterministic: the
// same command on the same state gives the same result and state on every
// replica. A returned error is a storage failure, not a statement error
// (those are in Result.Err).
//
// The reference for every answer is MariaDB with MyISAM ticket tables
// (DESIGN §2), including MyISAM's non-transactional multi-row statements:
// rows before a failing row stay written; for row tables, MariaDB with
// InnoDB (DESIGN §4a).
//
// Commands without a table (databases, CREATE, globals, restore, keys)
// are Apply's own; a command addressed to a table goes through
// applyToTable, which looks it up once and dispatches once, to its kind.
func Apply(s Store, c *model.Command) (model.Result, error) {
	switch c.Op {
	case model.OpCreateDB:
		return applyCreateDB(s, c)
	case model.OpDropDB:
		return applyDropDB(s, c)
	case model.OpCreateTable:
		return applyCreateTable(s, c)
	case model.OpCreateSeq:
		return applyCreateSeq(s, c)
	case model.OpSetGlobal:
		return model.Result{}, s.PutGlobal(c.Name, c.Value)
	case model.OpRestore:
		return applyRestore(s, c)
	case model.OpKeys:
		return applyKeys(s, c)
	case model.OpInsert, model.OpUpdate, model.OpDelete, model.OpAlterTable, model.OpDropTable, model.OpReserve, model.OpRestoreRows:
		return applyToTable(s, c)
	}
	if isSeqOp(c.Op) {
		return applyToTable(s, c)
	}
	return model.Result{Err: unknownCommand(c)}, nil
}

// applyToTable runs a command addressed to one table: it looks the table
// up once, answers for a table that is not there, runs what every kind of
// table does alike (DROP TABLE, a range reservation) and hands the rest
// to the table's kind (kind.go).
func applyToTable(s Store, c *model.Command) (model.Result, error) {
	t, err := s.Table(c.DB, c.Table)
	if err != nil {
		return model.Result{}, err
	}
	if t == nil {
		return noSuchTable(c), nil
	}
	switch c.Op {
	case model.OpDropTable:
		return dropTable(s, t, c)
	case model.OpReserve:
		return reserve(s, t, c)
	}
	return kindOf(&t.Def).apply(s, t, c)
}

// noSuchTable is the answer to c when its table does not exist: 1146,
// or what DROP TABLE and the sequence statements say, a note under IF
// EXISTS.
func noSuchTable(c *model.Command) model.Result {
	var e *model.Error
	switch {
	case c.Op == model.OpDropTable:
		e = mysqlerr.New(mysqlerr.CodeBadTable, "Unknown table '%s.%s'", c.DB, c.Table)
	case c.Op == model.OpDropSeq:
		e = mysqlerr.UnknownSequence(c.DB + "." + c.Table)
	case isSeqOp(c.Op):
		return model.Result{Err: mysqlerr.UnknownSequence(c.Table)}
	default:
		return model.Result{Err: model.NoTable(c.DB, c.Table)}
	}
	if c.IfExists {
		return model.Noted(e)
	}
	return model.Result{Err: e}
}

func unknownCommand(c *model.Command) *model.Error {
	return mysqlerr.New(mysqlerr.CodeUnknown, "unknown command %d", c.Op)
}

// findRow returns the index of the first row whose unique keys collide with
// (id, stub), and which key collided, or -1.
func findRow(t *model.Table, id uint64, checkID bool, stub string, skip int) (int, string) {
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

func removeRow(t *model.Table, i int) {
	t.Rows = append(t.Rows[:i], t.Rows[i+1:]...)
}

func putRow(t *model.Table, r model.Row) {
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].ID > r.ID })
	t.Rows = append(t.Rows, model.Row{})
	copy(t.Rows[i+1:], t.Rows[i:])
	t.Rows[i] = r
}

// insertTickets is INSERT and REPLACE [... ON DUPLICATE KEY UPDATE] on
// the ticket table t.
func insertTickets(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	for _, vs := range c.Values {
		for _, v := range vs {
			if v.Kind == model.ValNow {
				return model.Result{Err: mysqlerr.NotSupported("NOW() in a ticket table's VALUES")}, nil
			}
		}
	}
	rows, e := mapRows(&t.Def, c.Columns, c.Values)
	if e == nil && c.OnDup != nil {
		e = CheckAssign(&t.Def, c.OnDup)
	}
	if e != nil {
		return model.Result{Err: e}, nil
	}
	var (
		res model.Result
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
			return model.Result{}, err
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
func insertOne(t *model.Table, c *model.Command, in insertRow, rowNum int, res *model.Result, st *insertState) *model.Error {
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
		v, e := model.Generate(t, c.Increment, c.Offset, rowNum)
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
			res.Warnings = append(res.Warnings, model.Warning{Level: "Warning", Code: mysqlerr.CodeDupEntry, Message: model.DupEntry(val, key).Message})
			return nil
		default:
			if key == def.IDKey {
				return model.DupEntry(strconv.FormatUint(id, 10), key)
			}
			return model.DupEntry(stub, key)
		}
	}
	putRow(t, model.Row{ID: id, Stub: stub})
	res.Affected++
	if def.AutoInc {
		model.Advance(t, id)
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
func onDuplicate(t *model.Table, u *model.Update, i, rowNum int, res *model.Result, st *insertState) *model.Error {
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
func assign(t *model.Table, u *model.Update, old uint64, i, rowNum int) (uint64, *model.Error) {
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
				return 0, model.DupEntry(strconv.FormatUint(v, 10), def.IDKey)
			}
		}
	}
	return v, nil
}

func setRowID(t *model.Table, i int, v uint64) {
	r := t.Rows[i]
	removeRow(t, i)
	r.ID = v
	putRow(t, r)
	if t.Def.AutoInc {
		model.Advance(t, v)
	}
}

// updateTickets is UPDATE of the ticket table t.
func updateTickets(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	if c.Rows != nil {
		return model.Result{Err: errRowsShape}, nil
	}
	if e := CheckAssign(&t.Def, &c.Set); e != nil {
		return model.Result{Err: e}, nil
	}
	var where cond
	if c.HasWhere {
		var e *model.Error
		if where, e = makeCond(&t.Def, c.WhereCol, c.Where); e != nil {
			return model.Result{Err: e}, nil
		}
	}
	var res model.Result
	// Collect the matching rows first: setRowID reorders Rows.
	var targets []model.Row
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
			return model.Result{}, err
		}
	}
	return res, nil
}

func indexOf(t *model.Table, r model.Row) int {
	for i := range t.Rows {
		if t.Rows[i] == r {
			return i
		}
	}
	return -1
}

func applyCreateDB(s Store, c *model.Command) (model.Result, error) {
	ok, err := s.Database(c.DB)
	if err != nil {
		return model.Result{}, err
	}
	if ok {
		e := mysqlerr.New(mysqlerr.CodeDBCreateExists, "Can't create database '%s'; database exists", c.DB)
		if c.IfExists {
			return model.Noted(e), nil
		}
		return model.Result{Err: e}, nil
	}
	return model.Result{Affected: 1}, s.PutDatabase(c.DB)
}

func applyDropDB(s Store, c *model.Command) (model.Result, error) {
	ok, err := s.Database(c.DB)
	if err != nil {
		return model.Result{}, err
	}
	if !ok {
		e := mysqlerr.New(mysqlerr.CodeDBDropExists, "Can't drop database '%s'; database doesn't exist", c.DB)
		if c.IfExists {
			return model.Noted(e), nil
		}
		return model.Result{Err: e}, nil
	}
	tables, err := s.Tables(c.DB)
	if err != nil {
		return model.Result{}, err
	}
	for _, name := range tables {
		t, err := s.Table(c.DB, name)
		if err != nil {
			return model.Result{}, err
		}
		if t != nil {
			if err := markDropped(s, t); err != nil {
				return model.Result{}, err
			}
		}
	}
	return model.Result{Affected: uint64(len(tables))}, s.DeleteDatabase(c.DB)
}

// nameFree checks that CREATE TABLE or CREATE SEQUENCE may take def's
// name: its database exists and nothing in it has the name. done is the
// statement's answer when it may not (a note under IF NOT EXISTS).
func nameFree(s Store, def *model.TableDef, ifNotExists bool) (done *model.Result, err error) {
	ok, err := s.Database(def.DB)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &model.Result{Err: mysqlerr.UnknownDB(def.DB)}, nil
	}
	old, err := s.Table(def.DB, def.Name)
	if err != nil {
		return nil, err
	}
	if old != nil {
		e := mysqlerr.New(mysqlerr.CodeTableExists, "Table '%s' already exists", def.Name)
		r := model.Result{Err: e}
		if ifNotExists {
			r = model.Noted(e)
		}
		return &r, nil
	}
	return nil, nil
}

func applyCreateTable(s Store, c *model.Command) (model.Result, error) {
	def := *c.Def
	if done, err := nameFree(s, &def, c.IfExists); done != nil || err != nil {
		if err != nil {
			return model.Result{}, err
		}
		return *done, nil
	}
	t := &model.Table{Def: def, AutoInc: 1}
	if c.CreateAutoInc > 1 {
		t.AutoInc = c.CreateAutoInc
	}
	if err := startAbove(s, t); err != nil {
		return model.Result{}, err
	}
	return model.Result{}, s.PutTable(t)
}

// dropTable is DROP TABLE of t, of any kind: its counter is kept in a
// drop mark (dropmark.go).
func dropTable(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	if err := markDropped(s, t); err != nil {
		return model.Result{}, err
	}
	return model.Result{}, s.DeleteTable(c.DB, c.Table)
}

// alterTable is ALTER TABLE of a table without keys to change (a ticket
// table or a sequence): its options, and its rows counted as affected.
func alterTable(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	if len(c.DropKeys)+len(c.AddKeys) > 0 {
		return model.Result{Err: mysqlerr.NotSupported("adding or dropping keys of a ticket table or sequence")}, nil
	}
	return alterOptions(s, t, c, model.Result{Affected: uint64(len(t.Rows))})
}

// alterOptions changes the table options every table has and answers
// res. AUTO_INCREMENT never moves the counter backwards: MyISAM would let
// it drop to max(id)+1 after rows were replaced by lower explicit ids,
// and a ticket server must not reissue.
func alterOptions(s Store, t *model.Table, c *model.Command, res model.Result) (model.Result, error) {
	if c.HasAutoInc && c.AutoInc > t.AutoInc && !t.Exhausted {
		t.AutoInc = c.AutoInc
	}
	if c.HasCache {
		t.Def.Cache = c.Cache
	}
	if c.HasComment {
		t.Def.Comment = c.Comment
	}
	return res, s.PutTable(t)
}

// reserve takes up to Count counter positions for a leader's cache:
// ids First..Last are then the leader's to hand out (with the session's
// increment and offset applied within the range), and nobody else's.
func reserve(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	max := t.Def.IDType.Max()
	if t.Exhausted || t.AutoInc > max || c.Count == 0 {
		return model.Result{Err: mysqlerr.AutoincExhausted(t.Def.IDCol, 1)}, nil
	}
	first := t.AutoInc
	last := first + c.Count - 1
	if last < first || last > max {
		last = max
	}
	model.Advance(t, last)
	return model.Result{First: first, Last: last}, s.PutTable(t)
}

var errRowsShape = mysqlerr.NotSupported("UPDATE of several columns, or of another column than the id, on a ticket table")
