package main

import (
	"bufio"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// readDeploy returns a file of deploy/, the recipes shipped next to the
// binary.
func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unitValues returns the values of key in a unit file, in order.
func unitValues(unit, key string) []string {
	var vs []string
	for line := range strings.Lines(unit) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// TestSystemdUnit checks deploy/ticketd.service: the settings the manual
// and ticketd.env rely on, a stop timeout longer than ticketd's orderly
// shutdown, and, where systemd-analyze is installed, that systemd accepts
// every line (verify) and rates its sandbox as well hardened (security).
func TestSystemdUnit(t *testing.T) {
	unit := readDeploy(t, "ticketd.service")
	for key, want := range map[string]string{
		"ExecStart":       "/usr/local/bin/ticketd",
		"EnvironmentFile": "/etc/ticketd/ticketd.env",
		"User":            "ticketd",
		"StateDirectory":  "ticketd",
		"Restart":         "on-failure",
		"KillSignal":      "SIGTERM",
		"ProtectSystem":   "strict",
		"NoNewPrivileges": "yes",
		"PrivateTmp":      "yes",
	} {
		if got := unitValues(unit, key); len(got) != 1 || got[0] != want {
			t.Errorf("%s=%v, want %s", key, got, want)
		}
	}
	// After SIGTERM ticketd lets statements in flight end (each within
	// --statement-timeout) and drains the admin server (5s): systemd must
	// not SIGKILL it before.
	o, err := parseOptions(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stop := unitValues(unit, "TimeoutStopSec")
	if len(stop) != 1 {
		t.Fatalf("TimeoutStopSec=%v", stop)
	}
	d, err := time.ParseDuration(stop[0])
	if err != nil {
		t.Fatalf("TimeoutStopSec=%s: %v (write it with a unit, e.g. 30s)", stop[0], err)
	}
	if need := o.stmtTimeout + 5*time.Second; d <= need {
		t.Errorf("TimeoutStopSec=%v: not above the default statement timeout plus the admin drain (%v)", d, need)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("TICKETD_REQUIRE_SYSTEMD") == "1" {
			t.Fatalf("systemd-analyze not found and TICKETD_REQUIRE_SYSTEMD=1: %v", err)
		}
		t.Skipf("systemd-analyze not installed (apt-get install systemd): %v", err)
	}
	// verify refuses a unit whose ExecStart does not exist: point it at
	// an executable that does (this test's), and change nothing else.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	local := strings.Replace(unit, "ExecStart=/usr/local/bin/ticketd", "ExecStart="+self, 1)
	path := filepath.Join(t.TempDir(), "ticketd.service")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	// verify exits 0 on unknown keys and unparsable values, only saying
	// so: any output is a failure.
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=yes", "--no-pager", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for ticketd\.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: no exposure level in\n%s", out)
	}
	// 0 is fully locked down, 10 not at all; systemd calls below 2 "OK".
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2 {
		t.Errorf("systemd-analyze security rates the unit's exposure %.1f, above 2.0:\n%s", level, out)
	}
	t.Logf("systemd-analyze verify: clean; security: exposure %s", m[1])
}

// TestEnvFile checks deploy/ticketd.env: every TICKETD_ variable in it,
// commented out or not, names a real flag (an unknown one would be
// ignored without a word), the active ones parse, and the data directory
// is the unit's StateDirectory.
func TestEnvFile(t *testing.T) {
	env := map[string]string{}
	var all []string
	sc := bufio.NewScanner(strings.NewReader(readDeploy(t, "ticketd.env")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		commented := strings.HasPrefix(line, "#")
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "#"), "=")
		if !ok || !strings.HasPrefix(k, "TICKETD_") || strings.ContainsAny(k, " \t") {
			if !commented && line != "" {
				t.Errorf("ticketd.env: %q is neither a comment nor KEY=VALUE", line)
			}
			continue
		}
		all = append(all, k)
		if !commented {
			env[k] = v
		}
	}
	known := map[string]bool{}
	if _, err := parseOptions(nil, func(k string) string { known[k] = true; return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if !known[k] {
			t.Errorf("ticketd.env sets %s, which is no flag's variable", k)
		}
	}
	o, err := parseOptions(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("ticketd.env does not parse: %v", err)
	}
	if o.dataDir != "/var/lib/ticketd" || o.nodeID != "n1" || o.peers == "" {
		t.Errorf("ticketd.env: data dir %q, node %q, peers %q", o.dataDir, o.nodeID, o.peers)
	}

	// HAProxy's example checks this node at the addresses the env file
	// gives it.
	_, mysqlPort, _ := net.SplitHostPort(o.mysqlAddr)
	host, adminPort, _ := net.SplitHostPort(o.httpAddr)
	want := "server n1 " + net.JoinHostPort(host, mysqlPort) + " check port " + adminPort
	if !strings.Contains(readDeploy(t, "haproxy.cfg"), want) {
		t.Errorf("haproxy.cfg has no %q, the address of node n1 in ticketd.env", want)
	}
}

// TestDeployFiles checks that the systemd recipe of OPERATIONS.md installs
// every file under /etc/ticketd that the example environment file names
// (issue 24: it named certificates the openssl recipe does not write and
// installed a users file the repository did not have), and that the
// example users file loads with an admin and an alloc account.
func TestDeployFiles(t *testing.T) {
	manual, err := os.ReadFile("OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, systemd, ok := strings.Cut(string(manual), "\n## systemd\n")
	if !ok {
		t.Fatal(`OPERATIONS.md has no "## systemd" section`)
	}
	systemd, _, _ = strings.Cut(systemd, "\n## ")
	installed := map[string]bool{}
	for line := range strings.Lines(systemd) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "install" || !strings.HasPrefix(f[len(f)-1], "/etc/ticketd/") {
			continue
		}
		dest := f[len(f)-1]
		if !strings.HasSuffix(dest, "/") {
			installed[filepath.Base(dest)] = true
			if src := f[len(f)-2]; strings.HasPrefix(src, "cmd/ticketd/deploy/") {
				readDeploy(t, strings.TrimPrefix(src, "cmd/ticketd/deploy/"))
			}
			continue
		}
		for _, src := range f[1 : len(f)-1] {
			if !strings.HasPrefix(src, "-") && !slices.Contains([]string{"root", "ticketd", "600", "640", "644"}, src) {
				installed[filepath.Base(src)] = true
			}
		}
	}
	paths := regexp.MustCompile(`(?m)^TICKETD_\w+=(/etc/ticketd/\S+)`).FindAllStringSubmatch(readDeploy(t, "ticketd.env"), -1)
	if len(paths) == 0 {
		t.Fatal("ticketd.env names no file under /etc/ticketd")
	}
	for _, m := range paths {
		if name := filepath.Base(m[1]); !installed[name] {
			t.Errorf("ticketd.env names %s, which the systemd recipe of OPERATIONS.md does not install (it installs %v)", m[1], slices.Sorted(maps.Keys(installed)))
		}
	}

	users := wire.NewUsers()
	if err := readUsersFile(filepath.Join("deploy", "users"), users, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]mysqlconn.Role{"ops": mysqlconn.RoleAdmin, "app": mysqlconn.RoleAlloc} {
		if role, _, ok := users.Role(name); !ok || role != want {
			t.Errorf("deploy/users: account %s has role %v (listed: %v), want %v", name, role, ok, want)
		}
	}
}
