// Package wire owns the SQL side of ticketd's MySQL protocol: it accepts
// client connections (the connection phase and the connection under
// go-mysql's server package are package mysqlconn's), keeps one session
// per connection, turns each statement's plan (package sql) into ticket
// commands or local reads, and writes MySQL's answers back: result sets,
// the OK packet's affected rows and insert id, warnings and error codes.
// It also answers what ticketd's state looks like to tools: SHOW
// statements and information_schema's views (infoschema.go,
// catalog_query.go), as MariaDB 10.11 answers them.
package wire
