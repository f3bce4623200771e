package sql

// Plan is one parsed statement, ready to execute. The set of plans is
// closed: every type in this file, nothing else. Plans are immutable once
// built, because the cache shares them between connections. A plan holds
// its statement in one form, whatever table it names: what one kind of
// table takes of it (a ticket table's UPDATE) is derived from that form
// where the statement runs (ticketform.go), not carried beside it.
type Plan interface{ isPlan() }

// ValueKind says which field of a Value is set.
type ValueKind uint8

// Value kinds. They carry model.ValueKind's numbers (which are part of
// ticket's log format), so a kind means the same in both packages;
// ValParam, which ticket never sees, comes after them.
const (
	ValNull    ValueKind = 1
	ValDefault ValueKind = 2 // DEFAULT
	ValInt     ValueKind = 3 // Int (fits int64)
	ValUint    ValueKind = 4 // Uint (above the int64 range)
	ValString  ValueKind = 5 // Str
	ValDecimal ValueKind = 6 // Str holds the literal text (1.5, 1e3)
	ValParam   ValueKind = 7 // the Param-th '?' (0-based) of a prepared statement
)

// Value is a literal or placeholder in a statement.
type Value struct {
	Kind  ValueKind
	Int   int64
	Uint  uint64
	Str   string
	Param int
	// Approx marks a DOUBLE literal (1e2, 9.999999e+0), whose Str is its
	// shortest decimal text: MariaDB stores a DOUBLE into a string column
	// cut to fit and a DECIMAL exactly.
	Approx bool
}

// ExprKind says what an Expr computes.
type ExprKind uint8

// Expression kinds.
const (
	ExprValue        ExprKind = iota + 1 // Value
	ExprLastInsertID                     // LAST_INSERT_ID() or LAST_INSERT_ID(Args[0])
	ExprSysVar                           // @@[Scope.]Name, also @@identity, @@last_insert_id
	ExprUserVar                          // @Name
	ExprFunc                             // Name(Args...): the functions of funcArgs (sql/dml.go); Name is upper case
	ExprColumn                           // a column of the FROM table: Name
	ExprStar                             // *
	ExprArith                            // Args[0] Op Args[1], Op one of + - *
	ExprIdent                            // a bare word used as a value: SET autocommit = ON
	ExprSequence                         // Name(Seq[, Args...]): NEXTVAL, LASTVAL, SETVAL (sequence.go)

	// The row engine's predicates and expressions (rowexpr.go), for the
	// WHERE of row tables and UPDATE's SET; ticket evaluates them.
	ExprCompare  // Args[0] Name Args[1], Name one of = <> < <= > >= <=>
	ExprIsNull   // Args[0] IS [NOT] NULL
	ExprIn       // Args[0] [NOT] IN (Args[1:])
	ExprBetween  // Args[0] [NOT] BETWEEN Args[1] AND Args[2]
	ExprLogic    // Args[0] Name Args[1], Name AND, OR or XOR
	ExprNot      // NOT Args[0]
	ExprInterval // Args[0] + INTERVAL Args[1] Name (Name SECOND ... WEEK), Op '+' or '-'
	ExprAgg      // Name(Args[0]) or COUNT(*) (no Args): COUNT, MIN, MAX, SUM, AVG
	ExprLike     // Args[0] [NOT] LIKE Args[1] ESCAPE Op
	ExprValues   // VALUES(Name) in ON DUPLICATE KEY UPDATE

	// The catalogue's expressions (what Connector/J's DatabaseMetaData
	// sends to information_schema); the wire layer evaluates them where
	// no table or an information_schema view is read.
	ExprCase // CASE: Args are [operand] WHEN, THEN pairs [ELSE]; Op&caseOperand, Op&caseElse say which are there
	ExprCast // CAST(Args[0] AS Name) and CONVERT(Args[0], Name), Name SIGNED or UNSIGNED
)

// ExprCase's Op flags.
const (
	CaseOperand byte = 1 // Args[0] is CASE's operand
	CaseElse    byte = 2 // the last of Args is ELSE's value
)

// Scope of a system variable.
type Scope uint8

