package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// TestRoles: an alloc account allocates and reads but gets MySQL's
// privilege errors for everything that could lose or reissue ids; an
// admin account may do it all.
func TestRoles(t *testing.T) {
	users := NewUsers()
	if err := users.AddRole("app", "apppw", mysqlconn.RoleAlloc); err != nil {
		t.Fatal(err)
	}
	if err := users.Add("ops", "opspw"); err != nil {
		t.Fatal(err)
	}
	addr, _ := startServerWith(t, Config{Users: users})
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
