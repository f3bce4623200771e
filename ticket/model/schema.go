package model

// TableSpec is a CREATE TABLE as the client wrote it, in terms that do
// not depend on the SQL parser: the wire layer fills it from the parsed
// statement, and NewTableDef decides whether it describes a table ticketd
// holds. Column and key features that table definitions gain later are
// added here first.
type TableSpec struct {
	DB      string
	Name    string
	Columns []ColumnSpec
	Keys    []KeySpec
	Engine  string // "" for the default
	Comment string
	// NotStrict is the session's sql_mode without STRICT_TRANS_TABLES and
	// STRICT_ALL_TABLES, where MariaDB makes a VARCHAR too long for a row
	// a TEXT column instead of refusing it.
	NotStrict bool
	// Charsets and Collates are the table's CHARACTER SET and COLLATE
	// options as written, in order (tableCollation).
	Charsets, Collates []string
}

// ColumnSpec is one column of a TableSpec.
type ColumnSpec struct {
	Name       string // as written
	Type       string // lower-case base type: bigint, int, char, varchar, ...
	Unsigned   bool
	Width      int // display width for integers, length for char/varchar; 0 unset
	NotNull    bool
	AutoInc    bool
	HasDefault bool
	Default    Value
	PrimaryKey bool // PRIMARY KEY on the column
	Unique     bool // UNIQUE on the column
	// DefaultNow and OnUpdateNow are DEFAULT / ON UPDATE CURRENT_TIMESTAMP.
	DefaultNow, OnUpdateNow bool
	Comment                 string
	// Charset and Collate are a CHAR/VARCHAR column's CHARACTER SET and
	// COLLATE as written; Binary its BINARY attribute (colCollation).
	Charset, Collate string
	Binary           bool
}

// KeySpec is a table-level key of a TableSpec.
type KeySpec struct {
	Name    string
	Primary bool
	Unique  bool
	Columns []string // as written
}

// PrimaryKey is the name MySQL gives the primary key.
const PrimaryKey = "PRIMARY"

// DefaultEngine is the engine of a table created without ENGINE=.
const DefaultEngine = "InnoDB"