// Variable scopes: ScopeDefault is @@name / SET name (session for SET).
const (
	ScopeDefault Scope = iota
	ScopeSession
	ScopeGlobal
)

// Expr is the small expression language ticketd evaluates: enough for what
// ticket clients and drivers send.
type Expr struct {
	Kind  ExprKind
	Value Value
	Name  string // variable name (lower case), function name (upper case), column name
	Scope Scope
	Op    byte // ExprArith: '+', '-', '*'
	Args  []Expr
	Seq   *TableName // ExprSequence: the sequence
	Not   bool       // ExprIsNull, ExprIn, ExprBetween: the NOT form
	// Sign is, in a row-table expression, the unary '+' or '-' written
	// before what is no literal (+id, -(a + 1), -?): the engine drops
	// the plus and computes a minus as 0 - x (ExprArith), and the ticket
	// form (ticketform.go), which takes neither, tells them from id and
	// 0 - x by it. 0 when there is none.
	Sign byte `json:",omitempty"`
}

// SelectField is one item of a select list.
type SelectField struct {
	Expr Expr
	// Name is the column label: the alias if given, otherwise the
	// expression as written (MySQL's label for SELECT LAST_INSERT_ID() is
	// "LAST_INSERT_ID()").
	Name string
}

// TableName is a possibly qualified table name. DB is "" when the
// statement relies on the session's current database.
type TableName struct {
	DB   string
	Name string
}

// Cond is one `Column = Value` term; a WHERE clause is their conjunction.
type Cond struct {
	Column string // lower case
	Value  Value
}

// Order is one ORDER BY term.
type Order struct {
	Column string // lower case
	Desc   bool
	// Field, when not 0, is the select-list item (1-based) the term
	// orders by, Column being "": an alias of an expression or a
	// position (ORDER BY 1). Only information_schema's views are ordered
	// so (the engines order by columns).
	Field int `json:",omitempty"`
}

// Select is SELECT fields [FROM table [WHERE c = v AND ...] [ORDER BY ...] [LIMIT n]].
type Select struct {
	Fields []SelectField
	From   *TableName // nil: no FROM; From.DB may be "information_schema"
	// Join lists the FROM's views when it joins information_schema views
	// (From is then the first); columns are then named alias.column when
	// qualified.
	Join []JoinTable `json:",omitempty"`
	// Where is the WHERE as `column = value` terms ANDed, for the tables
	// that take only that; WhereErr says why it is not when Filter is more.
	Where    []Cond
	WhereErr error
	// Filter is the whole WHERE as a predicate (row tables); nil without
	// WHERE. FilterErr, when set, is why the WHERE is refused on them;
	// Filter may then still hold the WHERE in the select list's language
	// (DATABASE(), CASE, IF), for information_schema's views.
	Filter    *Expr
	FilterErr error
	// GroupBy lists GROUP BY's columns; Distinct is SELECT DISTINCT.
	// Row tables only (the wire layer refuses them elsewhere).
	GroupBy []string
	// GroupAliases are the select-list items whose alias (lower case) a
	// GROUP BY name matches: MariaDB groups by such an item when the
	// table has no column of that name.
	GroupAliases map[string]Expr `json:",omitempty"`
	Distinct     bool
	OrderBy      []Order
	HasLimit     bool
	Limit        uint64
	Offset       uint64
}

// Insert is INSERT or REPLACE ... VALUES (...), (...) [ON DUPLICATE KEY UPDATE ...].
type Insert struct {
	Table   TableName
	Replace bool
	Ignore  bool
	// Columns as written, lower case; nil means the table's column order.
	Columns []string
	Rows    [][]Value
	// Exprs, when not nil, has the shape of Rows: an item that is an
	// expression (1+1, NOW() + INTERVAL 1 DAY) is here, and ValExpr in
	// Rows. Row tables compute them; ticket tables refuse them.
	Exprs [][]Expr
	// OnDup is ON DUPLICATE KEY UPDATE's assignments, left to right (nil
	// without the clause): expressions of rowexpr.go with VALUES(col),
	// or DEFAULT as a ValDefault value. What a ticket table takes of
	// them is TicketOnDup's to say (ticketform.go).
	OnDup []ColAssign
}

