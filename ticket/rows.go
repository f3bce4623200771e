package ticket

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Row tables are the small tables of the ID schemes around Flickr's:
// Meituan Leaf-segment's leaf_alloc, Didi Tinyid's tiny_id_info, Baidu
// UidGenerator's WORKER_NODE. Any table that is not a ticket table (one
// integer id and at most one stub) but has only integer, CHAR/VARCHAR and
// DATE/DATETIME/TIMESTAMP columns is one. A row table is kept whole in the
// replicated state (Table.Data), like a ticket table's rows: these tables
// hold a row per business tag or per launch, so MaxRows bounds them, and
// every statement on one is a single replicated command that applies
// entirely or not at all (InnoDB's statement atomicity, which is what the
// schemes were written against).

// MaxRows is the most rows a row table holds. The table is re-encoded
// whole by every write, so the bound keeps a write's cost (measured in
// BenchmarkRowsUpdate) small; beyond it an INSERT fails with MySQL's 1114.
const MaxRows = 100000

// ColKind is the kind of a row-table column.
type ColKind uint8

// Column kinds; the numbers are part of the state format.
const (
	ColInt       ColKind = 1
	ColString    ColKind = 2 // CHAR, VARCHAR
	ColDate      ColKind = 3
	ColDateTime  ColKind = 4
	ColTimestamp ColKind = 5
)

// RowCol is one column of a row table.
type RowCol struct {
	Name string
	Kind ColKind
	Int  IntType `json:",omitempty"` // ColInt
	// Type is the column type as SHOW CREATE TABLE renders it: varchar(128).
	Type        string
	Len         int   `json:",omitempty"` // ColString: most characters
	NotNull     bool  `json:",omitempty"`
	AutoInc     bool  `json:",omitempty"`
	HasDefault  bool  `json:",omitempty"`
	Default     Datum `json:",omitempty"`
	DefaultNow  bool  `json:",omitempty"` // DEFAULT CURRENT_TIMESTAMP
	OnUpdateNow bool  `json:",omitempty"` // ON UPDATE CURRENT_TIMESTAMP
	Comment     string
}

// RowKey is a key of a row table; Cols index RowsDef.Cols.
type RowKey struct {
	Name    string
	Primary bool `json:",omitempty"`
	Unique  bool `json:",omitempty"`
	Cols    []int
}

// RowsDef is what makes a TableDef a row table's: its columns and keys.
// The AUTO_INCREMENT column, if any, is also named by TableDef.IDCol,
// IDType and AutoInc, so that the counter rules of ticket tables
// (generate, advance, drop marks, SHOW TABLE STATUS) serve both.
type RowsDef struct {
	Cols []RowCol
	Keys []RowKey `json:",omitempty"`
}

// Datum is one stored value: its text in MySQL's canonical form (an
// integer in decimal, a DATE as 2006-01-02, a DATETIME/TIMESTAMP as
// 2006-01-02 15:04:05), or NULL.
type Datum struct {
	Null bool   `json:",omitempty"`
	S    string `json:",omitempty"`
}

// RowOperand is one side of a SET: a column's current value or a value.
type RowOperand struct {
	Col string `json:",omitempty"`
	Val Value  `json:",omitempty"`
}

// RowSet is one assignment of an UPDATE on a row table: Col = A, or
// Col = A Op B with Op '+' or '-'; SetLastID wraps it in LAST_INSERT_ID().
type RowSet struct {
	Col       string
	A         RowOperand
	Op        byte       `json:",omitempty"`
	B         RowOperand `json:",omitempty"`
	SetLastID bool       `json:",omitempty"`
}

// RowCond is one `Col = Val` term of a WHERE clause (a conjunction).
type RowCond struct {
	Col string
	Val Value
}

// RowsCommand is the part of a Command only row tables use: UPDATE's
// assignments and the WHERE of UPDATE and DELETE.
type RowsCommand struct {
	Sets  []RowSet  `json:",omitempty"`
	Where []RowCond `json:",omitempty"`
}

// ValNow is NOW() / CURRENT_TIMESTAMP as a value: the statement's time,
// Command.Now, which every replica takes from the Raft entry.
const ValNow ValueKind = 8

// Time formats of the canonical Datum text.
const (
	dateFormat     = "2006-01-02"
	dateTimeFormat = "2006-01-02 15:04:05"
)

var errRowsShape = mysqlerr.NotSupported("UPDATE of several columns, or of another column than the id, on a ticket table")

