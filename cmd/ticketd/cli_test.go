package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/wire"
)

// TestHelpListsSubcommands: --help lists every subcommand of the table
// main dispatches through, and the flags.
func TestHelpListsSubcommands(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, &out); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	names := []string{"backup", "restore", "import", "version"} // the issue's, at least
	for _, c := range subcommands() {
		names = append(names, c.name)
	}
	for _, name := range names {
		if !strings.Contains(help, "\n  "+name+" ") {
			t.Errorf("--help does not list the %s subcommand:\n%s", name, help)
		}
		if lookupCommand(name) == nil {
			t.Errorf("%s listed but not dispatched", name)
		}
	}
	if !strings.Contains(help, "-mysql-addr") || !strings.Contains(help, "TICKETD_") {
		t.Errorf("--help lacks the flags or their environment:\n%s", help)
	}
}

// TestUnknownEnvWarns: a TICKETD_* variable that names no flag is
// reported with the closest flag's; the flags' own, the other variables
// ticketd reads and the test suites' are not.
func TestUnknownEnvWarns(t *testing.T) {
	o, err := parseOptions(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	names, closest := unknownEnv([]string{
		"TICKETD_MYSQL_ADRR=127.0.0.1:3307", "TICKETD_MYSQL_ADDR=x", "TICKETD_ADMIN_TOKEN=t", "TICKETD_IMPORT_FROM=a",
		"TICKETD_REQUIRE_PROMTOOL=1", "TICKETD_WHATEVER=1", "PATH=/bin", "TICKETD_NODEID=n2",
	}, o.envKeys)
	want := map[string]string{"TICKETD_MYSQL_ADRR": "TICKETD_MYSQL_ADDR", "TICKETD_NODEID": "TICKETD_NODE_ID", "TICKETD_WHATEVER": ""}
	if len(names) != len(want) {
		t.Fatalf("unknown %v, want the keys of %v", names, want)
	}
	for i, k := range names {
		if c, ok := want[k]; !ok || closest[i] != c {
			t.Errorf("%s: closest %q, want %q (known %v)", k, closest[i], c, ok)
		}
	}
}

// TestJSONLogOnly: with --log-format json everything the node writes is
// JSON lines, the warning about a misspelt variable and a fatal error
// included (main printed the error as a plain "ticketd: ..." line).
func TestJSONLogOnly(t *testing.T) {
	t.Setenv("TICKETD_MYSQL_ADRR", "127.0.0.1:1")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var out bytes.Buffer
	err = run(context.Background(), []string{"--log-format", "json", "--data-dir", t.TempDir(),
		"--mysql-addr", taken.Addr().String(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0"},
		func(string) string { return "" }, &out)
	if !errors.Is(err, errLogged) {
		t.Fatalf("run on a taken port: %v, want an error it logged", err)
	}
	var warned, stopped bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		warned = warned || (rec["var"] == "TICKETD_MYSQL_ADRR" && rec["did_you_mean"] == "TICKETD_MYSQL_ADDR" && rec["level"] == "WARN")
		stopped = stopped || (rec["level"] == "ERROR" && strings.Contains(rec["err"].(string), "mysql listener"))
	}
	if !warned || !stopped {
		t.Errorf("warned about TICKETD_MYSQL_ADRR %v, logged the error %v:\n%s", warned, stopped, out.String())
	}
}

// TestUsersFileDuplicate: an account listed twice is refused, naming both
// lines and neither password.
func TestUsersFileDuplicate(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("ops:first-secret\n[alloc]\napp:x\n ops :second-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseOptions([]string{"--users-file", path}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = o.client.apply(&wire.Config{}, log)
	if err == nil || !strings.Contains(err.Error(), "lines 1 and 4") || !strings.Contains(err.Error(), `"ops"`) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("duplicate account: %v, want a refusal naming lines 1 and 4 and no password", err)
	}
}

// TestUnknownFlagSuggests: a mistyped flag, of the node or of a
// subcommand, is refused naming the closest flag, as a mistyped
// TICKETD_* variable is (it got the flag package's bare "flag provided
// but not defined": issue 34); a name close to none gets no guess.
func TestUnknownFlagSuggests(t *testing.T) {
	noEnv := func(string) string { return "" }
	_, err := parseOptions([]string{"--mysql-adrr", "127.0.0.1:1"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did you mean --mysql-addr?") {
		t.Errorf("--mysql-adrr: %v", err)
	}
	_, err = parseOptions([]string{"-nodeid=n2"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did you mean --node-id?") {
		t.Errorf("-nodeid: %v", err)
	}
	_, err = parseOptions([]string{"--xyzzy-plugh"}, noEnv, io.Discard)
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("--xyzzy-plugh: %v, want a refusal without a guess", err)
	}
	err = backupCmd(context.Background(), []string{"--form", "127.0.0.1:1", "--out", "x"}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did you mean --from?") {
		t.Errorf("backup --form: %v", err)
	}
}

// TestRemoteListenWithoutAccountsWarns: a node whose MySQL address is not
// loopback, with no --users-file or --root-password, warns at start that
// remote clients have no account (they got 1045 and nothing was logged:
// issue 34); on loopback, or with accounts, it does not. Each run stops
// at the taken MySQL port, after the check.
func TestRemoteListenWithoutAccountsWarns(t *testing.T) {
	taken, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--mysql-addr", fmt.Sprintf("0.0.0.0:%d", port)}, true},
		{[]string{"--mysql-addr", fmt.Sprintf(":%d", port)}, true},
		{[]string{"--mysql-addr", fmt.Sprintf("0.0.0.0:%d", port), "--root-password", "pw"}, false},
		{[]string{"--mysql-addr", fmt.Sprintf("127.0.0.1:%d", port)}, false},
	} {
		var out bytes.Buffer
		args := append([]string{"--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0"}, c.args...)
		err := run(context.Background(), args, func(string) string { return "" }, &out)
		if !errors.Is(err, errLogged) || !strings.Contains(err.Error(), "already in use") {
			t.Fatalf("%v: %v, want the taken port", c.args, err)
		}
		warned := strings.Contains(out.String(), "level=WARN") && strings.Contains(out.String(), "no accounts are configured")
		if warned != c.warn {
			t.Errorf("%v: warned %v, want %v:\n%s", c.args, warned, c.warn, out.String())
		}
	}
}

// TestRedisCacheNegative: a negative --redis-cache is refused at start,
// before any listener or data directory is opened; 0 (the default, every
// INCR through Raft) and a block size parse.
func TestRedisCacheNegative(t *testing.T) {
	var out bytes.Buffer
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"--data-dir", dir, "--mysql-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0", "--redis-cache", "-1"}
	// A node that took the flag would serve until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := run(ctx, args, func(string) string { return "" }, &out)
	if err == nil || !strings.Contains(err.Error()+out.String(), "--redis-cache must not be negative") {
		t.Fatalf("--redis-cache -1: %v, want a refusal\n%s", err, out.String())
	}
	if _, serr := os.Stat(dir); serr == nil {
		t.Errorf("--redis-cache -1 created the data directory before refusing")
	}
	for _, v := range []string{"0", "100"} {
		if _, err := parseOptions([]string{"--redis-cache", v}, func(string) string { return "" }, io.Discard); err != nil {
			t.Errorf("--redis-cache %s: %v", v, err)
		}
	}
}
