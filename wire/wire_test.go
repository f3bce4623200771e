package wire

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/ticket/model"
)

// memRepl applies batches to a MemStore under a lock: the replication
// contract without Raft, so the wire layer can be tested alone.
type memRepl struct {
	mu sync.Mutex
	st *ticket.MemStore
}

func (m *memRepl) Propose(_ context.Context, cmds []model.Command) ([]model.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		r, err := ticket.Apply(m.st, &cmds[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (m *memRepl) View(fn func(ticket.Store) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(m.st)
}

// startServer runs a wire.Server over an in-memory store and returns a DSN
// prefix for go-sql-driver.
func startServer(t testing.TB) string {
	t.Helper()
	addr, _ := startServerWith(t, Config{})
	return fmt.Sprintf("root@tcp(%s)/", addr)
}

// startServerWith runs a wire.Server with cfg over an in-memory store and
// returns its address. At the end of the test it checks that no handler
// panicked (serveConn turns a panic into a closed connection).
func startServerWith(t testing.TB, cfg Config) (string, *Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startServerOn(t, cfg, ln)
}

// startServerOn is startServerWith on a given listener.
func startServerOn(t testing.TB, cfg Config, ln net.Listener) (string, *Server) {
	t.Helper()
	return serveRepl(t, cfg, ln, &memRepl{st: ticket.NewMemStore()})
}

// replica is what a test server replicates through: a Replicator that
// is also the Reader of the state it applies to.
type replica interface {
	ticket.Replicator
	ticket.Reader
}

// serveRepl is startServerOn over a given replica.
func serveRepl(t testing.TB, cfg Config, ln net.Listener, repl replica) (string, *Server) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := alloc.NewService(repl, repl, alloc.Config{}, log)
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := New(svc, cfg)
	go func() { _ = srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		ln.Close()
		srv.Close()
		svc.Close()
		if n := srv.panics.Load(); n > 0 {
			t.Errorf("%d connection handlers panicked", n)
		}
	})
	return ln.Addr().String(), srv
}

func open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

const flickrDDL = "CREATE TABLE Tickets64 (id bigint(20) unsigned NOT NULL auto_increment, " +
	"stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func scalar(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestTicketFlow(t *testing.T) {
	for _, mode := range []string{"", "?interpolateParams=true"} {
		t.Run("mode"+mode, func(t *testing.T) {
			base := startServer(t)
			db := open(t, base+mode)
			mustExec(t, db, "CREATE DATABASE flickr")
			mustExec(t, db, "USE flickr")
			mustExec(t, db, flickrDDL)
			for i, wantAff := range []int64{1, 2, 2} {
				r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
				id, _ := r.LastInsertId()
				aff, _ := r.RowsAffected()
				if id != int64(i+1) || aff != wantAff {
					t.Fatalf("REPLACE #%d: id %d affected %d", i, id, aff)
				}
				if got := scalar(t, db, "SELECT LAST_INSERT_ID()"); got != fmt.Sprint(id) {
					t.Fatalf("LAST_INSERT_ID() = %s, OK packet said %d", got, id)
				}
			}
			// Prepared statement with an argument (server-side unless interpolated).
			r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES (?)", "b")
			if id, _ := r.LastInsertId(); id != 4 {
				t.Fatalf("prepared REPLACE id %d", id)
			}
			if got := scalar(t, db, "SELECT id FROM Tickets64 WHERE stub = ?", "a"); got != "3" {
				t.Fatalf("row a holds %s, want 3", got)
			}
			if got := scalar(t, db, "SELECT LAST_INSERT_ID(42)"); got != "42" {
				t.Fatalf("LAST_INSERT_ID(42) = %s", got)
			}
			if got := scalar(t, db, "SELECT @@identity"); got != "42" {
				t.Fatalf("@@identity = %s", got)
			}
			_, err := db.Exec("REPLACE INTO nosuch (stub) VALUES ('a')")
			if errCode(err) != 1146 {
				t.Fatalf("unknown table: %v", err)
			}
			_, err = db.Exec("REPLACE INTO")
			if errCode(err) != 1064 {
				t.Fatalf("bad syntax: %v", err)
			}
			_, err = db.Exec("SET @@nonexistent = 1")
			if errCode(err) != 1193 {
				t.Fatalf("unknown variable: %v", err)
			}
			if got := scalar(t, db, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME = 'Tickets64'"); got != "5" {
				t.Fatalf("information_schema AUTO_INCREMENT = %s", got)
			}
		})
	}
}

// TestRowCountAfterShowWarnings: SHOW WARNINGS leaves the warnings in
// place but, as any statement with a result set, sets ROW_COUNT() to -1
// (MariaDB 10.11: REPLACE, SHOW WARNINGS, SELECT ROW_COUNT() is -1).
func TestRowCountAfterShowWarnings(t *testing.T) {
	dsn := startServer(t)
	db := open(t, dsn)
	mustExec(t, db, "CREATE DATABASE flickr")
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, q := range []string{"USE flickr", flickrDDL} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rowCount := func() int64 {
		var n int64
		if err := c.QueryRowContext(ctx, "SELECT ROW_COUNT()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := c.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(); n != 1 {
		t.Fatalf("ROW_COUNT() after REPLACE: %d, want 1", n)
	}
	if _, err := c.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if n := rowCount(); n != -1 {
		t.Fatalf("ROW_COUNT() after SHOW WARNINGS: %d, want -1", n)
	}
}

func TestAutoIncrementVariables(t *testing.T) {
	dsn := startServer(t)
	db := open(t, dsn)
	mustExec(t, db, "CREATE DATABASE flickr")
	mustExec(t, db, "USE flickr")
	mustExec(t, db, flickrDDL)
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	mustExec(t, db, "SET @@auto_increment_increment = 5")
	mustExec(t, db, "SET @@session.auto_increment_offset = 3")
	r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if id, _ := r.LastInsertId(); id != 3 {
		t.Fatalf("inc 5 off 3: id %d", id)
	}
	mustExec(t, db, "SET auto_increment_increment = 70000")
	if got := scalar(t, db, "SELECT @@auto_increment_increment"); got != "65535" {
		t.Fatalf("clamped increment %s", got)
	}
	var level, msg string
	var code int
	mustExec(t, db, "SET auto_increment_increment = 0")
	if err := db.QueryRow("SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1292 {
		t.Fatalf("SHOW WARNINGS after clamp: %v %d %s", err, code, msg)
	}
	_, err := db.Exec("SET auto_increment_increment = 'abc'")
	if errCode(err) != 1232 {
		t.Fatalf("string increment: %v", err)
	}
	mustExec(t, db, "SET GLOBAL auto_increment_increment = 2")
	if got := scalar(t, db, "SELECT @@global.auto_increment_increment"); got != "2" {
		t.Fatalf("global increment %s", got)
	}
	// A new connection starts with the global value.
	db2 := open(t, dsn+"flickr")
	if got := scalar(t, db2, "SELECT @@auto_increment_increment"); got != "2" {
		t.Fatalf("new session increment %s, want the global 2", got)
	}
}