// ValExpr marks an INSERT value that is an expression (Insert.Exprs).
const ValExpr ValueKind = 9

// Update is UPDATE t SET a = x, ... [WHERE ...] [ORDER BY ...] [LIMIT n]:
// Assigns left to right, the WHERE as Filter (nil: every row), ORDER BY
// and LIMIT. This is the one form of every UPDATE; what a ticket table
// takes of it (one id assignment, a WHERE of `column = value` terms) is
// TicketForm's to say (ticketform.go).
type Update struct {
	Table    TableName
	Assigns  []ColAssign
	Filter   *Expr
	OrderBy  []Order
	HasLimit bool
	Limit    uint64
}

// ColAssign is one assignment of UPDATE or ON DUPLICATE KEY UPDATE:
// Column = Expr, or Column = DEFAULT (Expr is then a ValDefault value).
type ColAssign struct {
	Column string // lower case
	Expr   Expr
}

// SetVar is one assignment of a SET statement.
type SetVar struct {
	Scope Scope
	User  bool   // @name = ...
	Name  string // lower case
	// Value is the assigned expression; Kind ExprValue with ValDefault for DEFAULT.
	Value Expr
	// NamesCharset is, for the collation_connection of SET NAMES cs
	// COLLATE coll, cs: the collation must be one of its (1253).
	NamesCharset *Expr
}

// Set is SET a = x, b = y; SET NAMES and SET CHARACTER SET become the
// variables they set (character_set_client etc.) with their values as strings.
type Set struct {
	Vars []SetVar
}

// ShowKind says what a SHOW statement lists.
type ShowKind uint8

// SHOW statements ticketd answers.
const (
	ShowDatabases ShowKind = iota + 1
	ShowTables
	ShowVariables
	ShowStatus
	ShowWarnings
	ShowErrors
	ShowTableStatus
	ShowCreateTable
	ShowCreateDatabase
	ShowColumns
	ShowIndex
	ShowEngines
	ShowCharset
	ShowCollation
	ShowProcessList
	ShowGrants
	ShowCreateSequence
)

// Show is a SHOW statement.
type Show struct {
	Kind    ShowKind
	Scope   Scope // VARIABLES / STATUS
	Full    bool
	Table   TableName // SHOW CREATE TABLE, COLUMNS, INDEX
	DB      string    // SHOW TABLES FROM db, SHOW CREATE DATABASE db, TABLE STATUS FROM db
	HasLike bool
	Like    string // LIKE pattern
	// Where holds `Column = Value` terms of SHOW ... WHERE, lower case columns.
	Where []Cond
	// User and Host name the account of SHOW GRANTS FOR; User "" is the
	// current user (SHOW GRANTS, FOR CURRENT_USER()).
	User, Host string
	// WhereOr joins the Where terms with OR instead of AND: Connector/J 5.1
	// asks for its variables as `WHERE Variable_name = 'a' OR Variable_name
	// = 'b' ...`, and `Variable_name IN ('a', 'b')` becomes the same.
	WhereOr bool
}

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Name       string // as written
	Type       string // lower case base type: bigint, int, char, varchar, ...
	Unsigned   bool
	Width      int // display width for integers, length for char/varchar; 0 unset
	NotNull    bool
	AutoInc    bool
	HasDefault bool
	Default    Value
	PrimaryKey bool // PRIMARY KEY on the column
	Unique     bool // UNIQUE on the column
	Comment    string
	// DefaultNow and OnUpdateNow are DEFAULT / ON UPDATE CURRENT_TIMESTAMP
	// (HasDefault is set with DefaultNow).
	DefaultNow, OnUpdateNow bool
	// Charset and Collate are the column's CHARACTER SET and COLLATE as
	// written (lower case; "" when absent); Binary is the BINARY
	// attribute of CHAR/VARCHAR (the character set's _bin collation).
	Charset, Collate string
	Binary           bool
}

// KeyDef is a table-level key of CREATE TABLE.
type KeyDef struct {
	Name    string
	Primary bool
	Unique  bool
	Columns []string // as written
}

