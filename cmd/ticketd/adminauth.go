package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
)

// The admin API's protection (cmd/ticketd/OPERATIONS.md "Securing a cluster"): TLS, client
// certificates verified against a CA, and a bearer token. Without a token
// the API is open, as before; with one, every path but the probes
// (/healthz, /readyz) and the read-only views (/metrics, /status; see
// --admin-auth-metrics) needs it, so that a route added later is
// protected unless someone decides otherwise.

// adminTokenEnv holds the token when --admin-token-file is not given. It
// is read directly, not as a flag, so that the token never has to be on a
// command line (visible to every user in ps).
const adminTokenEnv = "TICKETD_ADMIN_TOKEN"

// minAdminToken is the shortest token accepted: a guessable token is no
// better than none. 16 characters of `openssl rand -hex 16` is 64 bits.
const minAdminToken = 16

// adminFlags are the admin API's security settings. On a node they
// configure its server; in the client subcommands (backup, restore) and
// for --join they configure the client: the same CA verifies the server,
// and the same certificate is presented to a server that asks for one.
type adminFlags struct {
	cert, key, ca string
	tokenFile     string
	authMetrics   bool // server only
}

func (f *adminFlags) register(fs *flag.FlagSet, server bool) {
	if server {
		fs.StringVar(&f.cert, "http-cert", "", "PEM certificate for the admin HTTP API: it then speaks HTTPS only (with --http-key)")
		fs.StringVar(&f.key, "http-key", "", "PEM private key of --http-cert")
		fs.StringVar(&f.ca, "http-ca", "", "PEM CA bundle: admin clients must present a certificate it signed (needs --http-cert); --join uses it to verify the member it calls")
		fs.StringVar(&f.tokenFile, "admin-token-file", "", "file holding the bearer token the admin API requires for /join, /remove, /leader/transfer, /backup, /restore and /debug/pprof/ (else $"+adminTokenEnv+"; neither: no token, the API is open); --join sends it")
		fs.BoolVar(&f.authMetrics, "admin-auth-metrics", false, "require the admin token for /metrics and /status too (default: open, like /healthz and /readyz)")
		return
	}
	fs.StringVar(&f.cert, "http-cert", "", "PEM client certificate, for a node started with --http-ca (with --http-key)")
	fs.StringVar(&f.key, "http-key", "", "PEM private key of --http-cert")
	fs.StringVar(&f.ca, "http-ca", "", "PEM CA bundle that signed the node's --http-cert: speak HTTPS (https:// in the address does too, with the system's roots)")
	fs.StringVar(&f.tokenFile, "admin-token-file", "", "file holding the node's admin token (else $"+adminTokenEnv+")")
}

// token returns the configured admin token, "" when there is none.
func (f *adminFlags) token(getenv func(string) string) (string, error) {
	tok, from := getenv(adminTokenEnv), adminTokenEnv
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--admin-token-file: %w", err)
		}
		tok, from = string(b), "--admin-token-file "+f.tokenFile
		if strings.TrimSpace(tok) == "" {
			return "", fmt.Errorf("%s is empty", from)
		}
	}
	tok = strings.TrimSpace(tok)
	if tok != "" && len(tok) < minAdminToken {
		return "", fmt.Errorf("%s: the admin token must be at least %d characters (try: openssl rand -hex 16)", from, minAdminToken)
	}
	return tok, nil
}

