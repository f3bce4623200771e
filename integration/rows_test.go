package integration

import (
	"context"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestRowTableOwnWrites checks what makes Leaf-segment safe on ticketd
// (wire/rows.go): inside a transaction a session reads the rows its own
// UPDATE left, even after another session's UPDATE of the same row has
// landed; once the transaction ends it reads the table as stored. Without
// that, two Leaf servers would both read the second UPDATE's max_id and
// hand out the same segment. It runs with the text protocol and with
// server-side prepared statements.
func TestRowTableOwnWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := harness.Start(ctx, t, harness.Options{})
	setup := pinConn(t, ctx, openDB(t, harness.DSN(node.MySQLAddr(), "")))
	mustExec(t, ctx, setup, "CREATE DATABASE leaf")
	mustExec(t, ctx, setup, "CREATE TABLE leaf.leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', step int(11) NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) ENGINE=InnoDB")
	mustExec(t, ctx, setup, "INSERT INTO leaf.leaf_alloc (biz_tag, max_id, step) VALUES ('t', 1, 1000)")

	for _, params := range []string{"interpolateParams=true", "interpolateParams=false"} {
		t.Run(params, func(t *testing.T) {
			a := pinConn(t, ctx, openDB(t, harness.DSN(node.MySQLAddr(), "leaf", params)))
			b := pinConn(t, ctx, openDB(t, harness.DSN(node.MySQLAddr(), "leaf", params)))
			start := queryUint(t, ctx, b, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", "t")
			mustExec(t, ctx, a, "SET autocommit=0")
			mustExec(t, ctx, a, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", "t")
			// Another Leaf server takes the next segment in between.
			mustExec(t, ctx, b, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", "t")
			if got, want := queryUint(t, ctx, a, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", "t"), start+1000; got != want {
				t.Fatalf("in its transaction, session a read max_id %d, want its own write %d (b's segment would be handed out twice)", got, want)
			}
			mustExec(t, ctx, a, "COMMIT")
			if got, want := queryUint(t, ctx, a, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", "t"), start+2000; got != want {
				t.Fatalf("after COMMIT, session a read max_id %d, want the stored %d", got, want)
			}
			mustExec(t, ctx, a, "SET autocommit=1")
			// BEGIN ... ROLLBACK: the write stays (warning 1196), and the
			// session reads the stored table again.
			mustExec(t, ctx, a, "BEGIN")
			mustExec(t, ctx, a, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", "t")
			mustExec(t, ctx, b, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", "t")
			if got, want := queryUint(t, ctx, a, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", "t"), start+3000; got != want {
				t.Fatalf("after BEGIN, session a read max_id %d, want its own write %d", got, want)
			}
			mustExec(t, ctx, a, "ROLLBACK")
			var level, msg string
			var code int
			if err := a.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1196 {
				t.Fatalf("ROLLBACK after a write: warning %d %q (%v), want 1196", code, msg, err)
			}
			if got, want := queryUint(t, ctx, a, "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", "t"), start+4000; got != want {
				t.Fatalf("after ROLLBACK, session a read max_id %d, want the stored %d", got, want)
			}
		})
	}
}
