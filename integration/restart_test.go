package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// A restarted node must never answer from state older than its own log
// (nor, on a follower, older than the leader's commit index): it replays
// its log after its state file's last checkpoint at start, and the log is
// applied only once a leader is known. These tests restart nodes and send statements the
// moment the MySQL port accepts a connection.

// restartCount is how many restarts TestRestartSingleNodeAtOnce does;
// TICKETD_RESTARTS raises it for a longer run.
func restartCount(t *testing.T, def int) int {
	if v := os.Getenv("TICKETD_RESTARTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TICKETD_RESTARTS=%q", v)
		}
		return n
	}
	return def
}

// waitPort dials addr until it accepts a TCP connection.
func waitPort(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("port %s never answered: %v", addr, err)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// waitReadyz polls /readyz until it answers 200.
func waitReadyz(ctx context.Context, t *testing.T, n *harness.Node) {
	t.Helper()
	for !n.Ready(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: /readyz never answered 200", n.ID())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// stateCheck is one statement sent to a just-restarted node, with what
// the state before the restart says it must answer.
type stateCheck struct {
	name string
	run  func(ctx context.Context, c *sql.Conn) error
}

// restartChecks are the statement kinds a restarted node answers from its
// state. want is the state before the restart: the row of stub 'a', the
// tables of the database, the global increment.
func restartChecks(db string, wantRow *int64, wantTables []string, wantIncrement uint64) []stateCheck {
	expect := func(what string, got, want any) error {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s: got %v, want %v", what, got, want)
		}
		return nil
	}
	return []stateCheck{
		{"USE", func(ctx context.Context, c *sql.Conn) error {
			_, err := c.ExecContext(ctx, "USE "+db)
			return err
		}},
		{"SELECT row", func(ctx context.Context, c *sql.Conn) error {
			var id int64
			if err := c.QueryRowContext(ctx, "SELECT id FROM "+db+".T WHERE stub = 'a'").Scan(&id); err != nil {
				return err
			}
			return expect("row of stub a", id, *wantRow)
		}},
		{"SHOW TABLES", func(ctx context.Context, c *sql.Conn) error {
			rows, err := c.QueryContext(ctx, "SHOW TABLES FROM "+db)
			if err != nil {
				return err
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				got = append(got, s)
			}
			slices.Sort(got)
			return expect("tables", got, wantTables)
		}},
		{"SELECT @@global", func(ctx context.Context, c *sql.Conn) error {
			var v uint64
			if err := c.QueryRowContext(ctx, "SELECT @@global.auto_increment_increment").Scan(&v); err != nil {
				return err
			}
			return expect("global auto_increment_increment", v, wantIncrement)
		}},
		{"session default", func(ctx context.Context, c *sql.Conn) error {
			// A new session's default comes from the replicated global.
			var v uint64
			if err := c.QueryRowContext(ctx, "SELECT @@session.auto_increment_increment").Scan(&v); err != nil {
				return err
			}
			return expect("session auto_increment_increment", v, wantIncrement)
		}},
		{"DDL", func(ctx context.Context, c *sql.Conn) error {
			// The table exists: IF NOT EXISTS must not create it anew
			// (that would restart its counter).
			if _, err := c.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+db+".T (id bigint unsigned NOT NULL AUTO_INCREMENT, stub char(1) NOT NULL DEFAULT '', PRIMARY KEY (id), UNIQUE KEY stub (stub))"); err != nil {
				return err
			}
			_, err := c.ExecContext(ctx, "DROP TABLE IF EXISTS "+db+".NeverCreated")
			return err
		}},
		{"REPLACE", func(ctx context.Context, c *sql.Conn) error {
			r, err := c.ExecContext(ctx, "REPLACE INTO "+db+".T (stub) VALUES ('a')")
			if err != nil {
				return err
			}
			id, err := r.LastInsertId()
			if err != nil {
				return err
			}
			if id <= *wantRow {
				return fmt.Errorf("id %d after a restart, not above %d", id, *wantRow)
			}
			if (uint64(id)-1)%wantIncrement != 0 {
				return fmt.Errorf("id %d does not follow increment %d", id, wantIncrement)
			}
			*wantRow = id
			return nil
		}},
	}
}

// runChecks sends every check on one fresh connection, the first of them
// (rotating with i) as the connection's first statement. withDB logs in
// with the database selected, so the login itself reads the state.
func runChecks(ctx context.Context, t *testing.T, n *harness.Node, checks []stateCheck, i int, withDB bool) time.Duration {
	t.Helper()
	db := ""
	if withDB {
		db = "dur"
	}
	h, err := sql.Open("mysql", n.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	start := time.Now()
	c, err := h.Conn(ctx)
	if err != nil {
		t.Fatalf("restart %d: connect to %s (db %q): %v (code %d)", i, n.ID(), db, err, mysqlCode(err))
	}
	defer c.Close()
	var first time.Duration
	for j := range checks {
		ck := checks[(i+j)%len(checks)]
		if err := ck.run(ctx, c); err != nil {
			t.Fatalf("restart %d of %s: %s (statement %d on the connection): %v (code %d)", i, n.ID(), ck.name, j+1, err, mysqlCode(err))
		}
		if j == 0 {
			first = time.Since(start)
		}
	}
	return first
}

// TestRestartSingleNodeAtOnce restarts a single node again and again
// (kill -9 and SIGTERM; connecting when the port opens or when /readyz
// says 200) and sends every statement kind first: none may see a missing
// database or table, an old row or the default of a replicated variable.
func TestRestartSingleNodeAtOnce(t *testing.T) {
	node, ctx := startNode(t)
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	mustExec(t, ctx, c, "CREATE DATABASE dur")
	mustExec(t, ctx, c, "USE dur")
	mustExec(t, ctx, c, harness.FlickrDDL("T"))
	mustExec(t, ctx, c, harness.FlickrDDL("Gone"))
	mustExec(t, ctx, c, "DROP TABLE Gone")
	mustExec(t, ctx, c, "SET GLOBAL auto_increment_increment = 2")
	c.Close()
	c = pinConn(t, ctx, openDB(t, node.DSN("dur")))
	var last int64
	for range 2 {
		_, last = result(t, mustExec(t, ctx, c, "REPLACE INTO T (stub) VALUES ('a')"))
	}
	c.Close()
	checks := restartChecks("dur", &last, []string{"T"}, 2)

	n := restartCount(t, 20)
	var atOnce, afterReady []time.Duration
	for i := range n {
		kill, readyz := i%2 == 0, i%4 >= 2
		if kill {
			must(t, node.Kill())
		} else {
			must(t, node.Stop())
		}
		started := time.Now()
		must(t, node.Start(ctx))
		if readyz {
			waitReadyz(ctx, t, node)
		} else {
			waitPort(ctx, t, node.MySQLAddr())
		}
		first := runChecks(ctx, t, node, checks, i, i%3 != 0)
		if readyz {
			afterReady = append(afterReady, first)
		} else {
			atOnce = append(atOnce, time.Since(started))
		}
	}
	slices.Sort(atOnce)
	slices.Sort(afterReady)
	t.Logf("%d restarts, every statement kind first: no stale answer. Start to first answer when connecting as the port opened: %v; first answer after /readyz 200: %v",
		n, atOnce, afterReady)
}

// TestRestartClusterNodeAtOnce restarts a follower and the leader of a
// three-node cluster (kill -9 and SIGTERM) after the others went on
// without it (new ids, a new table), and sends every statement kind to it
// the moment its port opens: it must answer from the cluster's state, not
// from what it had before it stopped.
func TestRestartClusterNodeAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := harness.StartCluster(ctx, t, 3)
	leader, err := cl.Leader(ctx, 10*time.Second)
	must(t, err)
	c := pinConn(t, ctx, openDB(t, leader.DSN("")))
	mustExec(t, ctx, c, "CREATE DATABASE dur")
	mustExec(t, ctx, c, "USE dur")
	mustExec(t, ctx, c, harness.FlickrDDL("T"))
	var last int64
	_, last = result(t, mustExec(t, ctx, c, "REPLACE INTO T (stub) VALUES ('a')"))
	c.Close()
	tables := []string{"T"}

	for i, step := range []struct {
		role string
		kill bool
	}{{"follower", true}, {"leader", true}, {"follower", false}, {"leader", false}} {
		leader, err := cl.Leader(ctx, 10*time.Second)
		must(t, err)
		target := leader
		if step.role == "follower" {
			for _, id := range []string{"n1", "n2", "n3"} {
				if id != leader.ID() {
					target = cl.Node(id)
					break
				}
			}
		}
		if step.kill {
			must(t, target.Kill())
		} else {
			must(t, target.Stop())
		}
		// The others go on: more ids and a new table the stopped node
		// has never seen.
		var other *harness.Node
		for _, id := range []string{"n1", "n2", "n3"} {
			if id != target.ID() {
				other = cl.Node(id)
				break
			}
		}
		oc := pinConn(t, ctx, openDB(t, other.DSN("dur")))
		tbl := fmt.Sprintf("T%d", i)
		for {
			// Right after the leader stops, the others need an election.
			if _, err := oc.ExecContext(ctx, harness.FlickrDDL(tbl)); err == nil {
				break
			} else if code := mysqlCode(err); code != 1290 && code != 1105 {
				t.Fatalf("create %s on %s: %v", tbl, other.ID(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		tables = append(tables, tbl)
		slices.Sort(tables)
		for range 3 {
			_, last = result(t, mustExec(t, ctx, oc, "REPLACE INTO T (stub) VALUES ('a')"))
		}
		oc.Close()

		started := time.Now()
		must(t, target.Start(ctx))
		waitPort(ctx, t, target.MySQLAddr())
		checks := restartChecks("dur", &last, tables, 1)
		runChecks(ctx, t, target, checks, i, i%2 == 0)
		t.Logf("%s %s restarted (kill -9 %v): current state served %v after start", step.role, target.ID(), step.kill, time.Since(started))
		must(t, cl.WaitReady(ctx))
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSecondProcessOnDataDir starts a second ticketd on a running node's
// data directory (other ports): it must exit at once, naming the
// directory and the process that holds it, and leave the first serving.
func TestSecondProcessOnDataDir(t *testing.T) {
	node, ctx := startNode(t)
	second := harness.NewNode(t, harness.Options{NodeID: "n1", DataDir: node.DataDir(), NoWait: true})
	must(t, second.Start(ctx))
	deadline := time.Now().Add(15 * time.Second)
	for second.Running() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if second.Running() {
		t.Fatalf("second ticketd on %s still running; log:\n%s", node.DataDir(), second.LogTail(20))
	}
	if second.ExitError() == nil {
		t.Fatal("second ticketd exited 0")
	}
	log := second.LogTail(5)
	for _, want := range []string{node.DataDir(), "held by process " + strconv.Itoa(node.PID())} {
		if !strings.Contains(log, want) {
			t.Errorf("second ticketd's message does not name %q:\n%s", want, log)
		}
	}
	c := pinConn(t, ctx, openDB(t, node.DSN("")))
	queryUint(t, ctx, c, "SELECT 1")
}

// TestFollowerReadsOwnWrites: through a follower, a REPLACE returns once
// the leader applied it; the same session's next SELECT must see the row
// as its REPLACE left it, although the follower applies it later.
func TestFollowerReadsOwnWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := harness.StartCluster(ctx, t, 3)
	leader, err := cl.Leader(ctx, 10*time.Second)
	must(t, err)
	var follower *harness.Node
	for _, id := range []string{"n1", "n2", "n3"} {
		if id != leader.ID() {
			follower = cl.Node(id)
		}
	}
	c := pinConn(t, ctx, openDB(t, follower.DSN("")))
	mustExec(t, ctx, c, "CREATE DATABASE ryw")
	mustExec(t, ctx, c, "USE ryw")
	mustExec(t, ctx, c, harness.FlickrDDL("T"))
	for i := range 200 {
		_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO T (stub) VALUES ('a')"))
		if got := queryUint(t, ctx, c, "SELECT id FROM T WHERE stub = 'a'"); got != uint64(id) {
			t.Fatalf("round %d: REPLACE gave %d, the same session then read %d", i, id, got)
		}
	}
}
