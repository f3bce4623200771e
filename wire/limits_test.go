package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestMaxConnections: a connection beyond MaxConnections gets MySQL's
// 1040 in place of the greeting; once one closes, a new one gets in.
func TestMaxConnections(t *testing.T) {
	addr, _ := startServerWith(t, Config{MaxConnections: 2})
	dsn := fmt.Sprintf("root@tcp(%s)/", addr)
	a, b := open(t, dsn), open(t, dsn)
	for _, db := range []interface{ Ping() error }{a, b} {
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
	}
	c := open(t, dsn)
	err := c.Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1040 || me.Message != "Too many connections" {
		t.Fatalf("third connection: %v, want 1040 Too many connections", err)
	}
	if got := scalar(t, a, "SELECT @@max_connections"); got != "2" {
		t.Errorf("@@max_connections = %s", got)
	}
	b.Close()
	// The server notices b's close when its read returns; until then a
	// new connection may still be refused.
	for c.Ping() != nil {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHostBlockedAfterRefusedLogins: MaxConnectErrors consecutive refused
// logins block the host (1129, even with the right password) until FLUSH
// HOSTS; a successful login in between resets the count.
func TestHostBlockedAfterRefusedLogins(t *testing.T) {
	users := NewUsers()
	if err := users.Add("root", "rootpw"); err != nil {
		t.Fatal(err)
	}
	addr, _ := startServerWith(t, Config{Users: users, MaxConnectErrors: 3})
	good := fmt.Sprintf("root:rootpw@tcp(%s)/", addr)
	bad := fmt.Sprintf("root:guess@tcp(%s)/", addr)
	admin := open(t, good) // logged in before the host is blocked
	if err := admin.Ping(); err != nil {
		t.Fatal(err)
	}
	ping := func(dsn string) error {
		db := open(t, dsn)
		defer db.Close()
		return db.Ping()
	}
	for range 2 {
		if err := ping(bad); errCode(err) != 1045 {
			t.Fatalf("wrong password: %v", err)
		}
	}
	if err := ping(good); err != nil {
		t.Fatalf("after 2 refused logins: %v", err)
	}
	for i := range 3 {
		if err := ping(bad); errCode(err) != 1045 {
			t.Fatalf("wrong password #%d after the reset: %v", i+1, err)
		}
	}
	err := ping(good)
	var me *mysql.MySQLError
	want := "Host '127.0.0.1' is blocked because of many connection errors; unblock with 'mysqladmin flush-hosts'"
	if !errors.As(err, &me) || me.Number != 1129 || me.Message != want {
		t.Fatalf("blocked host with the right password: %v, want 1129 %s", err, want)
	}
	mustExec(t, admin, "FLUSH HOSTS")
	if err := ping(good); err != nil {
		t.Fatalf("after FLUSH HOSTS: %v", err)
	}
}

// TestConnectTimeout: a client that connects and never logs in is
// disconnected after ConnectTimeout.
func TestConnectTimeout(t *testing.T) {
	addr, _ := startServerWith(t, Config{ConnectTimeout: 50 * time.Millisecond})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The greeting, then nothing until the server closes.
	if _, err := io.ReadAll(nc); err != nil {
		t.Fatalf("read until the server closed: %v", err)
	}
}
