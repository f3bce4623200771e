package mysqlconn

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// ticketd runs MySQL's connection phase itself instead of leaving it to
// go-mysql's server.Conn, because go-mysql's handshake cannot:
//   - accept whichever of mysql_native_password and caching_sha2_password
//     the client chose (it switches every client to one plugin per user,
//     and MySQL 9 clients no longer have mysql_native_password);
//   - check a login against the client's address (the default root is for
//     loopback clients only) or refuse plain-TCP logins (--require-tls);
//   - advertise CLIENT_MULTI_STATEMENTS and CLIENT_FOUND_ROWS;
//   - run the same exchange again for COM_CHANGE_USER.
// Once the client is authenticated, go-mysql's handshake is replayed from
// memory (handOver, gomysql.go) and go-mysql serves the command phase.

// serverCaps are the capabilities ticketd offers. Not offered: compression,
// LOCAL INFILE, CLIENT_DEPRECATE_EOF (go-mysql always writes EOF packets)
// and query attributes.
const serverCaps = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_FOUND_ROWS | mysql.CLIENT_LONG_FLAG |
	mysql.CLIENT_CONNECT_WITH_DB | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_TRANSACTIONS |
	mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS |
	mysql.CLIENT_PS_MULTI_RESULTS | mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_CONNECT_ATTRS |
	mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | mysql.CLIENT_SESSION_TRACK

// maxHandshakePacket bounds the packets of the connection phase, before
// the client is known (connection attributes are at most 64 KiB).
const maxHandshakePacket = 1 << 17

// MySQL's errors of the connection phase.
var (
	errBadHandshake = &mysql.MyError{Code: mysql.ER_HANDSHAKE_ERROR, State: "08S01", Message: "Bad handshake"}
	errInsecure     = &mysql.MyError{Code: mysqlerr.CodeSecureTransportRequired, State: "HY000",
		Message: "Connections using insecure transport are prohibited while --require_secure_transport=ON."}
)

// phaseConn reads and writes the connection phase's packets directly on
// the client's connection, unbuffered, so that nothing the client sends
// after its last authentication packet is consumed here: it belongs to
// go-mysql's command phase.
type phaseConn struct {
	conn net.Conn
	seq  byte
}

func (p *phaseConn) ReadPacket() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(p.conn, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %w", errMalformed, err)
		}
		return nil, fmt.Errorf("read packet header: %w", err)
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != p.seq {
		return nil, fmt.Errorf("packet sequence %d, want %d: %w", h[3], p.seq, errMalformed)
	}
	if n > maxHandshakePacket {
		return nil, fmt.Errorf("handshake packet of %d bytes: %w", n, errMalformed)
	}
	p.seq++
	b := make([]byte, n)
	if _, err := io.ReadFull(p.conn, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %w", errMalformed, err) // a packet cut short
		}
		return nil, fmt.Errorf("read packet: %w", err)
	}
	return b, nil
}

func (p *phaseConn) WritePacket(data []byte) error {
	n := len(data) - 4
	data[0], data[1], data[2], data[3] = byte(n), byte(n>>8), byte(n>>16), p.seq
	p.seq++
	if _, err := p.conn.Write(data); err != nil {
		return fmt.Errorf("write packet: %w", err)
	}
	return nil
}

func (p *phaseConn) writeErr(e *mysql.MyError) {
	_ = p.WritePacket(append(make([]byte, 4), errPayload(e)...))
}

// errMalformed marks a connection phase that broke the protocol: a
// malformed or truncated packet, a packet out of sequence, an SSLRequest
// without TLS, a failed TLS handshake. These are what max_connect_errors
// counts (see hostGuard).
var errMalformed = errors.New("malformed packet")

// Config sets up an Acceptor.
type Config struct {
	// Users are the accounts clients log in as. Nil: DefaultUsers.
	Users *Users
	// DefaultAuthPlugin is the plugin the initial handshake proposes and
	// the one a client using any other plugin is switched to:
	// CachingSHA2Password (when "") or NativePassword.
	DefaultAuthPlugin string
	// Version is the server version in the initial handshake.
	Version string
	// TLS, if set, lets clients switch to TLS (CLIENT_SSL) before they
	// authenticate.
	TLS *tls.Config
	// RequireTLS refuses logins over plain TCP with MySQL's error 3159.
	RequireTLS bool
	// MaxAllowedPacket bounds one client packet of the command phase,
	// frames joined; 0 checks nothing.
	MaxAllowedPacket int
	// WriteTimeout bounds a write to a client that stopped reading; 0
	// sets no deadline.
	WriteTimeout time.Duration
	// Logger logs refused logins. Nil: slog.Default().
	Logger *slog.Logger
	// AuthFailed, if set, is called for every refused login and
	// COM_CHANGE_USER (error 1045), for metrics.
	AuthFailed func()
	// MaxConnectErrors blocks a host after this many consecutive
	// connection phases that broke the protocol (MySQL's
	// max_connect_errors; see hostGuard): error 1129 until FlushHosts.
	// Loopback clients are never blocked. 0 blocks nothing.
	MaxConnectErrors int
}

