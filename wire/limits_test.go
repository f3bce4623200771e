package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// limitUsers has an admin (root) and an allocating account (app).
func limitUsers(t *testing.T) *Users {
	t.Helper()
	users := NewUsers()
	if err := users.Add("root", "rootpw"); err != nil {
		t.Fatal(err)
	}
	if err := users.AddRole("app", "apppw", mysqlconn.RoleAlloc); err != nil {
		t.Fatal(err)
	}
	return users
}

// TestMaxConnections: a login beyond MaxConnections gets MySQL's 1040;
// the admin role has one connection more (MariaDB's extra connection for
// SUPER), then it is refused too; once one closes, a new one gets in.
func TestMaxConnections(t *testing.T) {
	addr, _ := startServerWith(t, Config{Users: limitUsers(t), MaxConnections: 2})
	app := fmt.Sprintf("app:apppw@tcp(%s)/", addr)
	root := fmt.Sprintf("root:rootpw@tcp(%s)/", addr)
	a, b := open(t, app), open(t, app)
	for _, db := range []interface{ Ping() error }{a, b} {
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
	}
	c := open(t, app)
	err := c.Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1040 || me.Message != "Too many connections" {
		t.Fatalf("third connection: %v, want 1040 Too many connections", err)
	}
	admin := open(t, root)
	if err := admin.Ping(); err != nil {
		t.Fatalf("admin beyond max_connections: %v, want its reserved connection", err)
	}
	if got := scalar(t, admin, "SELECT @@max_connections"); got != "2" {
		t.Errorf("@@max_connections = %s", got)
	}
	if err := open(t, root).Ping(); errCode(err) != 1040 {
		t.Fatalf("second admin beyond max_connections: %v, want 1040", err)
	}
	// The admin's extra connection counts: with b closed, a and the admin
	// are max_connections logged in; with the admin's closed too, c gets
	// in. The server notices a close when its read returns; until then a
	// new login may still be refused.
	b.Close()
	if err := c.Ping(); errCode(err) != 1040 {
		t.Fatalf("with a and the admin logged in: %v, want 1040", err)
	}
	admin.Close()
	for deadline := time.Now().Add(5 * time.Second); c.Ping() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no login 5 s after closing two of three connections")
		}
	}
}

// silentSockets opens n connections that read the greeting and never
// answer it, closed at the end of the test.
func silentSockets(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for range n {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		out = append(out, nc)
	}
	return out
}

// TestSilentSocketsDoNotLockOut: sockets that never answer the greeting
// do not count against MaxConnections (it used to: 3x max_connections of
// them made every login fail with 1040 until the connect timeout), and
// beyond MaxPendingLogins the oldest of them is closed, so a login gets
// in however many there are; the allocating account too.
func TestSilentSocketsDoNotLockOut(t *testing.T) {
	for _, pending := range []int{0, 4} {
		t.Run(fmt.Sprintf("pending=%d", pending), func(t *testing.T) {
			addr, _ := startServerWith(t, Config{Users: limitUsers(t), MaxConnections: 10, MaxPendingLogins: pending,
				ConnectTimeout: time.Minute})
			socks := silentSockets(t, addr, 30)
			for _, dsn := range []string{"app:apppw@tcp(%s)/", "root:rootpw@tcp(%s)/"} {
				db := open(t, fmt.Sprintf(dsn, addr))
				if err := db.Ping(); err != nil {
					t.Fatalf("login after 30 silent sockets, max_connections 10: %v", err)
				}
			}
			if pending == 0 {
				return
			}
			// With 4 pending at most, every silent socket but the newest 4
			// was closed to make room.
			for i, nc := range socks[:len(socks)-pending] {
				_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.ReadAll(nc); err != nil {
					t.Fatalf("silent socket %d of %d, pending logins %d: %v, want closed by the server", i+1, len(socks), pending, err)
				}
			}
		})
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
