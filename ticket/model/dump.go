package model

// Dump is the whole replicated state: what a backup holds and what
// OpRestore installs in place of the current state, in one Raft entry, so
// that every replica switches at the same log index and snapshots and
// restarts keep the result.
type Dump struct {
	// Databases lists every database, empty ones included, sorted.
	Databases []string
	// Tables holds every table, sorted by database and name.
	Tables []Table
	// Globals are the replicated global variables, sorted by name.
	Globals []Global
	// Rows holds row tables' rows by TableDef.Key (ticket/rowengine/store.go), in
	// clustering order; a row table without an entry is empty.
	Rows map[string][][]Datum
	// Keys are the Redis key space's keys (keys.go), sorted by database
	// and name.
	Keys []KeyEntry
}

// Global is one replicated global variable (SET GLOBAL).
type Global struct {
	Name  string
	Value uint64
}

// Move is what Advance did to one table's counter.
type Move struct {
	Table string // db.name
	// From and To are the table's next id before and after; equal when it
	// did not move. Exhausted tables (no id left) stay so.
	From, To  uint64
	Exhausted bool
}
