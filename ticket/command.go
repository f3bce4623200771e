package ticket

import (
	"context"
	"errors"

	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

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
	// ErrStorage is wrapped, besides ErrNoQuorum or ErrUncertain, when the
	// cause is a replica's disk (full, or failing writes): the failure
	// lasts until space is freed, and then heals by itself.
	ErrStorage = errors.New("ticket: the Raft log cannot be written")
)

// Replicator commits a batch of commands through consensus and returns the
// result of each, in order, as computed by Apply on the committed state.
type Replicator interface {
	Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error)
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
	Table(db, name string) (*model.Table, error)
	Tables(db string) ([]string, error)
	// PutTable stores t. For a row table it also creates the table's
	// rows (empty) or, when t's keys differ from those the rows are
	// indexed by, re-indexes them (CREATE/DROP INDEX).
	PutTable(t *model.Table) error
	DeleteTable(db, name string) error
	// Rows returns a row table's rows (rowengine/store.go), nil when db.name is
	// not a row table. Through the Store that View passes, they are
	// read-only and valid until fn returns.
	Rows(db, name string) (rowengine.TableRows, error)
	// Global returns a replicated global variable; ok is false if never set.
	Global(name string) (v uint64, ok bool, err error)
	PutGlobal(name string, v uint64) error
	// KeyStore is the Redis key space (keys.go).
	KeyStore
}
