package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// importSource is one MariaDB playing one of Flickr's two ticket servers.
type importSource struct {
	m      *harness.MariaDB
	issued map[string]uint64 // table -> largest id it handed out
}

// runImport runs `ticketd import args...` and returns its stdout, stderr
// and error (an *exec.ExitError on a non-zero exit).
func runImport(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, harness.Binary(t), append([]string{"import"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TICKETD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// setupImportSource configures m as the ticket server with the given
// offset of an odd/even pair, creates Tickets64 (MyISAM, Flickr's DDL),
// Tickets32 (InnoDB, INT UNSIGNED) and two near misses, and allocates n64
// and n32 ids through REPLACE.
func setupImportSource(t *testing.T, ctx context.Context, m *harness.MariaDB, offset, n64, n32 int) *importSource {
	t.Helper()
	admin := pinConn(t, ctx, openDB(t, m.DSN("")))
	mustExec(t, ctx, admin, "SET GLOBAL auto_increment_increment = 2")
	mustExec(t, ctx, admin, fmt.Sprintf("SET GLOBAL auto_increment_offset = %d", offset))
	mustExec(t, ctx, admin, "CREATE DATABASE flickr")
	mustExec(t, ctx, admin, "USE flickr")
	mustExec(t, ctx, admin, harness.FlickrDDL("Tickets64"))
	mustExec(t, ctx, admin, "CREATE TABLE Tickets32 (id int(10) unsigned NOT NULL AUTO_INCREMENT, "+
		"stub char(1) NOT NULL DEFAULT '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=InnoDB")
	mustExec(t, ctx, admin, "CREATE TABLE Orders (id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY, "+
		"stub char(1) NOT NULL, created datetime)")
	mustExec(t, ctx, admin, "CREATE TABLE NoStubKey (id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY, stub char(1) NOT NULL)")

	// The global settings apply to sessions opened after the SET.
	c := pinConn(t, ctx, openDB(t, m.DSN("flickr")))
	s := &importSource{m: m, issued: map[string]uint64{}}
	for table, n := range map[string]int{"Tickets64": n64, "Tickets32": n32} {
		for range n {
			r := mustExec(t, ctx, c, "REPLACE INTO "+table+" (stub) VALUES ('a')")
			_, id := result(t, r)
			if id%2 != int64(offset%2) {
				t.Fatalf("source with offset %d handed out id %d from %s: the odd/even setup did not take", offset, id, table)
			}
			s.issued[table] = max(s.issued[table], uint64(id))
		}
	}
	return s
}

// TestImport migrates an odd/even pair of MariaDB ticket servers into a
// fresh ticketd and checks that ticketd's next ids are above every id
// either server handed out.
func TestImport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	odd := setupImportSource(t, ctx, harness.StartMariaDB(t), 1, 7, 20)
	even := setupImportSource(t, ctx, harness.StartMariaDB(t), 2, 12, 3)
	// The odd server is cut over properly; the even one is left writable
	// and must be warned about.
	mustExec(t, ctx, pinConn(t, ctx, openDB(t, odd.m.DSN(""))), "SET GLOBAL read_only = ON")

	// The start each table needs, from what the servers say independently
	// of the importer: nothing at or below AUTO_INCREMENT - 1, nor at or
	// below any id returned.
	want := map[string]uint64{}
	for _, s := range []*importSource{odd, even} {
		c := pinConn(t, ctx, openDB(t, s.m.DSN("")))
		for _, table := range []string{"Tickets64", "Tickets32"} {
			ai := queryUint(t, ctx, c, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME = ?", table)
			want[table] = max(want[table], ai, s.issued[table]+1)
		}
	}
	t.Logf("issued: odd %v, even %v; wanted starts %v", odd.issued, even.issued, want)

	node := harness.Start(ctx, t, harness.Options{})
	tdb := openDB(t, node.DSN(""))
	from := []string{"--from", odd.m.DSN(""), "--from", even.m.DSN(""), "--to", node.DSN("")}
	noFlickr := func(when string) {
		t.Helper()
		// ticketd's SELECT has no COUNT(): count the rows here.
		rows, err := tdb.QueryContext(ctx, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			rows.Scan(&name)
			t.Errorf("%s: ticketd has flickr.%s; nothing should have changed", when, name)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}

	// Dry run: the plan, and no change.
	out, stderr, err := runImport(t, ctx, from...)
	t.Logf("dry-run plan:\n%s", out)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, stderr)
	}
	for _, table := range []string{"Tickets64", "Tickets32"} {
		re := regexp.MustCompile(`(?s)table flickr\.` + table + `:.*?start: ticketd's next id (\d+) `)
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("plan does not give flickr.%s's start", table)
		}
		if got, _ := strconv.ParseUint(m[1], 10, 64); got != want[table] {
			t.Errorf("plan starts flickr.%s at %d, want %d", table, got, want[table])
		}
		if !strings.Contains(out, "ALTER TABLE `flickr`.`"+table+"` AUTO_INCREMENT = "+strconv.FormatUint(want[table], 10)) {
			t.Errorf("plan lacks the ALTER for %s", table)
		}
	}
	for _, s := range []string{
		"`id` int(10) unsigned AUTO_INCREMENT (max 4294967295)",
		"`id` bigint(20) unsigned AUTO_INCREMENT (max 18446744073709551615)",
		"flickr.Orders: 3 columns (id, stub, created)",
		"flickr.NoStubKey: no unique key on stub column stub",
		"WARNING: s2",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("plan lacks %q", s)
		}
	}
	if strings.Contains(out, "WARNING: s1") {
		t.Errorf("plan warns about the read-only source s1")
	}
	if !strings.Contains(stderr, "not read-only") {
		t.Errorf("stderr does not warn about the writable source:\n%s", stderr)
	}
	noFlickr("after the dry run")

	// An unreachable source: a clear error, no change.
	dead := harness.DSN(harness.FreeAddr(t), "")
	out, stderr, err = runImport(t, ctx, append(from, "--from", dead, "--apply")...)
	if err == nil {
		t.Fatalf("import with an unreachable source succeeded:\n%s", out)
	}
	if !strings.Contains(stderr, "source 3") || !strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "nothing was changed") {
		t.Errorf("unclear error for an unreachable source:\n%s", stderr)
	}
	noFlickr("after the failed import")

	// Apply.
	out, stderr, err = runImport(t, ctx, append(from, "--apply")...)
	if err != nil {
		t.Fatalf("apply: %v\n%s\n%s", err, out, stderr)
	}
	c := pinConn(t, ctx, tdb)
	next := map[string]uint64{}
	for _, table := range []string{"Tickets64", "Tickets32"} {
		_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO flickr."+table+" (stub) VALUES ('a')"))
		if uint64(id) <= odd.issued[table] || uint64(id) <= even.issued[table] {
			t.Errorf("ticketd's first %s id %d is not above the sources' %d and %d", table, id, odd.issued[table], even.issued[table])
		}
		if uint64(id) != want[table] {
			t.Errorf("ticketd's first %s id %d, want the planned %d", table, id, want[table])
		}
		next[table] = uint64(id)
	}
	var name, create string
	if err := c.QueryRowContext(ctx, "SHOW CREATE TABLE flickr.Tickets32").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, "`id` int(10) unsigned NOT NULL AUTO_INCREMENT") {
		t.Errorf("Tickets32's id type was not kept:\n%s", create)
	}

	// Again: the tables exist, their counters are ahead of the plan's
	// start and must stay there.
	out, stderr, err = runImport(t, ctx, append(from, "--apply")...)
	if err != nil {
		t.Fatalf("second apply: %v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, "exists in ticketd with next id") {
		t.Errorf("second plan does not report the existing tables:\n%s", out)
	}
	// A client that keeps its odd/even session settings still gets ids
	// above everything.
	mustExec(t, ctx, c, "SET SESSION auto_increment_increment = 2")
	mustExec(t, ctx, c, "SET SESSION auto_increment_offset = 2")
	for _, table := range []string{"Tickets64", "Tickets32"} {
		_, id := result(t, mustExec(t, ctx, c, "REPLACE INTO flickr."+table+" (stub) VALUES ('a')"))
		if uint64(id) <= next[table] || id%2 != 0 {
			t.Errorf("after a rerun, %s handed out %d (before: %d, want an even id above it)", table, id, next[table])
		}
	}
}
