package integration

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// TestGeneralCIWeights checks rowengine.GeneralCIWeight, the weights of the
// row tables' collation, against MariaDB's own utf8mb4_general_ci over
// every BMP character (WEIGHT_STRING of the character, made with
// CHAR(n USING utf32)), and one supplementary character (MariaDB weighs
// all of them U+FFFD). The harness's MariaDB runs latin1: for ASCII its
// latin1_swedish_ci must weigh as well (above ASCII that collation is
// Swedish and another character set, not what ticketd implements).
func TestGeneralCIWeights(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	db, err := sql.Open("mysql", maria.DSN("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	check := func(query string, first, last int, what string) {
		t.Helper()
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		seen, bad := 0, 0
		for rows.Next() {
			var n int
			var hex string
			if err := rows.Scan(&n, &hex); err != nil {
				t.Fatal(err)
			}
			if n >= 0xD800 && n <= 0xDFFF {
				continue // surrogates: no character
			}
			seen++
			want, err := strconv.ParseUint(hex, 16, 32)
			if err != nil {
				t.Fatalf("%s U+%04X: weight %q: %v", what, n, hex, err)
			}
			if got := rowengine.GeneralCIWeight(rune(n)); uint64(got) != want {
				if bad++; bad <= 20 {
					t.Errorf("%s: U+%04X %q weighs %04X in MariaDB, %04X in ticketd", what, n, rune(n), want, got)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if want := last - first + 1 - max(0, min(last, 0xDFFF)-max(first, 0xD800)+1); seen != want {
			t.Fatalf("%s: %d characters compared, want %d", what, seen, want)
		}
		if bad > 0 {
			t.Errorf("%s: %d characters weigh differently", what, bad)
		}
		t.Logf("%s: %d characters weigh as in MariaDB", what, seen-bad)
	}
	check("SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) COLLATE utf8mb4_general_ci)) FROM seq_0_to_65535",
		0, 0xFFFF, "utf8mb4_general_ci")
	check("SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq) USING latin1) COLLATE latin1_swedish_ci)) FROM seq_0_to_127",
		0, 127, "latin1_swedish_ci")
	check("SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) COLLATE utf8mb4_general_ci)) FROM seq_127744_to_129791",
		0x1F300, 0x1FAFF, "utf8mb4_general_ci, emoji")
}
