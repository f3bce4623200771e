package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestReadsSeeAcknowledgedWrites: a statement on any node sees every
// write acknowledged before it began (DESIGN §4a), through another node
// and with no pause in between: a database and table created through one
// follower are there for the next statement through the other (it used
// to answer 1049 or 1146 in about one try in twenty, until the second
// follower had applied the DDL), and a row inserted through one node is
// in the next SELECT through another.
func TestReadsSeeAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	c := harness.StartCluster(ctx, t, 3)
	leader, err := c.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*harness.Node // the two followers, then the leader
	for _, n := range c.Nodes {
		if n != leader {
			nodes = append(nodes, n)
		}
	}
	nodes = append(nodes, leader)
	conns := make([]*sqlConn, len(nodes))
	for i, n := range nodes {
		conns[i] = &sqlConn{pinConn(t, ctx, openDB(t, n.DSN(""))), n.ID()}
	}

	const rounds = 30
	for i := range rounds {
		a, b := conns[i%2], conns[(i+1)%2] // follower to follower
		db := fmt.Sprintf("ri%d", i)
		mustExec(t, ctx, a.c, "CREATE DATABASE "+db)
		if _, err := b.c.ExecContext(ctx, "USE "+db); err != nil {
			t.Fatalf("round %d: USE %s through %s right after CREATE DATABASE through %s: %v", i, db, b.id, a.id, err)
		}
		mustExec(t, ctx, a.c, "CREATE TABLE "+db+".Tickets64 (id bigint unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub))")
		if _, err := b.c.ExecContext(ctx, "REPLACE INTO "+db+".Tickets64 (stub) VALUES ('a')"); err != nil {
			t.Fatalf("round %d: REPLACE through %s right after CREATE TABLE through %s: %v", i, b.id, a.id, err)
		}
		mustExec(t, ctx, a.c, "CREATE TABLE "+db+".w (id bigint NOT NULL AUTO_INCREMENT, host varchar(64) NOT NULL, port int NOT NULL, PRIMARY KEY (id))")
		for j, w := range conns {
			host := fmt.Sprintf("h%d-%d", i, j)
			mustExec(t, ctx, w.c, "INSERT INTO "+db+".w (host, port) VALUES (?, ?)", host, j)
			for _, r := range conns {
				var n int
				if err := r.c.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+db+".w WHERE host = ?", host).Scan(&n); err != nil {
					t.Fatalf("round %d: SELECT through %s after INSERT through %s: %v", i, r.id, w.id, err)
				}
				if n != 1 {
					t.Fatalf("round %d: SELECT through %s right after INSERT through %s saw %d rows of %s, want 1", i, r.id, w.id, n, host)
				}
			}
		}
	}
}

// sqlConn is a pinned connection and the node it goes to.
type sqlConn struct {
	c  *sql.Conn
	id string
}
