package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

func testUsers(t testing.TB) *Users {
	u := NewUsers()
	for name, pw := range map[string]string{"alice": "s3cret:with colon", "bob": "", "root": "rootpw"} {
		if err := u.Add(name, pw); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// TestAuthDrivers logs in with go-sql-driver, which answers with the
// plugin the server proposes: once per plugin.
func TestAuthDrivers(t *testing.T) {
	for _, plugin := range []string{mysqlconn.CachingSHA2Password, mysqlconn.NativePassword} {
		t.Run(plugin, func(t *testing.T) {
			addr, _ := startServerWith(t, Config{Users: testUsers(t), DefaultAuthPlugin: plugin})
			for _, c := range []struct {
				user, password string
				code           uint16
			}{
				{"alice", "s3cret:with colon", 0},
				{"alice", "wrong", 1045},
				{"alice", "", 1045},
				{"bob", "", 0},
				{"bob", "x", 1045},
				{"root", "rootpw", 0},
				{"root", "", 1045},
				{"nobody", "x", 1045},
				{"nobody", "", 1045},
			} {
				db := open(t, fmt.Sprintf("%s:%s@tcp(%s)/", c.user, c.password, addr))
				var user string
				err := db.QueryRow("SELECT USER()").Scan(&user)
				if errCode(err) != c.code {
					t.Errorf("%s/%q: %v, want code %d", c.user, c.password, err, c.code)
					continue
				}
				if c.code == 0 && user != c.user+"@127.0.0.1" {
					t.Errorf("USER() = %q", user)
				}
				if c.code != 0 {
					msg := err.Error()
					if strings.Contains(msg, c.password) && c.password != "" {
						t.Errorf("error %q shows the password", msg)
					}
					want := "(using password: YES)"
					if c.password == "" {
						want = "(using password: NO)"
					}
					if !strings.Contains(msg, want) || !strings.Contains(msg, "'"+c.user+"'@'127.0.0.1'") {
						t.Errorf("error %q", msg)
					}
				}
			}
		})
	}
}

// TestAuthPluginChoice checks that a client answering with either plugin
// is accepted without a switch, that a client with no auth data for its
// plugin gets the salt (libmysqlclient --default-auth), and that other
// plugins are switched to the default.
func TestAuthPluginChoice(t *testing.T) {
	for _, def := range []string{mysqlconn.CachingSHA2Password, mysqlconn.NativePassword} {
		addr, _ := startServerWith(t, Config{Users: testUsers(t), DefaultAuthPlugin: def})
		for _, o := range []loginOpts{
			{user: "alice", password: "s3cret:with colon", plugin: mysqlconn.NativePassword},
			{user: "alice", password: "s3cret:with colon", plugin: mysqlconn.CachingSHA2Password},
			{user: "alice", password: "s3cret:with colon", plugin: mysqlconn.NativePassword, lazy: true},
			{user: "alice", password: "s3cret:with colon", plugin: mysqlconn.CachingSHA2Password, lazy: true},
			{user: "alice", password: "s3cret:with colon", plugin: "sha256_password", lazy: true},
			{user: "alice", password: "s3cret:with colon", plugin: "mysql_clear_password", lazy: true},
			{user: "bob", plugin: mysqlconn.NativePassword, lazy: true},
			{user: "bob", plugin: mysqlconn.CachingSHA2Password},
		} {
			if o.lazy && o.plugin == def && o.password != "" {
				continue // a client with the proposed plugin sends its data
			}
			c := dialRaw(t, addr)
			if c.plugin != def {
				t.Fatalf("greeting proposes %s, want %s", c.plugin, def)
			}
			if b := c.login(o); !isOK(b) {
				t.Errorf("default %s, %+v: %v", def, o, replyErr(b))
				continue
			}
			if u, err := c.query("SELECT CURRENT_USER()"); err != nil || u != o.user+"@%" {
				t.Errorf("CURRENT_USER() = %q, %v", u, err)
			}
		}
		c := dialRaw(t, addr)
		if err := replyErr(c.login(loginOpts{user: "alice", password: "nope", plugin: mysqlconn.CachingSHA2Password, lazy: true})); codeOf(err) != 1045 {
			t.Errorf("wrong password after a switch: %v", err)
		}
		c.expectClosed()
	}
}

// TestDefaultRootIsLocal logs in as the default root from loopback
// (mysqlconn's tests check that a remote root is refused).
func TestDefaultRootIsLocal(t *testing.T) {
	addr, _ := startServerWith(t, Config{})
	db := open(t, "root@tcp("+addr+")/")
	if err := db.Ping(); err != nil {
		t.Fatalf("root from loopback: %v", err)
	}
}

// selfSigned returns a TLS server config and a client config trusting it.
func selfSigned(t testing.TB) (*tls.Config, *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ticketd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

func TestTLS(t *testing.T) {
	srvTLS, cliTLS := selfSigned(t)
	if err := mysql.RegisterTLSConfig("ticketd-test", cliTLS); err != nil {
		t.Fatal(err)
	}
	for _, require := range []bool{false, true} {
		t.Run(fmt.Sprintf("require=%v", require), func(t *testing.T) {
			addr, _ := startServerWith(t, Config{Users: testUsers(t), TLS: srvTLS, RequireTLS: require})
			for _, plugin := range []string{mysqlconn.CachingSHA2Password, mysqlconn.NativePassword} {
				c := dialRaw(t, addr)
				if b := c.login(loginOpts{user: "alice", password: "s3cret:with colon", plugin: plugin, tls: cliTLS}); !isOK(b) {
					t.Fatalf("TLS login with %s: %v", plugin, replyErr(b))
				}
				if v, err := c.query("SELECT @@have_ssl"); err != nil || v != "YES" {
					t.Fatalf("@@have_ssl = %q, %v", v, err)
				}
			}
			db := open(t, "alice:s3cret:with colon@tcp("+addr+")/?tls=ticketd-test")
			if err := db.Ping(); err != nil {
				t.Fatalf("go-sql-driver over TLS: %v", err)
			}
			// Clients (Python's mysqlclient among them) check the
			// session's TLS with these status variables.
			var name, version, cipher string
			if err := db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil || version != "TLSv1.3" {
				t.Fatalf("Ssl_version over TLS: %q %v", version, err)
			}
			if err := db.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || !strings.HasPrefix(cipher, "TLS_") {
				t.Fatalf("Ssl_cipher over TLS: %q %v", cipher, err)
			}
			plain := open(t, "alice:s3cret:with colon@tcp("+addr+")/?tls=false")
			err := plain.Ping()
			switch {
			case require && errCode(err) != 3159:
				t.Fatalf("plain TCP with --require-tls: %v, want 3159", err)
			case !require && err != nil:
				t.Fatalf("plain TCP: %v", err)
			case !require:
				if err := plain.QueryRow("SHOW STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil || version != "" {
					t.Fatalf("Ssl_version over plain TCP: %q %v, want empty", version, err)
				}
			}
		})
	}
	// A server without TLS does not offer it; a client requiring it fails.
	addr, _ := startServerWith(t, Config{})
	c := dialRaw(t, addr)
	if c.caps&0x800 != 0 {
		t.Fatal("CLIENT_SSL offered without a certificate")
	}
	db := open(t, "root@tcp("+addr+")/?tls=ticketd-test")
	if err := db.Ping(); err == nil {
		t.Fatal("TLS client connected to a server without TLS")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{DefaultAuthPlugin: "sha256_password"}, {RequireTLS: true}, {MaxAllowedPacket: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v passed Validate", c)
		}
	}
}
