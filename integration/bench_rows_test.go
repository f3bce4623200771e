//go:build bench

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestBenchRows is make bench-rows (issue 22): one row table (Baidu
// UidGenerator's WORKER_NODE) filled through the MySQL protocol to
// TICKETD_BENCH_ROWS rows (default 1,000,000) on one ticketd node and on
// MariaDB InnoDB started by ../shared/bench/mariadb-ticketdb.sh (durable:
// flush at commit, binlog synced), in the same run. At 10k, 100k and the
// full size it measures single-row INSERT, point SELECT and UPDATE by
// primary key (latency at 1 connection, rate at 16) and SELECT 1 at 16
// connections; after the fill, RSS, the backup's size and time, restore
// into an empty node, and the time from start to ready after SIGTERM and
// after kill -9. TICKETD_BENCH_DURATION sets each measurement's length
// (default 3s). The fill uses INSERTs of 1,000 rows from 4 connections.
func TestBenchRows(t *testing.T) {
	total := benchCount(t, "TICKETD_BENCH_ROWS", 1000000, 1000, "want a number >= 1000")
	dur := benchDuration(t, "TICKETD_BENCH_DURATION", 3*time.Second)
	var sizes []int
	for _, s := range []int{10000, 100000, 1000000} {
		if s < total {
			sizes = append(sizes, s)
		}
	}
	sizes = append(sizes, total)
	benchDir := benchScriptDir(t)
	ctx := context.Background()

	var out strings.Builder
	fmt.Fprintf(&out, "\n### Row table at scale (make bench-rows: WORKER_NODE, %d rows, %v per measurement)\n\n", total, dur)
	out.WriteString("| target | rows | fill rows/s | INSERT 1 conn p50 / p99 | INSERT 16 conns /s | point SELECT 1 conn p50 | point SELECT 16 conns /s | SELECT 1 16 conns /s | UPDATE 1 conn p50 / p99 | UPDATE 16 conns /s |\n")
	out.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")

	node := harness.Start(ctx, t, harness.Options{})
	t.Cleanup(func() { _ = node.Stop() })
	targets := []rowsTarget{{name: "ticketd 1 node", addr: node.MySQLAddr(), pid: node.PID}}
	var maria string
	if _, err := exec.LookPath("mariadbd"); err == nil {
		maria = startBenchMariaDB(t, benchDir)
		targets = append(targets, rowsTarget{name: "MariaDB InnoDB", addr: maria, pid: func() int { return mariaPID(maria) }})
	} else {
		t.Log("mariadbd not found: ticketd alone")
	}
	for i := range targets {
		tg := &targets[i]
		tg.db = openBench(t, tg.addr, "", 64)
		for _, q := range []string{"CREATE DATABASE rowsbench", workerDDL("rowsbench.WORKER_NODE")} {
			if _, err := tg.db.Exec(q); err != nil {
				t.Fatalf("%s: %s: %v", tg.name, q, err)
			}
		}
	}
	for _, size := range sizes {
		for i := range targets {
			tg := &targets[i]
			start, from := time.Now(), tg.rows
			tg.fill(t, size)
			fillRate := float64(tg.rows-from) / time.Since(start).Seconds()
			ins1 := tg.run(t, 1, dur, func(db *sql.DB, r *rand.Rand) error {
				_, err := db.Exec(workerInsert(1, r.Int()))
				return err
			})
			ins16 := tg.run(t, 16, dur, func(db *sql.DB, r *rand.Rand) error {
				_, err := db.Exec(workerInsert(1, r.Int()))
				return err
			})
			n := size
			sel := func(db *sql.DB, r *rand.Rand) error {
				var id int64
				return db.QueryRow("SELECT ID FROM rowsbench.WORKER_NODE WHERE ID = ?", 1+r.IntN(n)).Scan(&id)
			}
			sel1, sel16 := tg.run(t, 1, dur, sel), tg.run(t, 16, dur, sel)
			one := tg.run(t, 16, dur, func(db *sql.DB, _ *rand.Rand) error {
				var v int
				return db.QueryRow("SELECT 1").Scan(&v)
			})
			upd := func(db *sql.DB, r *rand.Rand) error {
				_, err := db.Exec("UPDATE rowsbench.WORKER_NODE SET PORT = ? WHERE ID = ?", strconv.Itoa(r.Int()), 1+r.IntN(n))
				return err
			}
			upd1, upd16 := tg.run(t, 1, dur, upd), tg.run(t, 16, dur, upd)
			fmt.Fprintf(&out, "| %s | %d | %.0f | %s / %s | %.0f | %s | %.0f | %.0f | %s / %s | %.0f |\n",
				tg.name, size, fillRate, ms(ins1.p50), ms(ins1.p99), ins16.rate, ms(sel1.p50), sel16.rate, one.rate,
				ms(upd1.p50), ms(upd1.p99), upd16.rate)
			t.Logf("%s at %d rows: select by key %.0f/s vs SELECT 1 %.0f/s (%.2fx)", tg.name, size, sel16.rate, one.rate, sel16.rate/one.rate)
		}
	}

	// After the fill: memory, backup, restore, restarts.
	out.WriteString("\n| target | rows | RSS (Go heap in use) | backup size | backup time | restore into an empty node | restart to ready after SIGTERM | after kill -9 |\n|---|---|---|---|---|---|---|---|\n")
	rss := rssOf(node.PID())
	heap := heapInUse(node.HTTPAddr())
	rows := targets[0].rows
	file := filepath.Join(t.TempDir(), "rows.backup")
	start := time.Now()
	size, err := httpBackup(node.HTTPAddr(), file)
	backupTime := time.Since(start)
	if err != nil {
		t.Errorf("backup: %v", err)
	}
	restore := "-"
	empty := harness.Start(ctx, t, harness.Options{})
	start = time.Now()
	if msg, err := httpRestore(empty.HTTPAddr(), file); err != nil {
		restore = "refused: " + shortError(err)
		t.Logf("restore: %v %s", err, msg)
	} else {
		restore = time.Since(start).Round(time.Millisecond).String()
		var n int
		if err := openBench(t, empty.MySQLAddr(), "", 1).QueryRow("SELECT COUNT(*) FROM rowsbench.WORKER_NODE").Scan(&n); err == nil {
			restore += fmt.Sprintf(" (%d rows)", n)
		}
	}
	_ = empty.Stop()
	for _, db := range []*sql.DB{targets[0].db} {
		db.Close()
	}
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	term := timeToReady(ctx, t, node)
	if err := node.Kill(); err != nil {
		t.Fatal(err)
	}
	kill := timeToReady(ctx, t, node)
	fmt.Fprintf(&out, "| ticketd 1 node | %d | %s (%s) | %s | %s | %s | %s | %s |\n", rows, mib(rss), mib(heap), mib(size),
		backupTime.Round(time.Millisecond), restore, term.Round(time.Millisecond), kill.Round(time.Millisecond))
	// The same node with --state-fsync: it restarts from its last
	// checkpoint instead of rebuilding the state from the snapshot.
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	o := node.Options()
	o.Args, o.NoWait = append(o.Args, "--state-fsync"), true
	synced := harness.NewNode(t, o)
	_ = timeToReady(ctx, t, synced) // syncs state.db once (written without fsync in this boot), fsynced from now on
	time.Sleep(2 * time.Second)     // a checkpoint
	if err := synced.Stop(); err != nil {
		t.Fatal(err)
	}
	term = timeToReady(ctx, t, synced)
	if err := synced.Kill(); err != nil {
		t.Fatal(err)
	}
	kill = timeToReady(ctx, t, synced)
	_ = synced.Stop()
	fmt.Fprintf(&out, "| ticketd 1 node, --state-fsync | %d | | | | | %s | %s |\n", rows, term.Round(time.Millisecond), kill.Round(time.Millisecond))
	if maria != "" {
		tg := &targets[1]
		rss := rssOf(mariaPID(maria))
		dump := filepath.Join(t.TempDir(), "rows.sql")
		start := time.Now()
		size, err := mariaDump(maria, dump)
		dumpTime := time.Since(start)
		if err != nil {
			t.Errorf("mariadb-dump: %v", err)
		}
		start = time.Now()
		restore := "-"
		if err := mariaRestore(maria, dump); err != nil {
			t.Errorf("mariadb restore: %v", err)
		} else {
			restore = time.Since(start).Round(time.Millisecond).String()
		}
		kill := mariaKillRestart(t, benchDir, maria)
		fmt.Fprintf(&out, "| MariaDB InnoDB (mariadb-dump) | %d | %s | %s | %s | %s | - | %s |\n", tg.rows, mib(rss), mib(size),
			dumpTime.Round(time.Millisecond), restore, kill.Round(time.Millisecond))
	}
	t.Log(out.String())
	writeBenchOut(t, out.String())
}

// workerDDL is UidGenerator's WORKER_NODE (its published schema, less
// the comments).
func workerDDL(name string) string {
	return "CREATE TABLE " + name + ` (
  ID BIGINT NOT NULL AUTO_INCREMENT,
  HOST_NAME VARCHAR(64) NOT NULL,
  PORT VARCHAR(64) NOT NULL,
  TYPE INT NOT NULL,
  LAUNCH_DATE DATE NOT NULL,
  MODIFIED TIMESTAMP NOT NULL,
  CREATED TIMESTAMP NOT NULL,
  PRIMARY KEY(ID)) ENGINE=InnoDB`
}

// workerInsert is an INSERT of n rows, as UidGenerator writes one.
func workerInsert(n, seed int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO rowsbench.WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "('10.%d.%d.%d', '%d-%d', 1, '2026-11-24', NOW(), NOW())", seed%250, (seed+i)/250%250, (seed+i)%250, seed+i, 1732000000000+i)
	}
	return b.String()
}

