package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/snowflake"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// appAndOps has an allocating account (app, password apppw) and an admin
// (ops, opspw): the accounts the privilege and sequence tests log in as.
func appAndOps(t *testing.T) *Users {
	t.Helper()
	users := NewUsers()
	if err := users.AddRole("app", "apppw", mysqlconn.RoleAlloc); err != nil {
		t.Fatal(err)
	}
	if err := users.Add("ops", "opspw"); err != nil {
		t.Fatal(err)
	}
	return users
}

// TestRoles: an alloc account allocates and reads but gets MySQL's
// privilege errors for everything that could lose or reissue ids; an
// admin account may do it all.
func TestRoles(t *testing.T) {
	addr, _ := startServerWith(t, Config{Users: appAndOps(t)})
	admin := open(t, fmt.Sprintf("ops:opspw@tcp(%s)/", addr))
	mustExec(t, admin, "CREATE DATABASE flickr")
	mustExec(t, admin, "USE flickr")
	mustExec(t, admin, flickrDDL)

	app := open(t, fmt.Sprintf("app:apppw@tcp(%s)/flickr", addr))
	if r := mustExec(t, app, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); r == nil {
		t.Fatal("no result")
	}
	if got := scalar(t, app, "SELECT id FROM Tickets64 WHERE stub = 'a'"); got != "1" {
		t.Fatalf("alloc account reads %s", got)
	}
	mustExec(t, app, "SET SESSION auto_increment_increment = 2")
	for _, c := range []struct {
		q     string
		code  uint16
		state string
		msg   string
	}{
		{"DROP TABLE Tickets64", 1142, "42000", "DROP command denied to user 'app'@'127.0.0.1' for table 'Tickets64'"},
		{"DROP TABLE IF EXISTS NoSuch", 1142, "42000", "DROP command denied to user 'app'@'127.0.0.1' for table 'NoSuch'"},
		{flickrDDL, 1142, "42000", "CREATE command denied to user 'app'@'127.0.0.1' for table 'Tickets64'"},
		{"ALTER TABLE Tickets64 AUTO_INCREMENT = 1000", 1142, "42000", "ALTER command denied to user 'app'@'127.0.0.1' for table 'Tickets64'"},
		{"DROP DATABASE flickr", 1044, "42000", "Access denied for user 'app'@'127.0.0.1' to database 'flickr'"},
		{"CREATE DATABASE other", 1044, "42000", "Access denied for user 'app'@'127.0.0.1' to database 'other'"},
		{"SET GLOBAL auto_increment_increment = 2", 1227, "42000", "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"},
		{"SHOW GRANTS FOR 'ops'@'%'", 1044, "42000", "Access denied for user 'app'@'127.0.0.1' to database 'mysql'"},
		{"FLUSH HOSTS", 1227, "42000", "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"},
		{"GRANT ALL ON *.* TO 'app'@'%'", 1290, "HY000", ""},
		{"CREATE USER 'x'@'%' IDENTIFIED BY 'y'", 1290, "HY000", ""},
	} {
		_, err := app.Exec(c.q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != c.code || string(me.SQLState[:]) != c.state || (c.msg != "" && me.Message != c.msg) {
			t.Errorf("alloc %s: %v, want %d (%s) %s", c.q, err, c.code, c.state, c.msg)
		}
	}
	if got := scalar(t, app, "SHOW GRANTS"); got != "GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO `app`@`%`" {
		t.Errorf("alloc SHOW GRANTS: %s", got)
	}
	// The table is still there, with its counter.
	if got := scalar(t, admin, "SELECT id FROM Tickets64 WHERE stub = 'a'"); got != "1" {
		t.Fatalf("after the refused statements the row holds %s", got)
	}

	if got := scalar(t, admin, "SHOW GRANTS"); got != "GRANT ALL PRIVILEGES ON *.* TO `ops`@`%` WITH GRANT OPTION" {
		t.Errorf("admin SHOW GRANTS: %s", got)
	}
	if got := scalar(t, admin, "SHOW GRANTS FOR 'app'@'%'"); got != "GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO `app`@`%`" {
		t.Errorf("admin SHOW GRANTS FOR app: %s", got)
	}
	if _, err := admin.Exec("SHOW GRANTS FOR 'nobody'"); errCode(err) != 1141 {
		t.Errorf("SHOW GRANTS FOR an unknown account: %v, want 1141", err)
	}
	if _, err := admin.Exec("REVOKE ALL ON *.* FROM 'app'@'%'"); errCode(err) != 1290 {
		t.Errorf("admin REVOKE: %v, want 1290", err)
	}
	mustExec(t, admin, "ALTER TABLE Tickets64 AUTO_INCREMENT = 1000")
	mustExec(t, admin, "SET GLOBAL auto_increment_increment = 1")
	mustExec(t, admin, "DROP TABLE Tickets64")
	mustExec(t, admin, "DROP DATABASE flickr")
}

// The default root (no users file) is admin and says so.
func TestDefaultRootIsAdmin(t *testing.T) {
	db := open(t, startServer(t))
	if got := scalar(t, db, "SHOW GRANTS"); got != "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION" {
		t.Errorf("root SHOW GRANTS: %s", got)
	}
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "DROP DATABASE d")
}

