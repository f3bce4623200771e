package wire

import (
	"bytes"
	"encoding/binary"
	"net"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// extraCapabilities are server capabilities ticketd supports but go-mysql's
// Server will not advertise (its SetCapability accepts only a few flags).
// Clients such as go-sql-driver keep only the flags the server offers, so
// without them multiStatements=true and clientFoundRows=true would be
// silently dropped.
const extraCapabilities = mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_FOUND_ROWS

// capConn adds extraCapabilities to the server's initial handshake packet,
// the first thing written on a connection, and is a plain net.Conn after.
type capConn struct {
	net.Conn
	patched bool
}

func (c *capConn) Write(p []byte) (int, error) {
	if !c.patched {
		c.patched = true
		patchHandshake(p, extraCapabilities)
	}
	return c.Conn.Write(p)
}

// patchHandshake sets capability bits in a Protocol::HandshakeV10 packet
// (with its 4-byte header). It leaves anything else untouched.
func patchHandshake(p []byte, caps uint32) {
	if len(p) < 5 || p[3] != 0 || p[4] != 10 {
		return
	}
	end := bytes.IndexByte(p[5:], 0)
	if end < 0 {
		return
	}
	// version\0, connection id (4), auth data part 1 (8), filler (1).
	lo := 5 + end + 1 + 4 + 8 + 1
	hi := lo + 2 + 1 + 2
	if len(p) < hi+2 {
		return
	}
	binary.LittleEndian.PutUint16(p[lo:], binary.LittleEndian.Uint16(p[lo:])|uint16(caps))
	binary.LittleEndian.PutUint16(p[hi:], binary.LittleEndian.Uint16(p[hi:])|uint16(caps>>16))
}