// CreateTable is CREATE TABLE.
type CreateTable struct {
	Table       TableName
	IfNotExists bool
	Columns     []ColumnDef
	Keys        []KeyDef
	Engine      string
	Comment     string
	HasAutoInc  bool
	AutoInc     uint64
	// Charsets and Collates are the table's [DEFAULT] CHARACTER SET and
	// COLLATE options as written (lower case), in order.
	Charsets, Collates []string
}

// DropTable is DROP TABLE [IF EXISTS] a, b.
type DropTable struct {
	Tables   []TableName
	IfExists bool
}

// AlterTable is ALTER TABLE t with the table options ticketd supports,
// and the key changes of a row table: ADD/DROP INDEX, KEY, UNIQUE,
// PRIMARY KEY, and CREATE INDEX / DROP INDEX, which are the same
// change. Keys are dropped before they are added, as MariaDB does.
type AlterTable struct {
	Table      TableName
	HasAutoInc bool
	AutoInc    uint64
	HasComment bool
	Comment    string
	AddKeys    []KeyDef
	// DropKeys names keys to drop; the primary key is "PRIMARY".
	DropKeys []string
	// IfExists / IfNotExists of DROP INDEX / CREATE INDEX (MariaDB):
	// a missing or existing key is then a note, not an error.
	IfExists, IfNotExists bool
}

// CreateDatabase is CREATE DATABASE / SCHEMA.
type CreateDatabase struct {
	Name        string
	IfNotExists bool
	// Charsets and Collates are its [DEFAULT] CHARACTER SET and COLLATE
	// options as written (lower case), in order.
	Charsets, Collates []string
}

// DropDatabase is DROP DATABASE / SCHEMA.
type DropDatabase struct {
	Name     string
	IfExists bool
}

// Use is USE db.
type Use struct{ DB string }

// TxnKind is the kind of a transaction statement.
type TxnKind uint8

// Transaction statements; ticketd runs every statement on its own, and these
// only keep clients happy (tickets are never rolled back, as in MySQL).
const (
	TxnBegin TxnKind = iota + 1
	TxnCommit
	TxnRollback
)

// Txn is BEGIN / START TRANSACTION / COMMIT / ROLLBACK.
type Txn struct{ Kind TxnKind }

// Empty is a statement that does nothing and answers OK: a lone comment,
// DO 1, FLUSH, LOCK/UNLOCK TABLES and the like.
type Empty struct{}

// Failed is a statement that did not parse, after statements that did in
// the same multi-statement query; executing it answers Err.
type Failed struct{ Err *Error }

// FlushHosts is FLUSH HOSTS: it unblocks the hosts blocked for too many
// connection errors.
type FlushHosts struct{}

// FlushTables is FLUSH TABLES: as in MariaDB, sequences drop their caches
// (the next NEXTVAL starts at the value no cache holds).
type FlushTables struct{}

// Account is a statement that manages accounts or privileges (GRANT,
// REVOKE, CREATE/ALTER/DROP/RENAME USER, SET PASSWORD, roles): ticketd's
// accounts live in its users file, so these are refused. Stmt names the
// statement as MySQL's messages quote it.
type Account struct{ Stmt string }

// Unsupported is a statement that parsed but is outside ticketd's surface.
// It answers error 1235 with Reason.
type Unsupported struct{ Reason string }

func (*Select) isPlan()         {}
func (*Insert) isPlan()         {}
func (*Update) isPlan()         {}
func (*Set) isPlan()            {}
func (*Show) isPlan()           {}
func (*CreateTable) isPlan()    {}
func (*DropTable) isPlan()      {}
func (*AlterTable) isPlan()     {}
func (*CreateDatabase) isPlan() {}
func (*DropDatabase) isPlan()   {}
func (*Use) isPlan()            {}
func (*Txn) isPlan()            {}
func (*Empty) isPlan()          {}
func (*Account) isPlan()        {}
func (*FlushHosts) isPlan()     {}
func (*FlushTables) isPlan()    {}
func (*Unsupported) isPlan()    {}
func (*Failed) isPlan()         {}
