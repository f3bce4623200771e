package ticket

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

func notTicketTable(why string) error {
	return mysqlerr.NotSupported("tables other than ticket tables (" + why + ")")
}

// NewTableDef checks that s describes a ticket table (one integer id
// column, at most one string stub column, keys only on those) and builds
// its definition. Errors are *Error, as MariaDB answers the same
// definition, or 1235 for tables ticketd does not hold.
func NewTableDef(s *model.TableSpec) (*model.TableDef, error) {
	tc, colls, err := specCollations(s)
	if err != nil {
		return nil, err
	}
	if err := checkRowSize(s, colls); err != nil {
		return nil, err
	}
	if !ticketShaped(s) || binStub(colls) {
		// A stub compared by code point is no ticket table's (their
		// stubs fold case): the row engine keys it as MariaDB does.
		return rowengine.NewRowsDef(s, tc, colls)
	}
	// A ticket table answers as MyISAM does (DESIGN §2: its counter
	// never moves back, a failed multi-row INSERT keeps the rows before
	// the failure, ON DUPLICATE KEY UPDATE burns no id), whatever ENGINE
	// it was created with, and says so.
	d := &model.TableDef{DB: s.DB, Name: s.Name, Engine: "MyISAM", Comment: s.Comment}
	if n, ok := CacheOption(s.Comment); ok {
		d.Cache = n
	}
	var idCol, stubCol *model.ColumnSpec
	for i := range s.Columns {
		c := &s.Columns[i]
		if k, ok := model.IntKindOf(c.Type); ok {
			if idCol != nil {
				return nil, notTicketTable("more than one integer column")
			}
			idCol = c
			d.IDCol, d.IDNotNull, d.AutoInc = c.Name, c.NotNull || c.PrimaryKey, c.AutoInc
			d.IDType = model.IntType{Kind: k, Unsigned: c.Unsigned, Width: c.Width}
			if d.IDType.Width == 0 {
				d.IDType.Width = model.DefaultWidth(k, c.Unsigned)
			}
			if c.PrimaryKey {
				d.IDKey = model.PrimaryKey
			} else if c.Unique {
				d.IDKey = c.Name
			}
			continue
		}
		if c.Type != "char" && c.Type != "varchar" {
			return nil, notTicketTable("column type " + c.Type)
		}
		if stubCol != nil {
			return nil, notTicketTable("more than one stub column")
		}
		if c.AutoInc {
			return nil, mysqlerr.New(mysqlerr.CodeWrongFieldSpec, "Incorrect column specifier for column '%s'", c.Name)
		}
		stubCol = c
		d.StubCol, d.StubNotNull, d.StubFirst = c.Name, c.NotNull, idCol == nil
		width := c.Width
		if c.Type == "char" && width == 0 {
			width = 1
		}
		d.StubLen = width
		d.StubType = c.Type + "(" + strconv.Itoa(width) + ")"
		if c.HasDefault {
			if c.Default.Kind == model.ValString {
				d.StubDefault = c.Default.Str
			} else if c.Default.Kind == model.ValInt {
				d.StubDefault = strconv.FormatInt(c.Default.Int, 10)
			}
		}
		if c.Unique || c.PrimaryKey {
			d.StubKey = c.Name
		}
	}
	if idCol == nil {
		return nil, notTicketTable("no integer id column")
	}
	for _, k := range s.Keys {
		if len(k.Columns) != 1 {
			if k.Primary || k.Unique {
				return nil, notTicketTable("multi-column keys")
			}
			continue
		}
		col := k.Columns[0]
		switch {
		case strings.EqualFold(col, d.IDCol):
			if k.Primary {
				d.IDKey, d.IDNotNull = model.PrimaryKey, true
			} else if k.Unique && d.IDKey == "" {
				d.IDKey = keyName(k.Name, col)
			}
		case d.StubCol != "" && strings.EqualFold(col, d.StubCol):
			if k.Primary || k.Unique {
				d.StubKey = keyName(k.Name, col)
				if k.Primary {
					d.StubKey = model.PrimaryKey
				}
			}
		default:
			return nil, mysqlerr.New(mysqlerr.CodeKeyColumnMissing, "Key column '%s' doesn't exist in table", col)
		}
	}
	if d.AutoInc && d.IDKey == "" && !hasIndexOn(s, d.IDCol) {
		return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
	}
	return d, nil
}

