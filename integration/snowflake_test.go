package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/ticket/snowflake"
)

// fillParams writes args into q's '?' placeholders as SQL literals.
func fillParams(q string, args ...any) string {
	var b strings.Builder
	for _, a := range args {
		i := strings.IndexByte(q, '?')
		b.WriteString(q[:i])
		switch v := a.(type) {
		case string:
			b.WriteString("'" + v + "'")
		default:
			fmt.Fprint(&b, v)
		}
		q = q[i+1:]
	}
	b.WriteString(q)
	return b.String()
}

// snowflakeScript is the worker-id protocol (ticket/snowflake's
// statements, a lease of 10 s and a guard of 2 s) with the server's
// clock pinned by SET timestamp, so that MariaDB and ticketd must give
// the same answer to every statement: claims in order of the lease end,
// no claim of a live lease or of one inside the guard, renewals guarded
// by the epoch, a release that resets the lease end, a reclaim of the
// instance's own slot, the previous holder's marks for the floor.
func snowflakeScript() []step {
	st := snowflake.Statements("slots", 10*time.Second, 2*time.Second)
	const t0 = 1764000000 // 2025-11-24 16:00:00 UTC
	at := func(s int) step { return step{sql: fmt.Sprintf("SET timestamp = %d", t0+s)} }
	slot := func(n int) step {
		return step{sql: fmt.Sprintf("SELECT slot, holder, epoch, lease_until, last_ms, prev_until, prev_ms, renewals FROM slots WHERE service = 'svc' AND slot = %d", n)}
	}
	// claim runs both claims, as the client does when the first finds
	// nothing of the instance's.
	claim := func(who string) []step {
		return []step{{sql: fillParams(st["reclaim"], "svc", who)}, {sql: fillParams(st["claim"], who, "svc")}, {sql: "SELECT LAST_INSERT_ID()"}}
	}
	s := []step{
		{sql: "CREATE DATABASE sf"}, {sql: "USE sf"}, at(0),
		{sql: st["create"]},
		{sql: st["slots"] + "('svc', 0), ('svc', 1), ('svc', 2), ('svc', 3)"},
		{sql: st["slots"] + "('other', 0)"},
		{sql: "SELECT COUNT(*) FROM slots"},
	}
	// Four instances take the four slots; a fifth finds none.
	for _, who := range []string{"h1", "h2", "h3", "h4", "h5"} {
		s = append(s, claim(who)...)
	}
	s = append(s, slot(0), slot(3),
		// Renewals: by the holder with its epoch; by anyone else, nothing.
		at(3), step{sql: fillParams(st["renew"], 1764000003000, 1, "h1", 1)},
		step{sql: fillParams(st["renew"], 1764000003000, 2, "h1", 1)},
		step{sql: fillParams(st["renew"], 1764000003000, 2, "h2", 7)},
		slot(0),
		// 11 s: h2..h4's leases ended a second ago, inside the guard.
		at(11))
	s = append(s, claim("h5")...)
	s = append(s, at(13), // h1 still holds (renewed at 3), h2..h4 expired > 2 s ago
		step{sql: fillParams(st["release"], 1764000012345, 1, "h1", 1)}, slot(0))
	// h5 takes the released slot first (its lease end is the oldest), then
	// h6 the one that expired longest ago, lowest slot first.
	s = append(s, claim("h5")...)
	s = append(s, slot(0),
		// The session's LAST_INSERT_ID() in a row-table WHERE (1235 before).
		step{sql: "SELECT slot, holder, epoch FROM slots WHERE id = LAST_INSERT_ID()"},
		step{sql: "UPDATE slots SET renewals = renewals + 1 WHERE id = LAST_INSERT_ID() AND holder = 'h5'"},
		step{sql: "SELECT slot, renewals FROM slots WHERE id = LAST_INSERT_ID() OR slot = 3 ORDER BY slot"},
		step{sql: "DELETE FROM slots WHERE id = LAST_INSERT_ID() AND holder = 'nobody'"})
	s = append(s, claim("h6")...)
	s = append(s, slot(1),
		// h2 renews after h6 took its slot: nothing.
		step{sql: fillParams(st["renew"], 1764000013000, 2, "h2", 1)},
		// h3 comes back after its lease expired: its own slot, new epoch.
	)
	s = append(s, step{sql: fillParams(st["reclaim"], "svc", "h3")}, step{sql: "SELECT LAST_INSERT_ID()"})
	s = append(s, slot(2), slot(3), step{sql: "SELECT slot, holder FROM slots WHERE service = 'other'"})
	return s
}

