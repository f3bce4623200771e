package mysqlconn

import (
	"bytes"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// executePacket is a COM_STMT_EXECUTE of statement 1 with one parameter,
// header included: with its type (bound) or without, and value.
func executePacket(bound bool, value []byte) []byte {
	p := []byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0} // id, flags, iterations, NULL bitmap
	if bound {
		p = append(p, 1, mysql.MYSQL_TYPE_VAR_STRING, 0)
	} else {
		p = append(p, 0)
	}
	p = append(p, value...)
	return append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), 0}, p...)
}

// TestFixExecute checks workarounds 5 and 6: a re-execution without
// parameter types gets the last ones back, and cut-off values are refused
// before go-mysql reads past the packet.
func TestFixExecute(t *testing.T) {
	c := newConn(nil, nil, 1<<20, 0)
	c.Prepared(1, 1)
	value := []byte{3, 'a', 'b', 'c'}
	first := executePacket(true, value)
	if got, ok := c.fixExecute(first); !ok || !bytes.Equal(got, first) {
		t.Fatalf("execute with types changed: %q, %v", got, ok)
	}
	if got, ok := c.fixExecute(executePacket(false, value)); !ok || !bytes.Equal(got, first) {
		t.Fatalf("re-execute without types: %q, want %q", got, first)
	}
	if _, ok := c.fixExecute(executePacket(true, []byte{3, 'a'})); ok {
		t.Fatal("an execute whose value is cut off was passed to go-mysql")
	}
}

// TestLongData checks workaround 11: COM_STMT_SEND_LONG_DATA chunks never
// reach go-mysql; they are joined and put into the next execute of their
// statement as the parameter's value (a string), the values after it
// kept; a reset drops them.
func TestLongData(t *testing.T) {
	c := newConn(nil, nil, 1<<20, 0)
	c.Prepared(1, 3)
	frame := func(payload []byte) []byte {
		return append([]byte{byte(len(payload)), byte(len(payload) >> 8), 0, 0}, payload...)
	}
	long := func(param byte, data string) []byte {
		return frame(append([]byte{mysql.COM_STMT_SEND_LONG_DATA, 1, 0, 0, 0, param, 0}, data...))
	}
	// Two chunks for parameter 1 (a LONGLONG by its type), in one read
	// with a ping after them: only the ping reaches go-mysql.
	c.feed(append(append(long(1, "ab"), long(1, "cd")...), frame([]byte{mysql.COM_PING})...))
	if want := frame([]byte{mysql.COM_PING}); !bytes.Equal(c.out, want) {
		t.Fatalf("go-mysql is given %q, want only the ping %q", c.out, want)
	}
	// Execute: param 0 a TINY 7, param 1 long data (no value in the
	// packet), param 2 a string "z".
	exec := frame([]byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		mysql.MYSQL_TYPE_TINY, 0, mysql.MYSQL_TYPE_LONGLONG, 0x80, mysql.MYSQL_TYPE_VAR_STRING, 0, 7, 1, 'z'})
	got, ok := c.fixExecute(exec)
	want := frame([]byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		mysql.MYSQL_TYPE_TINY, 0, mysql.MYSQL_TYPE_STRING, 0x80, mysql.MYSQL_TYPE_VAR_STRING, 0, 7, 4, 'a', 'b', 'c', 'd', 1, 'z'})
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("execute with long data:\n got %v %v\nwant %v", got, ok, want)
	}
	// Long data wins over the parameter's NULL bit (mysqlnd sets it for
	// a blob whose PHP variable is null): the bit is cleared.
	c.feed(long(1, "xy"))
	nullExec := frame([]byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 1,
		mysql.MYSQL_TYPE_TINY, 0, mysql.MYSQL_TYPE_LONG_BLOB, 0, mysql.MYSQL_TYPE_VAR_STRING, 0, 7, 1, 'z'})
	want = frame([]byte{mysql.COM_STMT_EXECUTE, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
		mysql.MYSQL_TYPE_TINY, 0, mysql.MYSQL_TYPE_LONG_BLOB, 0, mysql.MYSQL_TYPE_VAR_STRING, 0, 7, 2, 'x', 'y', 1, 'z'})
	if got, ok := c.fixExecute(nullExec); !ok || !bytes.Equal(got, want) {
		t.Fatalf("long data with the NULL bit set:\n got %v %v\nwant %v", got, ok, want)
	}
	// Used up: the next execute must send a value (this one has none).
	if len(c.long) != 0 {
		t.Fatalf("long data left after its execute: %v", c.long)
	}
	if _, ok := c.fixExecute(exec); ok {
		t.Fatal("an execute without its LONGLONG value was passed on")
	}
	// A reset drops long data; so does a parameter beyond the count.
	c.out = c.out[:0]
	c.feed(append(append(long(1, "ab"), long(9, "x")...), frame([]byte{mysql.COM_STMT_RESET, 1, 0, 0, 0})...))
	if len(c.long) != 0 {
		t.Fatalf("long data after a reset: %v", c.long)
	}
	// Long data that would not fit one frame in the execute is refused
	// with 1153 (the connection goes on).
	c.long = map[uint32]map[uint16][]byte{1: {1: make([]byte, maxFrame)}}
	if _, ok := c.fixExecute(exec); ok || c.refuseErr == nil || c.refuseErr.Code != mysql.ER_NET_PACKET_TOO_LARGE {
		t.Fatalf("16 MB of long data: ok %v, refusal %v", ok, c.refuseErr)
	}
}

// TestLongDataFrames: a long-data chunk of more than one protocol frame,
// read in pieces that end right after a header, is kept whole and none of
// it reaches go-mysql (its first header was once queued for go-mysql
// before the command byte was read).
func TestLongDataFrames(t *testing.T) {
	c := newConn(nil, nil, 64<<20, 0)
	c.Prepared(1, 1)
	payload := append([]byte{mysql.COM_STMT_SEND_LONG_DATA, 1, 0, 0, 0, 0, 0}, bytes.Repeat([]byte{'x'}, maxFrame+10-7)...)
	first := append([]byte{0xff, 0xff, 0xff, 0}, payload[:maxFrame]...)
	rest := payload[maxFrame:]
	second := append([]byte{byte(len(rest)), 0, 0, 1}, rest...)
	for _, piece := range [][]byte{first[:4], first[4:], second[:4], second[4:]} {
		c.feed(piece)
		if len(c.out) != 0 || c.err != nil {
			t.Fatalf("go-mysql is given %d bytes of a long-data packet (err %v)", len(c.out), c.err)
		}
	}
	if got := len(c.long[1][0]); got != maxFrame+10-7 {
		t.Fatalf("long data kept: %d bytes, want %d", got, maxFrame+10-7)
	}
	// A multi-frame packet of another command passes through whole.
	q := append([]byte{mysql.COM_QUERY}, bytes.Repeat([]byte{' '}, maxFrame)...)
	pkt := append(append([]byte{0xff, 0xff, 0xff, 0}, q[:maxFrame]...), append([]byte{1, 0, 0, 1}, q[maxFrame:]...)...)
	c.feed(pkt[:4])
	c.feed(pkt[4:])
	if !bytes.Equal(c.out, pkt) {
		t.Fatalf("a two-frame COM_QUERY reached go-mysql as %d bytes, want %d unchanged", len(c.out), len(pkt))
	}
}