// Validate reports a configuration an Acceptor cannot serve as asked.
func (c *Config) Validate() error {
	switch c.DefaultAuthPlugin {
	case "", NativePassword, CachingSHA2Password:
	default:
		return fmt.Errorf("default auth plugin %q: want %s or %s", c.DefaultAuthPlugin, CachingSHA2Password, NativePassword)
	}
	if c.RequireTLS && c.TLS == nil {
		return errors.New("TLS required but no certificate configured")
	}
	return nil
}

// Acceptor runs the connection phase of client connections and hands
// authenticated ones to go-mysql's server.Conn for the command phase. It
// is read-only after NewAcceptor, so connections share it.
type Acceptor struct {
	cfg   Config
	proto *server.Server
	hosts *hostGuard
}

// NewAcceptor builds an Acceptor from a configuration that passed
// Validate.
func NewAcceptor(cfg Config) *Acceptor {
	if cfg.Users == nil {
		cfg.Users = DefaultUsers()
	}
	if cfg.DefaultAuthPlugin == "" {
		cfg.DefaultAuthPlugin = CachingSHA2Password
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AuthFailed == nil {
		cfg.AuthFailed = func() {}
	}
	return &Acceptor{cfg: cfg, proto: newGoMySQLServer(cfg.Version), hosts: newHostGuard(cfg.MaxConnectErrors)}
}

// Login is who a client authenticated as, in the connection phase or with
// COM_CHANGE_USER.
type Login struct {
	User   string
	DB     string // the database the client asked for; "" for none
	Caps   uint32 // the client's negotiated capabilities, as it sent them
	Salt   []byte // the scramble the client last saw (COM_CHANGE_USER reuses it)
	Secure bool   // the connection is TLS
	Role   Role   // what the account may do
	Host   string // the client's host, as MySQL's messages name it
	// TLSVersion and TLSCipher name the TLS session of a secure one, as
	// MariaDB's Ssl_version and Ssl_cipher status variables show them.
	TLSVersion, TLSCipher string
}

// Connect runs the connection phase on nc: the initial handshake, the
// optional TLS upgrade and authentication. Once the client is
// authenticated, ready gets its login; an error from ready ends the
// connection (a *mysql.MyError in it is what the client is told). Then
// Connect builds go-mysql's server.Conn serving h for the command phase
// (see handOver) and sends the client its OK.
func (a *Acceptor) Connect(nc net.Conn, connID uint32, h server.Handler, ready func(Login) error) (*server.Conn, *Conn, error) {
	host := hostOf(nc.RemoteAddr())
	if a.hosts.blocked(host) {
		e := errHostBlocked(host)
		_ = Refuse(nc, e.Code, e.Message)
		return nil, nil, fmt.Errorf("host %s blocked", host)
	}
	c, cc, err := a.connect(nc, connID, h, ready)
	if errors.Is(err, errMalformed) && a.hosts.failed(host) {
		a.cfg.Logger.Warn("host blocked after too many connection errors (malformed handshakes); FLUSH HOSTS unblocks it",
			"host", host, "max_connect_errors", a.hosts.max, "err", err)
	}
	return c, cc, err
}

// FlushHosts unblocks every host and forgets their failures (FLUSH HOSTS).
func (a *Acceptor) FlushHosts() { a.hosts.flush() }

// connect is Connect once the host may connect.
func (a *Acceptor) connect(nc net.Conn, connID uint32, h server.Handler, ready func(Login) error) (*server.Conn, *Conn, error) {
	salt := newSalt()
	caps := uint32(serverCaps)
	if a.cfg.TLS != nil {
		caps |= mysql.CLIENT_SSL
	}
	pc := &phaseConn{conn: nc}
	if err := pc.WritePacket(a.initialHandshake(connID, salt, caps)); err != nil {
		return nil, nil, err
	}
	pkt, err := pc.ReadPacket()
	if err != nil {
		return nil, nil, err
	}
	l, sslRequest, err := parseHandshakeResponse(pkt)
	if err != nil {
		pc.writeErr(errBadHandshake)
		return nil, nil, err
	}
	secure := false
	var tlsVersion, tlsCipher string
	if sslRequest {
		if a.cfg.TLS == nil {
			pc.writeErr(errBadHandshake)
			return nil, nil, fmt.Errorf("SSL request without TLS configured: %w", errMalformed)
		}
		tc := tls.Server(nc, a.cfg.TLS)
		if err := tc.Handshake(); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("%w: %w", errMalformed, err)
			}
			return nil, nil, fmt.Errorf("TLS handshake: %w", err)
		}
		pc.conn, secure = tc, true
		st := tc.ConnectionState()
		tlsVersion, tlsCipher = tlsVersionName(st.Version), tls.CipherSuiteName(st.CipherSuite)
		if pkt, err = pc.ReadPacket(); err != nil {
			return nil, nil, err
		}
		if l, sslRequest, err = parseHandshakeResponse(pkt); err != nil || sslRequest {
			pc.writeErr(errBadHandshake)
			return nil, nil, errors.Join(errMalformed, err)
		}
	}
	if a.cfg.RequireTLS && !secure {
		pc.writeErr(errInsecure)
		return nil, nil, errors.New("plain-TCP login refused (--require-tls)")
	}
	l.caps &= caps
	err = a.authenticate(pc, nc.RemoteAddr(), salt, l, "login refused")
	if err == nil {
		// Before the client hears it, so its next connection finds the
		// count reset.
		a.hosts.succeeded(hostOf(nc.RemoteAddr()))
	}
	if err != nil {
		if errAccessDenied(err) {
			pc.writeErr(err.(*mysql.MyError))
		}
		return nil, nil, err
	}
	role, _, _ := a.cfg.Users.Role(l.user)
	if err := ready(Login{User: l.user, DB: l.db, Caps: l.caps, Salt: salt, Secure: secure, TLSVersion: tlsVersion, TLSCipher: tlsCipher, Role: role, Host: hostOf(nc.RemoteAddr())}); err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) {
			pc.writeErr(me)
		}
		return nil, nil, err
	}
	c, cc, err := a.handOver(pc.conn, l, h)
	if err != nil {
		return nil, nil, err
	}
	ok := []byte{0, 0, 0, 0, mysql.OK_HEADER, 0, 0, byte(mysql.SERVER_STATUS_AUTOCOMMIT), 0, 0, 0}
	if l.caps&mysql.CLIENT_SESSION_TRACK != 0 {
		ok = append(ok, 0) // empty info string, as go-mysql's own OK packets
	}
	if err := pc.WritePacket(ok); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, cc, nil
}

