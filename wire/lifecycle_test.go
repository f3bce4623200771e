package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// rawSession logs in as root on a fresh server with the Flickr table and
// returns the client and the server's address.
func rawSession(t *testing.T, cfg Config) (*rawClient, string) {
	t.Helper()
	addr, _ := startServerWith(t, cfg)
	return flickrSession(t, addr, rootPassword(cfg)), addr
}

// flickrSession logs in as root and creates the Flickr table.
func flickrSession(t *testing.T, addr, password string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	if b := c.login(loginOpts{user: "root", password: password}); !isOK(b) {
		t.Fatalf("login: %v", replyErr(b))
	}
	for _, q := range []string{"CREATE DATABASE flickr", "USE flickr", flickrDDL} {
		if _, err := c.query(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return c
}

func rootPassword(cfg Config) string {
	if cfg.Users != nil {
		return "rootpw"
	}
	return ""
}

func mustQuery(t *testing.T, c *rawClient, q string) string {
	t.Helper()
	v, err := c.query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func TestChangeUser(t *testing.T) {
	for _, plugin := range []string{mysqlconn.NativePassword, mysqlconn.CachingSHA2Password} {
		t.Run(plugin, func(t *testing.T) {
			c, addr := rawSession(t, Config{Users: testUsers(t)})
			mustQuery(t, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
			mustQuery(t, c, "SET @x = 5")
			if b := c.changeUser("alice", "s3cret:with colon", "flickr", plugin); !isOK(b) {
				t.Fatalf("change user: %v", replyErr(b))
			}
			if u := mustQuery(t, c, "SELECT USER()"); u != "alice@127.0.0.1" {
				t.Fatalf("USER() = %q after change", u)
			}
			if v := mustQuery(t, c, "SELECT LAST_INSERT_ID()"); v != "0" {
				t.Fatalf("LAST_INSERT_ID() = %s after change, want a fresh session", v)
			}
			if v := mustQuery(t, c, "SELECT DATABASE()"); v != "flickr" {
				t.Fatalf("DATABASE() = %q", v)
			}
			// Without a database, and to a user with no password.
			if b := c.changeUser("bob", "", "", plugin); !isOK(b) {
				t.Fatalf("change to bob: %v", replyErr(b))
			}
			if v, _ := c.query("SELECT DATABASE()"); v != "" {
				t.Fatalf("DATABASE() = %q, want NULL", v)
			}
			// A wrong password is refused, and ends the connection.
			if err := replyErr(c.changeUser("alice", "wrong", "", plugin)); codeOf(err) != 1045 {
				t.Fatalf("wrong password: %v", err)
			}
			c.expectClosed()
			// An unknown plugin in COM_CHANGE_USER gets an auth switch.
			c = dialRaw(t, addr)
			if b := c.login(loginOpts{user: "bob"}); !isOK(b) {
				t.Fatal(replyErr(b))
			}
			if b := c.changeUser("alice", "s3cret:with colon", "", "sha256_password"); !isOK(b) {
				t.Fatalf("change user with a switch: %v", replyErr(b))
			}
		})
	}
}

func TestStatistics(t *testing.T) {
	c, _ := rawSession(t, Config{})
	b, err := c.command(mysql.COM_STATISTICS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "Uptime: ") || !strings.Contains(string(b), "Questions: 3") {
		t.Fatalf("COM_STATISTICS = %q", b)
	}
	// Nothing else was sent: the next command's reply is its own.
	if b, err := c.command(mysql.COM_PING, nil); err != nil || !isOK(b) {
		t.Fatalf("ping after statistics: %q %v", b, err)
	}
}

func TestLifecycleCommands(t *testing.T) {
	addr, srv := startServerWith(t, Config{})
	c := flickrSession(t, addr, "")
	mustQuery(t, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if b, err := c.command(mysql.COM_RESET_CONNECTION, nil); err != nil || !isOK(b) {
		t.Fatalf("COM_RESET_CONNECTION: %q %v", b, err)
	}
	if v := mustQuery(t, c, "SELECT LAST_INSERT_ID()"); v != "0" {
		t.Fatalf("LAST_INSERT_ID() = %s after reset", v)
	}
	if v := mustQuery(t, c, "SELECT DATABASE()"); v != "flickr" {
		t.Fatalf("reset changed the database: %q", v)
	}
	// COM_SET_OPTION answers EOF; multi-statements off, then on.
	if b, err := c.command(mysql.COM_SET_OPTION, []byte{1, 0}); err != nil || b[0] != mysql.EOF_HEADER {
		t.Fatalf("COM_SET_OPTION: %q %v", b, err)
	}
	if _, err := c.query("SELECT 1; SELECT 2"); codeOf(err) != 1064 {
		t.Fatalf("multi-statement with the option off: %v", err)
	}
	c.command(mysql.COM_SET_OPTION, []byte{0, 0})
	// COM_FIELD_LIST lists the table's columns, then EOF.
	b, err := c.command(mysql.COM_FIELD_LIST, []byte("Tickets64\x00"))
	if err != nil || b[0] == mysql.ERR_HEADER {
		t.Fatalf("COM_FIELD_LIST: %v %v", err, replyErr(b))
	}
	for b[0] != mysql.EOF_HEADER {
		b = c.mustRead()
	}
	// Unknown and unsupported commands: 1047, the connection goes on.
	for _, cmd := range []byte{0x22, 0x99, 0xfe, mysql.COM_BINLOG_DUMP, mysql.COM_REGISTER_SLAVE, mysql.COM_SLEEP} {
		b, err := c.command(cmd, []byte("xyz"))
		if err != nil || codeOf(replyErr(b)) != 1047 {
			t.Fatalf("command %#x: %q %v", cmd, b, err)
		}
	}
	if b, err := c.command(mysql.COM_PING, nil); err != nil || !isOK(b) {
		t.Fatalf("ping: %q %v", b, err)
	}
	// A prepared statement with malformed parameters is an error, not a crash.
	b, err = c.command(mysql.COM_STMT_PREPARE, []byte("REPLACE INTO Tickets64 (stub) VALUES (?)"))
	if err != nil || b[0] != 0 {
		t.Fatalf("prepare: %q %v", b, err)
	}
	id := binary.LittleEndian.Uint32(b[1:])
	for b[0] != mysql.EOF_HEADER {
		b = c.mustRead()
	}
	if v := mustQuery(t, c, "SELECT 7"); v != "7" {
		t.Fatalf("SELECT 7 = %q", v)
	}
	// Parameter values cut off (go-mysql v1.16.0 panics reading such a
	// length): error 1835, and the connection goes on.
	for _, tail := range [][]byte{
		{0xfd},             // a 3-byte length with none of its bytes
		{0xfc, 5},          // a 2-byte length with one
		{0xfe, 1, 2, 3},    // an 8-byte length with three
		{3, 'a'},           // a string shorter than its length
		{0xfc, 0xff, 0xff}, // 65535 bytes announced, none sent
	} {
		exec := binary.LittleEndian.AppendUint32(nil, id)
		exec = append(exec, 0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_VAR_STRING, 0)
		exec = append(exec, tail...)
		if b, err := c.command(mysql.COM_STMT_EXECUTE, exec); err != nil || codeOf(replyErr(b)) != mysql.ER_MALFORMED_PACKET {
			t.Fatalf("malformed execute %x: %q %v", tail, b, err)
		}
		if v := mustQuery(t, c, "SELECT 8"); v != "8" {
			t.Fatalf("after a malformed execute: SELECT 8 = %q", v)
		}
	}
	// Pipelined between two queries, the refusal is answered in its turn.
	exec := binary.LittleEndian.AppendUint32([]byte{mysql.COM_STMT_EXECUTE}, id)
	exec = append(exec, 0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_VAR_STRING, 0, 0xfd)
	var pipe []byte
	for _, p := range [][]byte{append([]byte{mysql.COM_QUERY}, "SELECT 9"...), exec, append([]byte{mysql.COM_QUERY}, "SELECT 11"...)} {
		pipe = append(append(pipe, byte(len(p)), 0, 0, 0), p...)
	}
	if _, err := c.conn.Write(pipe); err != nil {
		t.Fatal(err)
	}
	// row reads a one-column, one-row result set and returns the row.
	row := func() string {
		t.Helper()
		c.seq = 1
		if b := c.mustRead(); b[0] != 1 {
			t.Fatalf("pipelined query answered %q", b)
		}
		var r []byte
		for eofs := 0; eofs < 2; {
			switch b := c.mustRead(); {
			case b[0] == mysql.EOF_HEADER && len(b) < 9:
				eofs++
			case eofs == 1:
				r = b
			}
		}
		return string(r)
	}
	if r := row(); r != "\x019" {
		t.Fatalf("pipelined SELECT 9: row %q", r)
	}
	c.seq = 1
	if b := c.mustRead(); codeOf(replyErr(b)) != mysql.ER_MALFORMED_PACKET {
		t.Fatalf("pipelined malformed execute answered %q", b)
	}
	if r := row(); r != "\x0211" {
		t.Fatalf("pipelined SELECT 11: row %q", r)
	}
	if v := mustQuery(t, c, "SELECT 10"); v != "10" {
		t.Fatalf("after the pipeline: SELECT 10 = %q", v)
	}
	if n := srv.panics.Load(); n != 0 {
		t.Fatalf("%d handler panics", n)
	}
	alive(t, addr)
}
func TestBadPackets(t *testing.T) {
	const limit = 4096
	t.Run("empty", func(t *testing.T) {
		c, addr := rawSession(t, Config{MaxAllowedPacket: limit})
		c.seq = 0
		c.write(nil)
		if b, err := c.read(); err != nil || codeOf(replyErr(b)) != mysql.ER_MALFORMED_PACKET {
			t.Fatalf("empty packet: %q %v", b, err)
		}
		c.expectClosed()
		alive(t, addr)
	})
	t.Run("too large", func(t *testing.T) {
		c, addr := rawSession(t, Config{MaxAllowedPacket: limit})
		if _, err := c.query("SELECT '" + strings.Repeat("x", limit-20) + "'"); err != nil {
			t.Fatalf("a packet under the limit: %v", err)
		}
		c.seq = 0
		c.write(append([]byte{mysql.COM_QUERY}, strings.Repeat("x", limit+1)...))
		if b, err := c.read(); err != nil || codeOf(replyErr(b)) != mysql.ER_NET_PACKET_TOO_LARGE {
			t.Fatalf("oversized packet: %q %v", b, err)
		}
		c.expectClosed()
		alive(t, addr)
	})
	t.Run("huge header", func(t *testing.T) {
		// A header announcing 16 MiB - 1 and frames after it: refused at
		// the header, before any payload is buffered.
		c, addr := rawSession(t, Config{MaxAllowedPacket: limit})
		_, _ = c.conn.Write([]byte{0xff, 0xff, 0xff, 0, mysql.COM_QUERY})
		c.seq = 1
		if b, err := c.read(); err != nil || codeOf(replyErr(b)) != mysql.ER_NET_PACKET_TOO_LARGE {
			t.Fatalf("huge header: %q %v", b, err)
		}
		c.expectClosed()
		alive(t, addr)
	})
	t.Run("long data", func(t *testing.T) {
		c, addr := rawSession(t, Config{MaxAllowedPacket: limit})
		b, _ := c.command(mysql.COM_STMT_PREPARE, []byte("SELECT ?"))
		id := b[1:5]
		for eofs := 0; eofs < 2; { // parameter and column definitions
			if b = c.mustRead(); b[0] == mysql.EOF_HEADER {
				eofs++
			}
		}
		chunk := append(append(append([]byte{}, id...), 0, 0), bytes.Repeat([]byte("y"), limit/2)...)
		for range 3 {
			c.seq = 0
			c.write(append([]byte{mysql.COM_STMT_SEND_LONG_DATA}, chunk...))
		}
		if b, err := c.read(); err != nil || codeOf(replyErr(b)) != mysql.ER_NET_PACKET_TOO_LARGE {
			t.Fatalf("long data over the limit: %q %v", b, err)
		}
		alive(t, addr)
	})
	t.Run("bad sequence", func(t *testing.T) {
		c, addr := rawSession(t, Config{})
		c.seq = 5
		c.write([]byte{mysql.COM_PING})
		c.expectClosed()
		alive(t, addr)
	})
	t.Run("garbage handshake", func(t *testing.T) {
		addr, _ := startServerWith(t, Config{})
		for _, p := range [][]byte{{}, {1, 2, 3}, bytes.Repeat([]byte{0xff}, 40), append(make([]byte, 32), 0xff)} {
			c := dialRaw(t, addr)
			c.write(p)
			c.expectClosed()
		}
		alive(t, addr)
	})
}

// alive checks that the server still serves new clients.
func alive(t *testing.T, addr string) {
	t.Helper()
	c := dialRaw(t, addr)
	if b := c.login(loginOpts{user: "root"}); !isOK(b) {
		t.Fatalf("server no longer accepts logins: %v", replyErr(b))
	}
	if v := mustQuery(t, c, "SELECT 1"); v != "1" {
		t.Fatalf("SELECT 1 = %q", v)
	}
	// COM_QUIT closes without a reply.
	c.seq = 0
	c.write([]byte{mysql.COM_QUIT})
	c.expectClosed()
}

func TestIdleTimeout(t *testing.T) {
	c, addr := rawSession(t, Config{IdleTimeout: 300 * time.Millisecond})
	time.Sleep(600 * time.Millisecond)
	c.seq = 0
	if b, err := c.read(); err != nil || codeOf(replyErr(b)) != 4031 {
		t.Fatalf("idle connection: %q %v, want error 4031", b, err)
	}
	c.expectClosed()
	// A handshake that never comes is cut by the connect timeout.
	srvAddr, _ := startServerWith(t, Config{ConnectTimeout: 200 * time.Millisecond})
	c = dialRaw(t, srvAddr)
	c.expectClosed()
	alive(t, addr)
}

// TestVanishingClient closes connections in the middle of a statement and
// of a result: the server goes on serving, and Close returns.
func TestVanishingClient(t *testing.T) {
	c, addr := rawSession(t, Config{})
	for range 20 {
		d := dialRaw(t, addr)
		d.login(loginOpts{user: "root", db: "flickr"})
		d.seq = 0
		d.write(append([]byte{mysql.COM_QUERY}, "REPLACE INTO Tickets64 (stub) VALUES ('a'); SHOW VARIABLES"...))
		d.conn.Close()
	}
	if v := mustQuery(t, c, "SELECT 1"); v != "1" {
		t.Fatalf("SELECT 1 = %q", v)
	}
	// COM_QUIT closes without a reply.
	c.seq = 0
	c.write([]byte{mysql.COM_QUIT})
	c.expectClosed()
}

// TestPreparedReexecute executes a prepared statement again without
// re-sending the parameter types, as mysqlnd and DBD::mysql do, and checks
// the prepare response's column labels.
func TestPreparedReexecute(t *testing.T) {
	c, _ := rawSession(t, Config{})
	b, err := c.command(mysql.COM_STMT_PREPARE, []byte("REPLACE INTO Tickets64 (stub) VALUES (?)"))
	if err != nil || b[0] != 0 {
		t.Fatalf("prepare: %q %v", b, err)
	}
	id := binary.LittleEndian.Uint32(b[1:])
	for b[0] != mysql.EOF_HEADER {
		b = c.mustRead()
	}
	exec := func(withTypes bool, stub byte) []byte {
		p := binary.LittleEndian.AppendUint32(nil, id)
		p = append(p, 0, 1, 0, 0, 0, 0) // flags, iteration count, NULL bitmap
		if withTypes {
			p = append(p, 1, mysql.MYSQL_TYPE_VAR_STRING, 0)
		} else {
			p = append(p, 0)
		}
		p = append(p, 1, stub)
		b, err := c.command(mysql.COM_STMT_EXECUTE, p)
		if err != nil || !isOK(b) {
			t.Fatalf("execute (types %v): %v %v", withTypes, err, replyErr(b))
		}
		return b
	}
	exec(true, 'a')
	exec(false, 'b')
	exec(false, 'c')
	defer func() {
		// COM_RESET_CONNECTION deallocates prepared statements.
		if b, err := c.command(mysql.COM_RESET_CONNECTION, nil); err != nil || !isOK(b) {
			t.Fatalf("reset: %q %v", b, err)
		}
		p := binary.LittleEndian.AppendUint32(nil, id)
		b, err := c.command(mysql.COM_STMT_EXECUTE, append(p, 0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_VAR_STRING, 0, 1, 'd'))
		if err != nil || codeOf(replyErr(b)) != 1243 {
			t.Fatalf("execute after reset: %q %v", b, err)
		}
	}()
	if v := mustQuery(t, c, "SELECT id FROM Tickets64 WHERE stub = 'c'"); v != "3" {
		t.Fatalf("id of c %q, want 3: the re-executions lost their parameter", v)
	}
	// The prepare response labels the columns.
	b, _ = c.command(mysql.COM_STMT_PREPARE, []byte("SELECT id AS ticket, stub FROM Tickets64 WHERE stub = ?"))
	var names []string
	for eofs := 0; eofs < 2; {
		if b = c.mustRead(); b[0] == mysql.EOF_HEADER {
			eofs++
			continue
		}
		r := pktReader{b: b}
		var f [5][]byte
		for i := range f {
			f[i], _ = r.lenencBytes()
		}
		names = append(names, string(f[4]))
	}
	if strings.Join(names, ",") != "?,ticket,stub" {
		t.Fatalf("prepare response labels %q", names)
	}
}

// TestPipelinedPrepareExecute sends a prepare and two executes of the
// statement it will create in one write, as a pipelining client may: the
// executes wait until the prepare is answered (their parameters are
// counted then), and the second, without types, gets the first's.
func TestPipelinedPrepareExecute(t *testing.T) {
	c, _ := rawSession(t, Config{})
	exec := func(withTypes bool, stub byte) []byte {
		p := binary.LittleEndian.AppendUint32([]byte{mysql.COM_STMT_EXECUTE}, 1) // the connection's first statement
		p = append(p, 0, 1, 0, 0, 0, 0)
		if withTypes {
			p = append(p, 1, mysql.MYSQL_TYPE_VAR_STRING, 0)
		} else {
			p = append(p, 0)
		}
		return append(p, 1, stub)
	}
	var pipe []byte
	for _, p := range [][]byte{
		append([]byte{mysql.COM_STMT_PREPARE}, "REPLACE INTO Tickets64 (stub) VALUES (?)"...),
		exec(true, 'a'), exec(false, 'b'),
	} {
		pipe = append(append(pipe, byte(len(p)), byte(len(p)>>8), 0, 0), p...)
	}
	if _, err := c.conn.Write(pipe); err != nil {
		t.Fatal(err)
	}
	c.seq = 1
	b := c.mustRead()
	if b[0] != 0 || binary.LittleEndian.Uint32(b[1:]) != 1 {
		t.Fatalf("prepare answered %q %v", b, replyErr(b))
	}
	for b[0] != mysql.EOF_HEADER { // the parameter's definition, then EOF
		b = c.mustRead()
	}
	for _, stub := range "ab" {
		c.seq = 1
		if b := c.mustRead(); !isOK(b) {
			t.Fatalf("pipelined execute %c: %q %v", stub, b, replyErr(b))
		}
	}
	if v := mustQuery(t, c, "SELECT id FROM Tickets64 WHERE stub = 'b'"); v != "2" {
		t.Fatalf("id of b %q, want 2", v)
	}
}
