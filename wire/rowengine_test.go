package wire

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestSessionModes: sql_mode takes only the modes ticketd honours, in
// MariaDB's canonical spelling; a mode that changes what an id value does
// is refused on a ticket table rather than ignored; SET timestamp pins
// NOW() and @@timestamp for the session only; prepared statements bind
// '?' in the row engine's WHERE and SET.
func TestSessionModes(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
	str := func(q string, args ...any) string {
		var s string
		if err := conn.QueryRowContext(ctx, q, args...).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	if err := exec("SET sql_mode = 'no_auto_value_on_zero,strict_trans_tables'"); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT @@sql_mode"); got != "NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES" {
		t.Fatalf("@@sql_mode %q", got)
	}
	for q, code := range map[string]uint16{"SET sql_mode = 'ANSI_QUOTES'": 1235, "SET sql_mode = 'NO_SUCH'": 1231} {
		if err := exec(q); errCode(err) != code {
			t.Errorf("%s: %v, want %d", q, err, code)
		}
	}
	if got := str("SELECT @@sql_mode"); got != "NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES" {
		t.Fatalf("@@sql_mode after refused SETs %q", got)
	}
	// The ticket idiom gives no id: unaffected. An explicit id is refused.
	if err := exec("REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	if err := exec("INSERT INTO Tickets64 (id, stub) VALUES (0, 'z')"); errCode(err) != 1235 {
		t.Fatalf("explicit id under NO_AUTO_VALUE_ON_ZERO on a ticket table: %v, want 1235", err)
	}
	if err := exec("SET sql_mode = DEFAULT"); err != nil {
		t.Fatal(err)
	}

	if err := exec("CREATE TABLE r (id int NOT NULL, at datetime DEFAULT NULL, n int NOT NULL DEFAULT 0, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	if err := exec("SET timestamp = 1700000000"); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT @@timestamp"); got != "1700000000.000000" {
		t.Fatalf("@@timestamp %q", got)
	}
	if err := exec("INSERT INTO r (id, at) VALUES (1, NOW()), (2, NOW())"); err != nil {
		t.Fatal(err)
	}
	// Prepared: '?' in SET and WHERE (go-sql-driver sends them binary).
	if err := exec("UPDATE r SET at = NOW() - INTERVAL ? DAY, n = n + ? WHERE id > ? AND at IS NOT NULL", 1, 5, 1); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT CONCAT(id, ' ', at, ' ', n) FROM r WHERE at < ? ORDER BY id DESC LIMIT 1", "2023-11-14 22:13:20"); got != "2 2023-11-13 22:13:20 5" {
		t.Fatalf("row 2: %q", got)
	}
	if got := str("SELECT COUNT(*) FROM r WHERE at = NOW()"); got != "1" {
		t.Fatalf("rows at the pinned NOW(): %s", got)
	}
	if err := exec("SET timestamp = DEFAULT"); err != nil {
		t.Fatal(err)
	}
	if got := str("SELECT @@timestamp"); got == "1700000000.000000" {
		t.Fatal("SET timestamp = DEFAULT kept the pinned time")
	}
}

// TestNowReadsReplicatedClock: NOW() outside a replicated statement
// never reads below the replicated clock (Config.Clock): a write stamped
// by a leader whose clock ran an hour ahead must not look as if it came
// from the future to a SELECT on a node whose own clock is behind.
func TestNowReadsReplicatedClock(t *testing.T) {
	ahead := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	addr, _ := startServerWith(t, Config{Clock: func() time.Time { return ahead }})
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var utc string
	if err := db.QueryRow("SELECT UTC_TIMESTAMP()").Scan(&utc); err != nil {
		t.Fatal(err)
	}
	if want := ahead.Format("2006-01-02 15:04:05"); utc != want {
		t.Fatalf("UTC_TIMESTAMP() = %s, want the replicated clock %s", utc, want)
	}
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, at DATETIME NOT NULL)",
		"INSERT INTO d.t VALUES (1, '" + time.Now().UTC().Add(-time.Minute).Format("2006-01-02 15:04:05") + "')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The row holds the local clock's time a minute ago: 61 minutes
	// before the replicated clock.
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM d.t WHERE at < UTC_TIMESTAMP() - INTERVAL 30 MINUTE").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("a row stamped an hour behind the replicated clock: %d rows older than its 30 minutes, want 1", n)
	}
	// SET timestamp still pins it.
	if _, err := db.Exec("SET timestamp = 1000000000"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT UTC_TIMESTAMP()").Scan(&utc); err != nil {
		t.Fatal(err)
	}
	if utc != "2001-09-09 01:46:40" {
		t.Fatalf("pinned UTC_TIMESTAMP() = %s", utc)
	}
}

// TestRowColumnsFollowSchema: a session's remembered result columns of
// the row table it read last (rowColsMemo) follow the table: re-created
// with other columns, or with another table's rows read between, a
// SELECT * on one connection answers the columns the table has now, by
// the text and the binary protocol.
func TestRowColumnsFollowSchema(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cols := func(q string, args ...any) string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		names, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		return fmt.Sprint(names)
	}
	exec("CREATE TABLE p (a int NOT NULL PRIMARY KEY, b int)")
	exec("CREATE TABLE q (x int NOT NULL PRIMARY KEY)")
	exec("INSERT INTO p VALUES (1, 2)")
	exec("INSERT INTO q VALUES (1)")
	for _, step := range []struct {
		ddl  []string
		want string
	}{
		{want: "[a b]"},
		{ddl: []string{"DROP TABLE p", "CREATE TABLE p (a int NOT NULL PRIMARY KEY, c varchar(5), d int)", "INSERT INTO p VALUES (1, 'x', 3)"}, want: "[a c d]"},
		{ddl: []string{"CREATE INDEX d ON p (d)"}, want: "[a c d]"},
	} {
		for _, q := range step.ddl {
			exec(q)
		}
		for _, args := range [][]any{nil, {1}} {
			where := "a = 1"
			if args != nil {
				where = "a = ?"
			}
			if got := cols("SELECT * FROM p WHERE "+where, args...); got != step.want {
				t.Errorf("after %v: SELECT * FROM p (args %v): columns %s, want %s", step.ddl, args, got, step.want)
			}
			if got := cols("SELECT * FROM q WHERE x = 1"); got != "[x]" {
				t.Errorf("after %v: SELECT * FROM q: columns %s", step.ddl, got)
			}
		}
	}
}
