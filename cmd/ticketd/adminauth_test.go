package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketd/ticketd/raftstore/tlstest"
)

const testToken = "0123456789abcdef0123456789abcdef"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// securedAdmin is the whole admin stack of a node, as run builds it, with
// a token.
func securedAdmin(t *testing.T, n *testNode, f adminFlags, logs io.Writer) http.Handler {
	log := slog.New(slog.NewTextHandler(logs, nil))
	h := withMetrics(backupRoutes(adminHandler(n.node, nil, log), n.node, n.svc, n.dir, log), prometheus.NewRegistry(), log)
	return secureAdmin(h, &f, testToken, "127.0.0.1:0", log)
}

func call(h http.Handler, method, path, token string, body io.Reader) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, body)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	setToken(req, token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestAdminTokenRequired: without the token, or with a wrong one, every
// path that changes or exposes state answers 401 with a Bearer challenge
// and changes nothing; the probes stay open; the token is never logged.
func TestAdminTokenRequired(t *testing.T) {
	n := startTestNode(t)
	n.setup(t, 1)
	var logs syncBuffer
	h := securedAdmin(t, n, adminFlags{}, &logs)
	wrong := "wrong-token-that-is-long-enough"
	join := url.Values{"id": {"evil"}, "addr": {"127.0.0.1:1"}}.Encode()
	protected := []struct{ method, path, body string }{
		{"POST", "/join", join},
		{"POST", "/remove", "id=n1"},
		{"GET", "/backup", ""},
		{"POST", "/restore?advance=10", "not a backup"},
		{"GET", "/debug/pprof/", ""},
		{"GET", "/debug/pprof/goroutine", ""},
		{"GET", "/debug/pprof/cmdline", ""},
		{"GET", "/healthz/../backup", ""}, // a spelling of a protected path
		{"GET", "/no-such-path", ""},
	}
	for _, p := range protected {
		for _, tok := range []string{"", wrong} {
			w := call(h, p.method, p.path, tok, strings.NewReader(p.body))
			if w.Code != http.StatusUnauthorized {
				t.Errorf("%s %s token %q: %d, want 401", p.method, p.path, tok, w.Code)
			}
			if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("%s %s: WWW-Authenticate %q", p.method, p.path, got)
			}
		}
	}
	if m := n.node.Status().Members; len(m) != 1 || m[0].ID != "n1" {
		t.Errorf("members after refused /join and /remove: %+v", m)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/status"} {
		if w := call(h, "GET", path, "", nil); w.Code != http.StatusOK {
			t.Errorf("GET %s without token: %d, want 200", path, w.Code)
		}
	}
	for _, path := range []string{"/backup", "/debug/pprof/"} {
		if w := call(h, "GET", path, testToken, nil); w.Code != http.StatusOK {
			t.Errorf("GET %s with the token: %d %s", path, w.Code, w.Body)
		}
	}
	if strings.Contains(logs.String(), wrong) || strings.Contains(logs.String(), testToken) {
		t.Errorf("a token was logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "admin request refused") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

func TestAdminAuthMetrics(t *testing.T) {
	n := startTestNode(t)
	h := securedAdmin(t, n, adminFlags{authMetrics: true}, io.Discard)
	for _, path := range []string{"/metrics", "/status"} {
		if w := call(h, "GET", path, "", nil); w.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without token, --admin-auth-metrics: %d, want 401", path, w.Code)
		}
		if w := call(h, "GET", path, testToken, nil); w.Code != http.StatusOK {
			t.Errorf("GET %s with token: %d", path, w.Code)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if w := call(h, "GET", path, "", nil); w.Code != http.StatusOK {
			t.Errorf("GET %s without token: %d, want 200", path, w.Code)
		}
	}
}

func TestAdminTokenSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	os.WriteFile(file, []byte(testToken+"\n"), 0o600)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == adminTokenEnv {
				return v
			}
			return ""
		}
	}
	if tok, err := (&adminFlags{tokenFile: file}).token(env("from-env-but-long-enough")); err != nil || tok != testToken {
		t.Errorf("file: %q %v", tok, err)
	}
	if tok, err := (&adminFlags{}).token(env(testToken)); err != nil || tok != testToken {
		t.Errorf("env: %q %v", tok, err)
	}
	if _, err := (&adminFlags{}).token(env("short")); err == nil {
		t.Error("short token accepted")
	}
	os.WriteFile(file, []byte("\n"), 0o600)
	if _, err := (&adminFlags{tokenFile: file}).token(env("")); err == nil {
		t.Error("empty token file accepted")
	}
}

// TestBackupOverTLSWithClientCert: with --http-cert/--http-key/--http-ca the
// admin API speaks HTTPS only and wants a client certificate from its CA;
// the backup subcommand, given the CA, its certificate and the token, gets
// through, and without the certificate or the token it does not.
func TestBackupOverTLSWithClientCert(t *testing.T) {
	n := startTestNode(t)
	n.setup(t, 1)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "admin CA")
	srvFiles := ca.Issue(t, "node").WriteFiles(t, ca, dir, "server")
	cliFiles := ca.Issue(t, "operator").WriteFiles(t, ca, dir, "client")
	f := adminFlags{cert: srvFiles.Cert, key: srvFiles.Key, ca: srvFiles.CA}
	cfg, err := f.serverTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(securedAdmin(t, n, f, io.Discard))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(testToken), 0o600)
	noEnv := func(string) string { return "" }
	out := filepath.Join(dir, "b.bak")
	base := []string{"--from", addr, "--out", out, "--http-ca", cliFiles.CA}

	withCert := append(base, "--http-cert", cliFiles.Cert, "--http-key", cliFiles.Key)
	if err := backupCmd(context.Background(), append(withCert, "--admin-token-file", tokenFile), noEnv, io.Discard, io.Discard); err != nil {
		t.Fatalf("backup over TLS with certificate and token: %v", err)
	}
	// The status once, and the flag that sends the token (it said "401
	// Unauthorized: 401 unauthorized: ..." and named no flag: issue 34).
	if err := backupCmd(context.Background(), withCert, noEnv, io.Discard, io.Discard); err == nil || strings.Count(err.Error(), "401") != 1 ||
		!strings.Contains(err.Error(), "--admin-token-file") {
		t.Errorf("backup without the token: %v, want 401 once and --admin-token-file named", err)
	}
	if err := backupCmd(context.Background(), append(base, "--admin-token-file", tokenFile), noEnv, io.Discard, io.Discard); err == nil {
		t.Error("backup without a client certificate succeeded")
	}
	plain := []string{"--from", addr, "--out", out, "--admin-token-file", tokenFile}
	if err := backupCmd(context.Background(), plain, noEnv, io.Discard, io.Discard); err == nil {
		t.Error("plain HTTP to the TLS admin API succeeded")
	}
}
