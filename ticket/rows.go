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

// Row tables are the tables of the ID schemes around Flickr's: Meituan
// Leaf-segment's leaf_alloc, Didi Tinyid's tiny_id_info, Baidu
// UidGenerator's WORKER_NODE, and any user table of the same column
// kinds. Any table that is not a ticket table (one integer id and at most
// one stub) but has only integer, CHAR/VARCHAR and DATE/DATETIME/TIMESTAMP
// columns is one. Its rows are stored per row by clustering key, with an
// index per other key (rowstore.go); every statement on one is a single
// replicated command that applies entirely or not at all (InnoDB's
// statement atomicity, which is what the schemes were written against).
// There is no row cap: a row costs memory on every replica (about 200
// bytes for a WORKER_NODE row, see the README), which is the bound.

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
	// Collation is a string column's own collation (command version 9),
	// when it is not the table's (RowsDef.Collation); 0: the table's.
	Collation Collation `json:",omitempty"`
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
	// Collation is how the table's strings compare, order and key
	// (collation.go), unless a column has its own (RowCol.Collation):
	// the table's default collation, CollGeneralCI unless CREATE TABLE
	// named another (command version 9), CollLegacy (the zero value) for
	// the tables of builds before command version 8, which keep it.
	Collation Collation `json:",omitempty"`
}

// collOf is the collation of rd's column c.
func (rd *RowsDef) collOf(c *RowCol) Collation {
	if c.Collation != CollLegacy {
		return c.Collation
	}
	return rd.Collation
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
//
// Entries written before the row engine (rows_engine.go) hold Sets and
// Where; ticketd now writes the expression form: Filter, Assigns,
// OrderBy and Limit, and the session's mode and pinned time.
type RowsCommand struct {
	Sets  []RowSet  `json:",omitempty"`
	Where []RowCond `json:",omitempty"`

	// Engine marks a command of the row engine (rows_engine.go), which
	// wire always sets; without it the command is an older build's and
	// applies as it did (rows_legacy.go).
	Engine   bool        `json:",omitempty"`
	Filter   *RowExpr    `json:",omitempty"` // WHERE; nil: every row
	Assigns  []RowAssign `json:",omitempty"` // UPDATE's SET, left to right
	OrderBy  []RowOrder  `json:",omitempty"` // UPDATE/DELETE ... ORDER BY
	HasLimit bool        `json:",omitempty"` // UPDATE/DELETE ... LIMIT Limit
	Limit    uint64      `json:",omitempty"`
	// NotStrict is sql_mode without STRICT_TRANS_TABLES/STRICT_ALL_TABLES:
	// values that do not fit are clamped with a warning.
	NotStrict bool `json:",omitempty"`
	// NoAutoValueOnZero is sql_mode's NO_AUTO_VALUE_ON_ZERO: an explicit 0
	// in the AUTO_INCREMENT column is stored, not generated.
	NoAutoValueOnZero bool `json:",omitempty"`
	// Now, when not 0, is the session's SET timestamp (Unix
	// microseconds): NOW() for the statement instead of the entry's time.
	Now int64 `json:",omitempty"`

	// OnDup is INSERT ... ON DUPLICATE KEY UPDATE's assignments, left to
	// right, on a row table (command version 6).
	OnDup []RowAssign `json:",omitempty"`
	// Exprs, when not nil, has the shape of Command.Values: an entry
	// with an Op is an expression computed at apply time (1+1, NOW() +
	// INTERVAL 1 DAY) in place of the literal (command version 6).
	Exprs [][]RowExpr `json:",omitempty"`
}

// NeedsV6 reports the parts of a row command that builds before command
// version 6 do not know (their JSON decoder would drop them): ON
// DUPLICATE KEY UPDATE and expressions in VALUES.
func (rc *RowsCommand) NeedsV6() bool {
	return rc != nil && (rc.OnDup != nil || rc.Exprs != nil)
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
func newRowsDef(s *TableSpec, tc Collation, colls []Collation) (*TableDef, error) {
	// A row table answers as InnoDB does (DESIGN §4a), whatever ENGINE it
	// was created with, and says so.
	d := &TableDef{DB: s.DB, Name: s.Name, Engine: "InnoDB", Comment: s.Comment}
	rd := &RowsDef{Collation: tc}
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
			if colls[i] != tc {
				col.Collation = colls[i]
			}
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
			if (col.Kind == ColDate || col.Kind == ColDateTime || col.Kind == ColTimestamp) && c.Default.Kind != ValNull && zeroDate(valueText(c.Default)) {
				// MariaDB takes it without NO_ZERO_DATE; ticketd holds no
				// zero date.
				return nil, mysqlerr.NotSupported("zero dates")
			}
			if e != nil || (dv.Null && col.NotNull) || (col.Kind == ColString && rd.collOf(&col).MB3() && wideAt(dv.S) >= 0) {
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

// colIndex finds a column by name, case-insensitively.
func (rd *RowsDef) colIndex(name string) int {
	for i := range rd.Cols {
		if strings.EqualFold(rd.Cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// PrimaryKeyOf is r's clustering key (rowstore.go), which compares as
// the key does; ok is false for a table clustered by hidden row id.
func (rd *RowsDef) PrimaryKeyOf(r []Datum) (string, bool) {
	c := rd.ClusterKey()
	if c < 0 || len(r) != len(rd.Cols) {
		return "", false
	}
	k, _ := rd.IndexKey(c, r)
	return k, true
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
			return intDatum(col, new(big).setString(now.UTC().Format("20060102150405")), row)
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
		return intDatum(col, &n, row)
	case ColString:
		return checkLen(col, text, row)
	case ColDate, ColDateTime, ColTimestamp:
		return timeDatum(col, text, row, db, table)
	}
	return Datum{}, mysqlerr.NotSupported(fmt.Sprintf("a value for column %s of kind %d", col.Name, col.Kind))
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

func intDatum(col *RowCol, n *big, row int) (Datum, *Error) {
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

// keyText is a key's value as MariaDB quotes it in "Duplicate entry".
func keyText(k *RowKey, r []Datum) string {
	parts := make([]string, len(k.Cols))
	for i, c := range k.Cols {
		parts[i] = r[c].S
	}
	return strings.Join(parts, "-")
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

// compareDatum orders two values of col: numbers numerically, strings in
// collation coll, dates by their text; NULL first.
func compareDatum(coll Collation, col *RowCol, a, b Datum) int {
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
		return compareColl(coll, a.S, b.S)
	}
	return strings.Compare(a.S, b.S)
}

// rowsCreateStatement renders a row table the way MariaDB's SHOW CREATE
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
		if cc := rd.collOf(c); c.Kind == ColString && cc != rd.Collation {
			// MariaDB names a column's collation when it is not the
			// table's.
			l += " CHARACTER SET " + cc.Charset() + " COLLATE " + cc.String()
		}
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
		case c.HasDefault && c.Kind == ColInt:
			// MariaDB 10.2 and later print a number unquoted.
			l += " DEFAULT " + c.Default.S
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
	t.writeTableOptions(&b)
	return b.String()
}
