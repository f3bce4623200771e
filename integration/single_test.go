package integration

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
)

// openDB opens a database/sql handle closed at test end.
func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pinConn returns one connection of db, so LAST_INSERT_ID and session
// variables are read on the connection that set them.
func pinConn(t testing.TB, ctx context.Context, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mustExec runs a statement that must succeed.
func mustExec(t testing.TB, ctx context.Context, c *sql.Conn, q string, args ...any) sql.Result {
	t.Helper()
	r, err := c.ExecContext(ctx, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// queryUint runs a one-row, one-column query and returns its value.
func queryUint(t testing.TB, ctx context.Context, c *sql.Conn, q string, args ...any) uint64 {
	t.Helper()
	var v uint64
	if err := c.QueryRowContext(ctx, q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// result unpacks an exec result into (affected, insert id).
func result(t testing.TB, r sql.Result) (int64, int64) {
	t.Helper()
	a, err := r.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	return a, id
}

// mysqlCode returns the server error code of err, or 0.
func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// startNode starts a single ticketd node for the test.
func startNode(t *testing.T) (*harness.Node, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return harness.Start(ctx, t, harness.Options{}), ctx
}

// driverMode is one way go-sql-driver/mysql talks to a server.
type driverMode struct {
	name string
	// params are added to the DSN.
	params []string
	// exec and query send q with args the mode's way.
	exec  func(ctx context.Context, c *sql.Conn, q string, args ...any) (sql.Result, error)
	query func(ctx context.Context, c *sql.Conn, q string, args ...any) scanner
}

// scanner is a *sql.Row, or errRow when preparing the query failed.
type scanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// preparedRow executes a prepared statement at Scan and closes it after
// the row is read: closing it earlier would send COM_STMT_CLOSE in the
// middle of the unread result set.
type preparedRow struct {
	ctx  context.Context
	st   *sql.Stmt
	args []any
}

func (r preparedRow) Scan(dest ...any) error {
	defer r.st.Close()
	return r.st.QueryRowContext(r.ctx, r.args...).Scan(dest...)
}

// literal inlines args into q's placeholders, for the plain-text mode
// (the test's own values only: single letters and integers).
func literal(q string, args []any) string {
	for _, a := range args {
		v := fmt.Sprint(a)
		if _, ok := a.(string); ok {
			v = "'" + v + "'"
		}
		q = strings.Replace(q, "?", v, 1)
	}
	return q
}

var driverModes = []driverMode{
	{
		// COM_QUERY with the statement text: what the mysql CLI, PHP's
		// mysqli->query and most ORMs' raw SQL send.
		name:   "text",
		params: []string{"interpolateParams=false"},
		exec: func(ctx context.Context, c *sql.Conn, q string, args ...any) (sql.Result, error) {
			return c.ExecContext(ctx, literal(q, args))
		},
		query: func(ctx context.Context, c *sql.Conn, q string, args ...any) scanner {
			return c.QueryRowContext(ctx, literal(q, args))
		},
	},
	{
		// COM_STMT_PREPARE + COM_STMT_EXECUTE, binary result sets: the
		// driver's default with arguments, also mysqli prepare and
		// node-mysql2 execute().
		name:   "prepared",
		params: []string{"interpolateParams=false"},
		exec: func(ctx context.Context, c *sql.Conn, q string, args ...any) (sql.Result, error) {
			st, err := c.PrepareContext(ctx, q)
			if err != nil {
				return nil, err
			}
			defer st.Close()
			return st.ExecContext(ctx, args...)
		},
		query: func(ctx context.Context, c *sql.Conn, q string, args ...any) scanner {
			st, err := c.PrepareContext(ctx, q)
			if err != nil {
				return errRow{err}
			}
			return preparedRow{ctx, st, args}
		},
	},
	{
		// The driver interpolates arguments client side and sends
		// COM_QUERY: what many high-throughput Go services configure.
		name:   "interpolate",
		params: []string{"interpolateParams=true"},
		exec: func(ctx context.Context, c *sql.Conn, q string, args ...any) (sql.Result, error) {
			return c.ExecContext(ctx, q, args...)
		},
		query: func(ctx context.Context, c *sql.Conn, q string, args ...any) scanner {
			return c.QueryRowContext(ctx, q, args...)
		},
	},
}

// target is a server under test: a ticketd node or the MariaDB reference.
type target interface {
	DSN(db string, params ...string) string
	MySQLAddr() string
	DataDir() string
}

// TestSingleNode drives one real ticketd process through every driver
// mode. Each subtest has its own database, so its ids are exactly
// MySQL's from 1.
func TestSingleNode(t *testing.T) {
	node, ctx := startNode(t)
	singleNodeSuite(t, ctx, node, true)
}

// TestSingleNodeReference runs the same suite against MariaDB, proving
// that every expectation in it is MySQL's behaviour and not a guess.
func TestSingleNodeReference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	singleNodeSuite(t, ctx, harness.StartMariaDB(t), false)
}

// singleNodeSuite is TestSingleNode's body. isTicketd enables the checks
// MariaDB 10.11 itself fails (MySQL 8 variable names drivers send).
func singleNodeSuite(t *testing.T, ctx context.Context, node target, isTicketd bool) {
	for _, m := range driverModes {
		t.Run("go-sql-driver/"+m.name, func(t *testing.T) {
			testDriverMode(t, ctx, node, m)
		})
	}
	t.Run("go-mysql-client", func(t *testing.T) { testGoMySQLClient(t, ctx, node) })
	t.Run("errors keep the connection", func(t *testing.T) { testErrors(t, ctx, node) })
	t.Run("multi-statements", func(t *testing.T) { testMultiStatements(t, ctx, node) })
	t.Run("connect-time queries", func(t *testing.T) { testConnectQueries(t, ctx, node, isTicketd) })
	t.Run("global increment", func(t *testing.T) { testGlobalIncrement(t, ctx, node) })
	t.Run("node variables", func(t *testing.T) { testNodeVariables(t, ctx, node) })
}

// testNodeVariables: the variables that describe the server name this
// one, as MariaDB's do (both listen on 127.0.0.1 on a free port here);
// ticketd answered localhost, 3306 and server id 1 whatever its flags
// said (issue 34). A ticketd node's @@server_id is the FNV-1a hash of
// its --node-id (the manual's --node-id row), MariaDB's its default, 1.
func testNodeVariables(t *testing.T, ctx context.Context, node target) {
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	_, port, err := net.SplitHostPort(node.MySQLAddr())
	if err != nil {
		t.Fatal(err)
	}
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dataDir, err := filepath.Abs(node.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"SELECT @@port":                 port,
		"SELECT @@global.port":          port,
		"SELECT @@hostname":             hostname,
		"SELECT @@bind_address":         "127.0.0.1",
		"SELECT @@datadir":              dataDir + "/",
		"SHOW VARIABLES LIKE 'port'":    port,
		"SHOW VARIABLES LIKE 'datadir'": dataDir + "/",
	} {
		var got string
		var err error
		if strings.HasPrefix(q, "SHOW") {
			var name string
			err = c.QueryRowContext(ctx, q).Scan(&name, &got)
		} else {
			err = c.QueryRowContext(ctx, q).Scan(&got)
		}
		if err != nil {
			t.Errorf("%s: %v", q, err)
		} else if got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	want := uint64(1)
	if n, ok := node.(*harness.Node); ok {
		h := fnv.New32a()
		h.Write([]byte(n.ID()))
		want = uint64(h.Sum32())
	}
	if got := queryUint(t, ctx, c, "SELECT @@server_id"); got != want {
		t.Errorf("@@server_id = %d, want %d", got, want)
	}
}

// createDB creates database name and table Tickets64 in it through a
// throwaway connection.
func createDB(t *testing.T, ctx context.Context, node target, name string) {
	t.Helper()
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	mustExec(t, ctx, c, "CREATE DATABASE "+name)
	mustExec(t, ctx, c, "USE "+name)
	mustExec(t, ctx, c, harness.FlickrDDL("Tickets64"))
}

func testDriverMode(t *testing.T, ctx context.Context, node target, m driverMode) {
	dbName := "mode_" + m.name
	createDB(t, ctx, node, dbName)
	c := pinConn(t, ctx, openDB(t, node.DSN(dbName, m.params...)))

	lii := func() uint64 {
		t.Helper()
		var v uint64
		if err := m.query(ctx, c, "SELECT LAST_INSERT_ID()").Scan(&v); err != nil {
			t.Fatalf("SELECT LAST_INSERT_ID(): %v", err)
		}
		return v
	}
	replace := func(want int64, q string, args ...any) int64 {
		t.Helper()
		r, err := m.exec(ctx, c, q, args...)
		if err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
		a, id := result(t, r)
		if a != want {
			t.Errorf("%s %v: affected %d, want %d", q, args, a, want)
		}
		if got := lii(); got != uint64(id) {
			t.Errorf("%s %v: OK packet insert id %d but LAST_INSERT_ID() %d on the same connection", q, args, id, got)
		}
		return id
	}

	if got := lii(); got != 0 {
		t.Errorf("LAST_INSERT_ID() on a fresh connection = %d, want 0", got)
	}
	const one = "REPLACE INTO Tickets64 (stub) VALUES (?)"
	id1 := replace(1, one, "a") // new stub
	id2 := replace(2, one, "a") // existing stub: delete + insert
	if id1 != 1 || id2 != 2 {
		t.Errorf("first ids %d, %d; want 1, 2 (MySQL starts a table at 1)", id1, id2)
	}
	// Strictly increasing over a run of single allocations.
	prev := id2
	for range 20 {
		id := replace(2, one, "a")
		if id <= prev {
			t.Fatalf("id %d after %d: not increasing", id, prev)
		}
		prev = id
	}
	// Multi-row: ('a') three times is three delete+insert pairs; the
	// statement reports the first id and the row keeps the last.
	first := replace(6, "REPLACE INTO Tickets64 (stub) VALUES (?),(?),(?)", "a", "a", "a")
	if first != prev+1 {
		t.Errorf("multi-row REPLACE first id %d, want %d", first, prev+1)
	}
	var rowID uint64
	if err := m.query(ctx, c, "SELECT id FROM Tickets64 WHERE stub = ?", "a").Scan(&rowID); err != nil {
		t.Fatal(err)
	}
	if rowID != uint64(first+2) {
		t.Errorf("after ('a'),('a'),('a') from %d the row holds %d, want %d", first, rowID, first+2)
	}
	// New stubs: affected 2, insert id = the first row's.
	cd := replace(2, "REPLACE INTO Tickets64 (stub) VALUES (?),(?)", "c", "d")
	if cd != first+3 {
		t.Errorf("REPLACE ('c'),('d') insert id %d, want %d", cd, first+3)
	}
	rows, err := c.QueryContext(ctx, "SELECT id, stub FROM Tickets64 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id uint64
		var stub string
		if err := rows.Scan(&id, &stub); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s", id, stub))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := []string{fmt.Sprintf("%d:a", first+2), fmt.Sprintf("%d:c", cd), fmt.Sprintf("%d:d", cd+1)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("table holds %v, want %v", got, want)
	}
}

func testGoMySQLClient(t *testing.T, ctx context.Context, node target) {
	createDB(t, ctx, node, "gomysql")
	c, err := dialClient(ctx, node.MySQLAddr(), "gomysql")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	lii := func() uint64 {
		t.Helper()
		r, err := c.Execute("SELECT LAST_INSERT_ID()")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		v, err := r.GetUint(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(q string, args []any, affected, id uint64) {
		t.Helper()
		r, err := c.Execute(q, args...) // with args: COM_STMT_PREPARE/EXECUTE
		if err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
		r.Close()
		if r.AffectedRows != affected || r.InsertId != id {
			t.Errorf("%s %v: affected %d insert id %d, want %d and %d", q, args, r.AffectedRows, r.InsertId, affected, id)
		}
		if got := lii(); got != id {
			t.Errorf("%s %v: LAST_INSERT_ID() %d, want %d", q, args, got, id)
		}
	}
	check("REPLACE INTO Tickets64 (stub) VALUES ('a')", nil, 1, 1)
	check("REPLACE INTO Tickets64 (stub) VALUES ('a')", nil, 2, 2)
	check("REPLACE INTO Tickets64 (stub) VALUES (?)", []any{"a"}, 2, 3)
	check("REPLACE INTO Tickets64 (stub) VALUES ('a'),('a'),('a')", nil, 6, 4)
	check("REPLACE INTO Tickets64 (stub) VALUES (?),(?)", []any{"c", "d"}, 2, 7)
	if err := c.Ping(); err != nil {
		t.Errorf("COM_PING: %v", err)
	}
	if err := c.UseDB("gomysql"); err != nil { // COM_INIT_DB
		t.Errorf("COM_INIT_DB: %v", err)
	}
	check("REPLACE INTO Tickets64 (stub) VALUES ('a')", nil, 2, 9)
}

func testErrors(t *testing.T, ctx context.Context, node target) {
	createDB(t, ctx, node, "errs")
	for _, m := range driverModes {
		t.Run(m.name, func(t *testing.T) {
			c := pinConn(t, ctx, openDB(t, node.DSN("errs", m.params...)))
			r, err := m.exec(ctx, c, "REPLACE INTO Tickets64 (stub) VALUES (?)", m.name[:1])
			if err != nil {
				t.Fatal(err)
			}
			_, id := result(t, r)
			cases := []struct {
				q    string
				code uint16
			}{
				{"SELECT * FROM NoSuchTable", 1146},
				{"REPLACE INTO NoSuchTable (stub) VALUES ('a')", 1146},
				{"SELEC 1", 1064},
				{"SELECT @@no_such_variable", 1193},
				{"SET @@no_such_variable = 1", 1193},
				{"INSERT INTO Tickets64 (stub) VALUES ('" + m.name[:1] + "')", 1062},
			}
			for _, tc := range cases {
				_, err := m.exec(ctx, c, tc.q)
				if code := mysqlCode(err); code != tc.code {
					t.Errorf("%s: got %v (code %d), want error %d", tc.q, err, code, tc.code)
				}
				// Same connection, still usable, session intact.
				var one int
				if err := m.query(ctx, c, "SELECT 1").Scan(&one); err != nil || one != 1 {
					t.Fatalf("after %q: SELECT 1 = %d, %v", tc.q, one, err)
				}
				var got int64
				if err := m.query(ctx, c, "SELECT LAST_INSERT_ID()").Scan(&got); err != nil || got != id {
					t.Errorf("after %q: LAST_INSERT_ID() = %d, %v; want %d", tc.q, got, err, id)
				}
			}
		})
	}
}

func testMultiStatements(t *testing.T, ctx context.Context, node target) {
	createDB(t, ctx, node, "multi")
	c := pinConn(t, ctx, openDB(t, node.DSN("multi", "multiStatements=true")))

	// Query: the OK packet of REPLACE, then the SELECT's result set.
	var prev uint64
	for i := range 5 {
		rows, err := c.QueryContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID()")
		if err != nil {
			t.Fatal(err)
		}
		if !rows.Next() {
			if !rows.NextResultSet() || !rows.Next() {
				t.Fatalf("no LAST_INSERT_ID() result set: %v", rows.Err())
			}
		}
		var id uint64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		if rows.Next() || rows.NextResultSet() {
			t.Error("more results than REPLACE + SELECT")
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if id != uint64(i+1) || id <= prev {
			t.Errorf("multi-statement round %d: id %d (previous %d), want %d", i, id, prev, i+1)
		}
		if got := queryUint(t, ctx, c, "SELECT LAST_INSERT_ID()"); got != id {
			t.Errorf("LAST_INSERT_ID() after the multi-statement %d, want %d", got, id)
		}
		prev = id
	}

	// Exec: each statement's own OK packet (affected, insert id).
	err := c.Raw(func(dc any) error {
		res, err := dc.(driver.ExecerContext).ExecContext(ctx,
			"REPLACE INTO Tickets64 (stub) VALUES ('a'); REPLACE INTO Tickets64 (stub) VALUES ('b'),('c')", nil)
		if err != nil {
			return err
		}
		mr := res.(mysql.Result)
		ids, aff := mr.AllLastInsertIds(), mr.AllRowsAffected()
		if fmt.Sprint(ids) != "[6 7]" || fmt.Sprint(aff) != "[2 2]" {
			t.Errorf("multi-statement exec: insert ids %v affected %v, want [6 7] [2 2]", ids, aff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// An error in the middle stops the batch and leaves the connection
	// usable.
	_, err = c.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a'); SELEC 1; REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if code := mysqlCode(err); code != 1064 {
		t.Errorf("multi-statement with a syntax error: %v, want 1064", err)
	}
	if got := queryUint(t, ctx, c, "SELECT id FROM Tickets64 WHERE stub = 'a'"); got != 9 {
		t.Errorf("after the failed batch stub a has id %d, want 9 (first statement ran, third did not)", got)
	}
}

func testConnectQueries(t *testing.T, ctx context.Context, node target, isTicketd bool) {
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	// DESIGN §7: each must succeed, and these must be integers.
	ints := []string{
		"SELECT @@max_allowed_packet", // go-sql-driver
		"SELECT @@session.auto_increment_increment",
	}
	strs := []string{
		"select @@version_comment limit 1", // mysql CLI
		"SELECT VERSION()", "SELECT DATABASE()", "SELECT @@sql_mode",
		"SELECT @@lower_case_table_names", "SELECT CONNECTION_ID()",
	}
	cj := "/* mysql-connector-j-8.4.0 */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@max_allowed_packet AS max_allowed_packet, @@sql_mode AS sql_mode, @@time_zone AS time_zone, @@wait_timeout AS wait_timeout"
	cjWant := "auto_increment_increment character_set_client character_set_connection max_allowed_packet sql_mode time_zone wait_timeout"
	if isTicketd {
		// MySQL 8 names, unknown to MariaDB 10.11 (1193 there) but sent
		// by HikariCP, SQLAlchemy and Connector/J 8: ticketd answers them.
		ints = append(ints, "SELECT @@session.transaction_read_only")
		strs = append(strs, "SELECT @@transaction_isolation")
		cj += ", @@transaction_isolation AS transaction_isolation"
		cjWant += " transaction_isolation"
	}
	for _, q := range ints {
		var v int64
		if err := c.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range strs {
		var v sql.NullString
		if err := c.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"SET NAMES utf8mb4", "SET autocommit=1",
		"set autocommit=1,sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES')", // MariaDB Connector/J
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Connector/J: one row whose labels are exactly the aliases.
	rows, err := c.QueryContext(ctx, cj)
	if err != nil {
		t.Fatalf("Connector/J connect query: %v", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if strings.Join(cols, " ") != cjWant {
		t.Errorf("Connector/J labels %v, want %s", cols, cjWant)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if n != 1 {
		t.Errorf("Connector/J query returned %d rows, want 1", n)
	}
	if err := c.PingContext(ctx); err != nil {
		t.Errorf("COM_PING: %v", err)
	}
}

// testGlobalIncrement: SET GLOBAL is the default of new sessions, not of
// existing ones; this needs two connections, which the differential
// script (one connection) cannot show.
func testGlobalIncrement(t *testing.T, ctx context.Context, node target) {
	createDB(t, ctx, node, "glob")
	db := openDB(t, node.DSN("glob"))
	old := pinConn(t, ctx, db)
	mustExec(t, ctx, old, "SET GLOBAL auto_increment_increment = 2")
	defer mustExec(t, ctx, old, "SET GLOBAL auto_increment_increment = 1")
	if v := queryUint(t, ctx, old, "SELECT @@session.auto_increment_increment"); v != 1 {
		t.Errorf("existing session's increment %d after SET GLOBAL, want 1", v)
	}
	fresh := pinConn(t, ctx, db)
	if v := queryUint(t, ctx, fresh, "SELECT @@session.auto_increment_increment"); v != 2 {
		t.Errorf("new session's increment %d, want the global 2", v)
	}
	_, a := result(t, mustExec(t, ctx, fresh, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	_, b := result(t, mustExec(t, ctx, fresh, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	_, c := result(t, mustExec(t, ctx, old, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	if a != 1 || b != 3 || c != 4 {
		t.Errorf("ids %d, %d (increment 2) then %d (increment 1); want 1, 3, 4", a, b, c)
	}
}

// TestRestartKeepsCounter stops ticketd cleanly (SIGTERM must exit 0) and
// starts it on the same data dir: tables, counters and global variables
// survive, and the next id is above every id handed out before.
func TestRestartKeepsCounter(t *testing.T) {
	node, ctx := startNode(t)
	createDB(t, ctx, node, "restart")
	db := openDB(t, node.DSN("restart"))
	c := pinConn(t, ctx, db)
	var last int64
	for range 50 {
		_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
		if id <= last {
			t.Fatalf("id %d after %d", id, last)
		}
		last = id
	}
	// A replicated global variable must survive too.
	mustExec(t, ctx, c, "SET GLOBAL auto_increment_increment = 3")
	c.Close()
	db.Close()

	if err := node.Restart(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	admin := pinConn(t, ctx, openDB(t, node.DSN("restart")))
	if v := queryUint(t, ctx, admin, "SELECT @@global.auto_increment_increment"); v != 3 {
		t.Errorf("global auto_increment_increment after restart %d, want 3", v)
	}
	mustExec(t, ctx, admin, "SET GLOBAL auto_increment_increment = 1")
	c = pinConn(t, ctx, openDB(t, node.DSN("restart"))) // a session with increment 1
	if got := queryUint(t, ctx, c, "SELECT id FROM Tickets64 WHERE stub = 'a'"); got != uint64(last) {
		t.Errorf("after restart the row holds %d, want %d", got, last)
	}
	_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	if id != last+1 {
		t.Errorf("first id after a clean restart %d, want %d", id, last+1)
	}
	// A second restart right after: nothing depends on a snapshot having
	// been taken.
	c.Close()
	if err := node.Restart(ctx); err != nil {
		t.Fatalf("second restart: %v", err)
	}
	c = pinConn(t, ctx, openDB(t, node.DSN("restart")))
	_, id2 := result(t, mustExec(t, ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	if id2 != id+1 {
		t.Errorf("first id after the second restart %d, want %d", id2, id+1)
	}
}

// TestRestartKeepsDropMark: a DROP TABLE followed by a restart and CREATE
// TABLE of the same name must not hand out the dropped table's ids again
// (the high-water mark is replicated state, in the state file).
func TestRestartKeepsDropMark(t *testing.T) {
	node, ctx := startNode(t)
	createDB(t, ctx, node, "dropmark")
	c := pinConn(t, ctx, openDB(t, node.DSN("dropmark")))
	var last int64
	for range 20 {
		_, last = result(t, mustExec(t, ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	}
	mustExec(t, ctx, c, "DROP TABLE Tickets64")
	c.Close()
	if err := node.Restart(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	c = pinConn(t, ctx, openDB(t, node.DSN("dropmark")))
	mustExec(t, ctx, c, harness.FlickrDDL("Tickets64"))
	_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')"))
	if id <= last {
		t.Errorf("first id of the re-created table after a restart %d, want above %d", id, last)
	}
}
