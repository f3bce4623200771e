// Package mysqlconn owns the MySQL client/server protocol below the SQL
// session: ticketd's connection phase (initial handshake, TLS upgrade,
// authentication against its account table, COM_CHANGE_USER) and the
// connection go-mysql's server.Conn serves the command phase on, with
// the workarounds for go-mysql v1.16.0 that connection carries
// (gomysql.go lists them). Package wire uses it and keeps the sessions and
// statements; this package knows nothing of them.
package mysqlconn
