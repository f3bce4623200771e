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

// fakeRemote reports every accepted connection as coming from addr: a
// client that is not on the server's machine, in a test on loopback.
type fakeRemote struct {
	net.Listener
	addr net.Addr
}

type remoteConn struct {
	net.Conn
	addr net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.addr }

func (l fakeRemote) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return remoteConn{c, l.addr}, nil
}

// badHandshake connects and answers the greeting with a one-byte
// handshake response, then reads until the server closes (after its
// "Bad handshake"): a protocol error of the connection phase, counted by
// the time the read returns.
func badHandshake(t *testing.T, addr string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write([]byte{1, 0, 0, 1, 'x'}); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(nc); err != nil {
		t.Fatalf("read until the server closed: %v", err)
	}
}

// healthCheck connects and closes without a word, as a load balancer's
// TCP check does.
func healthCheck(t *testing.T, addr string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

// TestHostBlockedAfterHandshakeErrors: MariaDB's rule. MaxConnectErrors
// consecutive connection phases that break the protocol block a host
// (1129, even with the right password) until FLUSH HOSTS; refused
// logins and health checks are not counted, and a successful login
// resets the count.
func TestHostBlockedAfterHandshakeErrors(t *testing.T) {
	users := NewUsers()
	if err := users.Add("root", "rootpw"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000}
	addr, _ := startServerOn(t, Config{Users: users, MaxConnectErrors: 3}, fakeRemote{ln, remote})
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
	for i := range 10 {
		if err := ping(bad); errCode(err) != 1045 {
			t.Fatalf("wrong password #%d: %v, want 1045 (refused logins are not counted)", i+1, err)
		}
		healthCheck(t, addr)
	}
	badHandshake(t, addr)
	badHandshake(t, addr)
	if err := ping(good); err != nil {
		t.Fatalf("after 2 bad handshakes, 10 refused logins and 10 health checks: %v", err)
	}
	for range 3 {
		badHandshake(t, addr)
	}
	err = ping(good)
	var me *mysql.MySQLError
	want := "Host '192.0.2.7' is blocked because of many connection errors; unblock with 'mysqladmin flush-hosts'"
	if !errors.As(err, &me) || me.Number != 1129 || me.Message != want {
		t.Fatalf("blocked host with the right password: %v, want 1129 %s", err, want)
	}
	mustExec(t, admin, "FLUSH HOSTS")
	if err := ping(good); err != nil {
		t.Fatalf("after FLUSH HOSTS: %v", err)
	}
}

// TestLoopbackNeverBlocked: a loopback client is never blocked, whatever
// it sends, so an admin on the server's machine (and everything behind a
// local proxy) can always log in and run FLUSH HOSTS, as with MariaDB.
func TestLoopbackNeverBlocked(t *testing.T) {
	users := NewUsers()
	if err := users.Add("root", "rootpw"); err != nil {
		t.Fatal(err)
	}
	addr, _ := startServerWith(t, Config{Users: users, MaxConnectErrors: 2})
	for range 5 {
		badHandshake(t, addr)
		db := open(t, fmt.Sprintf("root:guess@tcp(%s)/", addr))
		if err := db.Ping(); errCode(err) != 1045 {
			t.Fatalf("wrong password: %v", err)
		}
		db.Close()
	}
	if err := open(t, fmt.Sprintf("root:rootpw@tcp(%s)/", addr)).Ping(); err != nil {
		t.Fatalf("loopback login after 5 bad handshakes and 5 refused logins: %v", err)
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
