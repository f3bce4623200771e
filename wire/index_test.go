package wire

import (
	"strings"
	"testing"
)

// TestIndexDDL: CREATE INDEX, ALTER TABLE ... ADD/DROP INDEX and DROP
// INDEX through the protocol on a row table whose indexes come after it
// (a schema loaded as mysqldump writes it), SHOW INDEX and SHOW CREATE
// TABLE showing them, and a SELECT through the new key.
func TestIndexDDL(t *testing.T) {
	db := open(t, startServer(t))
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "USE d")
	mustExec(t, db, "CREATE TABLE w (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, host VARCHAR(64) NOT NULL, port VARCHAR(64) NOT NULL, launched DATE NOT NULL)")
	mustExec(t, db, "INSERT INTO w (host, port, launched) VALUES ('a', '1', '2026-01-01'), ('b', '2', '2026-01-01'), ('a', '3', '2026-01-02')")
	if _, err := db.Exec("CREATE UNIQUE INDEX uh ON w (host)"); errCode(err) != 1062 {
		t.Fatalf("unique index over duplicate hosts: %v", err)
	}
	mustExec(t, db, "CREATE UNIQUE INDEX hp ON w (host, port)")
	mustExec(t, db, "ALTER TABLE w ADD INDEX (launched), ADD KEY h (host)")
	var create string
	if err := db.QueryRow("SHOW CREATE TABLE w").Scan(new(string), &create); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"UNIQUE KEY `hp` (`host`,`port`)", "KEY `launched` (`launched`)", "KEY `h` (`host`)"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE lacks %s:\n%s", want, create)
		}
	}
	rows, err := db.Query("SELECT id FROM w WHERE host = 'A'")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Fatalf("SELECT through the host key: %v", ids)
	}
	if _, err := db.Exec("INSERT INTO w (host, port, launched) VALUES ('A', '3', '2026-01-03')"); errCode(err) != 1062 {
		t.Fatalf("insert over the new unique key: %v", err)
	}
	keys := 0
	r, err := db.Query("SHOW INDEX FROM w")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := r.Columns()
	for r.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := r.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		keys++
	}
	if keys != 5 { // PRIMARY, hp (2 columns), launched, h
		t.Fatalf("SHOW INDEX lists %d key columns", keys)
	}
	mustExec(t, db, "DROP INDEX hp ON w")
	mustExec(t, db, "ALTER TABLE w DROP INDEX launched, DROP KEY h")
	if _, err := db.Exec("DROP INDEX hp ON w"); errCode(err) != 1091 {
		t.Fatalf("drop of a dropped index: %v", err)
	}
	mustExec(t, db, "DROP INDEX IF EXISTS hp ON w")
	mustExec(t, db, "INSERT INTO w (host, port, launched) VALUES ('A', '3', '2026-01-03')")
	if _, err := db.Exec("ALTER TABLE w DROP PRIMARY KEY"); errCode(err) != 1075 {
		t.Fatalf("drop of the auto-increment column's key: %v", err)
	}
	if _, err := db.Exec("CREATE INDEX x ON Tickets64 (stub)"); errCode(err) != 1146 {
		t.Fatalf("index on a missing table: %v", err)
	}
}