// newRowsDef builds the definition of a row table from s, or the error
// MariaDB gives for it; 1235 names what ticketd does not hold.
func newRowsDef(s *TableSpec) (*TableDef, error) {
	d := &TableDef{DB: s.DB, Name: s.Name, Engine: engineName(s.Engine), Comment: s.Comment}
	rd := &RowsDef{}
	index := map[string]int{}
	for i := range s.Columns {
		c := &s.Columns[i]
		lname := strings.ToLower(c.Name)
		if _, dup := index[lname]; dup {
			return nil, mysqlerr.New(mysqlerr.CodeDupFieldName, "Duplicate column name '%s'", c.Name)
		}
		index[lname] = i
		col := RowCol{Name: c.Name, NotNull: c.NotNull || c.PrimaryKey, AutoInc: c.AutoInc, Comment: c.Comment,
			DefaultNow: c.DefaultNow, OnUpdateNow: c.OnUpdateNow}
		switch k, isInt := intKinds[c.Type]; {
		case isInt:
			col.Kind = ColInt
			col.Int = IntType{Kind: k, Unsigned: c.Unsigned, Width: c.Width}
			if col.Int.Width == 0 {
				col.Int.Width = defaultWidth(k, c.Unsigned)
			}
			col.Type = col.Int.SQL()
		case c.Type == "char" || c.Type == "varchar":
			col.Kind = ColString
			col.Len = c.Width
			if c.Type == "char" && col.Len == 0 {
				col.Len = 1
			}
			if c.Type == "varchar" && c.Width <= 0 {
				return nil, mysqlerr.Syntax("", 1)
			}
			col.Type = c.Type + "(" + strconv.Itoa(col.Len) + ")"
		case c.Type == "date":
			col.Kind, col.Type = ColDate, "date"
		case c.Type == "datetime":
			col.Kind, col.Type = ColDateTime, "datetime"
		case c.Type == "timestamp":
			col.Kind, col.Type = ColTimestamp, "timestamp"
		default:
			return nil, mysqlerr.NotSupported("column type " + c.Type)
		}
		if c.AutoInc {
			if col.Kind != ColInt {
				return nil, mysqlerr.New(mysqlerr.CodeWrongFieldSpec, "Incorrect column specifier for column '%s'", c.Name)
			}
			if d.AutoInc {
				return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
			}
			d.AutoInc, d.IDCol, d.IDType, d.IDNotNull = true, c.Name, col.Int, true
			col.NotNull = true
		}
		if (c.DefaultNow || c.OnUpdateNow) && col.Kind != ColDateTime && col.Kind != ColTimestamp {
			return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
		}
		if c.HasDefault && !c.DefaultNow {
			if c.AutoInc {
				return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
			}
			dv, e := convert(&col, c.Default, time.Time{}, 0, "", "")
			if e != nil || (dv.Null && col.NotNull) {
				return nil, mysqlerr.New(mysqlerr.CodeInvalidDefault, "Invalid default value for '%s'", c.Name)
			}
			col.HasDefault, col.Default = true, dv
		}
		rd.Cols = append(rd.Cols, col)
	}
	if len(rd.Cols) == 0 {
		return nil, mysqlerr.New(mysqlerr.CodeTableMustHaveColumns, "A table must have at least 1 column")
	}
	addKey := func(k RowKey) error {
		for _, c := range k.Cols {
			if k.Primary {
				rd.Cols[c].NotNull = true
			}
		}
		if k.Primary {
			for _, old := range rd.Keys {
				if old.Primary {
					return mysqlerr.New(mysqlerr.CodeMultiplePK, "Multiple primary key defined")
				}
			}
			// MariaDB lists the primary key first.
			rd.Keys = append([]RowKey{k}, rd.Keys...)
			return nil
		}
		rd.Keys = append(rd.Keys, k)
		return nil
	}
	for i := range s.Columns {
		c := &s.Columns[i]
		if c.PrimaryKey {
			if err := addKey(RowKey{Name: PrimaryKey, Primary: true, Unique: true, Cols: []int{i}}); err != nil {
				return nil, err
			}
		} else if c.Unique {
			if err := addKey(RowKey{Name: c.Name, Unique: true, Cols: []int{i}}); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range s.Keys {
		rk := RowKey{Name: k.Name, Primary: k.Primary, Unique: k.Unique || k.Primary}
		for _, name := range k.Columns {
			j, ok := index[strings.ToLower(name)]
			if !ok {
				return nil, mysqlerr.New(mysqlerr.CodeKeyColumnMissing, "Key column '%s' doesn't exist in table", name)
			}
			rk.Cols = append(rk.Cols, j)
		}
		if rk.Primary {
			rk.Name = PrimaryKey
		} else if rk.Name == "" && len(rk.Cols) > 0 {
			rk.Name = rd.Cols[rk.Cols[0]].Name
		}
		if err := addKey(rk); err != nil {
			return nil, err
		}
	}
	if d.AutoInc {
		keyed := false
		for _, k := range rd.Keys {
			if strings.EqualFold(rd.Cols[k.Cols[0]].Name, d.IDCol) {
				keyed = true
			}
		}
		if !keyed {
			return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
		}
	}
	d.Rows = rd
	return d, nil
}

// engineName is an ENGINE= option as MariaDB spells the engine in SHOW
// CREATE TABLE.
func engineName(e string) string {
	switch strings.ToLower(e) {
	case "":
		return DefaultEngine
	case "innodb":
		return "InnoDB"
	case "myisam":
		return "MyISAM"
	case "aria":
		return "Aria"
	case "memory":
		return "MEMORY"
	}
	return e
}

// colIndex finds a column by name, case-insensitively.
func (rd *RowsDef) colIndex(name string) int {
	for i := range rd.Cols {
		if strings.EqualFold(rd.Cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// PrimaryKeyOf is r's primary key value, folded as the key compares;
// ok is false for a table without a primary key.
func (rd *RowsDef) PrimaryKeyOf(r []Datum) (string, bool) {
	pk := rd.primary()
	if pk == nil || len(r) != len(rd.Cols) {
		return "", false
	}
	return keyOf(rd, pk, r)
}

// primary is the table's primary key, or nil.
func (rd *RowsDef) primary() *RowKey {
	if len(rd.Keys) > 0 && rd.Keys[0].Primary {
		return &rd.Keys[0]
	}
	return nil
}

// colError names a column as MariaDB's conversion messages do.
func colName(db, table, col string) string {
	return "`" + db + "`.`" + table + "`.`" + col + "`"
}

// convert turns a statement's value into col's stored form, or the strict
// mode error MariaDB answers.
func convert(col *RowCol, v Value, now time.Time, row int, db, table string) (Datum, *Error) {
	switch v.Kind {
	case ValNull:
		return Datum{Null: true}, nil
	case ValNow:
		switch col.Kind {
		case ColDate:
			return Datum{S: now.UTC().Format(dateFormat)}, nil
		case ColDateTime, ColTimestamp, ColString:
			return checkLen(col, now.UTC().Format(dateTimeFormat), row)
		default:
			return intDatum(col, new(big).setString(now.UTC().Format("20060102150405")), row, v, db, table)
		}
	}
	text := v.Str
	switch v.Kind {
	case ValInt:
		text = strconv.FormatInt(v.Int, 10)
	case ValUint:
		text = strconv.FormatUint(v.Uint, 10)
	}
	switch col.Kind {
	case ColInt:
		var n big
		switch v.Kind {
		case ValInt:
			n.setInt(v.Int)
		case ValUint:
			n.setUint(v.Uint)
		default:
			if !n.parse(text) {
				return Datum{}, mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect integer value: '%s' for column %s at row %d", text, colName(db, table, col.Name), row)
			}
		}
		return intDatum(col, &n, row, v, db, table)
	case ColString:
		return checkLen(col, text, row)
	case ColDate, ColDateTime, ColTimestamp:
		return timeDatum(col, text, row, db, table)
	}
	return Datum{}, mysqlerr.NotSupported("this value")
}

func checkLen(col *RowCol, s string, row int) (Datum, *Error) {
	if col.Kind == ColString && utf8.RuneCountInString(s) > col.Len {
		return Datum{}, mysqlerr.New(mysqlerr.CodeDataTooLong, "Data too long for column '%s' at row %d", col.Name, row)
	}
	return Datum{S: s}, nil
}

// big is an integer in the range of either int64 or uint64, which is
// all a MySQL integer column holds.
type big struct {
	neg bool
	abs uint64
	bad bool // beyond both ranges
}

func (n *big) setInt(v int64) *big {
	n.neg = v < 0
	if n.neg {
		n.abs = uint64(-(v + 1)) + 1
	} else {
		n.abs = uint64(v)
	}
	return n
}

func (n *big) setUint(v uint64) *big { n.neg, n.abs = false, v; return n }

func (n *big) setString(s string) *big { n.parse(s); return n }

// parse reads an integer, or a decimal rounded half away from zero as
// MySQL stores it in an integer column; false if s is not a number.
func (n *big) parse(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		n.setUint(u)
		return true
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.setInt(i)
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			n.bad = true
			return true
		}
		return false
	}
	f = math.Round(f)
	switch {
	case f >= 0 && f < 1<<64:
		n.setUint(uint64(f))
	case f < 0 && f >= -(1<<63):
		n.setInt(int64(f))
	default:
		n.bad = true
	}
	return true
}

func (n *big) text() string {
	if n.neg {
		return "-" + strconv.FormatUint(n.abs, 10)
	}
	return strconv.FormatUint(n.abs, 10)
}

// add returns a + b or a - b, bad when it leaves the int64/uint64 range.
func (n *big) add(b *big, minus bool) big {
	bn := b.neg != minus
	if n.bad || b.bad {
		return big{bad: true}
	}
	if n.neg == bn {
		s := n.abs + b.abs
		if s < n.abs || (n.neg && s > 1<<63) {
			return big{bad: true}
		}
		return big{neg: n.neg, abs: s}
	}
	if n.abs >= b.abs {
		return big{neg: n.neg && n.abs != b.abs, abs: n.abs - b.abs}
	}
	r := big{neg: bn, abs: b.abs - n.abs}
	if r.neg && r.abs > 1<<63 {
		return big{bad: true}
	}
	return r
}

func intDatum(col *RowCol, n *big, row int, v Value, db, table string) (Datum, *Error) {
	max := col.Int.Max()
	ok := !n.bad
	if ok && n.neg {
		ok = !col.Int.Unsigned && n.abs <= max+1
	} else if ok {
		ok = n.abs <= max
	}
	if !ok {
		return Datum{}, mysqlerr.OutOfRange(col.Name, row)
	}
	return Datum{S: n.text()}, nil
}

// timeDatum parses a DATE/DATETIME/TIMESTAMP literal in the forms clients
// send: 2006-01-02, 2006-01-02 15:04:05[.frac], 2006-01-02T15:04:05.
func timeDatum(col *RowCol, s string, row int, db, table string) (Datum, *Error) {
	t := strings.TrimSpace(s)
	var parsed time.Time
	var err error
	for _, f := range []string{dateTimeFormat + ".999999999", "2006-01-02T15:04:05.999999999", dateTimeFormat, dateFormat, "20060102150405", "20060102"} {
		if parsed, err = time.Parse(f, t); err == nil {
			break
		}
	}
	if err != nil {
		what := "datetime"
		if col.Kind == ColDate {
			what = "date"
		}
		return Datum{}, mysqlerr.New(mysqlerr.CodeTruncatedWrongValue, "Incorrect %s value: '%s' for column %s at row %d", what, s, colName(db, table, col.Name), row)
	}
	if col.Kind == ColDate {
		return Datum{S: parsed.Format(dateFormat)}, nil
	}
	return Datum{S: parsed.Format(dateTimeFormat)}, nil
}

// keyOf is a row's value for key k, folded as utf8mb4_general_ci compares
// strings; ok is false when a column is NULL (a NULL never collides).
func keyOf(rd *RowsDef, k *RowKey, r []Datum) (string, bool) {
	var b strings.Builder
	for i, c := range k.Cols {
		if r[c].Null {
			return "", false
		}
		if i > 0 {
			b.WriteByte(0)
		}
		if rd.Cols[c].Kind == ColString {
			b.WriteString(foldStub(r[c].S))
		} else {
			b.WriteString(r[c].S)
		}
	}
	return b.String(), true
}

// keyText is a key's value as MariaDB quotes it in "Duplicate entry".
func keyText(k *RowKey, r []Datum) string {
	parts := make([]string, len(k.Cols))
	for i, c := range k.Cols {
		parts[i] = r[c].S
	}
	return strings.Join(parts, "-")
}

// conflict finds a row other than skip that collides with r on a unique
// key, and returns the Duplicate entry error.
// Only keys over a column in changed are checked (nil: every key): an
// UPDATE of other columns cannot make a duplicate. The primary key is
// found by binary search, data being in its order.
func conflict(rd *RowsDef, data [][]Datum, r []Datum, skip int, changed []bool) *Error {
	for ki := range rd.Keys {
		k := &rd.Keys[ki]
		if !k.Unique || !touches(k, changed) {
			continue
		}
		want, ok := keyOf(rd, k, r)
		if !ok {
			continue
		}
		if k.Primary {
			for i := place(rd, data, r); i < len(data); i++ {
				got, _ := keyOf(rd, k, data[i])
				if got != want {
					break
				}
				if i != skip {
					return dupEntry(keyText(k, r), k.Name)
				}
			}
			continue
		}
		for i, o := range data {
			if i == skip {
				continue
			}
			if got, ok := keyOf(rd, k, o); ok && got == want {
				return dupEntry(keyText(k, r), k.Name)
			}
		}
	}
	return nil
}

func touches(k *RowKey, changed []bool) bool {
	if changed == nil {
		return true
	}
	for _, c := range k.Cols {
		if changed[c] {
			return true
		}
	}
	return false
}

// compareDatum orders two values of col: numbers numerically, strings as
// the default collation, dates by their text; NULL first.
func compareDatum(col *RowCol, a, b Datum) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	if col.Kind == ColInt {
		var x, y big
		x.parse(a.S)
		y.parse(b.S)
		switch {
		case x.neg != y.neg:
			if x.neg {
				return -1
			}
			return 1
		case x.abs == y.abs:
			return 0
		case (x.abs < y.abs) != x.neg:
			return -1
		}
		return 1
	}
	if col.Kind == ColString {
		return strings.Compare(foldStub(a.S), foldStub(b.S))
	}
	return strings.Compare(a.S, b.S)
}

// place is where r goes to keep data in primary key order (InnoDB's
// order, which a SELECT without ORDER BY shows); the end without one.
func place(rd *RowsDef, data [][]Datum, r []Datum) int {
	pk := rd.primary()
	if pk == nil {
		return len(data)
	}
	lo, hi := 0, len(data)
	for lo < hi {
		mid := (lo + hi) / 2
		c := 0
		for _, ci := range pk.Cols {
			if c = compareDatum(&rd.Cols[ci], data[mid][ci], r[ci]); c != 0 {
				break
			}
		}
		if c < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func insertAt(data [][]Datum, i int, r []Datum) [][]Datum {
	data = append(data, nil)
	copy(data[i+1:], data[i:])
	data[i] = r
	return data
}

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

// rowsWhere resolves a WHERE conjunction into a row predicate. A value
// that cannot be converted to its column's type matches nothing.
func rowsWhere(t *Table, conds []RowCond) (func([]Datum) bool, *Error) {
	w, e := newWhere(t, conds)
	if e != nil {
		return nil, e
	}
	return w.match, nil
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
	return intDatum(col, &sum, row, Value{}, t.Def.DB, t.Def.Name)
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
	match, e := rowsWhere(t, where)
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

// RowsCreateStatement renders a row table the way MariaDB's SHOW CREATE
// TABLE does.
func (t *Table) rowsCreateStatement() string {
	d := &t.Def
	rd := d.Rows
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteIdent(d.Name))
	var lines []string
	for i := range rd.Cols {
		c := &rd.Cols[i]
		l := "  " + quoteIdent(c.Name) + " " + c.Type
		if c.NotNull {
			l += " NOT NULL"
		}
		switch {
		case c.AutoInc:
			l += " AUTO_INCREMENT"
		case c.DefaultNow:
			l += " DEFAULT current_timestamp()"
		case c.HasDefault && c.Default.Null:
			l += " DEFAULT NULL"
		case c.HasDefault:
			l += " DEFAULT " + quoteString(c.Default.S)
		case !c.NotNull:
			l += " DEFAULT NULL"
		}
		if c.OnUpdateNow {
			l += " ON UPDATE current_timestamp()"
		}
		if c.Comment != "" {
			l += " COMMENT " + quoteString(c.Comment)
		}
		lines = append(lines, l)
	}
	for _, k := range rd.Keys {
		names := make([]string, len(k.Cols))
		for i, c := range k.Cols {
			names[i] = quoteIdent(rd.Cols[c].Name)
		}
		switch {
		case k.Primary:
			lines = append(lines, "  PRIMARY KEY ("+strings.Join(names, ",")+")")
		case k.Unique:
			lines = append(lines, "  UNIQUE KEY "+quoteIdent(k.Name)+" ("+strings.Join(names, ",")+")")
		default:
			lines = append(lines, "  KEY "+quoteIdent(k.Name)+" ("+strings.Join(names, ",")+")")
		}
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n) ENGINE=" + d.Engine)
	if d.AutoInc && t.AutoInc > 1 {
		b.WriteString(" AUTO_INCREMENT=" + strconv.FormatUint(t.AutoInc, 10))
	}
	b.WriteString(" DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci")
	if d.Comment != "" {
		b.WriteString(" COMMENT=" + quoteString(d.Comment))
	}
	return b.String()
}
