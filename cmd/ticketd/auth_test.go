package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

func TestClientOptions(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("# accounts\n\nalice:pa:ss\r\nbob:\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TICKETD_USERS_FILE": users, "TICKETD_ROOT_PASSWORD": "rootpw"}
	o, err := parseOptions(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var cfg wire.Config
	if err := o.client.apply(&cfg, log); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Users.Names(), ","); got != "alice,bob,root" {
		t.Fatalf("accounts %s", got)
	}
	for _, args := range [][]string{
		{"--tls-cert", "x.pem"},
		{"--require-tls"},
		{"--default-authentication-plugin", "sha256_password"},
		{"--users-file", filepath.Join(dir, "missing")},
		{"--tls-cert", users, "--tls-key", users},
	} {
		o, err := parseOptions(args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.client.apply(&wire.Config{}, log); err == nil {
			t.Errorf("%v accepted", args)
		} else if strings.Contains(err.Error(), "pa:ss") {
			t.Errorf("%v: error shows a password: %v", args, err)
		}
	}
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("no-colon-secret\n"), 0o600)
	o, _ = parseOptions([]string{"--users-file", bad}, func(string) string { return "" }, io.Discard)
	if err := o.client.apply(&wire.Config{}, log); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad users file: %v", err)
	}
}

// TestUsersFileRoles: '[role]' lines give the accounts after them a role;
// accounts before any (every account of an older file) are admin.
func TestUsersFileRoles(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	path := filepath.Join(t.TempDir(), "users")
	content := "old:pw:with:colons\n[alloc]\napp:apppw\n app2:x\n[ admin ]\nops:opspw\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	users := wire.NewUsers()
	if err := readUsersFile(path, users, log); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]mysqlconn.Role{"old": mysqlconn.RoleAdmin, "app": mysqlconn.RoleAlloc,
		"app2": mysqlconn.RoleAlloc, "ops": mysqlconn.RoleAdmin} {
		if got, _, ok := users.Role(name); !ok || got != want {
			t.Errorf("%s: role %v (%v), want %v", name, got, ok, want)
		}
	}
	if err := os.WriteFile(path, []byte("[reader]\nx:y\n"), 0o600); err == nil {
		if err := readUsersFile(path, wire.NewUsers(), log); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("unknown role: %v", err)
		}
	}
}
