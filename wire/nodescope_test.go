package wire

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// reserveCounter is memRepl counting the block reservations (OpReserve)
// and the REPLACEs that go through replication.
type reserveCounter struct {
	memRepl
	reserves, inserts, seqNexts atomic.Int64
}

func (r *reserveCounter) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	for i := range cmds {
		switch cmds[i].Op {
		case model.OpReserve:
			r.reserves.Add(1)
		case model.OpInsert:
			r.inserts.Add(1)
		case model.OpSeqNext:
			r.seqNexts.Add(1)
		}
	}
	return r.memRepl.Propose(ctx, cmds)
}

// startReserveCounter serves a memory store through a reserveCounter and
// returns it with a root connection, for the node-scope tests, which
// count what the server replicates.
func startReserveCounter(t *testing.T) (*reserveCounter, *sql.DB) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	repl := &reserveCounter{memRepl: memRepl{st: ticket.NewMemStore()}}
	addr, _ := serveRepl(t, Config{}, ln, repl)
	return repl, open(t, "root@tcp("+addr+")/")
}

// TestNodeScopeTableOption: the table comment 'ticketd:cache=N,scope=node'
// shows in SHOW CREATE TABLE and information_schema, makes REPLACE take
// its ids from the node's blocks (one reservation per N ids, LAST_INSERT_ID
// per session), and ALTER TABLE ... COMMENT switches it off.
func TestNodeScopeTableOption(t *testing.T) {
	repl, db := startReserveCounter(t)
	mustExec(t, db, "CREATE DATABASE flickr")
	mustExec(t, db, "USE flickr")
	mustExec(t, db, strings.TrimSuffix(flickrDDL, " ENGINE=MyISAM")+" ENGINE=MyISAM COMMENT='ticketd:cache=10,scope=node'")
	var name, create, comment string
	if err := db.QueryRow("SHOW CREATE TABLE Tickets64").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(create, " COMMENT='ticketd:cache=10,scope=node'") {
		t.Fatalf("SHOW CREATE TABLE: %s", create)
	}
	if err := db.QueryRow("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME = 'Tickets64'").Scan(&comment); err != nil {
		t.Fatal(err)
	}
	if comment != "ticketd:cache=10,scope=node" {
		t.Fatalf("information_schema TABLE_COMMENT %q", comment)
	}
	var last int64
	for i := range 35 {
		r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
		id, _ := r.LastInsertId()
		var lii int64
		if err := db.QueryRow("SELECT LAST_INSERT_ID()").Scan(&lii); err != nil || lii != id {
			t.Fatalf("LAST_INSERT_ID() %d (%v), OK packet %d", lii, err, id)
		}
		if n, _ := r.RowsAffected(); i > 0 && n != 2 {
			t.Fatalf("REPLACE of an existing stub: affected %d", n)
		}
		if id <= last {
			t.Fatalf("id %d after %d", id, last)
		}
		last = id
	}
	// The first REPLACE created the row through replication; the other
	// 34 came from blocks of 10 (4, and maybe the next, taken ahead).
	if ins, res := repl.inserts.Load(), repl.reserves.Load(); ins != 1 || res < 4 || res > 5 {
		t.Fatalf("%d REPLACEs and %d reservations replicated for 35 REPLACEs, want 1 and 4-5", ins, res)
	}
	mustExec(t, db, "ALTER TABLE Tickets64 COMMENT 'ticketd:cache=10'")
	if err := db.QueryRow("SHOW CREATE TABLE Tickets64").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(create, " COMMENT='ticketd:cache=10'") {
		t.Fatalf("SHOW CREATE TABLE after ALTER: %s", create)
	}
	// Global scope without a Leadership (this test server's Service has
	// none): every REPLACE through replication, above the old block.
	r := mustExec(t, db, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	id, _ := r.LastInsertId()
	if id <= last || repl.inserts.Load() != 2 {
		t.Fatalf("after ALTER to global: id %d (last %d), %d REPLACEs replicated", id, last, repl.inserts.Load())
	}
}

// TestNodeScopeSequenceOption: CREATE SEQUENCE ... CACHE n COMMENT
// 'ticketd:scope=node' is kept and shown by SHOW CREATE SEQUENCE, and
// NEXTVAL takes its values from the node's ranges (one replicated
// NEXTVAL per CACHE values).
func TestNodeScopeSequenceOption(t *testing.T) {
	repl, db := startReserveCounter(t)
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "USE d")
	mustExec(t, db, "CREATE SEQUENCE s START WITH 1 INCREMENT BY 1 CACHE 10 ENGINE=InnoDB COMMENT='ticketd:scope=node'")
	var name, create string
	if err := db.QueryRow("SHOW CREATE SEQUENCE s").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	want := "CREATE SEQUENCE `s` start with 1 minvalue 1 maxvalue 9223372036854775806 increment by 1 cache 10 nocycle ENGINE=InnoDB COMMENT='ticketd:scope=node'"
	if create != want {
		t.Fatalf("SHOW CREATE SEQUENCE:\n%s\nwant\n%s", create, want)
	}
	for want := int64(1); want <= 25; want++ {
		var v int64
		if err := db.QueryRow("SELECT NEXTVAL(s)").Scan(&v); err != nil || v != want {
			t.Fatalf("NEXTVAL %d (%v), want %d", v, err, want)
		}
	}
	if n := repl.seqNexts.Load(); n != 3 {
		t.Fatalf("%d NEXTVAL commands replicated for 25 values in ranges of 10, want 3", n)
	}
	// ALTER TABLE ... COMMENT switches it back: the leader's cache (none
	// here, without a Leadership), every NEXTVAL replicated.
	mustExec(t, db, "ALTER TABLE s COMMENT ''")
	if err := db.QueryRow("SHOW CREATE SEQUENCE s").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(create, "COMMENT") {
		t.Fatalf("SHOW CREATE SEQUENCE after ALTER TABLE s COMMENT '': %s", create)
	}
	var v int64
	if err := db.QueryRow("SELECT NEXTVAL(s)").Scan(&v); err != nil || v <= 25 {
		t.Fatalf("NEXTVAL %d (%v) after the switch", v, err)
	}
	if n := repl.seqNexts.Load(); n != 4 {
		t.Fatalf("%d NEXTVAL commands replicated, want 4", n)
	}
}
