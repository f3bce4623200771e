// Package ticket owns ticketd's domain: ticket tables and their counters,
// what a table may look like (NewTableDef turns a parser-neutral TableSpec
// into a TableDef, and a Table renders its SHOW CREATE TABLE), the
// allocation rule (auto_increment_increment/offset, type maxima, never
// backwards), per-connection session state, and the Service the wire layer
// calls.
//
// The package is deterministic and free of I/O: state changes are Commands
// applied by Apply to a Store. Replication is someone else's job; the Service
// hands batches of Commands to a Replicator (declared here, implemented by
// raftstore), which commits them and applies them with Apply on every node.
package ticket
