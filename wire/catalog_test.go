package wire

import (
	"strings"
	"testing"
)

// The catalogue's expressions, SHOW's filters and a ticket table's WHERE
// answer through the row engine's evaluator (catalog_expr.go,
// catalog_filter.go) as the evaluators they replaced did: the row
// engine's functions, LIKE with escapes and without regard to case, a
// stub compared as its unique key compares it, and what was refused
// still refused.
func TestCatalogThroughRowEngine(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	cases := []struct{ q, want string }{
		{"SELECT CONCAT(UPPER('ab'), SUBSTRING('xyz', 2), LOCATE('Z', 'xyz'), CAST(' -3' AS SIGNED))", "AByz3-3"},
		{"SELECT IF(1 > 0 AND NULL IS NULL, GREATEST('a', 'B'), 'n')", "B"},
		{"SELECT CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END", "two"},
		{"SELECT IFNULL(NULL, 18446744073709551615 - 1)", "18446744073709551614"},
		{"SELECT LAST_INSERT_ID(7) + LAST_INSERT_ID()", "14"},
		{"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME LIKE 'TICKETS_4'", "Tickets64"},
		{"SELECT stub FROM Tickets64 WHERE stub = 'A '", "a"},
		{"SELECT id FROM Tickets64 WHERE id = '1'", "1"},
	}
	for _, c := range cases {
		if got := scalar(t, db, c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.q, got, c.want)
		}
	}
	var name, value string
	if err := db.QueryRow("SHOW VARIABLES LIKE 'AUTO\\_INCREMENT\\_INC%'").Scan(&name, &value); err != nil || name != "auto_increment_increment" {
		t.Errorf("SHOW VARIABLES LIKE with escapes, in another case: %q, %v", name, err)
	}
	if err := db.QueryRow("SHOW VARIABLES WHERE Variable_name = 'AUTOCOMMIT '").Scan(&name, &value); err != nil || name != "autocommit" {
		t.Errorf("SHOW VARIABLES WHERE, case and trailing spaces aside: %q, %v", name, err)
	}
	if got := scalar(t, db, "SHOW TABLES LIKE 't%'"); got != "Tickets64" {
		t.Errorf("SHOW TABLES LIKE: %q", got)
	}
	for q, want := range map[string]string{
		"SELECT 1.5 + 1":                       "arithmetic on a decimal",
		"SELECT 1 = '1abc'":                    "warns about",
		"SELECT CAST(-1 AS UNSIGNED)":          "warns about",
		"SELECT 1 = 1 FROM Tickets64":          "on a ticket table or sequence",
		"SELECT 'a' LIKE 'b' ESCAPE '|'":       "ESCAPE",
		"SELECT LAST_INSERT_ID(-1)":            "", // 1264, as before
		"SELECT nope":                          "",
		"SELECT id FROM Tickets64 WHERE x = 1": "",
		"SHOW VARIABLES WHERE nope = 'x'":      "",
	} {
		_, err := db.Exec(q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", q, err, want)
		}
	}
	if _, err := db.Exec("SELECT LAST_INSERT_ID(-1)"); errCode(err) != 1264 {
		t.Errorf("LAST_INSERT_ID(-1): %v, want 1264", err)
	}
	if _, err := db.Exec("SELECT id FROM Tickets64 WHERE x = 1"); errCode(err) != 1054 {
		t.Errorf("unknown column in a ticket table's WHERE: %v, want 1054", err)
	}
}

// ORDER BY a view's computed item orders numbers as numbers: a negative
// one was compared as text ('-1' before '-2').
func TestCatalogOrderNegative(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	rows, err := db.Query("SELECT COLUMN_NAME, CAST(ORDINAL_POSITION AS SIGNED) * -1 AS p FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME = 'Tickets64' ORDER BY 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name, p string
		if err := rows.Scan(&name, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+"="+p)
	}
	if strings.Join(got, ",") != "stub=-2,id=-1" {
		t.Errorf("ORDER BY a negative item: %v, want stub=-2,id=-1", got)
	}
}

// NEXTVAL and LAST_INSERT_ID(expr) are written in before the row engine
// evaluates, so in a branch of IF or CASE, which MariaDB may not take,
// they are refused rather than taken anyway.
func TestCatalogBranchSideEffects(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "CREATE SEQUENCE s")
	for _, q := range []string{"SELECT IF(0, NEXTVAL(s), 1)", "SELECT CASE WHEN 1 = 0 THEN LAST_INSERT_ID(5) ELSE 2 END", "SELECT CASE 1 WHEN 0 THEN 0 WHEN NEXTVAL(s) THEN 1 END"} {
		if _, err := db.Exec(q); errCode(err) != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	if got := scalar(t, db, "SELECT IF(NEXTVAL(s) = 1, 'first', 'not')"); got != "first" {
		t.Errorf("NEXTVAL in IF's condition: %q, want first (no value taken before)", got)
	}
	if got := scalar(t, db, "SELECT CASE NEXTVAL(s) WHEN 2 THEN 'second' END"); got != "second" {
		t.Errorf("NEXTVAL as CASE's operand: %q", got)
	}
}
