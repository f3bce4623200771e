package wire

import (
	"context"
	"testing"
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
