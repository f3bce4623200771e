package wire

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func setupFlickr(t *testing.T, params string) (dsn string) {
	t.Helper()
	base := startServer(t)
	db := open(t, base)
	mustExec(t, db, "CREATE DATABASE flickr")
	mustExec(t, db, "USE flickr")
	mustExec(t, db, flickrDDL)
	return base + "flickr" + params
}

func TestMultiStatements(t *testing.T) {
	db := open(t, setupFlickr(t, "?multiStatements=true"))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for want := 1; want <= 3; want++ {
		var id int
		if err := conn.QueryRowContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if id != want {
			t.Fatalf("multi-statement id %d, want %d", id, want)
		}
	}
	// An error in the middle ends the sequence and the connection stays usable.
	if _, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a'); REPLACE INTO nosuch (stub) VALUES ('a'); REPLACE INTO Tickets64 (stub) VALUES ('a')"); errCode(err) != 1146 {
		t.Fatalf("error mid-sequence: %v", err)
	}
	var id int
	if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&id); err != nil || id != 4 {
		t.Fatalf("after failed multi-statement: id %d err %v (the first REPLACE ran, the third did not)", id, err)
	}
}

func TestMultiStatementsRefusedWithoutFlag(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	// go-sql-driver rejects this itself unless told; use a raw string
	// the driver passes through.
	_, err := db.Exec("SELECT 1; SELECT 2")
	if errCode(err) != 1064 {
		t.Fatalf("multi-statement without CLIENT_MULTI_STATEMENTS: %v", err)
	}
}

func TestSequenceAndOnDuplicate(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "CREATE TABLE seq (id BIGINT UNSIGNED NOT NULL)")
	mustExec(t, db, "INSERT INTO seq VALUES (0)")
	for want := int64(1); want <= 3; want++ {
		r := mustExec(t, db, "UPDATE seq SET id = LAST_INSERT_ID(id + 1)")
		if id, _ := r.LastInsertId(); id != want {
			t.Fatalf("sequence id %d, want %d", id, want)
		}
	}
	r := mustExec(t, db, "INSERT INTO Tickets64 (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)")
	if id, _ := r.LastInsertId(); id != 1 {
		t.Fatalf("on dup new: %d", id)
	}
	r = mustExec(t, db, "INSERT INTO Tickets64 (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)")
	id, _ := r.LastInsertId()
	aff, _ := r.RowsAffected()
	if id != 2 || aff != 2 {
		t.Fatalf("on dup existing: id %d affected %d", id, aff)
	}
	if _, err := db.Exec("INSERT INTO Tickets64 (stub) VALUES ('e')"); errCode(err) != 1062 {
		t.Fatalf("duplicate: %v", err)
	}
}

// TestTicketAssignmentColumnFirst: a ticket table's SET (UPDATE, and ON
// DUPLICATE KEY UPDATE) is judged by table and column before its value,
// as MariaDB does: the stub column is 1235 and an unknown one 1054
// whatever the value (a string there answered "Incorrect integer value"
// before), a missing table 1146; a non-number for the id is still 1366.
// The connection stays usable and the counter is untouched.
func TestTicketAssignmentColumnFirst(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"UPDATE Tickets64 SET stub = 'dee' WHERE id = 1", 1235},
		{"UPDATE Tickets64 SET stub = -1 WHERE id = 1", 1235},
		{"UPDATE Tickets64 SET stub = 5 WHERE id = 1", 1235},
		{"UPDATE Tickets64 SET nosuch = 'dee' WHERE id = 1", 1054},
		{"UPDATE NoSuchTable SET stub = 'dee' WHERE id = 1", 1146},
		{"UPDATE Tickets64 SET id = 'dee' WHERE id = 1", 1366},
		{"INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE stub = 'dee'", 1235},
		{"INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 'dee'", 1366},
	} {
		wantErr(t, db, c.q, c.code)
	}
	r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if id, _ := r.LastInsertId(); id != 2 {
		t.Fatalf("next id after the refused statements: %d, want 2", id)
	}
}

