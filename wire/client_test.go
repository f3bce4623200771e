package wire

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// rawClient speaks the protocol byte by byte, for what drivers do not let
// a test do: choose the auth plugin and its data, send COM_CHANGE_USER or
// COM_STATISTICS, or send malformed packets.
type rawClient struct {
	t      testing.TB
	conn   net.Conn
	seq    byte
	salt   []byte
	plugin string // the plugin the server proposed
	caps   uint32 // the server's capabilities
	connID uint32
}

const rawClientCaps = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION |
	mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | mysql.CLIENT_CONNECT_WITH_DB |
	mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_TRANSACTIONS

// dialRaw connects and reads the server's greeting.
func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	network := "tcp"
	if strings.HasPrefix(addr, "/") {
		network = "unix"
	}
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	c := &rawClient{t: t, conn: nc}
	g, err := c.read()
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	r := pktReader{b: g, pos: 1}
	if _, ok := r.cstring(); !ok || g[0] != 10 {
		t.Fatalf("greeting %q", g)
	}
	id, _ := r.bytes(4)
	c.connID = binary.LittleEndian.Uint32(id)
	s1, _ := r.bytes(8)
	r.pos++
	lo, _ := r.bytes(2)
	r.pos += 3
	hi, _ := r.bytes(2)
	r.pos += 11
	s2, _ := r.bytes(12)
	r.pos++
	c.salt = append(append([]byte{}, s1...), s2...)
	c.caps = uint32(binary.LittleEndian.Uint16(lo)) | uint32(binary.LittleEndian.Uint16(hi))<<16
	c.plugin = r.cstringOrRest()
	return c
}

func (c *rawClient) read() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.conn, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != c.seq {
		return nil, fmt.Errorf("sequence %d, want %d", h[3], c.seq)
	}
	c.seq++
	b := make([]byte, n)
	_, err := io.ReadFull(c.conn, b)
	return b, err
}

func (c *rawClient) mustRead() []byte {
	c.t.Helper()
	b, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return b
}

func (c *rawClient) write(payload []byte) {
	c.t.Helper()
	n := len(payload)
	pkt := append([]byte{byte(n), byte(n >> 8), byte(n >> 16), c.seq}, payload...)
	c.seq++
	if _, err := c.conn.Write(pkt); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// pktReader reads a server packet's fields; a field cut off reads as
// empty and is caught by the test's check of its value.
type pktReader struct {
	b   []byte
	pos int
}

func (r *pktReader) bytes(n int) ([]byte, bool) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, false
	}
	r.pos += n
	return r.b[r.pos-n : r.pos], true
}

// cstring reads a NUL-terminated string; ok is false if the NUL is missing.
func (r *pktReader) cstring() (string, bool) {
	i := bytes.IndexByte(r.b[r.pos:], 0)
	if i < 0 {
		return "", false
	}
	s := string(r.b[r.pos : r.pos+i])
	r.pos += i + 1
	return s, true
}

// cstringOrRest reads a NUL-terminated string or the rest of the packet.
func (r *pktReader) cstringOrRest() string {
	if s, ok := r.cstring(); ok {
		return s
	}
	s := string(r.b[r.pos:])
	r.pos = len(r.b)
	return s
}

func (r *pktReader) lenencBytes() ([]byte, bool) {
	v, _, n, err := mysql.LengthEncodedString(r.b[r.pos:])
	if err != nil {
		return nil, false
	}
	r.pos += n
	return v, true
}

// scramble computes plugin's auth data for password with the salt.
func scramble(plugin string, salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	if plugin == mysqlconn.NativePassword {
		return mysql.CalcNativePassword(salt, []byte(password))
	}
	return mysql.CalcCachingSha2Password(salt, []byte(password))
}

// loginOpts shape a handshake response.
type loginOpts struct {
	user, password, db string
	plugin             string // "" : the server's
	lazy               bool   // as libmysqlclient with another plugin: no auth data
	tls                *tls.Config
	caps               uint32 // extra capabilities
}