// serverTLS is the admin server's TLS configuration, nil for plain HTTP.
func (f *adminFlags) serverTLS() (*tls.Config, error) {
	if (f.cert == "") != (f.key == "") {
		return nil, errors.New("--http-cert and --http-key go together")
	}
	if f.cert == "" {
		if f.ca != "" {
			return nil, errors.New("--http-ca needs --http-cert and --http-key: client certificates are only asked for over TLS")
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("--http-cert/--http-key: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if f.ca != "" {
		if cfg.ClientCAs, err = loadCAPool(f.ca); err != nil {
			return nil, fmt.Errorf("--http-ca: %w", err)
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// client is the HTTP client and base URL for calling a node's admin API
// at addr (host:port, or a URL with its scheme). It speaks HTTPS when addr
// says so or a CA is given; --join on a node with --http-cert does too
// (every member is expected to be configured alike).
func (f *adminFlags) client(addr string, https bool) (*http.Client, string, error) {
	base := addr
	if !strings.Contains(addr, "://") {
		scheme := "http"
		if https || f.ca != "" {
			scheme = "https"
		}
		base = scheme + "://" + addr
	}
	if !strings.HasPrefix(base, "https://") {
		if f.ca != "" {
			return nil, "", fmt.Errorf("%s: --http-ca given but the address is not https", addr)
		}
		return &http.Client{}, base, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	var err error
	if f.ca != "" {
		if cfg.RootCAs, err = loadCAPool(f.ca); err != nil {
			return nil, "", fmt.Errorf("--http-ca: %w", err)
		}
	}
	if f.cert != "" || f.key != "" {
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, "", fmt.Errorf("--http-cert/--http-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, base, nil
}

func loadCAPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// adminConn is a client subcommand's way to one node's admin API: the
// client and base URL its flags call for, and the token it sends.
type adminConn struct {
	client *http.Client
	base   string
	token  string
}

// dial reads the admin token and sets up the client for the node at addr,
// the steps every client subcommand (status, leader-transfer, backup,
// restore) takes, in this order, before it builds its request: a bad
// token is reported before a bad certificate. Nothing is sent yet.
func (f *adminFlags) dial(getenv func(string) string, addr string) (adminConn, error) {
	token, err := f.token(getenv)
	if err != nil {
		return adminConn{}, err
	}
	client, base, err := f.client(addr, false)
	if err != nil {
		return adminConn{}, err
	}
	return adminConn{client: client, base: base, token: token}, nil
}

// request is a request for path (with its query) on the node, carrying
// the token if there is one.
func (c adminConn) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	setToken(req, c.token)
	return req, nil
}

// setToken adds the bearer token to an admin request, if there is one.
func setToken(req *http.Request, token string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}

// authedKey marks, in a request's context, that it carried the token.
type authedKey struct{}

// requireToken answers 401 to a request for a protected path without the
// token, before any handler runs. open lists the paths that need none;
// they are compared exactly, so that any other spelling (/healthz/,
// /healthz/../join) needs the token too.
func requireToken(next http.Handler, token string, open map[string]bool, log *slog.Logger) http.Handler {
	// Comparing digests takes the same time whatever the lengths, which
	// subtle.ConstantTimeCompare alone does not.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r)
		sum := sha256.Sum256([]byte(got))
		if ok && subtle.ConstantTimeCompare(sum[:], want[:]) == 1 {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authedKey{}, true)))
			return
		}
		if open[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		reason := "no token"
		if ok {
			reason = "wrong token"
		}
		// The token is not logged, right or wrong: a wrong one is often
		// a right one for another cluster.
		log.Warn("admin request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason)
		w.Header().Set("WWW-Authenticate", `Bearer realm="ticketd"`)
		// The status line says 401 already (ticketd's commands print it
		// before this text); say what to send, and how.
		msg := "this path needs the admin token"
		if ok {
			msg = "the admin token sent is not this node's"
		}
		http.Error(w, msg+" (Authorization: Bearer TOKEN; ticketd's commands send the one in --admin-token-file FILE or $"+adminTokenEnv+")", http.StatusUnauthorized)
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// openAdminPaths are the paths served without the token.
func openAdminPaths(authMetrics bool) map[string]bool {
	open := map[string]bool{"/healthz": true, "/readyz": true}
	if !authMetrics {
		open["/metrics"], open["/status"] = true, true
	}
	return open
}

// secureAdmin wraps the admin handler with the token check, if there is a
// token, and warns when the API is open on an address others can reach.
func secureAdmin(h http.Handler, f *adminFlags, token, httpAddr string, log *slog.Logger) http.Handler {
	if token == "" {
		if !isLoopback(httpAddr) {
			log.Warn("admin API has no token: anyone who reaches it can change membership and read backups; see --admin-token-file", "http", httpAddr)
		}
		return h
	}
	return requireToken(h, token, openAdminPaths(f.authMetrics), log)
}

// isLoopback reports whether a listen address (host:port) is reachable
// from this machine only. An empty host or a name other than localhost
// is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
