package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestRefusalsNameConstruct sends statements ticketd refuses when it
// executes them (after parsing) and requires each 1235 to quote the
// construct refused, never "this expression" or the like (issue 34), and
// the connection to stay usable.
func TestRefusalsNameConstruct(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE SEQUENCE s")
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	for _, c := range []struct{ q, want string }{
		{"SELECT id = 1 FROM Tickets64", "operator = on a ticket table or sequence"},
		{"SELECT CASE WHEN id > 0 THEN 1 END FROM Tickets64", "CASE on a ticket table or sequence"},
		{"SELECT COUNT(*) FROM Tickets64", "COUNT() on a ticket table or sequence"},
		{"SELECT * FROM information_schema.PARTITIONS", "information_schema.PARTITIONS"},
		{"SELECT 1.5 + 1", "arithmetic on a decimal or double value"},
		{"SELECT 'a' + 1", "arithmetic on the string 'a'"},
		{"SELECT TABLE_NAME, stub FROM information_schema.TABLES, Tickets64", "JOIN other than of information_schema views"},
		{"SELECT id, 1 + id AS k FROM Tickets64 ORDER BY k", "ORDER BY an expression's alias or position outside information_schema"},
		{"SELECT 'a' LIKE 'b' ESCAPE '|'", "LIKE ... ESCAPE '|'"},
		{"SELECT CAST(1 AS CHAR)", "CAST(1 AS CHAR)"},
		{"SELECT id FROM Tickets64 WHERE stub REGEXP 'a'", "REGEXP"},
		{"SELECT TABLE_NAME, COUNT(*) FROM information_schema.TABLES", "column table_name beside COUNT() on an information_schema view"},
		{"SELECT next_not_cached_value > 0 FROM s", "operator > on a ticket table or sequence"},
	} {
		_, err := db.Exec(c.q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 {
			t.Errorf("%s: %v, want 1235", c.q, err)
			continue
		}
		reason := strings.TrimSuffix(strings.TrimPrefix(me.Message, "This version of ticketd doesn't yet support '"), "'")
		if strings.HasPrefix(reason, "this ") || !strings.Contains(reason, c.want) {
			t.Errorf("%s: refused with %q, want it to name %q", c.q, reason, c.want)
		}
		var one int
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after %s: %v", c.q, err)
		}
	}
}
