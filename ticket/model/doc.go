// Package model holds the types every layer of ticketd shares: a
// statement's values (Value) and a row's stored datums (Datum), the
// definitions of tables, row tables and sequences (TableDef, RowsDef,
// SequenceDef, the parser-neutral TableSpec), the row engine's expression
// tree (RowExpr), the replicated Command with its Result, the Redis key
// commands, the whole-state Dump, and the statement errors they carry
// (mysqlerr's Error). The numbers of its enumerations (Op, ValueKind,
// ExprOp, ColKind, Collation, KeyOp, ...) are part of the replicated log
// format: never renumber, only append.
//
// It holds types, their constructors and small pure methods, and the one
// counter rule both table engines share (NextID, Generate, Advance). It
// must not know how a command is applied (package ticket), how a row is
// evaluated, stored or compared (package ticket/rowengine), how commands
// are encoded (raftstore/logformat) or replicated (raftstore); it imports
// nothing of ticketd but sql/mysqlerr.
package model