type rowsTarget struct {
	name, addr string
	pid        func() int
	db         *sql.DB
	rows       int
}

// fill inserts rows until the table holds size.
func (tg *rowsTarget) fill(t *testing.T, size int) {
	const batch, conns = 1000, 4
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed error
	next := tg.rows
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				n := min(batch, size-next)
				seed := next
				next += n
				mu.Unlock()
				if n <= 0 {
					return
				}
				if _, err := tg.db.Exec(workerInsert(n, seed)); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("%s: fill: %v", tg.name, failed)
	}
	// Ids 1..size exist (AUTO_INCREMENT from 1, multi-row INSERTs take
	// consecutive ids); the measurements' INSERTs add more above them.
	tg.rows = size
}

type runStats struct {
	rate     float64
	p50, p99 time.Duration
}

// run calls op from conns goroutines for d and measures it.
func (tg *rowsTarget) run(t *testing.T, conns int, d time.Duration, op func(*sql.DB, *rand.Rand) error) runStats {
	return spreadRun(t, tg.name, []*sql.DB{tg.db}, conns, d, func(db *sql.DB, _ int, r *rand.Rand) error { return op(db, r) })
}

func openBench(t *testing.T, addr, db string, conns int) *sql.DB {
	// One round trip per statement, as with SELECT 1: without
	// interpolateParams the driver prepares, executes and closes.
	d, err := sql.Open("mysql", harness.DSN(addr, db, "interpolateParams=true"))
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxOpenConns(conns)
	d.SetMaxIdleConns(conns)
	t.Cleanup(func() { d.Close() })
	return d
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// rssOf is a process's resident set size, from /proc/PID/status.
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mariaPID(addr string) int {
	_, port, _ := strings.Cut(addr, ":")
	b, _ := os.ReadFile("/tmp/mariadb-ticketdb-" + port + "/pid")
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// heapInUse is go_memstats_heap_inuse_bytes from a node's /metrics.
func heapInUse(admin string) int64 {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f)
		}
	}
	return 0
}

