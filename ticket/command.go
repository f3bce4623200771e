package ticket

import (
	"context"
	"errors"
)

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
	OpAlterTable  Op = 7 // AUTO_INCREMENT = n, cache, comment
	OpSetGlobal   Op = 8 // SET GLOBAL auto_increment_increment|offset
	OpReserve     Op = 9 // range reservation: take Count ids for the leader's cache
)

// InsertRow is one VALUES tuple of an INSERT or REPLACE.
type InsertRow struct {
	// HasID is false when the id column was not given, or was NULL or 0:
	// MySQL then generates the next value.
	HasID bool
	ID    uint64
	// HasStub is false when the stub column was not given (its default applies).
	HasStub bool
	Stub    string
}

// Update is the id assignment of UPDATE and of ON DUPLICATE KEY UPDATE:
// id = [LAST_INSERT_ID](id + Delta), or id = [LAST_INSERT_ID](Value) when
// Absolute is set.
type Update struct {
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

	// OpInsert.
	Replace bool
	Ignore  bool
	Rows    []InsertRow
	OnDup   *Update // ON DUPLICATE KEY UPDATE id = ...
	// Inc and Off are the session's auto_increment_increment/offset.
	Inc uint64
	Off uint64

	// OpUpdate: Set applies to every row, or to the row whose stub equals
	// WhereStub when HasWhere.
	Set       Update
	HasWhere  bool
	WhereStub string

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

	// OpSetGlobal.
	Name  string
	Value uint64

	// OpReserve: Count ids for the table.
	Count uint64
}

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
}

// Replication failures. A Replicator wraps one of these so that callers can
// tell "nobody can commit now" (retry later, nothing happened) from "the
// outcome is unknown" (the ids may be burnt, and must never be handed out).
var (
	// ErrNoQuorum: there is no leader reachable, or it cannot reach a
	// majority; the batch was not committed.
	ErrNoQuorum = errors.New("ticket: no leader with a quorum")
	// ErrUncertain: the batch may or may not have been committed (leadership
	// lost or timeout after it was proposed).
	ErrUncertain = errors.New("ticket: commit outcome unknown")
)

// Replicator commits a batch of commands through consensus and returns the
// result of each, in order, as computed by Apply on the committed state.
type Replicator interface {
	Propose(ctx context.Context, cmds []Command) ([]Result, error)
}

// Reader gives read access to the local replica's applied state.
type Reader interface {
	View(fn func(Store) error) error
}

// Store is the replicated state Apply reads and changes. Implementations:
// raftstore (bbolt, one transaction per batch) and MemStore (tests).
// Table returns a table the caller may change; changes are kept only when
// passed to PutTable.
type Store interface {
	Database(name string) (bool, error)
	Databases() ([]string, error)
	PutDatabase(name string) error
	// DeleteDatabase removes a database and all of its tables.
	DeleteDatabase(name string) error
	// Table returns nil, nil when there is no such table.
	Table(db, name string) (*Table, error)
	Tables(db string) ([]string, error)
	PutTable(t *Table) error
	DeleteTable(db, name string) error
	// Global returns a replicated global variable; ok is false if never set.
	Global(name string) (v uint64, ok bool, err error)
	PutGlobal(name string, v uint64) error
}
