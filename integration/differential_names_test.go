package integration

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// namesScript sets the connection's character set and collation the ways
// clients do and reads them back: SET NAMES without COLLATE resets the
// collation to the character set's default, the two variables follow
// each other, names are lowercased and utf8 is utf8mb3, a COLLATE of
// another character set is 1253; then every
// character set MariaDB 10.11 has, for its default collation.
var namesScript = func() []step {
	s := []step{
		{sql: "SET NAMES utf8mb4 COLLATE utf8mb4_bin"},
		{sql: "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"},
		{sql: "SET NAMES utf8mb4"},
		{sql: "SELECT @@character_set_connection, @@collation_connection, 'a' = 'A'"},
		{sql: "SET NAMES 'UTF8MB4' COLLATE 'UTF8MB4_BIN'"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES latin1"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES utf8"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES binary"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES nosuchcharset"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET collation_connection = utf8mb4_bin"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET collation_connection = utf8_bin"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET collation_connection = nosuch_collation"},
		{sql: "SET character_set_connection = utf8mb4"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "CREATE DATABASE nm CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"},
		{sql: "USE nm"},
		{sql: "SET NAMES utf8mb4 COLLATE latin1_bin"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES utf8 COLLATE utf8mb4_bin"},
		{sql: "SET NAMES utf8 COLLATE utf8mb3_bin"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET NAMES latin1 COLLATE 'LATIN1_BIN'"},
		{sql: "SELECT @@character_set_connection, @@collation_connection"},
		{sql: "SET CHARACTER SET latin1"},
		{sql: "SELECT @@character_set_client, @@character_set_connection, @@collation_connection, @@character_set_results"},
		{sql: "SET NAMES utf8mb4"},
	}
	for _, cs := range []string{"armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257",
		"cp850", "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb2312", "gbk", "geostd8", "greek",
		"hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7", "macce",
		"macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32", "utf8mb3", "utf8mb4"} {
		s = append(s,
			step{sql: "SET character_set_connection = " + cs},
			step{sql: "SELECT @@character_set_connection, @@collation_connection"})
	}
	return s
}()

// TestDifferentialNames runs namesScript against MariaDB 10.11 and
// against ticketd and requires the same answer to every statement.
func TestDifferentialNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	script := append(slices.Clone(namesScript), collationSteps(t)...)
	want, err := runScript(ctx, maria.Addr, script, false)
	if err != nil {
		t.Fatalf("MariaDB: %v", err)
	}
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	got, err := runScript(ctx, node.MySQLAddr(), script, false)
	if err != nil {
		t.Errorf("ticketd: %v", err)
	}
	match := 0
	for i := range got {
		if got[i].equal(want[i]) {
			match++
			continue
		}
		t.Errorf("statement %d differs: %s\n  mariadb: %s\n  ticketd: %s", i+1, script[i].sql, want[i], got[i])
	}
	t.Logf("differential, SET NAMES: %d/%d statements match", match, len(script))
}

// collationSteps sets collation_connection to every name of the wire's
// table (wire/collations.txt, MariaDB 10.11's information_schema.COLLATIONS:
// the uca1400_* names alone are not collations), to uca1400 names behind
// the character sets that take them and those that do not, and to names
// that are none, reading the pair back after each.
func collationSteps(t *testing.T) []step {
	t.Helper()
	b, err := os.ReadFile("../wire/collations.txt")
	if err != nil {
		t.Fatal(err)
	}
	var s []step
	names := []string{"utf8mb4_anything", "latin1_nosuch", "uca1400_ai_ci", "utf8mb4_uca1400_ai_ci", "utf8mb3_uca1400_ai_ci", "utf8_uca1400_ai_ci", "latin1_uca1400_ai_ci", "ucs2_uca1400_ai_ci", "utf16_uca1400_ai_ci", "utf16le_uca1400_ai_ci", "utf32_uca1400_ai_ci", "utf8mb4_uca1400_swedish_nopad_as_cs", "binary_uca1400_ai_ci"}
	for line := range strings.Lines(string(b)) {
		if coll, _, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			names = append(names, coll)
		}
	}
	for _, n := range names {
		s = append(s,
			step{sql: "SET collation_connection = '" + n + "'"},
			step{sql: "SELECT @@character_set_connection, @@collation_connection"})
	}
	return s
}
