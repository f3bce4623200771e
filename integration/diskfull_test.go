package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// TestDiskFullHeals runs a single node on a small tmpfs the test mounts,
// fills the filesystem while a client allocates, and frees it again. While
// it is full, writes must fail with an error that says so, the process
// must stay up (or, where it cannot go on, exit non-zero for systemd to
// restart it), and no id may be lost or repeated; once space is back,
// the node must serve again by itself. Mounting needs root: elsewhere it
// skips, unless TICKETD_REQUIRE_MOUNT=1.
func TestDiskFullHeals(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	for _, store := range []string{"wal", "bolt"} {
		t.Run(store, func(t *testing.T) { diskFull(t, store) })
	}
}

// mountSmallTmpfs mounts a 160 MiB tmpfs on a temporary directory for the
// test (unmounted at its end), a disk the test can fill; it skips where
// mounting is not allowed, unless TICKETD_REQUIRE_MOUNT=1.
func mountSmallTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("TICKETD_REQUIRE_MOUNT") == "1" {
			t.Fatalf("mount tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a small tmpfs (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// diskFullLoad is a lone node on a small tmpfs (mountSmallTmpfs) and a
// client allocating from it into a history, the setup of the disk-full
// tests.
type diskFullLoad struct {
	n   *harness.Node
	dir string // the tmpfs the node's data directory is on
	h   *history.History
	// halt stops the client and waits for it; it may be called again.
	halt func()
}

// startDiskFull mounts the tmpfs, starts a node on it with the Raft log
// store given, creates the database full with a row table, and starts a
// client that allocates every 2 ms (recorded in the history) and inserts
// a 900-byte row after each allocation, or only after each that
// succeeded with rowsOnlyAfterOK. The rows are not in the history: they
// make the log and the state file grow, so that a full disk fails their
// writes. It returns once the client has run for a second.
func startDiskFull(ctx context.Context, t *testing.T, store string, rowsOnlyAfterOK bool) *diskFullLoad {
	t.Helper()
	l := &diskFullLoad{dir: mountSmallTmpfs(t), h: history.New()}
	l.n = harness.Start(ctx, t, harness.Options{DataDir: filepath.Join(l.dir, "data"), Args: []string{"--raft-log", store}})
	n, h := l.n, l.h
	createDB(t, ctx, n, "full")
	setup := pinConn(t, ctx, openDB(t, n.DSN("full")))
	mustExec(t, ctx, setup, "CREATE TABLE notes (k varchar(64) NOT NULL, v varchar(1000) NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB")
	setup.Close()
	pad := strings.Repeat("x", 900)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		db, err := sql.Open("mysql", n.DSN("full", "readTimeout=15s"))
		if err != nil {
			h.Add(history.Op{Err: err})
			return
		}
		defer db.Close()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			p := h.Begin(n.ID(), 0)
			qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			r, err := db.ExecContext(qctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
			cancel()
			var id int64
			if err == nil {
				id, err = r.LastInsertId()
			}
			h.End(p, uint64(id), err)
			if err == nil || !rowsOnlyAfterOK {
				_, _ = db.ExecContext(ctx, "INSERT INTO notes (k, v) VALUES (?, ?)", fmt.Sprint(k), pad)
			}
		}
	})
	l.halt = sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(l.halt)
	time.Sleep(time.Second)
	return l
}

// servedAfter waits up to bound for an allocation called after from to
// succeed and returns when it returned (zero if none did).
func (l *diskFullLoad) servedAfter(from time.Time, bound time.Duration) time.Time {
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for o := range l.h.All() {
			if o.OK() && o.Call.After(from) {
				return o.Return
			}
		}
	}
	return time.Time{}
}

