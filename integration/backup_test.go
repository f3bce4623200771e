package integration

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/raftstore"
)

// ticketdCmd runs a ticketd subcommand and returns its combined output.
func ticketdCmd(t *testing.T, ctx context.Context, args ...string) (string, error) {
	t.Helper()
	out, err := exec.CommandContext(ctx, harness.Binary(t), args...).CombinedOutput()
	return string(out), err
}

// allocLoad runs clients on every node of c, each a pinned connection
// doing REPLACE then SELECT LAST_INSERT_ID(), until stop is closed.
func allocLoad(t *testing.T, ctx context.Context, c *harness.Cluster, db string, perNode int, h *history.History, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	client := 0
	for _, n := range c.Nodes {
		for range perNode {
			client++
			conn := pinConn(t, ctx, openDB(t, n.DSN(db)))
			wg.Add(1)
			go func(node string, client int) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					p := h.Begin(node, client)
					id, err := allocate(ctx, conn)
					h.End(p, id, err)
					if err != nil {
						time.Sleep(10 * time.Millisecond)
					}
				}
			}(n.ID(), client)
		}
	}
	return &wg
}

func allocate(ctx context.Context, conn *sql.Conn) (uint64, error) {
	r, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if err != nil {
		return 0, err
	}
	var id uint64
	if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&id); err != nil {
		return 0, err
	}
	if ins, _ := r.LastInsertId(); uint64(ins) != id {
		return 0, fmt.Errorf("OK packet insert id %d, LAST_INSERT_ID() %d", ins, id)
	}
	return id, nil
}

// maxReturnedBefore is the largest id returned by an operation that
// completed before t.
func maxReturnedBefore(h *history.History, t time.Time) uint64 {
	var m uint64
	for _, o := range h.Ops() {
		if o.OK() && o.Return.Before(t) && o.ID > m {
			m = o.ID
		}
	}
	return m
}

func databases(t *testing.T, ctx context.Context, n *harness.Node) string {
	t.Helper()
	rows, err := openDB(t, n.DSN("")).QueryContext(ctx, "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		names = append(names, s)
	}
	return strings.Join(names, ",")
}

