package model

import (
	"fmt"
	"strconv"
	"time"
)

// String renders a command for logs and test failures.
func (c *Command) String() string {
	return fmt.Sprintf("%d %s.%s rows=%d", c.Op, c.DB, c.Table, len(c.Values))
}

// Op says what a Command does.
type Op uint8

// Command kinds. The numbers are part of the replicated log format: never
// renumber, only append.
const (
	OpInsert      Op = 1 // INSERT / REPLACE [... ON DUPLICATE KEY UPDATE]
	OpUpdate      Op = 2 // UPDATE t SET id = [LAST_INSERT_ID](id + k | k) [WHERE stub = s]
	OpCreateDB    Op = 3
	OpDropDB      Op = 4
	OpCreateTable Op = 5
	OpDropTable   Op = 6
	OpAlterTable  Op = 7  // AUTO_INCREMENT = n, cache, comment
	OpSetGlobal   Op = 8  // SET GLOBAL auto_increment_increment|offset
	OpReserve     Op = 9  // range reservation: take Count ids for the leader's cache
	OpRestore     Op = 10 // replace the whole state with Dump (restore of a backup)
	// OpDelete is DELETE on a row table (ticket/rowengine/rows.go); OpInsert and OpUpdate
	// serve row tables too.
	OpDelete Op = 11
	// OpRestoreRows adds RestoreRows to a row table that an OpRestore
	// created: a restore of large tables is one OpRestore and then its
	// rows in chunks of bounded size, one Raft entry each.
	OpRestoreRows Op = 12
)

// Sequence commands (MariaDB's CREATE SEQUENCE; sequence.go). Numbers
// 20-29 are the sequences' range of the log format.
const (
	OpCreateSeq Op = 20 // CREATE SEQUENCE: Def with Def.Seq set, IfExists
	OpSeqNext   Op = 21 // NEXTVAL: the next value, or a leader's range of Seq.Count
	OpSetVal    Op = 22 // SETVAL(s, Seq.Value)
	OpAlterSeq  Op = 23 // ALTER SEQUENCE: Seq.Options
	OpDropSeq   Op = 24 // DROP SEQUENCE [IF EXISTS]
)

// ValueKind says which field of a Value is set.
type ValueKind uint8

// Value kinds. The numbers are part of the replicated log format.
const (
	ValNull    ValueKind = 1
	ValDefault ValueKind = 2 // DEFAULT, or a column left out of the column list
	ValInt     ValueKind = 3 // Int
	ValUint    ValueKind = 4 // Uint, above the int64 range
	ValString  ValueKind = 5 // Str
	ValDecimal ValueKind = 6 // Str holds a non-integer numeric literal
)

// Value is one literal of a statement, as the client wrote it. Apply maps
// values to columns and converts them, so that the wire layer needs no
// table definition on the hot path.
type Value struct {
	Kind ValueKind
	Int  int64
	Uint uint64
	Str  string
}

// Update is the id assignment of UPDATE and of ON DUPLICATE KEY UPDATE:
// Column = [LAST_INSERT_ID](Column + Delta), or Column =
// [LAST_INSERT_ID](Value) when Absolute is set. Only the id column can be
// assigned.
type Update struct {
	Column    string
	Absolute  bool
	Delta     int64
	Value     uint64
	SetLastID bool // wrapped in LAST_INSERT_ID(...)
}

// Command is one replicated state change. It is a plain value (no
// interfaces) so that batches are cheap to build and encode.
type Command struct {
	Op    Op
	DB    string
	Table string

	// OpInsert: Columns as written (nil: the table's column order) and
	// one Values tuple per row.
	Replace bool
	Ignore  bool
	Columns []string
	Values  [][]Value
	OnDup   *Update // ON DUPLICATE KEY UPDATE id = ...
	// Increment and Offset are the session's
	// auto_increment_increment/offset (Session's names).
	Increment uint64
	Offset    uint64

	// OpUpdate: Set applies to every row, or to the rows where WhereCol
	// equals Where when HasWhere.
	Set      Update
	HasWhere bool
	WhereCol string
	Where    Value

	// OpCreateDB, OpDropDB, OpCreateTable, OpDropTable.
	IfExists      bool // IF EXISTS / IF NOT EXISTS
	Def           *TableDef
	CreateAutoInc uint64 // CREATE TABLE ... AUTO_INCREMENT = n (0: unset)

	// OpAlterTable: each field applies when its Has flag is set.
	HasAutoInc bool
	AutoInc    uint64
	HasCache   bool
	Cache      uint64
	HasComment bool
	Comment    string
	// Key changes of a row table (ADD/DROP INDEX, CREATE/DROP INDEX):
	// DropKeys first, by name ("PRIMARY" for the primary key), then
	// AddKeys; IfExists makes a missing (DROP) or existing (CREATE) key
	// a note.
	DropKeys []string
	AddKeys  []KeySpec

	// OpSetGlobal.
	Name  string
	Value uint64

	// OpReserve: Count ids for the table.
	Count uint64

	// OpRestore: the state to install, and whether it may replace a state
	// that already holds databases.
	Dump  *Dump
	Force bool
	// OpRestoreRows: rows in their stored form, for DB.Table.
	RestoreRows [][]Datum

	// Seq holds the sequence commands' fields (OpCreateSeq..OpDropSeq).
	Seq *SeqCommand

	// Rows holds an UPDATE's assignments and the WHERE of UPDATE and
	// DELETE on a row table, when they do not fit the ticket form above.
	Rows *RowsCommand

	// Key is an OpKeys command's part (keys.go).
	Key *KeyCommand

	// Now is the statement's time for NOW() and CURRENT_TIMESTAMP
	// columns. It is not part of the command's encoding: the state
	// machine sets it from the Raft entry's AppendedAt, which the leader
	// stamps and every replica reads from the same entry.
	Now time.Time
	// Version is the cluster's command version at the command's entry.
	// Like Now, it is not part of the encoding: the state machine sets
	// it, so that an apply rule that changed at a version (RulesV11)
	// takes effect at the entry that raised the cluster to it, on every
	// replica alike, and a cluster of mixed builds keeps the older rule.
	// 0 (a test, a read on the leader ahead of the log) is this build's
	// rules.
	Version uint32
}

