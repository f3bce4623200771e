// Package wire owns the MySQL protocol side of ticketd: it accepts client
// connections with go-mysql's server package, keeps one session per
// connection, turns each statement's plan (package sql) into ticket
// commands or local reads, and writes MySQL's answers back: result sets,
// the OK packet's affected rows and insert id, warnings and error codes.
package wire
