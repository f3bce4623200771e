package mysqlconn

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// scriptIO is a client that answers each packet the server writes with
// the next of its replies.
type scriptIO struct {
	replies [][]byte
	written [][]byte // payloads the server wrote
}

func (s *scriptIO) ReadPacket() ([]byte, error) {
	if len(s.replies) == 0 {
		return nil, io.EOF
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

func (s *scriptIO) WritePacket(data []byte) error {
	s.written = append(s.written, append([]byte(nil), data[4:]...))
	return nil
}

func scramble(plugin string, salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	if plugin == NativePassword {
		return mysql.CalcNativePassword(salt, []byte(password))
	}
	return mysql.CalcCachingSha2Password(salt, []byte(password))
}

func testUsers(t *testing.T) *Users {
	u := NewUsers()
	for name, pw := range map[string]string{"alice": "s3cret", "bob": ""} {
		if err := u.Add(name, pw); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// TestAuthenticate runs the authentication exchange against a scripted
// client: either plugin is taken as the client chose it, other plugins and
// lazy clients get an auth switch, and wrong passwords are refused with
// 1045 without showing the password.
func TestAuthenticate(t *testing.T) {
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 3306}
	for _, def := range []string{CachingSHA2Password, NativePassword} {
		failed := 0
		a := NewAcceptor(Config{Users: testUsers(t), DefaultAuthPlugin: def,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), AuthFailed: func() { failed++ }})
		for _, c := range []struct {
			user, password, plugin string
			lazy                   bool   // the client sends no data for its plugin
			answer                 string // the password it answers a switch with
			switchTo               string // the plugin the server must switch to, if not the client's own
			code                   uint16
		}{
			{user: "alice", password: "s3cret", plugin: NativePassword},
			{user: "alice", password: "s3cret", plugin: CachingSHA2Password},
			{user: "alice", password: "wrong", plugin: CachingSHA2Password, code: 1045},
			{user: "alice", plugin: NativePassword, code: 1045},
			{user: "alice", plugin: "sha256_password", lazy: true, answer: "s3cret", switchTo: def},
			{user: "alice", plugin: "dialog", lazy: true, answer: "nope", switchTo: def, code: 1045},
			{user: "bob", plugin: CachingSHA2Password},
			{user: "bob", password: "x", plugin: NativePassword, code: 1045},
			{user: "nobody", password: "x", plugin: NativePassword, code: 1045},
		} {
			salt := newSalt()
			l := &login{user: c.user, plugin: c.plugin, caps: mysql.CLIENT_PLUGIN_AUTH}
			if !c.lazy {
				l.resp = scramble(c.plugin, salt, c.password)
			}
			switchTo := c.switchTo
			if switchTo == "" && c.plugin != def && len(l.resp) == 0 {
				// No data for another plugin than the proposed one: the
				// client waits for that plugin's salt (--default-auth).
				switchTo = c.plugin
			}
			pio := &scriptIO{replies: [][]byte{scramble(switchTo, salt, c.answer)}}
			err := a.authenticate(pio, remote, salt, l, "login refused")
			var me *mysql.MyError
			switch {
			case c.code == 0 && err != nil:
				t.Errorf("default %s, %+v: %v", def, c, err)
			case c.code != 0 && (!errors.As(err, &me) || me.Code != c.code):
				t.Errorf("default %s, %+v: %v, want code %d", def, c, err, c.code)
			case me != nil && (!strings.Contains(me.Message, "'"+c.user+"'@'10.0.0.7'") ||
				(c.password != "" && strings.Contains(me.Message, c.password))):
				t.Errorf("error message %q", me.Message)
			}
			switched := len(pio.written) > 0 && pio.written[0][0] == mysql.EOF_HEADER
			if switched != (switchTo != "") {
				t.Errorf("default %s, %+v: auth switch %v", def, c, switched)
			}
			if switched && !bytes.HasPrefix(pio.written[0][1:], append([]byte(switchTo), 0)) {
				t.Errorf("switch request %q, want plugin %s", pio.written[0], switchTo)
			}
		}
		if failed != 5 {
			t.Errorf("default %s: AuthFailed called %d times, want 5", def, failed)
		}
	}
}

func TestDefaultRootIsLocal(t *testing.T) {
	u := DefaultUsers()
	if a := u.lookup("root", true); !a.empty {
		t.Fatal("default root from loopback should have no password")
	}
	if a := u.lookup("root", false); a.empty || a.checkNative(newSalt(), nil) {
		t.Fatal("default root from a remote address must be refused")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{DefaultAuthPlugin: "sha256_password"}, {RequireTLS: true}} {
		if c.Validate() == nil {
			t.Errorf("%+v passed Validate", c)
		}
	}
	for _, c := range []Config{{}, {DefaultAuthPlugin: NativePassword}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestDefaultRootRemoteHint: the default root refused from another host
// gets MySQL's 1045 with a hint saying why; a loopback client's wrong
// password and other users get the bare message (a remote root got it
// bare too, with nothing saying root is loopback-only: issue 34).
func TestDefaultRootRemoteHint(t *testing.T) {
	a := NewAcceptor(Config{Users: DefaultUsers(), DefaultAuthPlugin: CachingSHA2Password,
		Logger: slog.New(slog.DiscardHandler), AuthFailed: func() {}})
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 40000}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	for _, c := range []struct {
		user, password string
		from           net.Addr
		hint           bool
	}{
		{"root", "", remote, true},
		{"root", "x", remote, true},
		{"root", "x", local, false},
		{"app", "", remote, false},
	} {
		salt := newSalt()
		l := &login{user: c.user, plugin: CachingSHA2Password, caps: mysql.CLIENT_PLUGIN_AUTH,
			resp: scramble(CachingSHA2Password, salt, c.password)}
		err := a.authenticate(&scriptIO{}, c.from, salt, l, "login refused")
		var me *mysql.MyError
		if !errors.As(err, &me) || me.Code != mysql.ER_ACCESS_DENIED_ERROR {
			t.Errorf("%+v: %v, want 1045", c, err)
			continue
		}
		if got := strings.Contains(me.Message, "loopback addresses only") && strings.Contains(me.Message, "--users-file"); got != c.hint {
			t.Errorf("%+v: %q, hint %v, want %v", c, me.Message, got, c.hint)
		}
	}
}