// maxRowBytes is the longest row MariaDB's tables hold, BLOB and TEXT
// columns aside (HA_MAX_REC_LENGTH), which CREATE TABLE checks.
const maxRowBytes = 65535

// packBytes are the bytes a row holds for each fixed-size column type
// (MariaDB 10.11: DATETIME and TIMESTAMP without fractions are 5 and 4).
var packBytes = map[string]int{"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "integer": 4,
	"bigint": 8, "date": 3, "datetime": 5, "timestamp": 4}

// checkRowSize is MariaDB's check of s's column lengths: a CHAR longer
// than 255 characters or a VARCHAR longer than 65,533 bytes in its
// character set is 1074 (outside strict mode MariaDB makes such a VARCHAR
// a TEXT column, which ticketd does not hold: 1235), and columns longer
// together than a row (65,535 bytes with the NULL flags) are 1118.
func checkRowSize(s *model.TableSpec, colls []model.Collation) error {
	primary := map[string]bool{}
	for _, k := range s.Keys {
		if k.Primary {
			for _, c := range k.Columns {
				primary[strings.ToLower(c)] = true
			}
		}
	}
	total, nullable := 0, 0
	for i := range s.Columns {
		c := &s.Columns[i]
		n := 0
		switch c.Type {
		case "char", "varchar":
			mb := 4
			if colls[i].MB3() {
				mb = 3
			}
			length := c.Width
			if c.Type == "char" {
				if length == 0 {
					length = 1
				}
				if length > 255 {
					return mysqlerr.New(mysqlerr.CodeTooBigField, "Column length too big for column '%s' (max = 255); use BLOB or TEXT instead", c.Name)
				}
				n = length * mb
				break
			}
			if length*mb > maxRowBytes-2 {
				if s.NotStrict {
					return mysqlerr.NotSupported("a VARCHAR too long for a row (MariaDB makes it a TEXT column)")
				}
				return mysqlerr.New(mysqlerr.CodeTooBigField, "Column length too big for column '%s' (max = %d); use BLOB or TEXT instead", c.Name, (maxRowBytes-2)/mb)
			}
			n = length*mb + 1
			if length*mb > 255 {
				n++
			}
		default:
			b, ok := packBytes[c.Type]
			if !ok {
				return nil // a type refused below
			}
			n = b
		}
		total += n
		if !c.NotNull && !c.PrimaryKey && !c.AutoInc && !primary[strings.ToLower(c.Name)] {
			nullable++
		}
	}
	if total+(nullable+7)/8 > maxRowBytes {
		return mysqlerr.New(mysqlerr.CodeTooBigRow, "Row size too large. The maximum row size for the used table type, not counting BLOBs, is %d. This includes storage overhead, check the manual. You have to change some columns to TEXT or BLOBs", maxRowBytes)
	}
	return nil
}

// binStub reports a string column of a _bin collation.
func binStub(colls []model.Collation) bool {
	for _, c := range colls {
		if c.Bin() {
			return true
		}
	}
	return false
}

