//go:build bench

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestBenchRowWrites is the second half of make bench-rows (issue 22's
// write target): point SELECT by primary key (as a new text per key, and
// through a prepared statement) beside SELECT 1, then single-row INSERT,
// UPDATE by primary key and DELETE by primary key at
// TICKETD_BENCH_CONNS connections (default 64) on a
// WORKER_NODE table of TICKETD_BENCH_WRITE_ROWS rows (default 100,000),
// on one ticketd node, on three (the connections spread over the nodes,
// so two thirds of the writes are forwarded by a follower) and on
// MariaDB InnoDB with durable settings, in the same run. Each DELETE
// removes a row that exists (every connection walks its own share of
// the ids the table holds), so none of them is a no-op.
func TestBenchRowWrites(t *testing.T) {
	size := benchCount(t, "TICKETD_BENCH_WRITE_ROWS", 100000, 1000, "want a number >= 1000")
	conns := benchCount(t, "TICKETD_BENCH_CONNS", 64, 1, "want one number")
	dur := benchDuration(t, "TICKETD_BENCH_DURATION", 3*time.Second)
	benchDir := benchScriptDir(t)
	ctx := context.Background()

	type target struct {
		name  string
		addrs []string
	}
	var targets []target
	if _, err := exec.LookPath("mariadbd"); err == nil {
		targets = append(targets, target{"MariaDB InnoDB", []string{startBenchMariaDB(t, benchDir)}})
	} else {
		t.Log("mariadbd not found: ticketd alone")
	}
	one := harness.Start(ctx, t, harness.Options{})
	t.Cleanup(func() { _ = one.Stop() })
	targets = append(targets, target{"ticketd 1 node", []string{one.MySQLAddr()}})
	cluster := harness.StartCluster(ctx, t, 3)
	t.Cleanup(func() { _ = cluster.Stop() })
	targets = append(targets, target{"ticketd 3 nodes, spread", cluster.MySQLAddrs()})

	var out strings.Builder
	fmt.Fprintf(&out, "\n### Row-table writes by key (make bench-rows: WORKER_NODE of %d rows, %d connections, %v per measurement)\n\n", size, conns, dur)
	out.WriteString("| target | INSERT /s | p50 / p99 | UPDATE by key /s | p50 / p99 | DELETE by key /s | p50 / p99 | × InnoDB (INSERT, UPDATE, DELETE) |\n|---|---|---|---|---|---|---|---|\n")
	var base [3]float64
	var reads []string
	for _, tg := range targets {
		var dbs []*sql.DB
		for _, a := range tg.addrs {
			dbs = append(dbs, openBench(t, a, "", conns))
		}
		for _, q := range []string{"CREATE DATABASE rowsbench", workerDDL("rowsbench.WORKER_NODE")} {
			if _, err := dbs[0].Exec(q); err != nil {
				t.Fatalf("%s: %s: %v", tg.name, q, err)
			}
		}
		fill := rowsTarget{name: tg.name, db: dbs[0]}
		fill.fill(t, size)
		// Followers answer once they have applied the fill.
		if len(dbs) > 1 {
			leader, err := cluster.Leader(ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := cluster.WaitApplied(ctx, leader, 30*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		// Reads first, on the full table: a point SELECT as an
		// interpolating driver sends it (a new text per key), the same
		// through a server-side prepared statement (one COM_STMT_EXECUTE
		// per key: no parse), and SELECT 1, the node's ceiling.
		var prepared []*sql.DB
		var stmts sync.Map // *sql.DB -> *sql.Stmt
		for _, a := range tg.addrs {
			db, err := sql.Open("mysql", harness.DSN(a, ""))
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(conns)
			db.SetMaxIdleConns(conns)
			st, err := db.Prepare("SELECT ID, HOST_NAME, PORT FROM rowsbench.WORKER_NODE WHERE ID = ?")
			if err != nil {
				t.Fatalf("%s: prepare: %v", tg.name, err)
			}
			stmts.Store(db, st)
			prepared = append(prepared, db)
		}
		text := spreadRun(t, tg.name, dbs, conns, dur, func(db *sql.DB, _ int, r *rand.Rand) error {
			var id int64
			var host, port string
			return db.QueryRow(fmt.Sprintf("SELECT ID, HOST_NAME, PORT FROM rowsbench.WORKER_NODE WHERE ID = %d", 1+r.IntN(size))).Scan(&id, &host, &port)
		})
		prep := spreadRun(t, tg.name, prepared, conns, dur, func(db *sql.DB, _ int, r *rand.Rand) error {
			var id int64
			var host, port string
			st, _ := stmts.Load(db)
			return st.(*sql.Stmt).QueryRow(1+r.IntN(size)).Scan(&id, &host, &port)
		})
		one := spreadRun(t, tg.name, dbs, conns, dur, func(db *sql.DB, _ int, _ *rand.Rand) error {
			var v int
			return db.QueryRow("SELECT 1").Scan(&v)
		})
		for _, db := range prepared {
			db.Close()
		}
		reads = append(reads, fmt.Sprintf("| %s | %.0f (%.2f×) | %.0f (%.2f×) | %.0f |", tg.name,
			text.rate, text.rate/one.rate, prep.rate, prep.rate/one.rate, one.rate))

		ins := spreadRun(t, tg.name, dbs, conns, dur, func(db *sql.DB, _ int, r *rand.Rand) error {
			_, err := db.Exec(workerInsert(1, r.Int()))
			return err
		})
		upd := spreadRun(t, tg.name, dbs, conns, dur, func(db *sql.DB, _ int, r *rand.Rand) error {
			_, err := db.Exec("UPDATE rowsbench.WORKER_NODE SET PORT = ? WHERE ID = ?", strconv.Itoa(r.Int()), 1+r.IntN(size))
			return err
		})
		// Every DELETE removes a row that exists: connection g walks
		// ids[g], ids[g+conns], ... of the ids the table holds now (the
		// fill's and the INSERT phase's), so no two connections meet.
		// The fill alone ran out on a quiet machine (one node deleted
		// 100,000 rows in 3 s).
		ids := tableIDs(t, tg.name, dbs[0])
		var next sync.Map
		del := spreadRun(t, tg.name, dbs, conns, dur, func(db *sql.DB, g int, _ *rand.Rand) error {
			i := g
			if v, ok := next.Load(g); ok {
				i = v.(int)
			}
			if i >= len(ids) {
				return fmt.Errorf("connection %d ran out of rows to delete after %d of %d: raise TICKETD_BENCH_WRITE_ROWS", g, i/conns, len(ids))
			}
			next.Store(g, i+conns)
			res, err := db.Exec("DELETE FROM rowsbench.WORKER_NODE WHERE ID = ?", ids[i])
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return fmt.Errorf("DELETE of id %d affected %d rows, want 1", ids[i], n)
			}
			return nil
		})
		stats := [3]runStats{ins, upd, del}
		ratio := ""
		if tg.name == "MariaDB InnoDB" {
			for i := range stats {
				base[i] = stats[i].rate
			}
		} else if base[0] > 0 {
			ratio = fmt.Sprintf("%.2f, %.2f, %.2f", ins.rate/base[0], upd.rate/base[1], del.rate/base[2])
		}
		fmt.Fprintf(&out, "| %s | %.0f | %s / %s | %.0f | %s / %s | %.0f | %s / %s | %s |\n", tg.name,
			ins.rate, ms(ins.p50), ms(ins.p99), upd.rate, ms(upd.p50), ms(upd.p99), del.rate, ms(del.p50), ms(del.p99), ratio)
		for _, db := range dbs {
			db.Close()
		}
	}
	fmt.Fprintf(&out, "\n| target | point SELECT by key, text /s (÷ SELECT 1) | prepared /s (÷ SELECT 1) | SELECT 1 /s |\n|---|---|---|---|\n%s\n", strings.Join(reads, "\n"))
	fmt.Println(out.String())
	writeBenchOut(t, out.String())
}

// tableIDs is every ID of rowsbench.WORKER_NODE as db reads it (a view
// that missed the latest INSERTs only lists fewer rows to delete).
func tableIDs(t *testing.T, name string, db *sql.DB) []int64 {
	t.Helper()
	rows, err := db.Query("SELECT ID FROM rowsbench.WORKER_NODE")
	if err != nil {
		t.Fatalf("%s: ids: %v", name, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("%s: ids: %v", name, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: ids: %v", name, err)
	}
	return ids
}

// spreadRun calls op from conns goroutines for d, goroutine g on
// dbs[g%len(dbs)], and measures it.
func spreadRun(t *testing.T, name string, dbs []*sql.DB, conns int, d time.Duration, op func(db *sql.DB, g int, r *rand.Rand) error) runStats {
	var mu sync.Mutex
	var lat []time.Duration
	var failed error
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for g := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			db := dbs[g%len(dbs)]
			var mine []time.Duration
			for time.Now().Before(stop) {
				s := time.Now()
				if err := op(db, g, r); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("%s: %v", name, failed)
	}
	if len(lat) == 0 {
		return runStats{}
	}
	slices.Sort(lat)
	return runStats{rate: float64(len(lat)) / d.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}
}
