package mysqlconn

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"sort"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The authentication plugins ticketd speaks. Both verify a scramble of the
// password against the connection's 20-byte salt, so neither needs the
// password itself on the server: an account keeps only the two digests.
const (
	NativePassword      = mysql.AUTH_NATIVE_PASSWORD       // mysql_native_password
	CachingSHA2Password = mysql.AUTH_CACHING_SHA2_PASSWORD // caching_sha2_password
)

// Users is ticketd's account table: user name to password verifiers. It is
// built once at start-up and read-only after, so connections share it
// without locking. The zero value has no accounts.
type Users struct {
	accounts map[string]*account
}

// account holds what the two plugins need to check a scramble:
// SHA1(SHA1(password)) for mysql_native_password (what mysql.user kept) and
// SHA256(SHA256(password)) for caching_sha2_password (what MySQL keeps in
// its in-memory cache after a full authentication). Having the latter for
// every account means the plugin's fast path always applies: ticketd never
// asks a client for its clear-text password, so caching_sha2_password works
// over plain TCP without RSA keys, and over TLS alike.
type account struct {
	empty     bool
	native    [sha1.Size]byte
	sha2      [sha256.Size]byte
	localOnly bool // the default root: loopback clients only
	role      Role
}

// Role is what an account may do once logged in. The wire layer enforces
// it statement by statement; see cmd/ticketd/OPERATIONS.md "Accounts and TLS".
type Role uint8

const (
	// RoleAdmin may do everything: DDL, SET GLOBAL, ALTER TABLE ...
	// AUTO_INCREMENT, as well as allocate and read. It is the role of
	// root and of accounts listed without one.
	RoleAdmin Role = iota
	// RoleAlloc may allocate ids (INSERT, REPLACE, UPDATE of ticket
	// tables), read (SELECT, SHOW) and set session variables: what an
	// application needs, and nothing that can lose or reissue ids.
	RoleAlloc
)

// ErrBadRole is returned by ParseRole for a name that is not a role.
var ErrBadRole = errors.New("mysqlconn: unknown role (want admin or alloc)")

// ParseRole reads a role's name.
func ParseRole(name string) (Role, error) {
	switch name {
	case "admin":
		return RoleAdmin, nil
	case "alloc":
		return RoleAlloc, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrBadRole, name)
}

func (r Role) String() string {
	if r == RoleAlloc {
		return "alloc"
	}
	return "admin"
}

// NewUsers returns an empty account table.
func NewUsers() *Users { return &Users{accounts: map[string]*account{}} }

// DefaultUsers is a fresh MySQL's account table: root with no password,
// from loopback addresses only.
func DefaultUsers() *Users {
	u := NewUsers()
	u.accounts["root"] = &account{empty: true, localOnly: true}
	return u
}

// ErrBadUser is returned by Users.Add for a name MySQL would not accept.
var ErrBadUser = errors.New("mysqlconn: invalid user name")

// Add adds or replaces an account with the admin role. An empty password
// is allowed and accepted from any address (the caller configured it
// explicitly).
func (u *Users) Add(name, password string) error { return u.AddRole(name, password, RoleAdmin) }

// AddRole adds or replaces an account with a role.
func (u *Users) AddRole(name, password string, role Role) error {
	if name == "" || len(name) > 32 || bytes.IndexByte([]byte(name), 0) >= 0 {
		return fmt.Errorf("%w: %q", ErrBadUser, name)
	}
	a := &account{empty: password == "", role: role}
	if !a.empty {
		s1 := sha1.Sum([]byte(password))
		a.native = sha1.Sum(s1[:])
		s2 := sha256.Sum256([]byte(password))
		a.sha2 = sha256.Sum256(s2[:])
	}
	u.accounts[name] = a
	return nil
}

