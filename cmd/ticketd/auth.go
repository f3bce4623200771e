package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// clientOptions are the flags for client connections: accounts, TLS and
// the protocol limits. Like every flag they also come from TICKETD_<FLAG>
// (TICKETD_ROOT_PASSWORD keeps a password out of the process list).
type clientOptions struct {
	rootPassword     string
	usersFile        string
	authPlugin       string
	tlsCert, tlsKey  string
	requireTLS       bool
	maxAllowedPacket int
	waitTimeout      time.Duration
	connectTimeout   time.Duration
	maxConnections   int
	maxConnectErrors int
}

func (c *clientOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&c.rootPassword, "root-password", "", "password of the MySQL user root (any host); prefer TICKETD_ROOT_PASSWORD or --users-file, a flag shows in ps. "+
		"Without it and --users-file, root has no password and may connect from loopback addresses only")
	fs.StringVar(&c.usersFile, "users-file", "", "file of MySQL accounts, one 'user:password' per line ('#' comments); a line '[alloc]' or '[admin]' sets the role of the accounts after it (admin before any); root is an account only if listed or --root-password is set")
	fs.StringVar(&c.authPlugin, "default-authentication-plugin", "caching_sha2_password", "plugin proposed in the handshake: caching_sha2_password or mysql_native_password (clients may use either)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate (chain) for TLS client connections")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&c.requireTLS, "require-tls", false, "refuse logins over plain TCP (MySQL's require_secure_transport)")
	fs.IntVar(&c.maxAllowedPacket, "max-allowed-packet", 64<<20, "largest client packet in bytes; a client sending more is disconnected with error 1153")
	fs.DurationVar(&c.waitTimeout, "wait-timeout", 8*time.Hour, "close client connections idle this long (MySQL's wait_timeout)")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", 10*time.Second, "close client connections that have not logged in this long after connecting (MySQL's connect_timeout)")
	fs.IntVar(&c.maxConnections, "max-connections", 10000, "logged-in client connections at most, plus one for an admin account; one more login gets error 1040 'Too many connections' (MySQL's max_connections). Connections not logged in yet do not count: beyond 1024 of them the oldest is closed. 0 for no limit")
	fs.IntVar(&c.maxConnectErrors, "max-connect-errors", 100, "block a host after this many consecutive connection errors (malformed handshakes, not refused logins; never loopback) with error 1129 until FLUSH HOSTS (MySQL's max_connect_errors); 0 never blocks")
}

// apply completes a wire.Config with the client options.
func (c *clientOptions) apply(cfg *wire.Config, log *slog.Logger) error {
	cfg.DefaultAuthPlugin = c.authPlugin
	cfg.RequireTLS = c.requireTLS
	cfg.MaxAllowedPacket = c.maxAllowedPacket
	cfg.IdleTimeout = c.waitTimeout
	if c.waitTimeout <= 0 {
		return errors.New("--wait-timeout must be positive")
	}
	if c.connectTimeout <= 0 {
		return errors.New("--connect-timeout must be positive")
	}
	if c.maxConnections < 0 || c.maxConnectErrors < 0 {
		return errors.New("--max-connections and --max-connect-errors must not be negative")
	}
	cfg.ConnectTimeout = c.connectTimeout
	// wire reads 0 as its default and a negative value as "no limit".
	cfg.MaxConnections, cfg.MaxConnectErrors = c.maxConnections, c.maxConnectErrors
	if c.maxConnections == 0 {
		cfg.MaxConnections = -1
	}
	if c.maxConnectErrors == 0 {
		cfg.MaxConnectErrors = -1
	}
	if c.maxAllowedPacket < 1024 {
		return errors.New("--max-allowed-packet must be at least 1024")
	}
	if c.usersFile != "" || c.rootPassword != "" {
		users := wire.NewUsers()
		if c.usersFile != "" {
			if err := readUsersFile(c.usersFile, users, log); err != nil {
				return err
			}
		}
		if c.rootPassword != "" {
			if err := users.Add("root", c.rootPassword); err != nil {
				return err
			}
		}
		cfg.Users = users
		log.Info("MySQL accounts configured", "users", users.Names())
	}
	switch {
	case c.tlsCert != "" && c.tlsKey != "":
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case c.tlsCert != "" || c.tlsKey != "":
		return errors.New("--tls-cert and --tls-key go together")
	}
	return cfg.Validate()
}

// warnLoopbackOnly logs, at start, that a node listening for MySQL
// clients beyond loopback has no account they can use: without
// --users-file and --root-password the only account is root from loopback
// addresses, so every remote login gets 1045 (which used to be the first
// sign of it).
func (c *clientOptions) warnLoopbackOnly(mysqlAddr string, log *slog.Logger) {
	if c.usersFile != "" || c.rootPassword != "" {
		return
	}
	host, _, err := net.SplitHostPort(mysqlAddr)
	if err != nil || host == "localhost" {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return
	}
	log.Warn("MySQL listens beyond loopback but no accounts are configured: root, with no password, may log in from loopback addresses only and remote clients get error 1045; set --users-file or --root-password (OPERATIONS.md \"Accounts and TLS\")",
		"mysql_addr", mysqlAddr)
}

// readUsersFile adds the accounts of a users file: 'user:password' lines,
// the password being everything after the first colon; blank lines and
// lines starting with '#' are skipped. A line '[alloc]' or '[admin]'
// gives the accounts after it that role; accounts before any such line
// are admin, so a file written before roles existed keeps its meaning
// (and such a line, having no colon, was an error then: no older file
// reads differently). An account listed twice is refused. Errors name the
// line, never a password.
func readUsersFile(path string, users *wire.Users, log *slog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--users-file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("users file is readable by other users; chmod 600 it", "path", path)
	}
	role := mysqlconn.RoleAdmin
	seen := map[string]int{} // account -> its line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if name, ok := strings.CutPrefix(trimmed, "["); ok && strings.HasSuffix(name, "]") {
			if role, err = mysqlconn.ParseRole(strings.TrimSpace(strings.TrimSuffix(name, "]"))); err != nil {
				return fmt.Errorf("--users-file %s line %d: %w", path, n, err)
			}
			continue
		}
		user, password, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("--users-file %s line %d: want user:password or [role]", path, n)
		}
		user = strings.TrimSpace(user)
		if first, dup := seen[user]; dup {
			// Which of the two passwords or roles was meant is a guess
			// the file must not leave to the reader.
			return fmt.Errorf("--users-file %s lines %d and %d: account %q listed twice", path, first, n, user)
		}
		seen[user] = n
		if err := users.AddRole(user, password, role); err != nil {
			return fmt.Errorf("--users-file %s line %d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("--users-file %s: %w", path, err)
	}
	if users.Len() == 0 {
		return fmt.Errorf("--users-file %s has no accounts", path)
	}
	return nil
}
