package wire

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

var updateDMLForms = flag.Bool("update-dmlforms", false, "rewrite testdata/dmlforms.golden from this build's answers")

// recRepl is memRepl that keeps the log bytes (logformat's encoding) of
// every batch it applies.
type recRepl struct {
	memRepl
	mu  sync.Mutex
	log []string
}

func (r *recRepl) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	r.mu.Lock()
	r.log = append(r.log, hex.EncodeToString(logformat.EncodeBatch(nil, cmds)))
	r.mu.Unlock()
	return r.memRepl.Propose(ctx, cmds)
}

func (r *recRepl) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	return out
}

// dmlFormCase is one UPDATE or INSERT ... ON DUPLICATE KEY UPDATE of
// TestDMLFormsGolden; {T} is replaced by each table.
type dmlFormCase struct {
	q    string
	args []any
}

// dmlFormCases are the UPDATE and ON DUPLICATE KEY UPDATE statements a
// ticket table takes in its own form (one id assignment, at most one
// `column = value` WHERE term), those only a row table takes, and those
// neither takes, with the errors that tell them apart.
var dmlFormCases = []dmlFormCase{
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + 1)"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + 1) WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = id - 1 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 10 + id WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = (id + (1)) WHERE 'a' = stub"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(42) WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 7 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = -7 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = '8' WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = ' 9 ' WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 'x8' WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 1.5 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 1e3 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = NULL WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = DEFAULT WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = NOW() WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 18446744073709551615 WHERE stub = 'zz'"},
	{q: "UPDATE {T} SET id = id WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = -(id)"},
	{q: "UPDATE {T} SET id = 5 + 3"},
	{q: "UPDATE {T} SET {T}.id = 3 WHERE {T}.stub = 'a'"},
	{q: "UPDATE {T} AS x SET x.id = x.id + 1 WHERE 'a' = x.stub"},
	{q: "UPDATE {T} SET other.id = 1"},
	{q: "UPDATE {T} SET stub = 'b' WHERE stub = 'q'"},
	{q: "UPDATE {T} SET stub = stub + 1 WHERE stub = 'q'"},
	{q: "UPDATE {T} SET stub = 'e' WHERE id = 1"},
	{q: "UPDATE {T} SET nosuchcol = 1"},
	{q: "UPDATE {T} SET id = nosuchcol + 1"},
	{q: "UPDATE {T} SET id = id + 1 WHERE nosuchcol = 1"},
	{q: "UPDATE {T} SET id = id + 1 WHERE id = 1 AND stub = 'a'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = 'a' AND stub = 'b' AND id = 3"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub IN ('a')"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = 'a' AND id > 0"},
	{q: "UPDATE {T} SET id = id * 2"},
	{q: "UPDATE {T} SET id = id * 2 WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = other + 1"},
	{q: "UPDATE {T} SET id = stub + 1"},
	{q: "UPDATE {T} SET id = id + 1, stub = 'b'"},
	{q: "UPDATE {T} SET stub = 'b', id = id + 1"},
	{q: "UPDATE {T} SET id = id + 1, id = id + 2"},
	{q: "UPDATE {T} SET id = id + 1 LIMIT 1"},
	{q: "UPDATE {T} SET id = id + 1 ORDER BY id"},
	{q: "UPDATE {T} SET id = id + 1 ORDER BY id LIMIT 1"},
	{q: "UPDATE {T} SET id = id * 2 LIMIT 1"},
	{q: "UPDATE {T} SET id = id + 1, stub = 'b' ORDER BY id"},
	{q: "UPDATE {T} SET id = 1 WHERE id > 5"},
	{q: "UPDATE {T} SET id = 1 WHERE id = 1 OR id = 2"},
	{q: "UPDATE {T} SET id = CONCAT(id, 'x')"},
	{q: "UPDATE {T} SET id = CONCAT(id, 'x'), stub = 'c'"},
	{q: "UPDATE {T} SET id = CONCAT(id, 'x') WHERE stub = 'a'"},
	{q: "UPDATE {T} SET id = 1 WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = id * 2 WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = id + 1, stub = 'c' WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = CONCAT(id), stub = 'c' WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE id = 0x10"},
	{q: "UPDATE {T} SET id = 0x10"},
	{q: "UPDATE {T} SET id = id + 0x10"},
	{q: "UPDATE {T} SET id = id + 1 WHERE COUNT(*) = 1"},
	{q: "UPDATE {T} SET id = COUNT(*)"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID()"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(), stub = 'd'"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + 1) WHERE id = LAST_INSERT_ID()"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + 1, 2)"},
	{q: "UPDATE {T} SET id = id - -9223372036854775808"},
	{q: "UPDATE {T} SET id = id - 9223372036854775807"},
	{q: "UPDATE {T} SET id = VALUES(id)"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = _latin1'a'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = NULL"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = NOW()"},
	{q: "UPDATE {T} SET id = id + 1 WHERE id = id"},
	{q: "UPDATE {T} SET id = id + 1 WHERE 1 = 1"},
	{q: "UPDATE {T} SET id = id + 1 WHERE (stub = 'a')"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(?) WHERE stub = ? AND id = ?", args: []any{5, "a", 1}},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + ?) WHERE stub = ?", args: []any{2, "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{9, "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{"12", "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{-3, "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{"abc", "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{1.5, "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{nil, "a"}},
	{q: "UPDATE {T} SET id = ? WHERE stub = ?", args: []any{uint64(1) << 63, "a"}},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = ?", args: []any{[]byte("a")}},
	{q: "UPDATE {T} SET stub = ? WHERE id = ?", args: []any{"f", 1}},
	{q: "UPDATE {T} SET id = id + 1 WHERE id = ? AND stub = ?", args: []any{1, "a"}},

	{q: "UPDATE {T} SET id = +id"},
	{q: "UPDATE {T} SET id = +(id + 1)"},
	{q: "UPDATE {T} SET id = 0 - id"},
	{q: "UPDATE {T} SET id = id + +1"},
	{q: "UPDATE {T} SET id = id + -1"},
	{q: "UPDATE {T} SET id = - - 5"},
	{q: "UPDATE {T} SET id = -(5) WHERE stub = 'zz'"},
	{q: "UPDATE {T} SET id = -?", args: []any{3}},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(+id)"},
	{q: "UPDATE {T} SET id = +LAST_INSERT_ID(id + 1)"},
	{q: "UPDATE {T} SET stub = +stub WHERE +stub = 'a'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = +'a'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = -'a'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE +(stub = 'a')"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = 'a' AND +(id = 1)"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = DEFAULT"},
	{q: "UPDATE {T} SET id = id + 1 WHERE stub = UTC_TIMESTAMP()"},
	{q: "UPDATE {T} SET id = UTC_TIMESTAMP()"},
	{q: "UPDATE {T} SET id = UTC_TIMESTAMP(), stub = 'x'"},
	{q: "UPDATE {T} SET id = DEFAULT, stub = 'b'"},
	{q: "UPDATE {T} SET other = -(other) WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET other = +other WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET other = UTC_TIMESTAMP() WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET other = NOW() WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET other = 0 - other WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = +(id) WHERE id REGEXP 'y'"},
	{q: "UPDATE {T} SET id = id + 1 WHERE id > 1 AND other.x = 1"},
	{q: "UPDATE {T} SET id = id + 1 WHERE other.x = 1"},
	{q: "UPDATE {T} SET id = id + 1 LIMIT 1 OFFSET 2"},
	{q: "UPDATE {T} SET id = id * 2 ORDER BY id + 1"},
	{q: "UPDATE {T} SET id = 0 - id, stub = 'k'"},
	{q: "UPDATE {T} SET id = id - ?, stub = ?", args: []any{1, "k"}},
	{q: "UPDATE {T} SET id = id + NOW(), stub = 'x'"},
	{q: "UPDATE {T} SET id = id + UTC_TIMESTAMP(), stub = 'x'"},
	{q: "UPDATE {T} SET id = 5 + id, stub = 'x'"},
	{q: "UPDATE {T} SET id = id, stub = 'x'"},
	{q: "UPDATE {T} SET id = +id, stub = 'x'"},
	{q: "UPDATE {T} SET id = -(id), stub = 'x'"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(id + 1), stub = 'x'"},
	{q: "UPDATE {T} SET id = LAST_INSERT_ID(7), stub = 'x'"},
	{q: "UPDATE {T} SET id = id + 1 ORDER BY id DESC LIMIT 1"},
	{q: "UPDATE {T} SET id = 9 WHERE id = 1 AND stub = 'a'"},

	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = +id"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = -(id)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = +VALUES(id)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(+VALUES(id))"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = UTC_TIMESTAMP()"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = DEFAULT, stub = 'b'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + +1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = VALUES(nosuch)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE other.id = 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 1, other.id = 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = CONCAT(id), other.id = 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = COUNT(*), stub = 'b'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a')"},
	{q: "REPLACE INTO {T} (stub) VALUES ('b')"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 1 + id"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(5)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 6"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = -6"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 'q'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = '70'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = NULL"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = DEFAULT"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = VALUES(id)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(VALUES(id))"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE {T}.id = LAST_INSERT_ID({T}.id - 3)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 1, stub = 'b'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id * 2"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = VALUES(stub)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = CONCAT(id, 'x')"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = CONCAT(id, 'x'), stub = 'b'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = (SELECT 1)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE stub = 'c'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE nosuch = 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = nosuch"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = nosuch, stub = 'b'"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID()"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 0x10"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 0x10"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 1, id = id + 2"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = COUNT(*)"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id - -9223372036854775808"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = NOW()"},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + ?", args: []any{1}},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = ?", args: []any{7}},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = ?", args: []any{"x"}},
	{q: "INSERT INTO {T} (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(?)", args: []any{-1}},
	{q: "INSERT INTO {T} (stub) VALUES (?) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)", args: []any{"a"}},
	{q: "INSERT INTO {T} (stub) VALUES ('g'), ('g') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
	{q: "INSERT INTO {T} (stub) VALUES (CONCAT('a')) ON DUPLICATE KEY UPDATE id = id * 2"},
	{q: "INSERT INTO {T} (stub) VALUES (LOWER('a')) ON DUPLICATE KEY UPDATE id = id + 1"},
	{q: "INSERT INTO {T} (stub, other) VALUES ('a', 1 + 1) ON DUPLICATE KEY UPDATE id = id * 2"},
	{q: "INSERT INTO {T} (stub, other) VALUES ('a', 1 + 1) ON DUPLICATE KEY UPDATE id = id + 1"},
	{q: "INSERT INTO {T} (stub) VALUES ('h') ON DUPLICATE KEY UPDATE other = other + 1"},
	{q: "INSERT INTO {T} (id, stub) VALUES (3, 'i') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
}

// dmlFormTables are the tables the cases run on: a ticket table, the
// MySQL manual's sequence table (a ticket table without AUTO_INCREMENT),
// a row table with the same columns and one more, a sequence, and no
// table.
var dmlFormTables = []string{"Tickets64", "seq", "r", "s", "nosuch"}

// TestDMLFormsGolden runs every UPDATE and INSERT ... ON DUPLICATE KEY
// UPDATE of dmlFormCases on each kind of table, as an admin and as an
// alloc account, and compares each answer (the error's code, SQLSTATE
// and message, or the rows affected and the insert id) and the log bytes
// of every command it replicated with testdata/dmlforms.golden, which
// was written by the build whose Update and Insert plans carried the
// ticket form beside the row form: deriving the ticket form from the one
// plan left must not change a byte of either.
func TestDMLFormsGolden(t *testing.T) {
	repl := &recRepl{memRepl: memRepl{st: ticket.NewMemStore()}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveRepl(t, Config{Users: appAndOps(t)}, ln, repl)
	admin := open(t, fmt.Sprintf("ops:opspw@tcp(%s)/", addr))
	for _, q := range []string{
		"CREATE DATABASE d", "USE d", flickrDDL,
		"CREATE TABLE seq (id BIGINT NOT NULL)", "INSERT INTO seq VALUES (0)",
		"CREATE TABLE r (id BIGINT NOT NULL AUTO_INCREMENT, stub CHAR(1) NOT NULL, other INT NOT NULL DEFAULT 0, " +
			"PRIMARY KEY (id), UNIQUE KEY stub (stub))",
		"CREATE SEQUENCE s",
		"INSERT INTO Tickets64 (stub) VALUES ('a')", "INSERT INTO r (stub) VALUES ('a')",
	} {
		mustExec(t, admin, q)
	}
	app := open(t, fmt.Sprintf("app:apppw@tcp(%s)/d", addr))
	repl.take()
	var out bytes.Buffer
	for _, c := range dmlFormCases {
		for _, table := range dmlFormTables {
			q := strings.ReplaceAll(c.q, "{T}", table)
			for _, who := range []struct {
				name string
				db   *sql.DB
			}{{"admin", admin}, {"alloc", app}} {
				r, err := who.db.Exec(q, c.args...)
				fmt.Fprintf(&out, "%s %s %v\n", who.name, q, c.args)
				var me *mysql.MySQLError
				switch {
				case errors.As(err, &me):
					fmt.Fprintf(&out, "  error %d %s %s\n", me.Number, me.SQLState, me.Message)
				case err != nil:
					t.Fatalf("%s: %v", q, err)
				default:
					n, _ := r.RowsAffected()
					id, _ := r.LastInsertId()
					fmt.Fprintf(&out, "  ok affected %d insert id %d\n", n, id)
				}
				for _, l := range repl.take() {
					fmt.Fprintf(&out, "  log %s\n", l)
				}
			}
		}
	}
	const golden = "testdata/dmlforms.golden"
	if *updateDMLForms {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		gl, wl := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %s\nwant %s", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", golden, len(gl), len(wl))
	}
}

// TestTicketUpdateWhereOfSeveralTerms: a ticket table's UPDATE matches
// one column, so a WHERE of several `column = value` terms is refused
// (1235) and changes nothing. It used to run without its WHERE, on every
// row: `WHERE stub = 'a' AND stub = 'b'`, which matches none, moved both.
func TestTicketUpdateWhereOfSeveralTerms(t *testing.T) {
	db := open(t, setupFlickr(t, ""))
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('b')")
	for _, q := range []string{
		"UPDATE Tickets64 SET id = LAST_INSERT_ID(id + 10) WHERE stub = 'a' AND stub = 'b'",
		"UPDATE Tickets64 SET id = id + 10 WHERE stub = 'a' AND id = 1",
	} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "WHERE of several conditions on a ticket table") {
			t.Errorf("%s: %v, want 1235 naming the WHERE", q, err)
		}
	}
	for stub, want := range map[string]string{"a": "1", "b": "2"} {
		if got := scalar(t, db, "SELECT id FROM Tickets64 WHERE stub = ?", stub); got != want {
			t.Errorf("id of %s after the refused UPDATEs: %s, want %s", stub, got, want)
		}
	}
}