// specCollations are the table's default collation and each column's (0 for
// a column of no string type), from the CHARACTER SET, COLLATE and BINARY
// that s names, as MariaDB resolves them; anything ticketd does not
// compare by exactly is 1235 naming it.
func specCollations(s *model.TableSpec) (model.Collation, []model.Collation, error) {
	cs, err := oneDecl("CHARACTER SET", s.Charsets, canonicalCharset)
	if err != nil {
		return 0, nil, err
	}
	co, err := oneDecl("COLLATE", s.Collates, canonicalCollation)
	if err != nil {
		return 0, nil, err
	}
	tc, err := resolveColl(cs, co, false, model.CollGeneralCI)
	if err != nil {
		return 0, nil, err
	}
	colls := make([]model.Collation, len(s.Columns))
	for i := range s.Columns {
		c := &s.Columns[i]
		if c.Type != "char" && c.Type != "varchar" {
			continue
		}
		if colls[i], err = resolveColl(c.Charset, c.Collate, c.Binary, tc); err != nil {
			return 0, nil, err
		}
	}
	return tc, colls, nil
}

// CheckDatabaseCollation is the answer to CREATE DATABASE's CHARACTER SET
// and COLLATE options: nil for utf8mb4_general_ci, the one default every
// database has (a table names another itself); MariaDB's errors for
// declarations it refuses; 1235 naming any other, which ticketd would
// otherwise ignore, creating tables of another collation than the
// database says.
func CheckDatabaseCollation(charsets, collates []string) error {
	cs, err := oneDecl("CHARACTER SET", charsets, canonicalCharset)
	if err != nil {
		return err
	}
	co, err := oneDecl("COLLATE", collates, canonicalCollation)
	if err != nil {
		return err
	}
	c, err := resolveColl(cs, co, false, model.CollGeneralCI)
	if err != nil {
		return err
	}
	if c != model.CollGeneralCI {
		return mysqlerr.NotSupported("a database of the default collation " + c.String() + " (databases are utf8mb4_general_ci; give the tables their CHARACTER SET or COLLATE)")
	}
	return nil
}

// canonicalCharset is a character set's name as MariaDB 10.11 says it.
func canonicalCharset(cs string) string {
	if cs == "utf8" {
		return "utf8mb3"
	}
	return cs
}

// canonicalCollation is a collation's name as MariaDB 10.11 says it.
func canonicalCollation(co string) string {
	if c, ok := model.LookupCollation(co); ok {
		return c.String()
	}
	return co
}

// oneDecl is the one value of a table option that may be written more
// than once; two that differ are MariaDB's 1302.
func oneDecl(what string, vals []string, canonical func(string) string) (string, error) {
	out := ""
	for _, v := range vals {
		v = strings.ToLower(v)
		if out != "" && canonical(v) != canonical(out) {
			return "", mysqlerr.New(mysqlerr.CodeConflictingDecl, "Conflicting declarations: '%s %s' and '%s %s'", what, canonical(out), what, canonical(v))
		}
		out = v
	}
	return out, nil
}

// resolveColl is the collation of CHARACTER SET cs, COLLATE co and the
// BINARY attribute (any may be absent) where def is the default: COLLATE
// names it, else the character set's default or _bin, else def's
// character set's _bin (BINARY) or def itself.
func resolveColl(cs, co string, binary bool, def model.Collation) (model.Collation, error) {
	var csColl model.Collation
	if cs != "" {
		c, ok := model.LookupCharset(cs)
		if !ok {
			return 0, mysqlerr.NotSupported("CHARACTER SET " + cs)
		}
		csColl = c
	}
	if co != "" {
		c, ok := model.LookupCollation(co)
		if !ok {
			return 0, mysqlerr.NotSupported("COLLATE " + co)
		}
		if binary {
			return 0, mysqlerr.New(mysqlerr.CodeConflictingDecl, "Conflicting declarations: 'BINARY' and 'COLLATE %s'", c)
		}
		if cs != "" && c.Charset() != csColl.Charset() {
			return 0, mysqlerr.New(mysqlerr.CodeCollationCharset, "COLLATION '%s' is not valid for CHARACTER SET '%s'", c, csColl.Charset())
		}
		return c, nil
	}
	switch {
	case cs != "" && binary:
		return csColl.BinOf(), nil
	case cs != "":
		return csColl, nil
	case binary:
		return def.BinOf(), nil
	}
	return def, nil
}

