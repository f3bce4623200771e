package sql

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

func unsafeString(b []byte) string { return unsafe.String(&b[0], len(b)) }

// FuzzParse checks that no query makes Parse panic (Parse turns a panic
// into error 1105, which fails here) and that a query Parse accepts has at
// least one plan.
func FuzzParse(f *testing.F) {
	for _, q := range []string{
		replaceQuery, multiQuery, "SELECT LAST_INSERT_ID()", "select @@version_comment limit 1",
		"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)",
		"UPDATE seq SET id = LAST_INSERT_ID(id + 1) WHERE stub = ?",
		"UPDATE t SET id = -(+id) + 1, n = LAST_INSERT_ID() WHERE +(a = 1) AND -b = ? ORDER BY id LIMIT 1",
		"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(+VALUES(id)), n = DEFAULT",
		"SET autocommit=1,sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES')",
		"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", "SHOW VARIABLES WHERE Variable_name IN ('a', 'b')",
		"CREATE TABLE Tickets64 (id bigint(20) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', " +
			"PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM",
		"ALTER TABLE t AUTO_INCREMENT = 1000, COMMENT = 'x'", "DESC t id", "SELECT * FROM t WHERE a = 1 ORDER BY b LIMIT 1, 2",
		"/* c */", "", ";", "SELEC 1", "SELECT 'abc", "SELECT 1 /* x", "SELECT -9223372036854775808, 0x61, 1e3",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		plans, err := Parse(q)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%q) error %T %v, want *Error", q, err, err)
			}
			if e.Code == mysqlerr.CodeUnknown {
				t.Fatalf("Parse(%q): %v", q, err)
			}
			if plans != nil {
				t.Fatalf("Parse(%q) returned plans and an error", q)
			}
			return
		}
		if strings.TrimSpace(q) != "" && len(plans) == 0 {
			t.Fatalf("Parse(%q) returned no plan and no error", q)
		}
		for _, p := range plans {
			if p == nil {
				t.Fatalf("Parse(%q) returned a nil plan", q)
			}
			ParamCount(p)
			// The ticket form is derived from any UPDATE and ON
			// DUPLICATE KEY UPDATE, whatever their expressions.
			switch x := p.(type) {
			case *Update:
				_, _ = x.TicketForm()
				x.ColSets()
				for i := range x.Assigns {
					_, _ = x.Assigns[i].CounterStep(false)
				}
			case *Insert:
				_, _ = x.TicketOnDup()
				for i := range x.OnDup {
					_, _ = x.OnDup[i].CounterStep(true)
				}
			}
		}
	})
}
