package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestGoSQLDriverParams: go-sql-driver/mysql without interpolateParams
// prepares every statement with arguments and sends them in the binary
// protocol by their Go type (int64 as LONGLONG, uint64 with the unsigned
// flag, float64 as DOUBLE, bool as TINY, string, []byte, time.Time as a
// string, nil in the NULL bitmap), and with maxAllowedPacket=1024 a value
// of 512 bytes or more as long data (COM_STMT_SEND_LONG_DATA, in chunks);
// rows come back as binary rows. Each statement runs on MariaDB 10.11
// and on ticketd: the same outcome (rows and their database types,
// affected rows and insert id, or error code) for every one.
func TestGoSQLDriverParams(t *testing.T) {
	long := strings.Repeat("0123456789", 130)
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	steps := []struct {
		q    string
		args []any
	}{
		{"CREATE TABLE g (id int NOT NULL AUTO_INCREMENT, d date DEFAULT NULL, at datetime DEFAULT NULL, v int DEFAULT NULL, big bigint unsigned DEFAULT NULL, name varchar(2000) DEFAULT NULL, ti tinyint DEFAULT NULL, PRIMARY KEY (id)) ENGINE=InnoDB", nil},
		{"INSERT INTO g (d, at, v, big, name, ti) VALUES (?, ?, ?, ?, ?, ?)", []any{"2024-01-02", at, int64(-7), uint64(18446744073709551615), "abc", true}},
		{"INSERT INTO g (d, at, v, big, name, ti) VALUES (?, ?, ?, ?, ?, ?)", []any{at, at, 2.5, uint64(1 << 63), 0.1, false}},
		{"INSERT INTO g (d, at, v, big, name, ti) VALUES (?, ?, ?, ?, ?, ?)", []any{nil, nil, 3.5, 1e15, 1.5e-7, int64(-128)}},
		{"INSERT INTO g (d, at, v, big, name, ti) VALUES (?, ?, ?, ?, ?, ?)", []any{[]byte("2024-03-04"), "2024-03-04 05:06:07", "42", "7", []byte("bytes"), nil}},
		// Long data: the 1300-byte string, then the values after it.
		{"INSERT INTO g (name, v, big) VALUES (?, ?, ?)", []any{long, int64(9), uint64(1<<63 + 1)}},
		{"INSERT INTO g (name, v) VALUES (?, ?)", []any{[]byte(long[:600]), nil}},
		// Errors: out of range, no date, too long.
		{"INSERT INTO g (v) VALUES (?)", []any{int64(3000000000)}},
		{"INSERT INTO g (big) VALUES (?)", []any{int64(-1)}},
		{"INSERT INTO g (ti) VALUES (?)", []any{200.0}},
		{"INSERT INTO g (d) VALUES (?)", []any{"not a date"}},
		{"INSERT INTO g (at) VALUES (?)", []any{time.Date(2024, 2, 30, 0, 0, 0, 0, time.UTC)}},
		{"SELECT * FROM g WHERE id > ? ORDER BY id", []any{int64(0)}},
		{"SELECT id FROM g WHERE d = ? ORDER BY id", []any{"2024-01-02"}},
		{"SELECT id FROM g WHERE at = ? ORDER BY id", []any{at}},
		{"SELECT id FROM g WHERE v = ? ORDER BY id", []any{2.0}},
		{"SELECT id FROM g WHERE v > ? ORDER BY id", []any{2.5}},
		{"SELECT id FROM g WHERE big = ? ORDER BY id", []any{uint64(18446744073709551615)}},
		{"SELECT id FROM g WHERE big >= ? ORDER BY id", []any{uint64(1 << 63)}},
		{"SELECT id FROM g WHERE name = ? ORDER BY id", []any{long}},
		{"SELECT id FROM g WHERE name = ? ORDER BY id", []any{"ABC"}},
		{"SELECT id FROM g WHERE ti = ? ORDER BY id", []any{true}},
		{"SELECT id FROM g WHERE v IS NULL AND name = ? ORDER BY id", []any{[]byte(long[:600])}},
		{"UPDATE g SET at = ?, v = ? WHERE id = ?", []any{time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC), 6.5, int64(2)}},
		{"UPDATE g SET name = ? WHERE big = ?", []any{long[:700], uint64(7)}},
		{"SELECT id, at, v, name FROM g WHERE id IN (?, ?) ORDER BY id", []any{int64(2), int64(4)}},
		{"DELETE FROM g WHERE at < ?", []any{at}},
		{"SELECT COUNT(*) FROM g WHERE id > ?", []any{int64(0)}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(addr string) []string {
		t.Helper()
		admin, err := sql.Open("mysql", harness.DSN(addr, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE gp"); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", harness.DSN(addr, "gp", "maxAllowedPacket=1024"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		var out []string
		for _, s := range steps {
			out = append(out, outcomeOf(ctx, db, s.q, s.args))
		}
		return out
	}
	maria := harness.StartMariaDB(t)
	want := run(maria.Addr)
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	got := run(node.MySQLAddr())
	same := 0
	for i := range steps {
		if got[i] == want[i] {
			same++
			continue
		}
		t.Errorf("statement %d differs: %s %v\n  mariadb: %s\n  ticketd: %s", i+1, steps[i].q, steps[i].args, want[i], got[i])
	}
	for i := range want {
		t.Logf("%2d %s", i+1, want[i])
	}
	t.Logf("go-sql-driver binary parameters: %d/%d statements the same", same, len(steps))
}

// outcomeOf runs one statement and renders what a program sees of it.
func outcomeOf(ctx context.Context, db *sql.DB, q string, args []any) string {
	if strings.HasPrefix(q, "SELECT") {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return errText(err)
		}
		defer rows.Close()
		cts, _ := rows.ColumnTypes()
		var b strings.Builder
		for _, ct := range cts {
			fmt.Fprintf(&b, "[%s %s]", ct.Name(), ct.DatabaseTypeName())
		}
		vals := make([]sql.NullString, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return "scan: " + err.Error()
			}
			b.WriteString(" (")
			for i, v := range vals {
				if i > 0 {
					b.WriteString(" | ")
				}
				switch {
				case !v.Valid:
					b.WriteString("NULL")
				case len(v.String) > 40:
					fmt.Fprintf(&b, "%d chars", len(v.String))
				default:
					b.WriteString(v.String)
				}
			}
			b.WriteString(")")
		}
		if err := rows.Err(); err != nil {
			return errText(err)
		}
		return b.String()
	}
	r, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return errText(err)
	}
	n, _ := r.RowsAffected()
	id, _ := r.LastInsertId()
	return fmt.Sprintf("OK affected=%d insert_id=%d", n, id)
}

func errText(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d", me.Number)
	}
	return "error: " + err.Error()
}