// TestBackupRestoreCluster takes a backup of a three-node cluster (with
// range reservation on) under concurrent load, through a follower, keeps
// allocating after it, and restores it into a fresh three-node cluster:
// refused without --advance and for a truncated file (the target
// unchanged), then done with --advance through a follower. Every id the
// restored cluster hands out, also after a full restart from snapshots
// and log, is above every id the source ever returned.
func TestBackupRestoreCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	src := harness.StartCluster(ctx, t, 3, harness.Options{Args: []string{"--cache", "50"}})
	leader, err := src.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	createDB(t, ctx, leader, "flickr")
	if err := src.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var follower *harness.Node
	for _, n := range src.Nodes {
		if n != leader {
			follower = n
		}
	}

	h := history.New()
	stop := make(chan struct{})
	wg := allocLoad(t, ctx, src, "flickr", 2, h, stop)
	time.Sleep(time.Second)
	file := filepath.Join(t.TempDir(), "flickr.bak")
	called := time.Now()
	out, err := ticketdCmd(t, ctx, "backup", "--from", follower.HTTPAddr(), "--out", file)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("backup: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(out))
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	okOps, failed := h.Counts()
	if vs := h.Check(); len(vs) > 0 {
		t.Fatal(history.Report(vs, 10))
	}
	srcMax := h.MaxID()
	t.Logf("source: %d allocations (%d failed), largest id %d", okOps, failed, srcMax)

	// The backup holds every allocation acknowledged before it was asked
	// for, although it was read from a follower.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := raftstore.ReadBackup(f, t.TempDir())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Dump.Tables) != 1 {
		t.Fatalf("backup tables %+v", b.Dump.Tables)
	}
	backupNext := b.Dump.Tables[0].AutoInc
	if before := maxReturnedBefore(h, called); backupNext <= before {
		t.Errorf("backup's next id %d, but id %d was returned before the backup was asked for", backupNext, before)
	}
	if srcMax < backupNext {
		t.Errorf("no allocation after the backup (largest id %d, backup next id %d): the test proves nothing", srcMax, backupNext)
	}
	const advance = 1000000
	if srcMax >= backupNext+advance {
		t.Fatalf("the source allocated more than --advance after the backup (%d >= %d + %d)", srcMax, backupNext, advance)
	}

	dst := harness.StartCluster(ctx, t, 3, harness.Options{Args: []string{"--cache", "50",
		"--snapshot-threshold", "16", "--snapshot-interval", "200ms", "--trailing-logs", "8"}})
	dstLeader, err := dst.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var dstFollower *harness.Node
	for _, n := range dst.Nodes {
		if n != dstLeader {
			dstFollower = n
		}
	}
	empty := databases(t, ctx, dstLeader)

	out, err = ticketdCmd(t, ctx, "restore", "--in", file, "--to", dstFollower.HTTPAddr())
	if err == nil || !strings.Contains(out, "--advance") {
		t.Errorf("restore without --advance: %v\n%s", err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.bak")
	if err := os.WriteFile(truncated, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = ticketdCmd(t, ctx, "restore", "--in", truncated, "--to", dstFollower.HTTPAddr(), "--advance", "1000000")
	if err == nil || !strings.Contains(out, "truncated") {
		t.Errorf("restore of a truncated file: %v\n%s", err, out)
	}
	// The server refuses it too, when a client skips the local check.
	resp, err := httpPost(ctx, "http://"+dstFollower.HTTPAddr()+"/restore?advance=1000000", data[:len(data)-1])
	if err != nil || !strings.Contains(resp, "truncated") {
		t.Errorf("POST /restore of a truncated file: %v %s", err, resp)
	}
	if got := databases(t, ctx, dstLeader); got != empty {
		t.Fatalf("refused restores changed the target: databases %s, were %s", got, empty)
	}

	out, err = ticketdCmd(t, ctx, "restore", "--in", file, "--to", dstFollower.HTTPAddr(), "--advance", fmt.Sprint(advance))
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(out))
	if err := dst.WaitApplied(ctx, dstLeader, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	check := func(what string, above uint64) uint64 {
		t.Helper()
		h2 := history.New()
		stop := make(chan struct{})
		wg := allocLoad(t, ctx, dst, "flickr", 1, h2, stop)
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()
		ok, failed := h2.Counts()
		if ok == 0 {
			t.Fatalf("%s: no allocation succeeded (%d failed)", what, failed)
		}
		for _, o := range h2.Ops() {
			if o.OK() && o.ID <= above {
				t.Fatalf("%s: id %d from %s, not above %d, returned before", what, o.ID, o.Node, above)
			}
		}
		if vs := h2.Check(); len(vs) > 0 {
			t.Fatalf("%s: %s", what, history.Report(vs, 10))
		}
		t.Logf("%s: %d allocations, all above %d, largest %d", what, ok, above, h2.MaxID())
		return h2.MaxID()
	}
	afterRestore := check("after restore", srcMax)
	if afterRestore < backupNext+advance {
		t.Errorf("largest id after restore %d, below the restored counter %d", afterRestore, backupNext+advance)
	}

	out, err = ticketdCmd(t, ctx, "restore", "--in", file, "--to", dstLeader.HTTPAddr(), "--advance", fmt.Sprint(advance))
	if err == nil || !strings.Contains(out, "--force") {
		t.Errorf("second restore into a non-empty cluster: %v\n%s", err, out)
	}

	// A full restart starts from the state files and the log: the
	// restore must be in them.
	if err := dst.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, n := range dst.Nodes {
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := dst.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	check("after full restart", afterRestore)
}

// httpPost posts body and returns the answer's status line and body.
func httpPost(ctx context.Context, url string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status + ": " + string(b), nil
}

// TestBackupSize1M measures a backup after a million allocations on one
// node (multi-row REPLACE, 10,000 rows a statement, over 26 stubs). It
// takes a while, so it runs only with TICKETD_BACKUP_1M=1.
func TestBackupSize1M(t *testing.T) {
	if os.Getenv("TICKETD_BACKUP_1M") != "1" {
		t.Skip("set TICKETD_BACKUP_1M=1 to measure a backup after 1M allocations")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n := harness.Start(ctx, t, harness.Options{})
	createDB(t, ctx, n, "flickr")
	conn := pinConn(t, ctx, openDB(t, n.DSN("flickr")))
	var q strings.Builder
	q.WriteString("REPLACE INTO Tickets64 (stub) VALUES ")
	for i := range 10000 {
		if i > 0 {
			q.WriteByte(',')
		}
		fmt.Fprintf(&q, "('%c')", 'a'+i%26)
	}
	start := time.Now()
	for range 100 {
		mustExec(t, ctx, conn, q.String())
	}
	t.Logf("1M allocations in %v", time.Since(start).Round(time.Millisecond))
	file := filepath.Join(t.TempDir(), "1m.bak")
	start = time.Now()
	out, err := ticketdCmd(t, ctx, "backup", "--from", n.HTTPAddr(), "--out", file)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	took := time.Since(start)
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup after 1M allocations: %d bytes, %v (subcommand, verify included)\n%s", st.Size(), took.Round(time.Millisecond), out)

	dst := harness.Start(ctx, t, harness.Options{})
	start = time.Now()
	out, err = ticketdCmd(t, ctx, "restore", "--in", file, "--to", dst.HTTPAddr(), "--advance", "1000000")
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("restore: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	id, err := allocate(ctx, pinConn(t, ctx, openDB(t, dst.DSN("flickr"))))
	if err != nil || id != 2000001 {
		t.Errorf("first id after restore: %d %v, want 2000001", id, err)
	}
}