// Names returns the account names, sorted (for logging: never passwords).
func (u *Users) Names() []string {
	names := make([]string, 0, len(u.accounts))
	for n := range u.accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Role returns an account's role; ok is false for no such account. The
// host of the account (for SHOW GRANTS) is "localhost" for the default
// root and "%" for the others.
func (u *Users) Role(name string) (role Role, host string, ok bool) {
	a := u.accounts[name]
	if a == nil {
		return 0, "", false
	}
	if a.localOnly {
		return a.role, "localhost", true
	}
	return a.role, "%", true
}

// Len is the number of accounts.
func (u *Users) Len() int { return len(u.accounts) }

// localOnly reports whether name is the default root, which logs in from
// loopback addresses only.
func (u *Users) localOnly(name string) bool {
	a := u.accounts[name]
	return a != nil && a.localOnly
}

// lookup finds the account a client at host may log in as. An unknown user
// gets an account no scramble matches, so that the client sees MySQL's
// "Access denied" (1045) rather than learning which users exist.
func (u *Users) lookup(name string, loopback bool) *account {
	a := u.accounts[name]
	if a == nil || (a.localOnly && !loopback) {
		return &account{native: randomDigest20(), sha2: randomDigest32()}
	}
	return a
}

func randomDigest20() (d [sha1.Size]byte) {
	_, _ = rand.Read(d[:])
	return d
}

func randomDigest32() (d [sha256.Size]byte) {
	_, _ = rand.Read(d[:])
	return d
}

// isEmptyAuth reports whether a client sent no password: an empty auth
// response, or libmysqlclient's single NUL.
func isEmptyAuth(resp []byte) bool {
	return len(resp) == 0 || (len(resp) == 1 && resp[0] == 0)
}

// checkNative verifies a mysql_native_password scramble:
// resp = SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))).
func (a *account) checkNative(salt, resp []byte) bool {
	if isEmptyAuth(resp) {
		return a.empty
	}
	if a.empty || len(resp) != sha1.Size {
		return false
	}
	h := sha1.New()
	h.Write(salt)
	h.Write(a.native[:])
	stage1 := h.Sum(nil)
	for i := range stage1 {
		stage1[i] ^= resp[i]
	}
	got := sha1.Sum(stage1)
	return subtle.ConstantTimeCompare(got[:], a.native[:]) == 1
}

// checkSHA2 verifies a caching_sha2_password fast-path scramble:
// resp = SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + salt).
func (a *account) checkSHA2(salt, resp []byte) bool {
	if isEmptyAuth(resp) {
		return a.empty
	}
	if a.empty || len(resp) != sha256.Size {
		return false
	}
	h := sha256.New()
	h.Write(a.sha2[:])
	h.Write(salt)
	stage1 := h.Sum(nil)
	for i := range stage1 {
		stage1[i] ^= resp[i]
	}
	got := sha256.Sum256(stage1)
	return subtle.ConstantTimeCompare(got[:], a.sha2[:]) == 1
}

// newSalt returns a 20-byte scramble as MySQL makes it: 7-bit, never NUL
// (some clients read the salt as a C string) nor '$'.
func newSalt() []byte {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] &= 0x7f
		if b[i] == 0 || b[i] == '$' {
			b[i]++
		}
	}
	return b
}

// packetIO reads and writes MySQL packets with the connection's sequence
// numbers. The connection phase implements it over the raw (or TLS)
// connection, and go-mysql's *server.Conn implements it in the command
// phase, so COM_CHANGE_USER runs the very same exchange.
type packetIO interface {
	// ReadPacket returns the next packet's payload.
	ReadPacket() ([]byte, error)
	// WritePacket writes data[4:] as one packet; data[:4] is room for
	// the header.
	WritePacket(data []byte) error
}

// login is what a client presented: in its handshake response or in
// COM_CHANGE_USER.
type login struct {
	user   string
	plugin string // the client's plugin; "" for pre-plugin clients
	resp   []byte // its auth response for that plugin
	db     string
	caps   uint32
}

// authenticator runs the authentication exchange for one login.
type authenticator struct {
	users         *Users
	defaultPlugin string
	remote        string // the client's host, for error messages
	loopback      bool
}

// hostOf is a client's host as MySQL's messages name it: its address
// without the port.
func hostOf(remote net.Addr) string {
	host, _, err := net.SplitHostPort(remote.String())
	if err != nil {
		return remote.String()
	}
	return host
}

func newAuthenticator(users *Users, defaultPlugin string, remote net.Addr) *authenticator {
	host := hostOf(remote)
	ip := net.ParseIP(host)
	return &authenticator{
		users:         users,
		defaultPlugin: defaultPlugin,
		remote:        host,
		loopback:      ip != nil && ip.IsLoopback(),
	}
}