// ChangeUser runs COM_CHANGE_USER (data is its payload after the command
// byte) on a connection whose current login is prev: a full
// re-authentication with the same exchange as the connection phase (an
// auth switch if the client's plugin is neither of ticketd's). It returns
// the new login; the caller starts a fresh session for it, or, on an
// error (a *mysql.MyError to answer), ends the connection, as MySQL does.
func (a *Acceptor) ChangeUser(c *Conn, data []byte, prev Login) (Login, error) {
	l, err := parseChangeUser(data, prev.Caps)
	if err != nil {
		return prev, &mysql.MyError{Code: mysql.ER_MALFORMED_PACKET, State: "08S01", Message: "Malformed communication packet."}
	}
	// An empty auth switch response is how a client sends no password.
	c.allowZero = true
	err = a.authenticate(c.sc, c.RemoteAddr(), prev.Salt, l, "change user refused")
	c.allowZero = false
	if err != nil {
		return prev, err
	}
	role, _, _ := a.cfg.Users.Role(l.user)
	return Login{User: l.user, DB: l.db, Caps: prev.Caps, Salt: prev.Salt, Secure: prev.Secure, TLSVersion: prev.TLSVersion, TLSCipher: prev.TLSCipher, Role: role, Host: prev.Host}, nil
}

// initialHandshake is Protocol::HandshakeV10.
func (a *Acceptor) initialHandshake(id uint32, salt []byte, caps uint32) []byte {
	plugin := a.cfg.DefaultAuthPlugin
	b := make([]byte, 4, 4+1+len(a.cfg.Version)+1+4+9+2+1+2+2+1+10+13+len(plugin)+1)
	b = append(b, 10)
	b = append(b, a.cfg.Version...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, salt[:8]...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(caps))
	b = append(b, mysql.DEFAULT_COLLATION_ID)
	b = binary.LittleEndian.AppendUint16(b, mysql.SERVER_STATUS_AUTOCOMMIT)
	b = binary.LittleEndian.AppendUint16(b, uint16(caps>>16))
	b = append(b, byte(len(salt)+1))
	b = append(b, make([]byte, 10)...)
	b = append(b, salt[8:]...)
	b = append(b, 0)
	b = append(b, plugin...)
	return append(b, 0)
}

