// Package rowengine is ticketd's row SQL engine: the row tables (any
// table that is not a ticket table, of integer, CHAR/VARCHAR and
// DATE/DATETIME/TIMESTAMP columns) and MariaDB 10.11's semantics on them.
// It owns what a row table may be (NewRowsDef), how a value converts to a
// column's type and what warnings that gives (convert.go), how an
// expression evaluates (eval*.go), which access path a statement takes
// (access.go, store_access.go), how INSERT, UPDATE and DELETE apply to the
// rows, atomically per statement (apply.go, insert.go, engine.go, index.go,
// restore.go), how rows and their keys are stored and compared (store*.go,
// collation.go), temporal parsing and typed parameters (temporal.go,
// values_typed.go), and SELECT's answer (engine.go, selectlist.go).
//
// Its evaluator is ticketd's only one: the wire layer's expressions over
// rows that no table stores (information_schema's views, SHOW's outputs,
// the one row of a SELECT without FROM: Dual) come to it as in-memory
// Datum rows with a RowsDef (catalog.go: NewEval, Match, CompareRows),
// with the catalogue's functions (eval_call.go: CASE, CAST, UPPER,
// SUBSTRING, LOCATE, LEAST, CONCAT, ...), which no replicated command
// holds. A session's values reach it as literals the caller wrote in.
//
// The older generation of row commands, from before the engine (command
// version 2), lives in legacy*.go, apart, so that a reader can step
// around it.
//
// It is deterministic and free of I/O: it reads and writes through Store,
// which package ticket's Store is. It must not know ticket tables,
// sequences or the Redis key space (package ticket), how commands are
// encoded or replicated (raftstore), or the wire protocols (wire); it
// imports nothing of ticketd but ticket/model and sql/mysqlerr.
package rowengine
