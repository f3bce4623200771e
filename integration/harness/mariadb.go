package harness

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // database/sql driver for the readiness ping
)

// MariaDB is a throwaway mariadbd: the reference implementation ticketd is
// compared against. Root has no password; it listens on 127.0.0.1 only.
type MariaDB struct {
	Addr string // "127.0.0.1:P"
	Dir  string // datadir, socket, pid and log live here

	cmd  *exec.Cmd
	done chan struct{}
	log  string

	server, data string // for Restart
}

// findBinary looks for name on PATH and in the sbin directories that a
// non-root PATH often lacks (Debian installs mariadbd in /usr/sbin).
func findBinary(names ...string) string {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"} {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// MariaDBRequired reports whether TICKETD_REQUIRE_MARIADB=1: then a missing
// mariadbd fails the test (CI installs it) instead of skipping it.
func MariaDBRequired() bool { return os.Getenv("TICKETD_REQUIRE_MARIADB") == "1" }

// StartMariaDB initialises a fresh datadir with mariadb-install-db, starts
// mariadbd on a free port as root and waits until it answers a ping. The
// server is stopped and its directory removed when the test ends.
//
// --no-defaults keeps /etc/mysql out of it, so every machine runs the same
// configuration: MariaDB's compiled-in defaults (sql_mode
// STRICT_TRANS_TABLES,..., latin1), with no binary log and a small buffer
// pool since the tests are about answers, not speed.
func StartMariaDB(t testing.TB) *MariaDB {
	t.Helper()
	server := findBinary("mariadbd", "mysqld")
	install := findBinary("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		msg := "mariadbd/mariadb-install-db not found (apt-get install mariadb-server)"
		if MariaDBRequired() {
			t.Fatalf("harness: %s and TICKETD_REQUIRE_MARIADB=1", msg)
		}
		t.Skipf("harness: %s; set TICKETD_REQUIRE_MARIADB=1 to make this a failure", msg)
	}
	// A short path: the Unix socket path must fit in 108 bytes, and
	// t.TempDir paths include the (long) test name.
	dir, err := os.MkdirTemp("", "mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	m := &MariaDB{Dir: dir, log: filepath.Join(dir, "mariadbd.log")}
	t.Cleanup(func() {
		m.Stop()
		if t.Failed() {
			t.Logf("=== log tail of mariadbd (%s):\n%s", m.log, tail(m.log, 30))
		}
		os.RemoveAll(dir)
	})

	data := filepath.Join(dir, "data")
	m.server, m.data = server, data
	// A temporary directory of its own: in the shared /tmp, the bootstrap
	// of one instance once lost its temporary table to another's
	// ('Could not remove temporary table', ERROR 1051 while installing)
	// when several tests started MariaDB at once.
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ic := exec.Command(install, "--no-defaults", "--user=root", "--datadir="+data,
		"--tmpdir="+filepath.Join(dir, "tmp"),
		"--auth-root-authentication-method=normal", "--skip-test-db")
	ic.Stdout, ic.Stderr = &out, &out
	if err := runBounded(ic, 60*time.Second); err != nil {
		t.Fatalf("harness: mariadb-install-db: %v\n%s", err, out.String())
	}

	// The same port race as Start's: retry with a new port if another
	// process took ours between FreePort and mariadbd's bind.
	for attempt := 1; ; attempt++ {
		err := m.start(t, server, data)
		if err == nil {
			break
		}
		lost := strings.Contains(tail(m.log, 30), "Address already in use")
		m.Stop()
		if lost && attempt < 3 {
			t.Logf("harness: mariadbd lost a port race, retrying")
			continue
		}
		t.Fatalf("harness: mariadbd: %v; log tail:\n%s", err, tail(m.log, 30))
	}
	return m
}

// start launches mariadbd on a fresh free port and waits until it
// answers.
func (m *MariaDB) start(t testing.TB, server, data string) error {
	port := FreePort(t)
	m.Addr = "127.0.0.1:" + strconv.Itoa(port)
	return m.launch(server, data, port)
}

// launch starts mariadbd on port and waits until it answers.
func (m *MariaDB) launch(server, data string, port int) error {
	f, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close() // the child holds its own descriptor
	m.cmd = exec.Command(server, "--no-defaults", "--user=root",
		"--datadir="+data, "--tmpdir="+filepath.Join(m.Dir, "tmp"), "--port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--socket="+filepath.Join(m.Dir, "sock"), "--pid-file="+filepath.Join(m.Dir, "pid"),
		"--skip-log-bin", "--skip-name-resolve", "--innodb-buffer-pool-size=16M",
		"--max-connections=200")
	m.cmd.Stdout, m.cmd.Stderr = f, f
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		return fmt.Errorf("start mariadbd: %w", err)
	}
	done := make(chan struct{})
	m.done = done
	cmd := m.cmd
	go func() { cmd.Wait(); close(done) }()
	return m.waitReady(60 * time.Second)
}

// runBounded runs cmd, killing it after d.
func runBounded(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}

// waitReady pings until the server answers, it exits, or d passes.
func (m *MariaDB) waitReady(d time.Duration) error {
	db, err := sql.Open("mysql", m.DSN(""))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		last = db.PingContext(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-m.done:
			return fmt.Errorf("exited before ready: %v", last)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %v", d, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// MySQLAddr returns Addr, so tests can treat MariaDB and a ticketd Node
// alike.
func (m *MariaDB) MySQLAddr() string { return m.Addr }

// DSN returns a go-sql-driver/mysql DSN for root on this server.
func (m *MariaDB) DSN(db string, params ...string) string { return DSN(m.Addr, db, params...) }

// Kill kills the server with SIGKILL (a crash: InnoDB recovers from its
// redo log at the next start) and waits for it to exit.
func (m *MariaDB) Kill() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	m.cmd.Process.Kill()
	<-m.done
}

// Restart starts the server again, after Kill or Stop, on the same data
// directory and port, and waits until it answers.
func (m *MariaDB) Restart() error {
	_, p, err := net.SplitHostPort(m.Addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return err
	}
	return m.launch(m.server, m.data, port)
}

// Stop shuts the server down with SIGTERM, killing it if it takes more
// than 30s. It is safe to call more than once.
func (m *MariaDB) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	select {
	case <-m.done:
		return
	default:
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		m.cmd.Process.Kill()
		<-m.done
	}
}

// DataDir is the server's data directory (@@datadir).
func (m *MariaDB) DataDir() string { return m.data }
