package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
)

var intKinds = map[string]ticket.IntKind{
	"tinyint": ticket.TinyInt, "smallint": ticket.SmallInt, "mediumint": ticket.MediumInt,
	"int": ticket.Int, "integer": ticket.Int, "bigint": ticket.BigInt,
}

// defaultWidth is the display width MariaDB shows for an integer type
// declared without one.
func defaultWidth(k ticket.IntKind, unsigned bool) int {
	w := map[ticket.IntKind]int{ticket.TinyInt: 4, ticket.SmallInt: 6, ticket.MediumInt: 9, ticket.Int: 11, ticket.BigInt: 20}[k]
	if unsigned && k != ticket.BigInt {
		w--
	}
	return w
}

func notTicketTable(why string) error {
	return unsupported("tables other than ticket tables (" + why + ")")
}

// tableDef checks that CREATE TABLE describes a ticket table (one integer
// id column, at most one string stub column) and builds its definition.
func tableDef(db string, p *sql.CreateTable) (*ticket.TableDef, error) {
	d := &ticket.TableDef{DB: db, Name: p.Table.Name, Engine: p.Engine, Comment: p.Comment}
	if d.Engine == "" {
		d.Engine = "InnoDB"
	}
	if n, ok := cacheOption(p.Comment); ok {
		d.Cache = n
	}
	var idCol, stubCol *sql.ColumnDef
	for i := range p.Columns {
		c := &p.Columns[i]
		if k, ok := intKinds[c.Type]; ok {
			if idCol != nil {
				return nil, notTicketTable("more than one integer column")
			}
			idCol = c
			d.IDCol, d.IDNotNull, d.AutoInc = c.Name, c.NotNull || c.PrimaryKey, c.AutoInc
			d.IDType = ticket.IntType{Kind: k, Unsigned: c.Unsigned, Width: c.Width}
			if d.IDType.Width == 0 {
				d.IDType.Width = defaultWidth(k, c.Unsigned)
			}
			if c.PrimaryKey {
				d.IDKey = "PRIMARY"
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
			if c.Default.Kind == sql.ValString {
				d.StubDefault = c.Default.Str
			} else if c.Default.Kind == sql.ValInt {
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
	for _, k := range p.Keys {
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
				d.IDKey, d.IDNotNull = "PRIMARY", true
			} else if k.Unique && d.IDKey == "" {
				d.IDKey = keyName(k.Name, col)
			}
		case d.StubCol != "" && strings.EqualFold(col, d.StubCol):
			if k.Primary || k.Unique {
				d.StubKey = keyName(k.Name, col)
				if k.Primary {
					d.StubKey = "PRIMARY"
				}
			}
		default:
			return nil, mysqlerr.New(mysqlerr.CodeKeyColumnMissing, "Key column '%s' doesn't exist in table", col)
		}
	}
	if d.AutoInc && d.IDKey == "" && !hasPlainIDIndex(p, d.IDCol) {
		return nil, mysqlerr.New(mysqlerr.CodeWrongAutoKey, "Incorrect table definition; there can be only one auto column and it must be defined as a key")
	}
	return d, nil
}

// hasPlainIDIndex reports a plain KEY on the id column, which makes an
// AUTO_INCREMENT column legal without making it unique.
func hasPlainIDIndex(p *sql.CreateTable, col string) bool {
	for _, k := range p.Keys {
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

// cacheOption reads ticketd's range-reservation size from a table
// comment: 'ticketd:cache=1000'.
func cacheOption(comment string) (uint64, bool) {
	for _, f := range strings.Fields(strings.ReplaceAll(comment, ",", " ")) {
		if v, ok := strings.CutPrefix(strings.ToLower(f), "ticketd:cache="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func (s *session) createTable(p *sql.CreateTable) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	def, err := tableDef(db, p)
	if err != nil {
		return nil, err
	}
	c := &ticket.Command{Op: ticket.OpCreateTable, DB: db, Table: def.Name, Def: def, IfExists: p.IfNotExists}
	if p.HasAutoInc {
		c.CreateAutoInc = p.AutoInc
	}
	r, err := s.exec(c)
	return s.ok(r), err
}

// dropTable drops each table; unknown ones are reported together, as
// MySQL does, after the known ones are gone.
func (s *session) dropTable(p *sql.DropTable) (*mysql.Result, error) {
	var unknown []string
	for _, t := range p.Tables {
		db, err := s.dbFor(t)
		if err != nil {
			return nil, err
		}
		r, err := s.exec(&ticket.Command{Op: ticket.OpDropTable, DB: db, Table: t.Name, IfExists: p.IfExists})
		s.warnings = append(s.warnings, r.Warnings...)
		if r.Err != nil && r.Err.Code == mysqlerr.CodeBadTable {
			unknown = append(unknown, db+"."+t.Name)
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, mysqlerr.New(mysqlerr.CodeBadTable, "Unknown table '%s'", strings.Join(unknown, ","))
	}
	return okResult(0, 0), nil
}

func (s *session) alterTable(p *sql.AlterTable) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	c := &ticket.Command{Op: ticket.OpAlterTable, DB: db, Table: p.Table.Name,
		HasAutoInc: p.HasAutoInc, AutoInc: p.AutoInc, HasComment: p.HasComment, Comment: p.Comment}
	if p.HasComment {
		c.Cache, c.HasCache = cacheOption(p.Comment)
		if !c.HasCache {
			c.HasCache = true // a comment without the option turns the cache off
		}
	}
	r, err := s.exec(c)
	return s.ok(r), err
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
}

// showCreateTable renders a table the way MariaDB's SHOW CREATE TABLE does.
func showCreateTable(t *ticket.Table) string {
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
	if d.IDKey == "PRIMARY" {
		lines = append(lines, "  PRIMARY KEY ("+quoteIdent(d.IDCol)+")")
	}
	if d.StubKey == "PRIMARY" {
		lines = append(lines, "  PRIMARY KEY ("+quoteIdent(d.StubCol)+")")
	}
	if d.IDKey != "" && d.IDKey != "PRIMARY" {
		lines = append(lines, "  UNIQUE KEY "+quoteIdent(d.IDKey)+" ("+quoteIdent(d.IDCol)+")")
	}
	if d.StubKey != "" && d.StubKey != "PRIMARY" {
		lines = append(lines, "  UNIQUE KEY "+quoteIdent(d.StubKey)+" ("+quoteIdent(d.StubCol)+")")
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