// httpBackup saves a node's backup (GET /backup) to file.
func httpBackup(admin, file string) (int64, error) {
	resp, err := http.Get("http://" + admin + "/backup")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("%s: %s", resp.Status, b)
	}
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(f, resp.Body)
}

// httpRestore posts a backup to an empty node (POST /restore).
func httpRestore(admin, file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	resp, err := http.Post("http://"+admin+"/restore?advance=1", "application/octet-stream", f)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// timeToReady starts a stopped node and measures until /readyz says
// ready.
func timeToReady(ctx context.Context, t *testing.T, n *harness.Node) time.Duration {
	start := time.Now()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

func mariaDump(addr, file string) (int64, error) {
	host, port, _ := strings.Cut(addr, ":")
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := exec.Command("mariadb-dump", "-h"+host, "-P"+port, "-uroot", "--single-transaction", "rowsbench")
	cmd.Stdout = f
	if out, err := cmd.StderrPipe(); err == nil {
		go io.Copy(io.Discard, out)
	}
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func mariaRestore(addr, file string) error {
	host, port, _ := strings.Cut(addr, ":")
	if out, err := exec.Command("mariadb", "-h"+host, "-P"+port, "-uroot", "-e", "CREATE DATABASE rowsrestore").CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("mariadb", "-h"+host, "-P"+port, "-uroot", "rowsrestore")
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// mariaKillRestart kills mariadbd with SIGKILL and measures until it
// answers again (InnoDB crash recovery included).
func mariaKillRestart(t *testing.T, benchDir, addr string) time.Duration {
	_, port, _ := strings.Cut(addr, ":")
	pid := mariaPID(addr)
	if pid == 0 {
		return 0
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		_ = p.Kill()
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
	start := time.Now()
	if out, err := exec.Command(filepath.Join(benchDir, "mariadb-ticketdb.sh"), "start", port).CombinedOutput(); err != nil {
		t.Errorf("mariadb restart: %v %s", err, out)
	}
	return time.Since(start)
}