// TestSnowflakeProtocol runs snowflakeScript on MariaDB 10.11 and on
// ticketd and requires the same answers.
func TestSnowflakeProtocol(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := snowflakeScript()
	maria := harness.StartMariaDB(t)
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
	for i := range got {
		if !got[i].equal(want[i]) {
			t.Errorf("statement %d differs: %s\n  mariadb: %s\n  ticketd: %s", i+1, script[i].sql, want[i], got[i])
		} else if testing.Verbose() {
			t.Logf("%d %s\n    -> %s", i+1, script[i].sql, got[i])
		}
	}
}

// TestSnowflakeClient drives the reference client (ticket/snowflake)
// against ticketd and MariaDB: Setup, four generators on four slots, a
// fifth refused, a clean Close whose slot goes to the next instance with
// the exact last timestamp as its floor, a reclaim of an instance's own
// slot after a crash (its floor is the old lease's end plus MaxDrift), and
// every id unique and above its floor.
func TestSnowflakeClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	node := harness.Start(ctx, t, harness.Options{})
	for _, target := range []struct{ name, addr string }{{"mariadb", maria.Addr}, {"ticketd", node.MySQLAddr()}} {
		t.Run(target.name, func(t *testing.T) {
			root := openDB(t, harness.DSN(target.addr, ""))
			if _, err := root.ExecContext(ctx, "CREATE DATABASE sfc"); err != nil {
				t.Fatal(err)
			}
			db := openDB(t, harness.DSN(target.addr, "sfc"))
			const bits = 2
			if err := snowflake.Setup(ctx, db, "", "svc", bits); err != nil {
				t.Fatal(err)
			}
			if err := snowflake.Setup(ctx, db, "", "svc", bits); err != nil {
				t.Fatalf("Setup again: %v", err)
			}
			cfg := func(who string) snowflake.Config {
				return snowflake.Config{Service: "svc", Instance: who, WorkerBits: bits, Lease: 3 * time.Second, Guard: time.Second, MaxWait: 10 * time.Second}
			}
			seen := map[int64]string{}
			gen := func(g *snowflake.Generator, who string, n int) {
				t.Helper()
				c := g.Claim()
				for range n {
					id, err := g.NextID(ctx)
					if err != nil {
						t.Fatalf("%s: %v", who, err)
					}
					ms, slot, _ := snowflake.Decode(id, bits, 12, snowflake.TwitterEpoch)
					if prev, dup := seen[id]; dup {
						t.Fatalf("id %d from %s and %s", id, prev, who)
					}
					if slot != c.Slot || ms <= c.Floor {
						t.Fatalf("%s: id %d in slot %d at %d ms; claim %+v", who, id, slot, ms, c)
					}
					seen[id] = who
				}
			}
			gens := map[string]*snowflake.Generator{}
			slots := map[int]string{}
			for _, who := range []string{"a", "b", "c", "d"} {
				g, err := snowflake.Start(ctx, db, cfg(who))
				if err != nil {
					t.Fatalf("%s: %v", who, err)
				}
				if other, taken := slots[g.Claim().Slot]; taken {
					t.Fatalf("%s and %s both got slot %d", other, who, g.Claim().Slot)
				}
				slots[g.Claim().Slot] = who
				gens[who] = g
				gen(g, who, 1000)
			}
			if _, err := snowflake.Start(ctx, db, cfg("e")); !errors.Is(err, snowflake.ErrNoSlot) {
				t.Fatalf("fifth instance: %v, want ErrNoSlot", err)
			}
			// a releases: e gets a's slot, its floor a's last timestamp.
			aSlot := gens["a"].Claim().Slot
			var aLast int64
			for id, who := range seen {
				if ms, _, _ := snowflake.Decode(id, bits, 12, snowflake.TwitterEpoch); who == "a" && ms > aLast {
					aLast = ms
				}
			}
			must(t, gens["a"].Close(ctx))
			e, err := snowflake.Start(ctx, db, cfg("e"))
			if err != nil {
				t.Fatal(err)
			}
			if c := e.Claim(); c.Slot != aSlot || c.Floor != aLast || c.Reclaimed {
				t.Fatalf("e after a's release: %+v, want slot %d floor %d", c, aSlot, aLast)
			}
			gen(e, "e", 1000)
			// b "crashes" (no release; its renewals stop) and comes back at
			// once: its own slot, floor at its lease end plus MaxDrift.
			bSlot := gens["b"].Claim().Slot
			crashed := gens["b"]
			crashedAt := time.Now()
			b2, err := snowflake.Start(ctx, db, cfg("b"))
			if err != nil {
				t.Fatal(err)
			}
			c := b2.Claim()
			if c.Slot != bSlot || !c.Reclaimed || c.Floor < crashedAt.UnixMilli()+1000 {
				t.Fatalf("b back: %+v (slot was %d, crashed at %d)", c, bSlot, crashedAt.UnixMilli())
			}
			if time.Now().UnixMilli() <= c.Floor {
				t.Fatalf("Start returned before its floor")
			}
			gen(b2, "b2", 1000)
			// The old b's lease ended before b2's floor: it issues nothing.
			if id, err := crashed.NextID(ctx); !errors.Is(err, snowflake.ErrSlotLost) && !errors.Is(err, snowflake.ErrLeaseExpired) {
				t.Fatalf("the old b issued %d (%v) after its slot was reclaimed", id, err)
			}
			for _, g := range []*snowflake.Generator{gens["c"], gens["d"], e, b2, crashed} {
				must(t, g.Close(ctx))
			}
			t.Logf("%s: %d ids, slots %v", target.name, len(seen), slots)
		})
	}
}