func diskFull(t *testing.T, store string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Rows, besides the ticket counter, make the state file grow at every
	// checkpoint: a full disk then fails the checkpoint for certain.
	l := startDiskFull(ctx, t, store, true)
	n, h, dir, halt := l.n, l.h, l.dir, l.halt

	// Fill the filesystem.
	filler := filepath.Join(dir, "filler")
	fillStart := time.Now()
	if err := fill(filler); err != nil {
		t.Fatal(err)
	}
	t.Logf("filesystem full at %s", fillStart.Format("15:04:05.000"))
	time.Sleep(4 * time.Second) // several checkpoint intervals
	if !n.Running() {
		t.Logf("node exited while the disk was full: %v", n.ExitError())
	}
	fullErrs := map[string]int{}
	for _, o := range h.Ops() {
		if !o.OK() && o.Return.After(fillStart) {
			fullErrs[o.Err.Error()]++
		}
	}
	t.Logf("errors while full: %v", fullErrs)
	for msg := range fullErrs {
		if !strings.Contains(msg, "Disk full") && !strings.Contains(msg, "no space left") {
			t.Errorf("a statement failed while the disk was full without saying so: %s", msg)
		}
	}

	must(t, os.Remove(filler))
	freed := time.Now()
	t.Logf("space freed at %s", freed.Format("15:04:05.000"))
	if !n.Running() {
		// Where ticketd cannot go on it exits non-zero, for systemd to
		// restart it (Restart=on-failure): do what systemd does.
		if err := n.ExitError(); err == nil {
			t.Fatal("node exited 0 while the disk was full: systemd would not restart it")
		}
		must(t, n.Start(ctx))
	}
	back := l.servedAfter(freed, 20*time.Second)
	time.Sleep(time.Second)
	halt()
	if back.IsZero() {
		t.Fatalf("no allocation succeeded within 20 s of freeing the space")
	}
	t.Logf("served again %v after the space was freed", back.Sub(freed).Round(time.Millisecond))
	ops := h.Ops()
	if vs := history.Check(ops); len(vs) > 0 {
		t.Errorf("history: %s", history.Report(vs, 20))
	}
	ok, failed := h.Counts()
	t.Logf("%d ids, %d failed statements", ok, failed)
	for _, o := range ops {
		if !o.OK() {
			t.Logf("failed: %s", h.Format(o))
		}
	}
	// A path this test is for was taken and healed: the state checkpoint
	// failed and was written again, or the Raft log's writes failed and
	// the store took writes again. Which one a run meets depends on the
	// store and the moment: raft-wal preallocates 64 MiB segments and
	// bbolt often has free pages, so the checkpoint usually fails first;
	// but when bbolt's raft.db fails first, nothing new is applied, and a
	// checkpoint, written only when the state changed, has nothing to
	// write until the space is back (seen in make test: the statements
	// got 1021, checked above, and no checkpoint failed).
	// The checkpoint is tried again every second, so its healing line
	// can come up to a second after the space is back, later on a loaded
	// machine: the log is read until it shows a healed path, for at most
	// 10 s (a fixed wait of the second the load ran on after the first
	// success read it 10 ms before the retry once, in make test).
	var logText string
	var checkpointPath, raftLogPath bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(n.LogPath())
		must(t, err)
		logText = string(b)
		failedOnce := strings.Contains(logText, "state checkpoint failed")
		checkpointPath = failedOnce && strings.Contains(logText, "state checkpoint written again")
		raftLogPath = strings.Contains(logText, "the Raft log store takes writes again")
		if checkpointPath || (raftLogPath && !failedOnce) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("healed: state checkpoint %v, Raft log store %v", checkpointPath, raftLogPath)
	if !checkpointPath && !raftLogPath {
		t.Errorf("node log shows neither a failed and rewritten checkpoint nor a Raft log store that takes writes again: the test did not fill the disk where it meant to")
	}
	if strings.Contains(logText, "state checkpoint failed") && !checkpointPath {
		t.Errorf("a state checkpoint failed and was never written again")
	}

}

// fill writes to path until the filesystem is full.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return fmt.Errorf("filling: %w", err)
		}
	}
}