// login authenticates and returns the final packet (OK or ERR), following
// auth switches and caching_sha2_password's fast-auth message.
func (c *rawClient) login(o loginOpts) []byte {
	c.t.Helper()
	caps := uint32(rawClientCaps) | o.caps
	head := binary.LittleEndian.AppendUint32(nil, caps|boolFlag(o.tls != nil, mysql.CLIENT_SSL))
	head = append(head, 0, 0, 0, 1, 45)
	head = append(head, make([]byte, 23)...)
	if o.tls != nil {
		c.write(head)
		tc := tls.Client(c.conn, o.tls)
		if err := tc.Handshake(); err != nil {
			c.t.Fatalf("TLS: %v", err)
		}
		c.conn = tc
	}
	plugin := o.plugin
	if plugin == "" {
		plugin = c.plugin
	}
	var auth []byte
	if !o.lazy {
		auth = scramble(plugin, c.salt, o.password)
	}
	p := append([]byte{}, head...)
	p = append(p, o.user...)
	p = append(p, 0, byte(len(auth)))
	p = append(p, auth...)
	p = append(p, o.db...)
	p = append(p, 0)
	p = append(p, plugin...)
	p = append(p, 0)
	c.write(p)
	return c.authReplies(o.password)
}

func (c *rawClient) authReplies(password string) []byte {
	c.t.Helper()
	for {
		b := c.mustRead()
		switch {
		case len(b) > 0 && b[0] == mysql.EOF_HEADER: // auth switch
			r := pktReader{b: b, pos: 1}
			plugin, _ := r.cstring()
			salt, _ := r.bytes(20)
			c.write(scramble(plugin, salt, password))
		case len(b) == 2 && b[0] == mysql.MORE_DATE_HEADER && b[1] == mysql.CACHE_SHA2_FAST_AUTH:
		case len(b) > 0 && b[0] == mysql.MORE_DATE_HEADER:
			c.t.Fatalf("server asked for more auth data: %q", b)
		default:
			return b
		}
	}
}

func boolFlag(b bool, f uint32) uint32 {
	if b {
		return f
	}
	return 0
}

// command sends one command packet and returns the first reply packet.
func (c *rawClient) command(cmd byte, data []byte) ([]byte, error) {
	c.seq = 0
	c.write(append([]byte{cmd}, data...))
	return c.read()
}

// query runs a text query and returns the first column of the first row,
// or the error.
func (c *rawClient) query(q string) (string, error) {
	b, err := c.command(mysql.COM_QUERY, []byte(q))
	if err != nil {
		return "", err
	}
	if err := replyErr(b); err != nil || b[0] == mysql.OK_HEADER {
		return "", err
	}
	var first string
	eofs := 0
	for eofs < 2 {
		b = c.mustRead()
		switch {
		case b[0] == mysql.EOF_HEADER && len(b) < 9:
			eofs++
		case eofs == 1 && first == "":
			r := pktReader{b: b}
			v, _ := r.lenencBytes()
			first = string(v)
		}
	}
	return first, nil
}

// replyErr returns the MySQL error an ERR packet carries, or nil.
func replyErr(b []byte) error {
	if len(b) < 9 || b[0] != mysql.ERR_HEADER {
		return nil
	}
	return &mysql.MyError{Code: binary.LittleEndian.Uint16(b[1:]), State: string(b[4:9]), Message: string(b[9:])}
}

func codeOf(err error) uint16 {
	var me *mysql.MyError
	if errors.As(err, &me) {
		return me.Code
	}
	return 0
}

func isOK(b []byte) bool { return len(b) > 0 && b[0] == mysql.OK_HEADER }

// changeUser sends COM_CHANGE_USER as libmysqlclient does: auth data for
// plugin computed with the greeting's salt.
func (c *rawClient) changeUser(user, password, db, plugin string) []byte {
	c.t.Helper()
	auth := scramble(plugin, c.salt, password)
	p := append([]byte(user), 0, byte(len(auth)))
	p = append(p, auth...)
	p = append(p, db...)
	p = append(p, 0, 45, 0)
	p = append(p, plugin...)
	p = append(p, 0)
	c.seq = 0
	c.write(append([]byte{mysql.COM_CHANGE_USER}, p...))
	return c.authReplies(password)
}

// expectClosed checks that the server closes the connection, after at
// most the packets it may still send.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.conn.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatal("server kept the connection open")
		}
		return
	}
}