// parseHandshakeResponse parses Protocol::HandshakeResponse41, or reports
// an SSLRequest (the same first 32 bytes, alone).
func parseHandshakeResponse(p []byte) (l *login, sslRequest bool, err error) {
	if len(p) < 32 {
		return nil, false, fmt.Errorf("handshake response of %d bytes: %w", len(p), errMalformed)
	}
	l = &login{caps: binary.LittleEndian.Uint32(p)}
	if l.caps&mysql.CLIENT_PROTOCOL_41 == 0 {
		return nil, false, fmt.Errorf("pre-4.1 client: %w", errMalformed)
	}
	if len(p) == 32 {
		if l.caps&mysql.CLIENT_SSL == 0 {
			return nil, false, fmt.Errorf("handshake response without a user: %w", errMalformed)
		}
		return l, true, nil
	}
	r := reader{b: p, pos: 32}
	var ok bool
	if l.user, ok = r.cstring(); !ok {
		return nil, false, fmt.Errorf("user name: %w", errMalformed)
	}
	switch {
	case l.caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		l.resp, ok = r.lenencBytes()
	case l.caps&mysql.CLIENT_SECURE_CONNECTION != 0:
		var n byte
		if n, ok = r.byte(); ok {
			l.resp, ok = r.bytes(int(n))
		}
	default:
		var s string
		s, ok = r.cstring()
		l.resp = []byte(s)
	}
	if !ok {
		return nil, false, fmt.Errorf("auth response: %w", errMalformed)
	}
	if l.caps&mysql.CLIENT_CONNECT_WITH_DB != 0 && !r.done() {
		l.db = r.cstringOrRest()
	}
	if l.caps&mysql.CLIENT_PLUGIN_AUTH != 0 && !r.done() {
		l.plugin = r.cstringOrRest()
	}
	// Connection attributes follow; ticketd has no use for them.
	return l, false, nil
}

// parseChangeUser parses COM_CHANGE_USER's payload (after the command
// byte) for a client with capabilities caps.
func parseChangeUser(p []byte, caps uint32) (*login, error) {
	l := &login{caps: caps}
	r := reader{b: p}
	var ok bool
	if l.user, ok = r.cstring(); !ok {
		return nil, fmt.Errorf("user name: %w", errMalformed)
	}
	if caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		var n byte
		if n, ok = r.byte(); ok {
			l.resp, ok = r.bytes(int(n))
		}
	} else {
		var s string
		s, ok = r.cstring()
		l.resp = []byte(s)
	}
	if !ok {
		return nil, fmt.Errorf("auth response: %w", errMalformed)
	}
	if !r.done() {
		l.db = r.cstringOrRest()
	}
	if !r.done() {
		_, _ = r.bytes(2) // character set
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 && !r.done() {
		l.plugin = r.cstringOrRest()
	}
	return l, nil
}

// reader reads protocol fields from a packet, reporting truncation instead
// of panicking.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, bool) {
	if r.pos >= len(r.b) {
		return 0, false
	}
	r.pos++
	return r.b[r.pos-1], true
}

func (r *reader) bytes(n int) ([]byte, bool) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, false
	}
	r.pos += n
	return r.b[r.pos-n : r.pos], true
}

func (r *reader) cstring() (string, bool) {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.pos:i])
			r.pos = i + 1
			return s, true
		}
	}
	return "", false
}

// cstringOrRest reads a NUL-terminated string, or the rest of the packet
// when the NUL is missing (some clients omit the last one).
func (r *reader) cstringOrRest() string {
	if s, ok := r.cstring(); ok {
		return s
	}
	s := string(r.b[r.pos:])
	r.pos = len(r.b)
	return s
}

func (r *reader) lenencBytes() ([]byte, bool) {
	c, ok := r.byte()
	if !ok {
		return nil, false
	}
	var n uint64
	switch {
	case c < 0xfb:
		n = uint64(c)
	case c == 0xfc:
		b, ok := r.bytes(2)
		if !ok {
			return nil, false
		}
		n = uint64(binary.LittleEndian.Uint16(b))
	case c == 0xfd:
		b, ok := r.bytes(3)
		if !ok {
			return nil, false
		}
		n = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case c == 0xfe:
		b, ok := r.bytes(8)
		if !ok {
			return nil, false
		}
		n = binary.LittleEndian.Uint64(b)
	default: // 0xfb (NULL) and 0xff are not lengths
		return nil, false
	}
	if n > uint64(len(r.b)) {
		return nil, false
	}
	return r.bytes(int(n))
}

// tlsVersionName is a TLS version as MariaDB's Ssl_version shows it.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1"
	}
	return tls.VersionName(v)
}
