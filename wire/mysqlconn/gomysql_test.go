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
