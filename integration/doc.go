// Package integration holds ticketd's end-to-end tests: they build the
// real binary, run it as a process on free 127.0.0.1 ports, and drive it
// through real MySQL drivers (go-sql-driver/mysql and go-mysql's client),
// comparing its answers with MariaDB's where MariaDB is the specification.
//
// The process harness lives in integration/harness, the linearizability
// checker for allocation histories (single ids and ranges) in
// integration/history, and faithful clients of the ID schemes built on
// MySQL rows and sequences (Leaf, Tinyid, UidGenerator, NEXTVAL) with
// their tests against MariaDB and ticketd in integration/schemes. The tests
// themselves are in _test.go files: single-node behaviour through each
// driver mode, the statement-by-statement differential against MariaDB,
// kill -9 crash recovery, and the README's and operator's manual's shell
// blocks run as written (docs_test.go). BENCHMARKS.md holds the tables of
// the last make bench.
package integration
