// Package harness runs ticketd (and, for comparison, MariaDB) as real
// processes for integration and fault tests.
//
// It builds the ticketd binary once per test process, hands out free
// 127.0.0.1 ports, starts nodes with their own data directories and log
// files, waits for readiness through the admin HTTP /readyz endpoint, and
// injects process faults: SIGTERM (Stop), SIGKILL (Kill), SIGSTOP/SIGCONT
// (Pause/Resume) and restarts on the same data directory and ports. Every
// child process is killed when its test ends, and on a failed test the tail
// of each node's log is printed.
//
// Test packages using the harness should route TestMain through Main so the
// build directory is removed at exit:
//
//	func TestMain(m *testing.M) { harness.Main(m) }
//
// Environment:
//
//	TICKETD_BIN               use this prebuilt binary instead of building
//	TICKETD_RACE=1            build the binary with -race
//	TICKETD_TEST_LOG_DIR      keep node logs in this directory (default: the test's temp dir)
//	TICKETD_REQUIRE_MARIADB=1 fail, rather than skip, when mariadbd is not installed
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// Main runs the tests and then removes the binary built by Binary. Use it
// as the body of TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// ModuleRoot returns the directory holding ticketd's go.mod. It is found
// from this source file's location so tests work from any working
// directory, falling back to `go env GOMOD`.
func ModuleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return filepath.Clean(root), nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("harness: not inside the ticketd module")
	}
	return filepath.Dir(gomod), nil
}

// Binary returns the path of a ticketd binary built from this checkout. The
// build runs once per test process; a build failure fails every test that
// needs the binary, with the compiler output.
func Binary(t testing.TB) string {
	t.Helper()
	p, err := binary()
	if err != nil {
		t.Fatalf("harness: building ticketd: %v", err)
	}
	return p
}

// binary builds (once) and returns the binary's path, or the build error.
func binary() (string, error) {
	buildOnce.Do(func() {
		if p := os.Getenv("TICKETD_BIN"); p != "" {
			buildPath, buildErr = filepath.Abs(p)
			return
		}
		root, err := ModuleRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "ticketd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(buildDir, "ticketd")
		args := []string{"build", "-o", buildPath}
		if os.Getenv("TICKETD_RACE") == "1" {
			args = append(args, "-race")
		}
		args = append(args, "./cmd/ticketd")
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	})
	return buildPath, buildErr
}

// Ports for the processes the tests start come from below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default)
// and are claimed across processes with a lock file. Asking the kernel for
// port 0 and closing the listener, as this harness did, hands out a port of
// the ephemeral range: until the node binds it, any outgoing connection on
// the machine (a test's MySQL client, a node dialing its peers, the other
// test package go test runs alongside) can be given it as its local port,
// and the node then fails to start with "address already in use"
// (TestBackupRestoreCluster, make test at 00:12 on 2026-11-28). No outgoing
// connection takes a port below the range, and the lock files keep two
// test processes from picking the same one.
const (
	portLow  = 20000
	portHigh = 32767
)

// portClaims holds the ports this process has handed out, each with its
// lock file held open (and so locked) until the process exits.
type portClaims struct {
	mu    sync.Mutex
	files map[int]*os.File
}

// claims is the process's port claims: a test process's one set, as the
// kernel's port space is one per machine.
var claims = portClaims{files: map[int]*os.File{}}

// FreePort returns a TCP port on 127.0.0.1 below the ephemeral range that
// no other process of these tests holds and that could be bound a moment
// ago; it stays this process's until it exits.
func FreePort(t testing.TB) int {
	t.Helper()
	claims.mu.Lock()
	defer claims.mu.Unlock()
	dir := filepath.Join(os.TempDir(), "ticketd-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("harness: free port: %v", err)
	}
	for range 1000 {
		port := portLow + rand.IntN(portHigh-portLow+1)
		if claims.files[port] != nil {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatalf("harness: free port: %v", err)
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // another test process holds it
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			// Something outside these tests listens there; keep the
			// claim so that this process does not try it again.
			claims.files[port] = f
			continue
		}
		l.Close()
		claims.files[port] = f
		return port
	}
	t.Fatal("harness: no free port below the ephemeral range after 1000 tries")
	return 0
}

// FreeAddr returns "127.0.0.1:P" for a FreePort.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// logDir returns where a test's process logs go: TICKETD_TEST_LOG_DIR (kept
// after the run, for CI artifacts) or the test's temp dir.
func logDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TICKETD_TEST_LOG_DIR"); d != "" {
		name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
		dir := filepath.Join(d, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("harness: %v", err)
		}
		return dir
	}
	return t.TempDir()
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// pollUntil calls f every interval until it returns true or timeout passes.
// It is the harness's only waiting primitive: readiness is always polled,
// never assumed after a sleep.
func pollUntil(timeout, interval time.Duration, f func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}
