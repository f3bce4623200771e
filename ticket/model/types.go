package model

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// IntKind is the width of a MySQL integer column.
type IntKind uint8

// Integer column widths, smallest first.
const (
	TinyInt IntKind = iota + 1
	SmallInt
	MediumInt
	Int
	BigInt
)

// IntType is the type of a table's id column; it sets the largest id.
type IntType struct {
	Kind     IntKind
	Unsigned bool
	// Width is the display width written in the DDL (bigint(20)), 0 if none.
	Width int
}

// Max is the largest value the column holds.
func (t IntType) Max() uint64 {
	// A switch, not a map literal: the map was built on every call, and
	// every integer stored or looked up asks.
	var bits uint
	switch t.Kind {
	case TinyInt:
		bits = 8
	case SmallInt:
		bits = 16
	case MediumInt:
		bits = 24
	case Int:
		bits = 32
	default:
		bits = 64
	}
	if !t.Unsigned {
		bits--
	}
	if bits == 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// SQL renders the type the way SHOW CREATE TABLE does.
func (t IntType) SQL() string {
	name := map[IntKind]string{TinyInt: "tinyint", SmallInt: "smallint", MediumInt: "mediumint", Int: "int", BigInt: "bigint"}[t.Kind]
	if t.Width > 0 {
		name += "(" + strconv.Itoa(t.Width) + ")"
	}
	if t.Unsigned {
		name += " unsigned"
	}
	return name
}

// TableDef is a ticket table's definition: one integer id column (usually
// AUTO_INCREMENT) and at most one string stub column (usually a unique key).
// Flickr's Tickets64 is the model; the MySQL manual's sequence table (one
// plain BIGINT column, no stub) fits too.
type TableDef struct {
	DB   string
	Name string

	IDCol     string
	IDType    IntType
	AutoInc   bool   // the id column is AUTO_INCREMENT
	IDKey     string // "PRIMARY" or a unique key name if id is unique, "" if not
	IDNotNull bool

	StubCol     string // "" when the table has no stub column
	StubType    string // as written: char(1), varchar(32)
	StubLen     int    // maximum characters, 0 if unbounded
	StubDefault string
	StubKey     string // unique key name over the stub column, "" if not unique
	StubNotNull bool
	// StubFirst records that the stub column was declared before the id column.
	StubFirst bool

	Engine  string
	Comment string
	// Cache is the range-reservation size (ids reserved per Raft round trip),
	// 0 or 1 meaning every id goes through Raft.
	Cache uint64
	// Seq is set when the table is a sequence (CREATE SEQUENCE): its
	// options and its one row. Id and stub fields are then unused.
	Seq *SequenceDef
	// Rows is set when the table is a row table (ticket/rowengine/rows.go): its columns
	// and keys. A row table's AUTO_INCREMENT column is also IDCol.
	Rows *RowsDef
}

// Key names the table within the catalog.
func (d *TableDef) Key() string { return d.DB + "." + d.Name }

// Row is one row of a ticket table.
type Row struct {
	ID   uint64
	Stub string
}

// Table is a table's whole replicated state.
type Table struct {
	Def TableDef
	// AutoInc is MySQL's AUTO_INCREMENT table value: the lowest id the next
	// generated value may take. It never moves backwards.
	AutoInc uint64
	// Rows are kept sorted by ID.
	Rows []Row
	// Exhausted is set once the id column's largest value has been handed
	// out: AutoInc cannot represent "one past 2^64-1", and without the flag
	// the last id would be generated again.
	Exhausted bool
	// A row table's rows are not here: they are stored per row, behind
	// Store.Rows (ticket/rowengine/store.go).
}

// Error is a statement error with its MySQL code, SQLSTATE and message
// (the catalogue's type, shared with sql). Errors in Results are
// deterministic outcomes of a command (every replica computes the same one)
// and go to the client as MySQL error packets.
type Error = mysqlerr.Error

// Error codes for the packages that build statement errors without the
// catalogue (raftstore refuses some commands before proposing them).
const (
	CodeUnknown      = mysqlerr.CodeUnknown      // 1105
	CodeNotSupported = mysqlerr.CodeNotSupported // 1235
)

// NewError builds an Error with code's SQLSTATE (mysqlerr.New).
func NewError(code uint16, format string, args ...any) *Error {
	return mysqlerr.New(code, format, args...)
}

// Warning is a note attached to a statement's result (SHOW WARNINGS).
type Warning struct {
	Level   string // "Note", "Warning", "Error"
	Code    uint16
	Message string
}

// NextID is the lowest id the table may hand out next, and false when it
// has none left (the counter went past the type's maximum) or, for a table
// without AUTO_INCREMENT, has no row to count from.
//
// For an AUTO_INCREMENT table it is the AUTO_INCREMENT value: range
// reservations are committed by moving it past the range, so a reserved
// range is always below it. For a sequence table (the manual's
// UPDATE seq SET id = LAST_INSERT_ID(id + 1)) the counter is the row
// itself, and the next id is one above the largest row.
func (t *Table) NextID() (uint64, bool) {
	if t.Def.AutoInc {
		if t.Exhausted || t.AutoInc > t.Def.IDType.Max() {
			return 0, false
		}
		return max(t.AutoInc, 1), true
	}
	if len(t.Rows) == 0 {
		return 0, false
	}
	top := slices.MaxFunc(t.Rows, func(a, b Row) int { return cmp.Compare(a.ID, b.ID) }).ID
	if top >= t.Def.IDType.Max() {
		return 0, false
	}
	return top + 1, true
}

// Collation is the table's default collation as SHOW CREATE TABLE and
// information_schema name it: a row table's own, utf8mb4_general_ci for
// the others (and for a row table of the older folding, which answers
// as such for ASCII).
func (d *TableDef) Collation() Collation {
	if d.Rows != nil && d.Rows.Collation != CollLegacy {
		return d.Rows.Collation
	}
	return CollGeneralCI
}

// ColCollation is the collation of d's string column c as SHOW COLUMNS
// names it (see Collation).
func (d *TableDef) ColCollation(c *RowCol) Collation {
	if d.Rows == nil {
		return CollGeneralCI
	}
	if cc := d.Rows.CollOf(c); cc != CollLegacy {
		return cc
	}
	return CollGeneralCI
}
