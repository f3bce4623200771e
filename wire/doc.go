// Package wire owns the SQL side of ticketd's MySQL protocol: it accepts
// client connections (the connection phase and the connection under
// go-mysql's server package are package mysqlconn's), keeps one session
// per connection, turns each statement's plan (package sql) into ticket
// commands or local reads, and writes MySQL's answers back: result sets,
// the OK packet's affected rows and insert id, warnings and error codes.
// It also answers what ticketd's state looks like to tools: SHOW
// statements and information_schema's views (infoschema.go,
// catalog_query.go), as MariaDB 10.11 answers them.
//
// It evaluates no expression itself: a SELECT without FROM, the select
// lists and WHERE of information_schema's views, ticket tables and
// sequences, SET's values and SHOW's LIKE and WHERE are made into the row
// engine's expressions with the session's values (variables, DATABASE(),
// LAST_INSERT_ID(), NEXTVAL) written in as literals (catalog_expr.go,
// catalog_filter.go, rowexpr.go), and the rows they read are handed to
// the row engine as Datum rows (ticket/rowengine's NewEval), which
// evaluates them as it does a row table's WHERE. What MariaDB's semantics
// are is the row engine's to know; this package must not decide them.
package wire
