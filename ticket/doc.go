// Package ticket owns ticketd's domain and applies its commands. It has
// four parts:
//
//   - the catalog and the ticket tables: databases, tables and their
//     counters, what a table may look like (NewTableDef turns a
//     parser-neutral TableSpec into a TableDef; CreateStatement renders
//     SHOW CREATE TABLE), the allocation rule (auto_increment_increment
//     and offset, type maxima, never backwards), drop marks, restore of a
//     whole state (ValidateDump, AdvanceDump); apply.go, schema.go,
//     values.go, dropmark.go, restore.go;
//   - sequences (MariaDB's CREATE SEQUENCE; sequence.go) and the Redis key
//     space (keys*.go);
//   - Apply, which hands a row table's commands to the row engine
//     (package ticket/rowengine) and keeps the rest;
//   - per-connection Session state (session.go); the allocation service
//     the wire layers call (Service, its batcher, the allocation caches,
//     the compare-and-set queue) is package ticket/alloc's.
//
// The shared types (Command, Result, TableDef, Value, Datum, RowExpr, ...)
// are package ticket/model's. Apply is deterministic and free of I/O:
// state changes are Commands applied to a Store. Replication is someone
// else's job; the allocation service (ticket/alloc) hands batches of
// Commands to a Replicator (declared here, implemented by raftstore),
// which commits them and applies them with Apply on every node. ticket must not know how
// commands are encoded (raftstore/logformat), how they are replicated
// (raftstore) or the wire protocols (wire), nor how a row table's rows are
// evaluated, stored or compared (ticket/rowengine).
package ticket