// ticketShaped reports whether s can be a ticket table: one integer
// column, alone or as the AUTO_INCREMENT id beside a unique CHAR/VARCHAR
// stub, keys of one column, no CURRENT_TIMESTAMP. Anything else is a row
// table (rowengine/rows.go).
func ticketShaped(s *model.TableSpec) bool {
	ints, strs := 0, 0
	for _, c := range s.Columns {
		switch _, isInt := model.IntKindOf(c.Type); {
		case isInt:
			ints++
		case c.Type == "char" || c.Type == "varchar":
			strs++
		default:
			return false
		}
		if c.DefaultNow || c.OnUpdateNow {
			return false
		}
	}
	if ints != 1 || strs > 1 {
		return false
	}
	for _, k := range s.Keys {
		if len(k.Columns) != 1 && (k.Primary || k.Unique) {
			return false
		}
	}
	if strs == 0 {
		// An id alone: the manual's sequence table (id bigint unsigned NOT
		// NULL), or ids without stubs. A nullable integer without
		// AUTO_INCREMENT holds NULLs, which a ticket table cannot (it
		// stored 0, and DEFAULT was 1364): such a table, (a INT) or (a
		// INT, UNIQUE (a)), answers as InnoDB does, through the row engine.
		for _, c := range s.Columns {
			if !c.NotNull && !c.PrimaryKey && !c.AutoInc && !primaryKeyed(s, c.Name) {
				return false
			}
		}
		return true
	}
	// With a string column, only Flickr's shape (DESIGN §2): an
	// AUTO_INCREMENT id and a unique stub. Any other table of an integer
	// and a string (a name beside an id, a value beside a label) answers
	// as InnoDB does, through the row engine.
	autoInc, stubUnique := false, false
	for _, c := range s.Columns {
		_, isInt := model.IntKindOf(c.Type)
		switch {
		case isInt:
			autoInc = c.AutoInc
		case c.Unique || c.PrimaryKey:
			stubUnique = true
		default:
			for _, k := range s.Keys {
				if (k.Primary || k.Unique) && len(k.Columns) == 1 && strings.EqualFold(k.Columns[0], c.Name) {
					stubUnique = true
				}
			}
		}
	}
	return autoInc && stubUnique
}

// hasIndexOn reports a key starting with col; a plain KEY on the id
// column makes an AUTO_INCREMENT column legal without making it unique.
func hasIndexOn(s *model.TableSpec, col string) bool {
	for _, k := range s.Keys {
		if len(k.Columns) > 0 && strings.EqualFold(k.Columns[0], col) {
			return true
		}
	}
	return false
}

func keyName(name, col string) string {
	if name != "" {
		return name
	}
	return col
}

