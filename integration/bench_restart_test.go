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
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestBenchRestart is make bench-restart (issue 22): the time from start
// to ready of one node holding a WORKER_NODE table of TICKETD_BENCH_ROWS
// rows (default 1,000,000), after SIGTERM and after kill -9, each after
// TICKETD_BENCH_BURST (default 3s) of single-row INSERTs from 16
// connections (what a restart replays). With TICKETD_BENCH_BEFORE set to
// another ticketd binary, both binaries restart the same data directory
// in turn, TICKETD_BENCH_ROUNDS times (default 2): before and after in
// one run. Every restart must hold every acknowledged row. With
// TICKETD_BENCH_PROFILE set to a directory, a CPU profile of each restart
// (its first 10 s) and the node's log are written there.
func TestBenchRestart(t *testing.T) {
	total := 1000000
	if v := os.Getenv("TICKETD_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("TICKETD_BENCH_ROWS=%q: want a number >= 1000", v)
		}
		total = n
	}
	burst := 3 * time.Second
	if v := os.Getenv("TICKETD_BENCH_BURST"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TICKETD_BENCH_BURST: %v", err)
		}
		burst = d
	}
	rounds := 2
	if v := os.Getenv("TICKETD_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TICKETD_BENCH_ROUNDS=%q", v)
		}
		rounds = n
	}
	ctx := context.Background()
	node := harness.Start(ctx, t, harness.Options{ReadyTimeout: 5 * time.Minute})
	t.Cleanup(func() { _ = node.Stop() })
	binaries := []struct{ name, path string }{{"this build", node.Options().Binary}}
	if b := os.Getenv("TICKETD_BENCH_BEFORE"); b != "" {
		binaries = append([]struct{ name, path string }{{"before (" + b + ")", b}}, binaries...)
	}

	tg := rowsTarget{name: "ticketd", addr: node.MySQLAddr(), db: openBench(t, node.MySQLAddr(), "", 64)}
	for _, q := range []string{"CREATE DATABASE rowsbench", workerDDL("rowsbench.WORKER_NODE")} {
		if _, err := tg.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	start := time.Now()
	tg.fill(t, total)
	t.Logf("filled %d rows in %v", total, time.Since(start).Round(time.Millisecond))
	acked := int64(total)
	// burst writes single-row INSERTs for d and counts the acknowledged.
	burstWrites := func(db *sql.DB, d time.Duration) {
		var n atomic.Int64
		tg := rowsTarget{name: "ticketd", db: db}
		tg.run(t, 16, d, func(db *sql.DB, r *rand.Rand) error {
			_, err := db.Exec(workerInsert(1, r.Int()))
			if err == nil {
				n.Add(1)
			}
			return err
		})
		acked += n.Load()
	}
	burstWrites(tg.db, burst)
	tg.db.Close()

	check := func(name string) {
		db := openBench(t, node.MySQLAddr(), "", 16)
		defer db.Close()
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM rowsbench.WORKER_NODE").Scan(&n); err != nil {
			t.Fatalf("%s: count: %v", name, err)
		}
		if n != acked {
			t.Fatalf("%s: %d rows after the restart, %d acknowledged", name, n, acked)
		}
	}
	profDir := os.Getenv("TICKETD_BENCH_PROFILE")
	restart := func(name string) time.Duration {
		start := time.Now()
		if err := node.Start(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		if profDir != "" {
			go func() {
				defer close(done)
				for time.Since(start) < 5*time.Second {
					resp, err := http.Get("http://" + node.HTTPAddr() + "/debug/pprof/profile?seconds=10")
					if err != nil {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					name := strings.NewReplacer(" ", "-", "/", "-", "(", "", ")", "").Replace(name)
					_ = os.WriteFile(filepath.Join(profDir, name+".pprof"), b, 0o644)
					return
				}
			}()
		} else {
			close(done)
		}
		if err := node.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		<-done
		return d
	}
	if profDir != "" {
		t.Cleanup(func() {
			b, _ := os.ReadFile(node.LogPath())
			_ = os.WriteFile(filepath.Join(profDir, "node.log"), b, 0o644)
		})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n### Restart to ready (make bench-restart: WORKER_NODE, %d rows, %v of single-row INSERTs before each stop)\n\n", total, burst)
	out.WriteString("| binary | round | after SIGTERM | after kill -9 |\n|---|---|---|---|\n")
	for round := 1; round <= rounds; round++ {
		for _, b := range binaries {
			if err := node.Stop(); err != nil {
				t.Fatal(err)
			}
			node.SetBinary(b.path)
			term := restart(fmt.Sprintf("%s-%d-term", b.name, round))
			check(b.name + " after SIGTERM")
			db := openBench(t, node.MySQLAddr(), "", 16)
			burstWrites(db, burst)
			db.Close()
			if err := node.Kill(); err != nil {
				t.Fatal(err)
			}
			kill := restart(fmt.Sprintf("%s-%d-kill", b.name, round))
			check(b.name + " after kill -9")
			db = openBench(t, node.MySQLAddr(), "", 16)
			burstWrites(db, burst)
			db.Close()
			fmt.Fprintf(&out, "| %s | %d | %s | %s |\n", b.name, round, term.Round(time.Millisecond), kill.Round(time.Millisecond))
			t.Logf("%s round %d: SIGTERM %v, kill -9 %v", b.name, round, term.Round(time.Millisecond), kill.Round(time.Millisecond))
		}
	}
	t.Log(out.String())
	writeBenchOut(t, out.String())
}