// TestConnectorJSnowflake runs integration/compat/Snowflake.java (the
// worker-id protocol through MariaDB Connector/J, client- and server-side
// prepared statements) against MariaDB 10.11 and ticketd: the same output,
// line for line (it prints only what does not depend on the clock).
func TestConnectorJSnowflake(t *testing.T) {
	java, src := connectorJProgram(t, "Snowflake.java")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	want := runConnectorJ(ctx, t, java, src, maria.Addr, "sfj")
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	got := runConnectorJ(ctx, t, java, src, node.MySQLAddr(), "sfj")
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 1; i < max(len(wl), len(gl)); i++ { // line 0 is the version
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("line %d differs:\n  mariadb: %s\n  ticketd: %s", i+1, w, g)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(got), "ok") {
		t.Errorf("ticketd's run did not finish:\n%s", got)
	}
	t.Logf("ticketd:\n%s", got)
}

// TestLastInsertIDInRowWhere: the session's LAST_INSERT_ID() in a
// row-table WHERE, through the text protocol and server-side prepared
// statements, is the value at the statement's start; beside
// LAST_INSERT_ID(expr) in one statement it is refused (1235) rather than
// read per row as MariaDB does.
func TestLastInsertIDInRowWhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := harness.Start(ctx, t, harness.Options{})
	setup := pinConn(t, ctx, openDB(t, harness.DSN(node.MySQLAddr(), "")))
	mustExec(t, ctx, setup, "CREATE DATABASE lii")
	mustExec(t, ctx, setup, "CREATE TABLE lii.t (id int NOT NULL AUTO_INCREMENT, v int NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB")
	mustExec(t, ctx, setup, "INSERT INTO lii.t (v) VALUES (10), (20), (30)")
	for _, params := range []string{"interpolateParams=true", "interpolateParams=false"} {
		c := pinConn(t, ctx, openDB(t, harness.DSN(node.MySQLAddr(), "lii", params)))
		mustExec(t, ctx, c, "UPDATE t SET v = v + 1, id = LAST_INSERT_ID(id) WHERE id = ?", 2)
		if got := queryUint(t, ctx, c, "SELECT v FROM t WHERE id = LAST_INSERT_ID() AND v > ?", 0); got != 21 {
			t.Fatalf("%s: SELECT by LAST_INSERT_ID(): v %d, want 21", params, got)
		}
		if res := mustExec(t, ctx, c, "UPDATE t SET v = v - 1 WHERE id = LAST_INSERT_ID()"); rows(t, res) != 1 {
			t.Fatalf("%s: UPDATE by LAST_INSERT_ID() changed %d rows", params, rows(t, res))
		}
		_, err := c.ExecContext(ctx, "UPDATE t SET id = LAST_INSERT_ID(id) WHERE id = LAST_INSERT_ID()")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 {
			t.Fatalf("%s: both forms in one statement: %v, want 1235", params, err)
		}
	}
}

func rows(t *testing.T, r sql.Result) int64 {
	t.Helper()
	n, err := r.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