func TestShowStatements(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "ALTER TABLE Tickets64 AUTO_INCREMENT = 1000")
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE Tickets64").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE `Tickets64` (\n  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n  `stub` char(1) NOT NULL DEFAULT '',\n" +
		"  PRIMARY KEY (`id`),\n  UNIQUE KEY `stub` (`stub`)\n) ENGINE=MyISAM AUTO_INCREMENT=1000 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	if create != want {
		t.Fatalf("SHOW CREATE TABLE:\n%s\nwant\n%s", create, want)
	}
	rows, err := db.Query("SHOW VARIABLES LIKE 'auto_increment%'")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var n, v string
		_ = rows.Scan(&n, &v)
		got = append(got, n+"="+v)
	}
	rows.Close()
	if strings.Join(got, ",") != "auto_increment_increment=1,auto_increment_offset=1" {
		t.Fatalf("SHOW VARIABLES: %v", got)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM DUAL").Scan(&n); errCode(err) != 1235 {
		t.Fatalf("aggregate: %v", err)
	}
	rows, err = db.Query("SHOW VARIABLES WHERE Variable_name = 'autocommit' OR Variable_name = 'max_allowed_packet'")
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 2 {
		t.Fatalf("SHOW VARIABLES WHERE ... OR ...: %d rows, want 2", n)
	}
	if got := scalar(t, db, "SHOW TABLES"); got != "Tickets64" {
		t.Fatalf("SHOW TABLES: %s", got)
	}
	if _, err := db.Exec("DROP TABLE nosuch"); errCode(err) != 1051 {
		t.Fatalf("DROP unknown: %v", err)
	}
	if _, err := db.Exec("DELETE FROM Tickets64"); errCode(err) != 1235 {
		t.Fatalf("DELETE: %v", err)
	}
}

func TestTypeMaximum(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "CREATE TABLE Tickets32 (id int(10) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM")
	mustExec(t, db, "ALTER TABLE Tickets32 AUTO_INCREMENT = 4294967295")
	r := mustExec(t, db, "REPLACE INTO Tickets32 (stub) VALUES ('a')")
	if id, _ := r.LastInsertId(); id != 4294967295 {
		t.Fatalf("last INT UNSIGNED id %d", id)
	}
	if _, err := db.Exec("REPLACE INTO Tickets32 (stub) VALUES ('a')"); errCode(err) != 167 {
		t.Fatalf("past the maximum: %v", err)
	}
	if got := scalar(t, db, "SELECT id FROM Tickets32"); got != "4294967295" {
		t.Fatalf("row after failed REPLACE: %s", got)
	}
}

// TestBatchFetch: a multi-row REPLACE is one Raft proposal however many
// rows it has (up to MaxRowsPerStatement), and gives consecutive ids.
func TestBatchFetch(t *testing.T) {
	repl := &countingRepl{memRepl: memRepl{st: ticket.NewMemStore()}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveRepl(t, Config{}, ln, repl)
	db := open(t, "root@tcp("+addr+")/")
	mustExec(t, db, "CREATE DATABASE flickr")
	mustExec(t, db, "USE flickr")
	mustExec(t, db, flickrDDL)
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	q := "REPLACE INTO Tickets64 (stub) VALUES ('a')" + strings.Repeat(",('a')", MaxRowsPerStatement-1)
	before := repl.proposals.Load()
	r := mustExec(t, db, q)
	if n := repl.proposals.Load() - before; n != 1 {
		t.Fatalf("%d proposals for one multi-row REPLACE", n)
	}
	id, _ := r.LastInsertId()
	aff, _ := r.RowsAffected()
	if id != 2 || aff != 2*MaxRowsPerStatement {
		t.Fatalf("id %d affected %d", id, aff)
	}
	r = mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if next, _ := r.LastInsertId(); next != 2+MaxRowsPerStatement {
		t.Fatalf("next id %d, want %d: the batch was not consecutive", next, 2+MaxRowsPerStatement)
	}
	if _, err := db.Exec(q + ",('a')"); errCode(err) != 1235 {
		t.Fatalf("over the bound: %v", err)
	}
}

// countingRepl counts proposals.
type countingRepl struct {
	memRepl
	proposals atomic.Int64
}

func (c *countingRepl) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	c.proposals.Add(1)
	return c.memRepl.Propose(ctx, cmds)
}
