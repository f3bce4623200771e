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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

var (
	portMu   sync.Mutex
	usedPort = map[int]bool{}
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// has not been handed out before in this process. Asking the kernel for
// port 0 and closing the listener leaves a small race with other processes
// on the machine; remembering the ports we gave out removes the race among
// our own nodes, which would otherwise be likely when a cluster asks for
// nine ports in a row.
func FreePort(t testing.TB) int {
	t.Helper()
	portMu.Lock()
	defer portMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("harness: free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !usedPort[port] {
			usedPort[port] = true
			return port
		}
	}
	t.Fatal("harness: no unused free port after 100 tries")
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