// RulesV11 is the command version from which row tables answer as
// MariaDB 10.11 InnoDB does where older builds applied otherwise (issue
// 32): a strict-mode UPDATE fails on the first warning met evaluating its
// WHERE or SET; a failing INSERT or REPLACE leaves the auto-increment
// counter where InnoDB's is; dates and datetimes written with unpadded
// fields, other delimiters, two-digit years or as numbers are read as
// MariaDB reads them.
const RulesV11 uint32 = 11

// RulesAt reports whether c applies under the rules of version v.
func (c *Command) RulesAt(v uint32) bool { return c.Version == 0 || c.Version >= v }

// Result is a Command's outcome, identical on every replica.
type Result struct {
	// InsertID is what the OK packet reports as the insert id.
	InsertID uint64
	// SetLastID says the statement changes the session's LAST_INSERT_ID()
	// to LastID.
	SetLastID bool
	LastID    uint64
	Affected  uint64
	// Matched counts the rows an UPDATE found, changed or not; clients
	// that set CLIENT_FOUND_ROWS see it instead of Affected.
	Matched  uint64
	Warnings []Warning
	// Err is the statement's error; nothing changed when it is set.
	Err *Error
	// First and Last are the ids an OpReserve took.
	First, Last uint64
	// Images are the rows an INSERT or UPDATE of a row table left, as
	// written: a session in a transaction reads its own writes from them.
	Images [][]Datum
	// Index is the log position of the entry that carried the command,
	// set by the Replicator, not by Apply (0 when served from a range): a
	// session reads its own writes once its replica has applied that far.
	Index uint64
	// Key is an OpKeys command's reply (keys.go).
	Key *KeyReply
}

// OpKeys is a write to the key space: Command.Key says which.
const OpKeys Op = 30

// ValNow is NOW() / CURRENT_TIMESTAMP as a value: the statement's time,
// Command.Now, which every replica takes from the Raft entry.
const ValNow ValueKind = 8

func ValueText(v Value) string {
	switch v.Kind {
	case ValInt:
		return strconv.FormatInt(v.Int, 10)
	case ValUint:
		return strconv.FormatUint(v.Uint, 10)
	default:
		return v.Str
	}
}

// Typed values: what a client's binary-protocol parameters (COM_STMT_EXECUTE)
// are when they are neither integers nor strings. MariaDB keeps a
// parameter's type, and its conversions follow it: a DATETIME parameter
// stored into an INT column is 20240102030405 where the string
// '2024-01-02 03:04:05' is cut to 2024 (1265), and a DOUBLE is rounded
// half to even (rint) where a DECIMAL is rounded half away from zero. So
// these values travel as they were sent, in the replicated command, and
// the row engine converts them (litVal) like its other values.
const (
	// ValTemporal is a DATE, DATETIME/TIMESTAMP or TIME parameter. Str
	// holds it in MariaDB's text form: '2024-01-02' (DATE),
	// '2024-01-02 03:04:05' with '.ffffff' when it has microseconds
	// (DATETIME), '[-]hhh:mm:ss[.ffffff]' (TIME); after a '!', one that
	// MariaDB would store as a zero date (or cut to 838:59:59), which
	// the row engine refuses (1235).
	ValTemporal ValueKind = 9
	// ValDouble is a DOUBLE or FLOAT parameter (a FLOAT is widened to
	// double, as MariaDB does), or a DOUBLE literal (1e2). Str holds Go's
	// shortest round-trip text of the float64 (strconv 'g', -1), so that
	// every replica reads back the same bits.
	ValDouble ValueKind = 10
)
