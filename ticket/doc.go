// Package ticket owns ticketd's domain: ticket tables and their counters,
// what a table may look like (NewTableDef turns a parser-neutral TableSpec
// into a TableDef, and a Table renders its SHOW CREATE TABLE), the
// allocation rule (auto_increment_increment/offset, type maxima, never
// backwards), and per-connection session state. The Service the wire
// layers call is ticket/alloc's.
//
// The package is deterministic and free of I/O: state changes are Commands
// applied by Apply to a Store. Replication is someone else's job; the
// allocation service (ticket/alloc) hands batches of Commands to a
// Replicator (declared here, implemented by raftstore), which commits them
// and applies them with Apply on every node.
package ticket
