package mysqlconn

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// FuzzHandshakeParse feeds arbitrary bytes to the connection-phase parsers:
// they must report malformed input, never panic.
func FuzzHandshakeParse(f *testing.F) {
	f.Add([]byte("\x85\xa2\x3f\x00\x00\x00\x00\x01\x2d" + strings.Repeat("\x00", 23) + "root\x00\x00\x00mysql_native_password\x00"))
	f.Add([]byte("\x8d\xa6\x3f\x00\x00\x00\x00\x01\x2d" + strings.Repeat("\x00", 23) + "u\x00\xfc\x02"))
	f.Add([]byte("root\x00\x14aaaaaaaaaaaaaaaaaaaadb\x00\x2d\x00caching_sha2_password\x00"))
	f.Fuzz(func(t *testing.T, p []byte) {
		l, ssl, err := parseHandshakeResponse(p)
		if err == nil && !ssl && l == nil {
			t.Fatal("no login and no error")
		}
		if err != nil && !errors.Is(err, errMalformed) {
			t.Fatalf("error %v does not wrap errMalformed", err)
		}
		for _, caps := range []uint32{0, mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_PLUGIN_AUTH} {
			if _, err := parseChangeUser(p, caps); err != nil && !errors.Is(err, errMalformed) {
				t.Fatal(err)
			}
		}
	})
}
