// Package mysqlimport moves ticket tables from live MySQL or MariaDB ticket
// servers (Flickr's pair with auto_increment_increment=2 and offsets 1 and
// 2) into ticketd.
//
// It reads each source's information_schema to find the ticket tables,
// computes for every table the counter ticketd must start from so that no
// id any source may have handed out is issued again, and applies the plan
// through ticketd's own MySQL protocol with CREATE DATABASE, CREATE TABLE
// and ALTER TABLE ... AUTO_INCREMENT (which ticketd never moves
// backwards). The sources are only read, never written.
//
// Classification, planning and DDL rendering are pure functions of what
// was read (schema.go, plan.go), so they are tested without a server; the
// queries live in inspect.go.
package mysqlimport

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// systemSchemas hold the servers' own tables, never ticket tables.
var systemSchemas = []string{"mysql", "information_schema", "performance_schema", "sys"}

// TableRow is one row of information_schema.TABLES.
type TableRow struct {
	Schema, Name string
	Engine       string
	AutoInc      uint64 // 0: NULL (no AUTO_INCREMENT column)
}

// ColumnRow is one row of information_schema.COLUMNS.
type ColumnRow struct {
	Schema, Name string // table
	Column       string
	DataType     string // "bigint", "char", ...
	ColumnType   string // "bigint(20) unsigned", "char(1)", ...
	Nullable     bool
	Default      *string // as the server reports it; nil: NULL
	Extra        string  // "auto_increment", ...
	CharLen      int64   // CHARACTER_MAXIMUM_LENGTH; 0 for numbers
}

// IndexRow is one row of information_schema.STATISTICS: one column of one
// index.
type IndexRow struct {
	Schema, Name string // table
	Index        string
	NonUnique    bool
	Seq          int
	Column       string
}

// Key names a table in reports and maps: "db.table".
type Key struct{ Schema, Name string }

func (k Key) String() string { return k.Schema + "." + k.Name }

// intBits is each integer type's size; a signed type has one bit less
// for its values.
var intBits = map[string]uint{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}

// IDColumn is a ticket table's integer AUTO_INCREMENT column.
type IDColumn struct {
	Name     string
	Kind     string // tinyint ... bigint
	Width    int    // display width, 0 if the server shows none (MySQL 8)
	Unsigned bool
	NotNull  bool
}

// Type renders the column type as ticketd's CREATE TABLE takes it.
func (c IDColumn) Type() string {
	s := c.Kind
	if c.Width > 0 {
		s += "(" + strconv.Itoa(c.Width) + ")"
	}
	if c.Unsigned {
		s += " unsigned"
	}
	return s
}