// CacheOption reads ticketd's range-reservation size from a table
// comment: 'ticketd:cache=1000'. ok is false when the comment has no such
// option or its number does not parse.
func CacheOption(comment string) (n uint64, ok bool) {
	for _, f := range strings.Fields(strings.ReplaceAll(comment, ",", " ")) {
		if v, ok := strings.CutPrefix(strings.ToLower(f), "ticketd:cache="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// NodeScope reports whether a table comment asks for node-scoped
// reservation (DESIGN §4c): 'ticketd:cache=1000,scope=node', or
// 'ticketd:scope=node' with the server's --cache. The option belongs to
// ticketd's part of the comment: "scope=node" counts after a "ticketd:"
// option or written as "ticketd:scope=node". Anything else, such as
// "scope=global", is the default global scope.
func NodeScope(comment string) bool {
	ours := false
	for _, f := range strings.Fields(strings.ReplaceAll(comment, ",", " ")) {
		f = strings.ToLower(f)
		if v, ok := strings.CutPrefix(f, "ticketd:"); ok {
			ours, f = true, v
		}
		if ours && f == "scope=node" {
			return true
		}
	}
	return false
}

// quoteIdent quotes a name as SHOW CREATE statements do.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// CreateDatabaseStatement renders a database the way MariaDB's SHOW
// CREATE DATABASE does.
func CreateDatabaseStatement(db string) string {
	return "CREATE DATABASE " + quoteIdent(db) + " /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"
}

// CreateStatement renders the table the way MariaDB's SHOW CREATE TABLE
// does.
func CreateStatement(t *model.Table) string {
	if t.Def.Rows != nil {
		return rowsCreateStatement(t)
	}
	d := &t.Def
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteIdent(d.Name))
	idLine := "  " + quoteIdent(d.IDCol) + " " + d.IDType.SQL()
	if d.IDNotNull {
		idLine += " NOT NULL"
	} else {
		idLine += " DEFAULT NULL"
	}
	if d.AutoInc {
		idLine += " AUTO_INCREMENT"
	}
	var lines []string
	if d.StubCol != "" {
		stubLine := "  " + quoteIdent(d.StubCol) + " " + d.StubType
		if d.StubNotNull {
			stubLine += " NOT NULL DEFAULT " + quoteString(d.StubDefault)
		} else {
			stubLine += " DEFAULT NULL"
		}
		if d.StubFirst {
			lines = append(lines, stubLine, idLine)
		} else {
			lines = append(lines, idLine, stubLine)
		}
	} else {
		lines = append(lines, idLine)
	}
	if d.IDKey == model.PrimaryKey {
		lines = append(lines, "  PRIMARY KEY ("+quoteIdent(d.IDCol)+")")
	}
	if d.StubKey == model.PrimaryKey {
		lines = append(lines, "  PRIMARY KEY ("+quoteIdent(d.StubCol)+")")
	}
	if d.IDKey != "" && d.IDKey != model.PrimaryKey {
		lines = append(lines, "  UNIQUE KEY "+quoteIdent(d.IDKey)+" ("+quoteIdent(d.IDCol)+")")
	}
	if d.StubKey != "" && d.StubKey != model.PrimaryKey {
		lines = append(lines, "  UNIQUE KEY "+quoteIdent(d.StubKey)+" ("+quoteIdent(d.StubCol)+")")
	}
	b.WriteString(strings.Join(lines, ",\n"))
	writeTableOptions(t, &b)
	return b.String()
}

// writeTableOptions ends SHOW CREATE TABLE: the closing parenthesis and
// the table options, as MariaDB writes them.
func writeTableOptions(t *model.Table, b *strings.Builder) {
	d := &t.Def
	b.WriteString("\n) ENGINE=" + d.Engine)
	if d.AutoInc && t.AutoInc > 1 {
		b.WriteString(" AUTO_INCREMENT=" + strconv.FormatUint(t.AutoInc, 10))
	}
	tc := d.Collation()
	b.WriteString(" DEFAULT CHARSET=" + tc.Charset() + " COLLATE=" + tc.String())
	if d.Comment != "" {
		b.WriteString(" COMMENT=" + quoteString(d.Comment))
	}
}

// primaryKeyed reports whether a table-level PRIMARY KEY names col.
func primaryKeyed(s *model.TableSpec, col string) bool {
	for _, k := range s.Keys {
		if k.Primary && len(k.Columns) == 1 && strings.EqualFold(k.Columns[0], col) {
			return true
		}
	}
	return false
}

// rowsCreateStatement renders a row table the way MariaDB's SHOW CREATE
// TABLE does.
func rowsCreateStatement(t *model.Table) string {
	d := &t.Def
	rd := d.Rows
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteIdent(d.Name))
	var lines []string
	for i := range rd.Cols {
		c := &rd.Cols[i]
		l := "  " + quoteIdent(c.Name) + " " + c.Type
		if cc := rd.CollOf(c); c.Kind == model.ColString && cc != rd.Collation {
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
		case c.HasDefault && c.Kind == model.ColInt:
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
	writeTableOptions(t, &b)
	return b.String()
}