// TestAllocTakesIDsOnly: the alloc role takes ids (REPLACE and INSERT
// with generated ids, the LAST_INSERT_ID(id + 1) idioms, NEXTVAL) and
// runs the ID schemes' row-table statements (Leaf, Tinyid, UidGenerator),
// but an explicit id or a counter set to a constant is admin's: 1142, as
// MySQL answers an account without the privilege. Before, alloc could
// exhaust a counter with one INSERT of id 2^64-1.
func TestAllocTakesIDsOnly(t *testing.T) {
	addr, _ := startServerWith(t, Config{Users: appAndOps(t)})
	admin := open(t, fmt.Sprintf("ops:opspw@tcp(%s)/", addr))
	for _, q := range []string{
		"CREATE DATABASE d", "USE d", flickrDDL,
		"CREATE TABLE seq (id BIGINT NOT NULL)", "INSERT INTO seq VALUES (0)",
		"CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, stub CHAR(1) NOT NULL, PRIMARY KEY (id), UNIQUE KEY stub (stub))",
		"CREATE SEQUENCE s",
		// The schemes' tables and seed rows (integration/schemes/ddl.go).
		"CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', " +
			"step int(11) NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP " +
			"ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) ENGINE=InnoDB",
		"INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-segment-test', 1, 2000, 'Test')",
		"CREATE TABLE tiny_id_info (id bigint(20) unsigned NOT NULL AUTO_INCREMENT, biz_type varchar(63) NOT NULL DEFAULT '', " +
			"begin_id bigint(20) NOT NULL DEFAULT '0', max_id bigint(20) NOT NULL DEFAULT '0', step int(11) DEFAULT '0', " +
			"version bigint(20) NOT NULL DEFAULT '0', update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', " +
			"PRIMARY KEY (id), UNIQUE KEY uniq_biz_type (biz_type)) ENGINE=InnoDB",
		"INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, version) VALUES (1, 'test', 1, 1, 100000, 1)",
		"CREATE TABLE WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT, HOST_NAME VARCHAR(64) NOT NULL, PORT VARCHAR(64) NOT NULL, " +
			"TYPE INT NOT NULL, LAUNCH_DATE DATE NOT NULL, MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL, PRIMARY KEY(ID))",
	} {
		mustExec(t, admin, q)
	}
	app := open(t, fmt.Sprintf("app:apppw@tcp(%s)/d", addr))
	for _, q := range []struct {
		q    string
		args []any
	}{
		{q: "REPLACE INTO Tickets64 (stub) VALUES ('a')"},
		{q: "REPLACE INTO Tickets64 (stub) VALUES ('a'), ('a')"},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('b')"},
		{q: "INSERT INTO Tickets64 (id, stub) VALUES (NULL, 'c')"},
		{q: "INSERT INTO Tickets64 (id, stub) VALUES (0, 'd')"},
		{q: "INSERT INTO Tickets64 VALUES (DEFAULT, 'e')"},
		{q: "INSERT INTO Tickets64 (id, stub) VALUES (?, 'f')", args: []any{0}},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('g') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('g') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
		{q: "UPDATE seq SET id = LAST_INSERT_ID(id + 1)"},
		{q: "UPDATE t SET id = LAST_INSERT_ID(id + 1) WHERE stub = 'x'"},
		{q: "SELECT NEXTVAL(s)"},
		{q: "SELECT id FROM Tickets64"},
		{q: "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", args: []any{"leaf-segment-test"}},
		{q: "UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?", args: []any{2000, "leaf-segment-test"}},
		{q: "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?", args: []any{"leaf-segment-test"}},
		{q: "update tiny_id_info set max_id= ?, update_time=now(), version=version+1 where id=? and max_id=? and version=? and biz_type=?",
			args: []any{100001, 1, 1, 1, "test"}},
		{q: "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES (?, ?, ?, ?, NOW(), NOW())",
			args: []any{"10.0.0.1", "1-1", 1, "2026-11-24"}},
	} {
		if _, err := app.Exec(q.q, q.args...); err != nil {
			t.Errorf("alloc %s: %v", q.q, err)
		}
	}
	before := scalar(t, admin, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'Tickets64'")
	for _, c := range []struct {
		q, cmd, table string
		args          []any
	}{
		{q: "INSERT INTO Tickets64 (id, stub) VALUES (18446744073709551615, 'z')", cmd: "INSERT", table: "Tickets64"},
		{q: "REPLACE INTO Tickets64 (id, stub) VALUES (1000, 'a')", cmd: "INSERT", table: "Tickets64"},
		{q: "REPLACE INTO Tickets64 VALUES (1000, 'a')", cmd: "INSERT", table: "Tickets64"},
		{q: "REPLACE INTO Tickets64 (stub, id) VALUES ('a', 0), ('b', 7)", cmd: "INSERT", table: "Tickets64"},
		{q: "INSERT INTO Tickets64 (id, stub) VALUES (?, 'z')", cmd: "INSERT", table: "Tickets64", args: []any{5000}},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = 5000", cmd: "INSERT", table: "Tickets64"},
		{q: "UPDATE Tickets64 SET id = 5000 WHERE stub = 'a'", cmd: "UPDATE", table: "Tickets64"},
		{q: "UPDATE seq SET id = 5000", cmd: "UPDATE", table: "seq"},
		{q: "UPDATE seq SET id = LAST_INSERT_ID(5000)", cmd: "UPDATE", table: "seq"},
		{q: "INSERT INTO seq VALUES (0)", cmd: "INSERT", table: "seq"},
		{q: "INSERT INTO s VALUES (1, 1, 100, 1, 1, 1000, 0, 0)", cmd: "INSERT", table: "s"},
		{q: "INSERT INTO WORKER_NODE (ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES (9000000000000000000, 'h', 'p', 1, '2026-11-24', NOW(), NOW())",
			cmd: "INSERT", table: "WORKER_NODE"},
		{q: "UPDATE tiny_id_info SET id = 7, version = version + 1 WHERE biz_type = 'test'", cmd: "UPDATE", table: "tiny_id_info"},
	} {
		_, err := app.Exec(c.q, c.args...)
		want := fmt.Sprintf("%s command denied to user 'app'@'127.0.0.1' for table '%s'", c.cmd, c.table)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1142 || me.Message != want {
			t.Errorf("alloc %s: %v, want 1142 %s", c.q, err, want)
		}
	}
	if after := scalar(t, admin, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'Tickets64'"); after != before {
		t.Errorf("the refused statements moved Tickets64's counter from %s to %s", before, after)
	}
	// The admin may.
	mustExec(t, admin, "INSERT INTO Tickets64 (id, stub) VALUES (5000, 'z')")
	mustExec(t, admin, "UPDATE seq SET id = 5000")
}

// TestAllocCannotRewriteCounter: the alloc role moves a counter only by
// an integer step from its own value (id = [LAST_INSERT_ID](id + k)),
// whatever else the statement assigns; any other expression of the
// counter is setting it by hand (1142), on a row table's AUTO_INCREMENT
// column as on a ticket table. Before, an UPDATE or ON DUPLICATE KEY
// UPDATE with one assignment that was not column ± value (id * 2, -(id),
// UTC_TIMESTAMP(), a CONCAT) escaped the check altogether: alloc could
// double or negate every id of a row table.
func TestAllocCannotRewriteCounter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Snowflake's claim reads UTC_TIMESTAMP(), the command's time, which
	// Raft's apply sets.
	addr, _ := serveRepl(t, Config{Users: appAndOps(t)}, ln, &clockRepl{memRepl: memRepl{st: ticket.NewMemStore()}})
	admin := open(t, fmt.Sprintf("ops:opspw@tcp(%s)/", addr))
	slots := snowflake.Statements("snowflake_slots", 10*time.Second, 0)
	for _, q := range []string{
		"CREATE DATABASE d", "USE d", flickrDDL,
		"CREATE TABLE r (id BIGINT NOT NULL AUTO_INCREMENT, stub CHAR(1) NOT NULL, other INT NOT NULL DEFAULT 0, " +
			"PRIMARY KEY (id), UNIQUE KEY stub (stub))",
		"INSERT INTO r (stub) VALUES ('a'), ('b')", "INSERT INTO Tickets64 (stub) VALUES ('a')",
		slots["create"], slots["slots"] + "('svc', 0), ('svc', 1)",
	} {
		mustExec(t, admin, q)
	}
	app := open(t, fmt.Sprintf("app:apppw@tcp(%s)/d", addr))
	ids := func() string {
		rows, err := admin.Query("SELECT id FROM d.r ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(out) + " " +
			scalar(t, admin, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'r'") + " " +
			scalar(t, admin, "SELECT id FROM d.Tickets64")
	}
	before := ids()
	for _, c := range []struct {
		q, cmd, table string
		args          []any
	}{
		{q: "UPDATE r SET id = id * 2", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = -(id)", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = 0 - id", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = -?", cmd: "UPDATE", table: "r", args: []any{3}},
		{q: "UPDATE r SET id = LAST_INSERT_ID()", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = LAST_INSERT_ID(id * 1000)", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = UTC_TIMESTAMP() WHERE stub = 'a'", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id + other", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id + '1000'", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id + 1.5", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id + ?", cmd: "UPDATE", table: "r", args: []any{"9000000000000000000"}},
		{q: "UPDATE r SET id = 7 + 3", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET other = other + 1, id = id * 2 WHERE stub = 'a'", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id * 2, other = NOW() + 0", cmd: "UPDATE", table: "r"},
		{q: "UPDATE r SET id = id + 1, id = id * 2", cmd: "UPDATE", table: "r"},
		{q: "INSERT INTO r (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id * 2", cmd: "INSERT", table: "r"},
		{q: "INSERT INTO r (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = -(id)", cmd: "INSERT", table: "r"},
		{q: "INSERT INTO r (stub) VALUES ('a') ON DUPLICATE KEY UPDATE other = 1, id = id * 2", cmd: "INSERT", table: "r"},
		{q: "UPDATE Tickets64 SET id = id * 2 WHERE stub = 'a'", cmd: "UPDATE", table: "Tickets64"},
		{q: "UPDATE Tickets64 SET id = -(id)", cmd: "UPDATE", table: "Tickets64"},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id * 2", cmd: "INSERT", table: "Tickets64"},
	} {
		_, err := app.Exec(c.q, c.args...)
		want := fmt.Sprintf("%s command denied to user 'app'@'127.0.0.1' for table '%s'", c.cmd, c.table)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1142 || string(me.SQLState[:]) != "42000" || me.Message != want {
			t.Errorf("alloc %s: %v, want 1142 %s", c.q, err, want)
		}
	}
	if after := ids(); after != before {
		t.Errorf("the refused statements changed r's ids, r's counter or Tickets64's from %s to %s", before, after)
	}
	// What the schemes write: an integer step from the counter's own
	// value, also beside other columns (Snowflake's claim).
	for _, c := range []struct {
		q    string
		args []any
	}{
		{q: "UPDATE r SET id = id + 10 WHERE stub = 'b'"},
		{q: "UPDATE r SET id = LAST_INSERT_ID(id + ?) WHERE stub = ?", args: []any{5, "b"}},
		{q: "UPDATE r SET other = other + 1, id = 1 + id WHERE stub = 'b'"},
		{q: "UPDATE r SET id = id - 1, stub = 'c' WHERE stub = 'b'"},
		{q: "INSERT INTO r (stub) VALUES ('a') ON DUPLICATE KEY UPDATE other = other + 1, id = LAST_INSERT_ID(id + 100)"},
		{q: slots["claim"], args: []any{"host-1", "svc"}},
		{q: "UPDATE Tickets64 SET id = LAST_INSERT_ID(id + 1) WHERE stub = 'a'"},
		{q: "INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)"},
	} {
		if _, err := app.Exec(c.q, c.args...); err != nil {
			t.Errorf("alloc %s: %v", c.q, err)
		}
	}
}

// clockRepl is memRepl that stamps every command with the time, as the
// Raft apply does (raftstore/fsm.go), for statements that read NOW().
type clockRepl struct{ memRepl }

func (r *clockRepl) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	now := time.Now().UTC()
	stamped := make([]model.Command, len(cmds))
	for i := range cmds {
		stamped[i] = cmds[i]
		stamped[i].Now = now
	}
	return r.memRepl.Propose(ctx, stamped)
}