// Max is the largest id the column holds.
func (c IDColumn) Max() uint64 {
	bits := intBits[c.Kind]
	if !c.Unsigned {
		bits--
	}
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// StubColumn is the CHAR/VARCHAR column REPLACE keys on.
type StubColumn struct {
	Name    string
	Kind    string // char or varchar
	Len     int64
	NotNull bool
	Default *string // nil: no default (or DEFAULT NULL)
}

// Type renders the column type.
func (c StubColumn) Type() string { return c.Kind + "(" + strconv.FormatInt(c.Len, 10) + ")" }

// TableDef is a ticket table found on a source.
type TableDef struct {
	Key
	Engine    string
	ID        IDColumn
	Stub      StubColumn
	StubFirst bool   // the stub column is declared before the id
	IDKey     string // "PRIMARY", a unique key's name, or a plain key's name (IDUnique false)
	IDUnique  bool
	StubKey   string // "PRIMARY" or the unique key's name
}

// CreateSQL renders the CREATE TABLE ticketd runs, qualified with the
// database and idempotent (IF NOT EXISTS): a rerun after a partial apply
// must not fail on the tables already made.
func (d *TableDef) CreateSQL() string {
	id := QuoteIdent(d.ID.Name) + " " + d.ID.Type()
	if d.ID.NotNull {
		id += " NOT NULL"
	}
	id += " AUTO_INCREMENT"
	stub := QuoteIdent(d.Stub.Name) + " " + d.Stub.Type()
	if d.Stub.NotNull {
		stub += " NOT NULL"
	}
	if d.Stub.Default != nil {
		stub += " DEFAULT " + QuoteString(*d.Stub.Default)
	}
	cols := []string{id, stub}
	if d.StubFirst {
		cols = []string{stub, id}
	}
	keys := func(name, col string, unique bool) string {
		switch {
		case name == "PRIMARY":
			return "PRIMARY KEY (" + QuoteIdent(col) + ")"
		case unique:
			return "UNIQUE KEY " + QuoteIdent(name) + " (" + QuoteIdent(col) + ")"
		default:
			return "KEY " + QuoteIdent(name) + " (" + QuoteIdent(col) + ")"
		}
	}
	parts := cols
	// Primary key first, as SHOW CREATE TABLE lists them.
	if d.StubKey == "PRIMARY" {
		parts = append(parts, keys(d.StubKey, d.Stub.Name, true), keys(d.IDKey, d.ID.Name, d.IDUnique))
	} else {
		parts = append(parts, keys(d.IDKey, d.ID.Name, d.IDUnique), keys(d.StubKey, d.Stub.Name, true))
	}
	s := "CREATE TABLE IF NOT EXISTS " + d.Key.Quoted() + " (" + strings.Join(parts, ", ") + ")"
	if d.Engine != "" && identRE.MatchString(d.Engine) {
		s += " ENGINE=" + d.Engine
	}
	return s
}

// sameShape reports whether two sources' definitions of a table can share
// one counter: the same columns and id type. Display widths, defaults,
// key names and engines may differ (MySQL 8 shows no widths).
func (d *TableDef) sameShape(o *TableDef) (bool, string) {
	switch {
	case !strings.EqualFold(d.ID.Name, o.ID.Name) || !strings.EqualFold(d.Stub.Name, o.Stub.Name):
		return false, fmt.Sprintf("columns (%s, %s) vs (%s, %s)", d.ID.Name, d.Stub.Name, o.ID.Name, o.Stub.Name)
	case d.ID.Kind != o.ID.Kind || d.ID.Unsigned != o.ID.Unsigned:
		return false, fmt.Sprintf("id type %s vs %s", d.ID.Type(), o.ID.Type())
	}
	return true, ""
}

// Quoted is the table's backquoted, database-qualified name.
func (k Key) Quoted() string { return QuoteIdent(k.Schema) + "." + QuoteIdent(k.Name) }

// QuoteIdent backquotes an identifier; a backquote inside is doubled, as
// MySQL reads it.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// QuoteString renders a string literal as ticketd's parser reads it
// (MySQL's default sql_mode, where a backslash escapes).
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// identRE is what an engine name may look like; anything else is left out
// of the DDL rather than pasted into it.
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// widthRE takes the display width out of a COLUMN_TYPE like "int(10) unsigned".
var widthRE = regexp.MustCompile(`^[a-z]+\((\d+)\)`)

// Reject is a table that looks like a ticket table but is not one.
type Reject struct {
	Key
	Why string
}

// Classify sorts a source's tables into ticket tables and near misses.
// A ticket table has exactly two columns: an integer AUTO_INCREMENT id
// with a key, and a CHAR/VARCHAR stub with a unique key of its own. A
// near miss is a table with an AUTO_INCREMENT column, or with just an
// integer and a string column, that fails one of these; other tables are
// not mentioned. mariadb says how COLUMN_DEFAULT is written: MariaDB
// 10.2.7+ reports string defaults as quoted literals, MySQL raw.
func Classify(tables []TableRow, cols []ColumnRow, idx []IndexRow, mariadb bool) ([]TableDef, []Reject) {
	colsOf := map[Key][]ColumnRow{}
	for _, c := range cols {
		k := Key{c.Schema, c.Name}
		colsOf[k] = append(colsOf[k], c)
	}
	idxOf := map[Key]map[string][]IndexRow{}
	for _, r := range idx {
		k := Key{r.Schema, r.Name}
		if idxOf[k] == nil {
			idxOf[k] = map[string][]IndexRow{}
		}
		idxOf[k][r.Index] = append(idxOf[k][r.Index], r)
	}
	var defs []TableDef
	var rejects []Reject
	for _, t := range tables {
		if isSystemSchema(t.Schema) {
			continue
		}
		k := Key{t.Schema, t.Name}
		d, why, candidate := classify(t, colsOf[k], idxOf[k], mariadb)
		switch {
		case why == "":
			defs = append(defs, *d)
		case candidate:
			rejects = append(rejects, Reject{Key: k, Why: why})
		}
	}
	return defs, rejects
}

func isSystemSchema(s string) bool {
	for _, sys := range systemSchemas {
		if strings.EqualFold(s, sys) {
			return true
		}
	}
	return false
}

// classify checks one table. candidate reports whether a failure is worth
// mentioning: the table has an AUTO_INCREMENT column, or its columns are
// an integer and a string (a ticket table missing its AUTO_INCREMENT).
func classify(t TableRow, cols []ColumnRow, idx map[string][]IndexRow, mariadb bool) (d *TableDef, why string, candidate bool) {
	var auto, ints, strs []ColumnRow
	for _, c := range cols {
		if strings.Contains(strings.ToLower(c.Extra), "auto_increment") {
			auto = append(auto, c)
		}
		if _, ok := intBits[strings.ToLower(c.DataType)]; ok {
			ints = append(ints, c)
		}
		if dt := strings.ToLower(c.DataType); dt == "char" || dt == "varchar" {
			strs = append(strs, c)
		}
	}
	candidate = len(auto) > 0 || (len(cols) == 2 && len(ints) == 1 && len(strs) == 1)
	if len(auto) == 0 {
		return nil, "no AUTO_INCREMENT column", candidate
	}
	a := auto[0]
	if _, ok := intBits[strings.ToLower(a.DataType)]; !ok {
		return nil, fmt.Sprintf("AUTO_INCREMENT column %s is %s, not an integer", a.Column, a.ColumnType), true
	}
	if len(cols) != 2 {
		var names []string
		for _, c := range cols {
			names = append(names, c.Column)
		}
		return nil, fmt.Sprintf("%d columns (%s); a ticket table has an id and a stub", len(cols), strings.Join(names, ", ")), true
	}
	var s ColumnRow
	stubFirst := false
	for i, c := range cols {
		if c.Column != a.Column {
			s, stubFirst = c, i == 0
		}
	}
	if dt := strings.ToLower(s.DataType); dt != "char" && dt != "varchar" {
		return nil, fmt.Sprintf("stub column %s is %s, not CHAR or VARCHAR", s.Column, s.ColumnType), true
	}
	d = &TableDef{Key: Key{t.Schema, t.Name}, Engine: t.Engine, StubFirst: stubFirst}
	ct := strings.ToLower(a.ColumnType)
	d.ID = IDColumn{Name: a.Column, Kind: strings.ToLower(a.DataType), Unsigned: strings.Contains(ct, "unsigned"), NotNull: !a.Nullable}
	if d.ID.Kind == "integer" {
		d.ID.Kind = "int"
	}
	if m := widthRE.FindStringSubmatch(ct); m != nil {
		d.ID.Width, _ = strconv.Atoi(m[1])
	}
	d.Stub = StubColumn{Name: s.Column, Kind: strings.ToLower(s.DataType), Len: s.CharLen, NotNull: !s.Nullable,
		Default: columnDefault(s.Default, mariadb)}
	if d.Stub.Len <= 0 {
		d.Stub.Len = 1
	}
	// Keys: a multi-column key makes REPLACE match on more than the stub.
	names := make([]string, 0, len(idx))
	for name := range idx {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rows := idx[name]
		unique := !rows[0].NonUnique
		if len(rows) != 1 {
			if unique {
				return nil, fmt.Sprintf("unique key %s spans %d columns", name, len(rows)), true
			}
			continue
		}
		switch col := rows[0].Column; {
		case strings.EqualFold(col, a.Column):
			// Prefer PRIMARY, then a unique key, then a plain one.
			if name == "PRIMARY" || d.IDKey == "" || (unique && !d.IDUnique && d.IDKey != "PRIMARY") {
				d.IDKey, d.IDUnique = name, unique
			}
		case strings.EqualFold(col, s.Column) && unique:
			if d.StubKey == "" || name == "PRIMARY" {
				d.StubKey = name
			}
		}
	}
	if d.StubKey == "" {
		return nil, fmt.Sprintf("no unique key on stub column %s: REPLACE would add a row per ticket", s.Column), true
	}
	if d.IDKey == "" {
		// MySQL refuses such a table; a server that has one is not one we know.
		return nil, fmt.Sprintf("no key on AUTO_INCREMENT column %s", a.Column), true
	}
	return d, "", true
}

// columnDefault turns COLUMN_DEFAULT into the default's value. MariaDB
// writes 'a' for the string a and NULL for DEFAULT NULL; MySQL writes the
// bare value, and SQL NULL for both no default and DEFAULT NULL.
func columnDefault(v *string, mariadb bool) *string {
	if v == nil || !mariadb {
		return v
	}
	s := *v
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		u := strings.ReplaceAll(s[1:len(s)-1], "''", "'")
		u = strings.ReplaceAll(u, `\\`, `\`)
		return &u
	}
	if strings.EqualFold(s, "NULL") {
		return nil
	}
	return v
}
