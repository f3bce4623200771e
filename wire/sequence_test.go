package wire

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func wantErr(t *testing.T, db *sql.DB, q string, code uint16) {
	t.Helper()
	_, err := db.Exec(q)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Errorf("%s: %v, want error %d", q, err, code)
	}
}

// TestSequences drives the sequence statements through a real driver:
// roles, prepared statements with arguments, multi-statements, LASTVAL
// per session.
func TestSequences(t *testing.T) {
	addr, _ := startServerWith(t, Config{Users: appAndOps(t)})
	admin := open(t, fmt.Sprintf("ops:opspw@tcp(%s)/?multiStatements=true", addr))
	admin.SetMaxOpenConns(1)
	mustExec(t, admin, "CREATE DATABASE d")
	mustExec(t, admin, "USE d")
	mustExec(t, admin, "CREATE SEQUENCE s START WITH 10 INCREMENT BY 10 NOCACHE")

	app := open(t, fmt.Sprintf("app:apppw@tcp(%s)/d", addr))
	app.SetMaxOpenConns(1)
	if got := scalar(t, app, "SELECT LASTVAL(s)"); got != "" { // NULL
		t.Fatalf("LASTVAL before NEXTVAL: %s", got)
	}
	if got := scalar(t, app, "SELECT NEXTVAL(s)"); got != "10" {
		t.Fatalf("NEXTVAL: %s", got)
	}
	// Prepared with an argument (go-sql-driver prepares on the server).
	var v, x int64
	if err := app.QueryRow("SELECT NEXT VALUE FOR s, ? + 1", 41).Scan(&v, &x); err != nil || v != 20 || x != 42 {
		t.Fatalf("prepared NEXTVAL: %d %d %v", v, x, err)
	}
	if got := scalar(t, app, "SELECT LASTVAL(s)"); got != "20" {
		t.Fatalf("LASTVAL: %s", got)
	}
	if got := scalar(t, app, "SELECT next_not_cached_value FROM s"); got != "30" {
		t.Fatalf("next_not_cached_value: %s", got)
	}
	for _, q := range []string{"SELECT SETVAL(s, 100)", "CREATE SEQUENCE t", "ALTER SEQUENCE s RESTART", "DROP SEQUENCE s"} {
		wantErr(t, app, q, 1142)
	}
	// Errors leave the connection usable.
	wantErr(t, app, "SELECT NEXTVAL(nosuch)", 4091)
	wantErr(t, app, "SELECT PREVIOUS VALUE FOR s", 1064)
	if got := scalar(t, app, "SELECT NEXTVAL(s)"); got != "30" {
		t.Fatalf("NEXTVAL after errors: %s", got)
	}

	// Multi-statements: two NEXTVALs and a LASTVAL in one COM_QUERY.
	rows, err := admin.Query("SELECT NEXTVAL(s); SELECT NEXTVAL(s), LASTVAL(s)")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		for rows.Next() {
			cols, _ := rows.Columns()
			vals := make([]int64, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			got = append(got, vals...)
		}
		if !rows.NextResultSet() {
			break
		}
	}
	rows.Close()
	if fmt.Sprint(got) != "[40 50 50]" {
		t.Fatalf("multi-statement values %v", got)
	}
	// LASTVAL is per session: app's is still its own.
	if got := scalar(t, app, "SELECT LASTVAL(s)"); got != "30" {
		t.Fatalf("app's LASTVAL after admin's NEXTVAL: %s", got)
	}
	if got := scalar(t, admin, "SELECT SETVAL(s, 1000)"); got != "1000" {
		t.Fatalf("SETVAL: %s", got)
	}
	if got := scalar(t, admin, "SELECT SETVAL(s, 5)"); got != "" { // NULL
		t.Fatalf("SETVAL behind: %s", got)
	}
	if got := scalar(t, app, "SELECT NEXTVAL(s)"); got != "1010" {
		t.Fatalf("NEXTVAL after SETVAL: %s", got)
	}
	wantErr(t, admin, "CREATE TABLE s (id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY)", 1050)
	wantErr(t, admin, "CREATE TABLE u (id bigint DEFAULT NEXTVAL(s))", 1235)
	// Row statements on a sequence fail without touching it.
	for _, q := range []string{"INSERT INTO s VALUES (1)", "REPLACE INTO s (stub) VALUES ('a')", "UPDATE s SET id = 5"} {
		if _, err := admin.Exec(q); err == nil {
			t.Errorf("%s succeeded on a sequence", q)
		}
	}
	// SHOW COLUMNS of a sequence lists its eight columns, as MariaDB's
	// (TestDifferentialInfoSchema compares them).
	if got := scalar(t, admin, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 's'"); got != "8" {
		t.Fatalf("a sequence's columns: %s", got)
	}
	if _, err := admin.Exec("SHOW COLUMNS FROM s"); err != nil {
		t.Errorf("SHOW COLUMNS FROM s: %v", err)
	}
	if got := scalar(t, app, "SELECT NEXTVAL(s)"); got != "1020" {
		t.Fatalf("NEXTVAL after refused row statements: %s", got)
	}
	mustExec(t, admin, "DROP SEQUENCE s")
	wantErr(t, app, "SELECT NEXTVAL(s)", 4091)
}
