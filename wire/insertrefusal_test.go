package wire

import (
	"strings"
	"testing"
)

// TestInsertRefusals: the two INSERTs whose MariaDB answer ticketd would
// get wrong are refused with 1235 before anything is proposed (the rules
// are ticket.RefuseInsert's), and nothing of them is applied; their
// neighbours that ticketd does answer as MariaDB does go through.
func TestInsertRefusals(t *testing.T) {
	db := open(t, startServer(t))
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "USE d")
	mustExec(t, db, flickrDDL)
	mustExec(t, db, "CREATE TABLE r (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT)")
	steps := []struct {
		q    string
		code uint16 // 0: succeeds
	}{
		{"INSERT INTO r (id, v) VALUES (5, 1), (NULL, 2)", 1235},
		{"INSERT INTO r VALUES (0, 1), (7, 2)", 1235},
		{"INSERT INTO r (v, id) VALUES (1, 8), (2, DEFAULT)", 1235},
		{"INSERT INTO r (id, v) VALUES (5, 1), (6, 2)", 0},
		{"INSERT INTO r (v) VALUES (1), (2)", 0},
		{"INSERT INTO r (id, v) VALUES (NULL, 1)", 0},
		{"INSERT INTO Tickets64 (id, stub) VALUES (1, 'a'), (2, NULL)", 1235},
		{"INSERT INTO Tickets64 VALUES (3, 'b'), (NULL, 'c')", 0}, // id is AUTO_INCREMENT
		{"INSERT INTO Tickets64 (stub, id) VALUES ('d', 10), ('e', 11)", 0},
	}
	for _, s := range steps {
		_, err := db.Exec(s.q)
		if got := errCode(err); got != s.code {
			t.Errorf("%s: %v (code %d), want code %d", s.q, err, got, s.code)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM r").Scan(&n); err != nil || n != 5 {
		t.Errorf("r has %d rows (%v), want 5: a refused INSERT applied something", n, err)
	}
	rows, err := db.Query("SELECT stub FROM Tickets64 ORDER BY stub")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stubs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stubs = append(stubs, s)
	}
	if got := strings.Join(stubs, ","); got != "b,c,d,e" {
		t.Errorf("Tickets64 stubs %q, want b,c,d,e: a refused INSERT applied something", got)
	}
}
