package wire

import (
	"database/sql"
	"testing"
)

// TestBetweenWithNull: BETWEEN is v >= lo AND v <= hi in three-valued
// logic, so a bound that is false makes it false (0) even when the other
// bound is NULL, as MariaDB answers main/null.test's line 16; it was NULL
// whenever any operand was.
func TestBetweenWithNull(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	var got [6]sql.NullInt64
	err := db.QueryRow("SELECT 2 BETWEEN NULL AND 1, 2 BETWEEN 3 AND NULL, NULL BETWEEN 1 AND 2, "+
		"2 BETWEEN NULL AND 3, 2 BETWEEN 1 AND NULL, 2 NOT BETWEEN NULL AND 1").
		Scan(&got[0], &got[1], &got[2], &got[3], &got[4], &got[5])
	if err != nil {
		t.Fatal(err)
	}
	want := [6]sql.NullInt64{{Int64: 0, Valid: true}, {Int64: 0, Valid: true}, {}, {}, {}, {Int64: 1, Valid: true}}
	if got != want {
		t.Errorf("got %v, want %v (MariaDB: 0, 0, NULL, NULL, NULL, 1)", got, want)
	}
}
