package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/ticket/model"
)

// testNode is a single in-process node with its Service, behind the
// backup routes.
type testNode struct {
	node *raftstore.Node
	svc  *alloc.Service
	srv  *httptest.Server
	dir  string
}

func startTestNode(t *testing.T) *testNode {
	t.Helper()
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	node, err := raftstore.Open(raftstore.Config{NodeID: "n1", RaftAddr: "127.0.0.1:0", DataDir: dir,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		LeaderLeaseTimeout: 100 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	svc := alloc.NewService(node, node, alloc.Config{Leadership: node}, log)
	srv := httptest.NewServer(backupRoutes(http.NotFoundHandler(), node, svc, dir, log))
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
		node.Close()
	})
	return &testNode{node: node, svc: svc, srv: srv, dir: dir}
}

func (n *testNode) exec(t *testing.T, c model.Command) model.Result {
	t.Helper()
	if c.Op == model.OpInsert {
		c.Increment, c.Offset, c.Replace = 1, 1, true
		c.Columns = []string{"stub"}
		c.Values = [][]model.Value{{{Kind: model.ValString, Str: "a"}}}
	}
	r, err := n.svc.Exec(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return r
}

func (n *testNode) setup(t *testing.T, allocations int) {
	t.Helper()
	n.exec(t, model.Command{Op: model.OpCreateDB, DB: "flickr"})
	n.exec(t, model.Command{Op: model.OpCreateTable, Def: &model.TableDef{DB: "flickr", Name: "Tickets64",
		IDCol: "id", IDType: model.IntType{Kind: model.BigInt, Unsigned: true}, AutoInc: true, IDKey: "PRIMARY",
		StubCol: "stub", StubType: "char(1)", StubLen: 1, StubKey: "stub"}})
	for range allocations {
		n.exec(t, model.Command{Op: model.OpInsert, DB: "flickr", Table: "Tickets64"})
	}
}

// state renders the databases and counters, to compare before and after.
func (n *testNode) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := n.svc.View(func(s ticket.Store) error {
		dbs, err := s.Databases()
		for _, db := range dbs {
			tables, _ := s.Tables(db)
			for _, name := range tables {
				tb, err := s.Table(db, name)
				if err != nil {
					return err
				}
				b.WriteString(db + "." + name + " ")
				b.WriteString(jsonString(t, tb))
			}
			b.WriteString(db + ";")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jsonString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (n *testNode) backup(t *testing.T) []byte {
	t.Helper()
	resp, err := http.Get(n.srv.URL + "/backup")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /backup: %s: %s", resp.Status, b)
	}
	return b
}

func (n *testNode) restore(t *testing.T, query string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(n.srv.URL+"/restore?"+query, "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRestoreRefusals: a damaged file, a missing advance, an overflowing
// advance, a non-empty target: each is refused with a message saying why,
// and the target's state is exactly what it was.
func TestRestoreRefusals(t *testing.T) {
	src := startTestNode(t)
	src.setup(t, 3)
	good := src.backup(t)

	dst := startTestNode(t)
	before := dst.state(t)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		return b
	}
	cases := []struct {
		name, query string
		body        []byte
		status      int
		says        string
	}{
		{"no advance", "", good, 400, "--advance"},
		{"corrupt byte", "advance=10", flip(len(good) / 2), 400, "SHA-256 mismatch"},
		{"truncated", "advance=10", good[:len(good)-100], 400, "truncated"},
		{"wrong magic", "advance=10", flip(0), 400, "not a ticketd backup"},
		{"overflow", "advance=18446744073709551615", good, 400, "maximum"},
		{"bad advance", "advance=-1", good, 400, "invalid syntax"},
	}
	for _, c := range cases {
		status, msg := dst.restore(t, c.query, c.body)
		if status != c.status || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %q, want %d and %q", c.name, status, msg, c.status, c.says)
		}
		if after := dst.state(t); after != before {
			t.Fatalf("%s: state changed:\n%s\n%s", c.name, before, after)
		}
	}

	// A good restore, then the same again: the cluster is no longer empty.
	status, msg := dst.restore(t, "advance=1000", good)
	if status != 200 {
		t.Fatalf("restore: %d %s", status, msg)
	}
	if r := dst.exec(t, model.Command{Op: model.OpInsert, DB: "flickr", Table: "Tickets64"}); r.InsertID != 1004 {
		t.Errorf("first id after restore %d, want 1004 (next id 4 + 1000)", r.InsertID)
	}
	before = dst.state(t)
	if status, msg := dst.restore(t, "advance=1000", good); status != http.StatusConflict || !strings.Contains(msg, "--force") {
		t.Errorf("restore over a non-empty cluster: %d %q", status, msg)
	}
	if after := dst.state(t); after != before {
		t.Fatalf("refused restore changed the state:\n%s\n%s", before, after)
	}
}

// TestRestoreDropsReservedRanges: a leader that serves ids from a reserved
// range must not go on serving that range after a forced restore moved
// the counter.
func TestRestoreDropsReservedRanges(t *testing.T) {
	n := startTestNode(t)
	n.setup(t, 1)
	n.exec(t, model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "Tickets64", HasCache: true, Cache: 1000})
	// Served from a range reserved up to about 1000.
	first := n.exec(t, model.Command{Op: model.OpInsert, DB: "flickr", Table: "Tickets64"}).InsertID
	backup := n.backup(t) // counter past the whole range
	if status, msg := n.restore(t, "advance=5000&force=1", backup); status != 200 {
		t.Fatalf("restore: %d %s", status, msg)
	}
	next := n.exec(t, model.Command{Op: model.OpInsert, DB: "flickr", Table: "Tickets64"}).InsertID
	if next < first+5000 {
		t.Errorf("after restore with advance 5000: id %d, first before %d (the old range was reused)", next, first)
	}
}

// TestBackupCommandWritesVerifiedFile runs the subcommand against the
// admin routes.
func TestBackupCommandWritesVerifiedFile(t *testing.T) {
	n := startTestNode(t)
	n.setup(t, 2)
	out := filepath.Join(t.TempDir(), "b.bak")
	var stdout bytes.Buffer
	addr := strings.TrimPrefix(n.srv.URL, "http://")
	if err := backupCmd(context.Background(), []string{"--from", addr, "--out", out}, os.Getenv, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "verified") {
		t.Errorf("output %q", stdout.String())
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
	b, err := verifyFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Dump.Tables) != 1 || b.Dump.Tables[0].AutoInc != 3 {
		t.Errorf("backup holds %+v", b.Dump.Tables)
	}
	err = restoreCmd(context.Background(), []string{"--in", out, "--to", addr}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--advance") {
		t.Errorf("restore without --advance: %v", err)
	}
}

// noQuorumSource refuses every backup as a node without a leader does.
type noQuorumSource struct{}

func (noQuorumSource) BeginBackup(ctx context.Context, allowStale bool) (*raftstore.BackupTx, error) {
	return nil, fmt.Errorf("raftstore: backup: %w: %w", ticket.ErrNoQuorum, raftstore.ErrNoLeader)
}

// TestBackupNoQuorumNamesStale: a backup refused for lack of a leader
// names the way out the manual documents for that case, --stale (it only
// said "no leader": issue 34).
func TestBackupNoQuorumNamesStale(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(backupRoutes(http.NotFoundHandler(), noQuorumSource{}, nil, t.TempDir(), log))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "b.bak")
	err := backupCmd(context.Background(), []string{"--from", strings.TrimPrefix(srv.URL, "http://"), "--out", out},
		os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "ticketd backup --stale") ||
		!strings.Contains(err.Error(), "?stale=1") {
		t.Errorf("backup without a quorum: %v, want a 503 naming --stale and ?stale=1", err)
	}
}