// authenticate checks l's credentials from a client at remote over pio,
// and counts and logs a refusal (what says of which exchange).
func (a *Acceptor) authenticate(pio packetIO, remote net.Addr, salt []byte, l *login, what string) error {
	err := newAuthenticator(a.cfg.Users, a.cfg.DefaultAuthPlugin, remote).authenticate(pio, salt, l)
	if errAccessDenied(err) {
		a.cfg.AuthFailed()
		a.cfg.Logger.Info(what, "user", l.user, "remote", remote.String(), "plugin", l.plugin)
	}
	return err
}

// authenticate checks a login's credentials. A client that used one of the
// two supported plugins is checked with it as it is: MySQL 9 clients no
// longer have mysql_native_password and old ones lack caching_sha2_password,
// and ticketd, holding both digests, can take either without an auth
// switch. Any other plugin (sha256_password, mysql_clear_password, dialog,
// ...) is asked to switch to the default plugin.
//
// ticketd never asks for a clear-text password: caching_sha2_password's
// fast path always applies (see account), so its "full authentication",
// which needs TLS or RSA keys, does not arise. On success the caller
// writes the OK packet; on failure it writes the returned error.
func (a *authenticator) authenticate(pio packetIO, salt []byte, l *login) error {
	acct := a.users.lookup(l.user, a.loopback)
	plugin, resp := l.plugin, l.resp
	if l.caps&mysql.CLIENT_PLUGIN_AUTH == 0 {
		plugin = NativePassword
	}
	switchTo := ""
	switch {
	case plugin != NativePassword && plugin != CachingSHA2Password:
		switchTo = a.defaultPlugin
	case plugin != a.defaultPlugin && isEmptyAuth(resp) && l.caps&mysql.CLIENT_PLUGIN_AUTH != 0:
		// libmysqlclient and MariaDB Connector/C, using another plugin
		// than the one proposed (--default-auth), send no auth data and
		// wait for the server to send the salt for their plugin.
		switchTo = plugin
	}
	if switchTo != "" {
		plugin = switchTo
		// AuthSwitchRequest: 0xfe, plugin name, the salt, and the NUL
		// MySQL adds (libmysqlclient needs it).
		pkt := make([]byte, 4, 4+1+len(plugin)+1+len(salt)+1)
		pkt = append(pkt, mysql.EOF_HEADER)
		pkt = append(pkt, plugin...)
		pkt = append(pkt, 0)
		pkt = append(pkt, salt...)
		pkt = append(pkt, 0)
		if err := pio.WritePacket(pkt); err != nil {
			return fmt.Errorf("auth switch: %w", err)
		}
		var err error
		if resp, err = pio.ReadPacket(); err != nil {
			return fmt.Errorf("auth switch response: %w", err)
		}
	}
	var ok bool
	switch plugin {
	case NativePassword:
		ok = acct.checkNative(salt, resp)
	default:
		ok = acct.checkSHA2(salt, resp)
		if ok && !isEmptyAuth(resp) {
			// AuthMoreData "fast authentication succeeded"; the OK follows.
			if err := pio.WritePacket([]byte{0, 0, 0, 0, mysql.MORE_DATE_HEADER, mysql.CACHE_SHA2_FAST_AUTH}); err != nil {
				return fmt.Errorf("auth more data: %w", err)
			}
		}
	}
	if !ok {
		err := a.denied(l.user, !isEmptyAuth(resp))
		if !a.loopback && a.users.localOnly(l.user) {
			// A fresh node's root, tried from another host: say why, as
			// nothing else would (MySQL's root@localhost is as silent).
			err.Message += "; root without a password is allowed from loopback addresses only: start ticketd with --users-file or --root-password for remote clients"
		}
		return err
	}
	return nil
}

// denied is MySQL's 1045 error. It names the user and the client's host
// and says whether a password was used, never anything of the password.
func (a *authenticator) denied(user string, usedPassword bool) *mysql.MyError {
	yes := "NO"
	if usedPassword {
		yes = "YES"
	}
	return &mysql.MyError{Code: mysql.ER_ACCESS_DENIED_ERROR, State: "28000",
		Message: fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", user, a.remote, yes)}
}

// errAccessDenied reports whether err is a refused login (as opposed to a
// broken connection).
func errAccessDenied(err error) bool {
	var me *mysql.MyError
	return errors.As(err, &me) && me.Code == mysql.ER_ACCESS_DENIED_ERROR
}
