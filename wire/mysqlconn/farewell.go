package mysqlconn

import (
	"errors"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Farewell tells the client why its connection ends, when it ends for a
// reason MySQL would name: a packet too large, a malformed packet
// (panicked: handling the last command panicked), or inactivity (idle:
// the read deadline passed). It returns what the client was told, or nil
// when there is nothing to tell.
func (c *Conn) Farewell(idle, panicked bool) *mysql.MyError {
	var e *mysql.MyError
	seq := c.seq + 1
	switch {
	case errors.Is(c.err, errPacketTooLarge):
		e = &mysql.MyError{Code: mysql.ER_NET_PACKET_TOO_LARGE, State: "08S01", Message: "Got a packet bigger than 'max_allowed_packet' bytes"}
	case errors.Is(c.err, errEmptyPacket), panicked:
		e = &mysql.MyError{Code: mysql.ER_MALFORMED_PACKET, State: "08S01", Message: "Malformed communication packet."}
	case idle && c.betweenPackets():
		// MySQL 8.0.24+ sends this unasked, with sequence 0, before
		// closing an idle connection; clients report it on next use.
		e = &mysql.MyError{Code: mysqlerr.CodeClientTimeout, State: "HY000", Message: "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior."}
		seq = 0
	default:
		return nil
	}
	_ = c.writeRaw(seq, errPayload(e))
	return e
}

// ShutdownNotice tells a client between commands, unasked (sequence 0,
// as mysqld sends its shutdown notice), that the server is stopping, with
// the error e, and returns e; nil, telling nothing, when the client is in
// the middle of a packet.
func (c *Conn) ShutdownNotice(e *mysql.MyError) *mysql.MyError {
	if !c.betweenPackets() {
		return nil
	}
	_ = c.writeRaw(0, errPayload(e))
	return e
}
