package model

import "strings"

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

// CollOf is the collation of rd's column c.
func (rd *RowsDef) CollOf(c *RowCol) Collation {
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
// Entries written before the row engine (ticket/rowengine/engine.go) hold Sets and
// Where; ticketd now writes the expression form: Filter, Assigns,
// OrderBy and Limit, and the session's mode and pinned time.
type RowsCommand struct {
	Sets  []RowSet  `json:",omitempty"`
	Where []RowCond `json:",omitempty"`

	// Engine marks a command of the row engine (ticket/rowengine/engine.go), which
	// wire always sets; without it the command is an older build's and
	// applies as it did (ticket/rowengine/legacy.go).
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

// ColIndex finds a column by name, case-insensitively.
func (rd *RowsDef) ColIndex(name string) int {
	for i := range rd.Cols {
		if strings.EqualFold(rd.Cols[i].Name, name) {
			return i
		}
	}
	return -1
}

// Primary is the table's primary key, or nil.
func (rd *RowsDef) Primary() *RowKey {
	if len(rd.Keys) > 0 && rd.Keys[0].Primary {
		return &rd.Keys[0]
	}
	return nil
}

// ExprForm reports whether rc holds the expression form of a statement
// (Filter, Assigns, ORDER BY, LIMIT, a mode or a pinned time), which
// travels behind its own presence bit in the log so that an older build
// stops rather than apply it differently.
func (rc *RowsCommand) ExprForm() bool {
	return rc.Engine || rc.Filter != nil || rc.Assigns != nil || rc.OrderBy != nil || rc.HasLimit ||
		rc.NotStrict || rc.NoAutoValueOnZero || rc.Now != 0 || rc.OnDup != nil || rc.Exprs != nil
}
