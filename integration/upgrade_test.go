package integration

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
	"github.com/ticketd/ticketd/raftstore"
)

// upgradeSource is an older ticketd a rolling upgrade starts from: a
// commit of this repository's history and the command version its build
// announces (1: a build from before versions, which announces none).
type upgradeSource struct {
	commit  string
	version int
}

// upgradeSources are the builds TestRollingUpgrade upgrades from, one
// subtest each: the direct upgrades issue 33 keeps (DESIGN §4g). 544f168
// is from before command versions (it counts as version 1) but has
// sequences and row tables, whose row parts it writes as JSON and whose
// UPDATE and DELETE it writes in their version-2 form, and state files of
// format 1; fd4302c is command version 9. (The first source was 3e891bc,
// also from before versions, without row tables: 544f168 writes all it
// wrote and more.)
var upgradeSources = []upgradeSource{
	{commit: "544f168", version: 1},
	{commit: "fd4302c", version: 9},
}

// oldBinary returns the ticketd of commit, built from this repository's
// history (git worktree add into a temporary directory) by buildOld. The
// binary is kept under the system's temporary directory, named by the
// commit, so that later runs skip the build. It is the one step of make
// test's integration run that keeps both cores busy for a while, so
// (issue 34, where it held up the package 87 s of its 327 s): TestMain
// starts the builds in the background, one after the other, when
// TestRollingUpgrade is to run, so that they compile while the tests
// before it mostly wait on processes; and they are built without
// -trimpath, which gave every package a build of its own: with the build
// cache make test's vet and builds leave, the packages the commits share
// with this one are reused (cold cache, then make test's builds, on the
// shared 2-core machine: 63 s wall and 83 s CPU with -trimpath, 34 s and
// 29 s without, for 3e891bc). The two sources cost what 3e891bc alone
// did: with a cold build cache that then built this checkout's ticketd
// (118 s CPU), 3e891bc took 32 s CPU; 544f168 25 s and fd4302c 6 s more
// (it shares most packages with both), nice -n 10 on the shared machine
// at load 10-18 (/usr/bin/time over go build, GOFLAGS=-buildvcs=false).
// The test itself: 25-30 s for both subtests, against 17-24 s for
// 3e891bc's, same machine, same hour.
func oldBinary(t *testing.T, commit string) string {
	t.Helper()
	start := time.Now()
	b := buildOld(commit)
	if b.skip != "" {
		t.Skip(b.skip)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	t.Logf("older ticketd (%s) from %s (%s; waited %v for it here)", commit, b.path, b.how, time.Since(start).Round(time.Second))
	return b.path
}

// oldBuild is buildOld's result.
type oldBuild struct {
	path string
	how  string // "cached" or how long the build took
	skip string // why the test cannot run here
	err  error
}

// oldBuilds holds one build per commit, each made once per process.
var oldBuilds = func() map[string]func() oldBuild {
	m := map[string]func() oldBuild{}
	for _, s := range upgradeSources {
		m[s.commit] = sync.OnceValue(func() oldBuild { return buildCommit(s.commit) })
	}
	return m
}()

// buildOld builds (once per process) or finds the ticketd of commit, one
// of upgradeSources.
func buildOld(commit string) oldBuild {
	b, ok := oldBuilds[commit]
	if !ok {
		return oldBuild{err: fmt.Errorf("%s is not one of upgradeSources", commit)}
	}
	return b()
}

// buildCommit builds the ticketd of commit, or finds it built.
func buildCommit(commit string) oldBuild {
	root, err := harness.ModuleRoot()
	if err != nil {
		return oldBuild{err: err}
	}
	full, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", commit+"^{commit}").Output()
	if err != nil {
		return oldBuild{skip: fmt.Sprintf("no git history with commit %s here (%v): the rolling upgrade needs it to build the older ticketd", commit, err)}
	}
	cached := filepath.Join(os.TempDir(), "ticketd-upgrade-"+commit, "ticketd")
	if st, err := os.Stat(cached); err == nil && st.Mode().IsRegular() && st.Mode()&0o100 != 0 {
		return oldBuild{path: cached, how: "cached"}
	}
	tmp, err := os.MkdirTemp("", "ticketd-upgrade-build-")
	if err != nil {
		return oldBuild{err: err}
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	run := func(dir string, env []string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		// Ended with this process (a run cut short by a failure).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return nil
	}
	if err := run(root, nil, "git", "worktree", "add", "--detach", src, strings.TrimSpace(string(full))); err != nil {
		return oldBuild{err: err}
	}
	defer exec.Command("git", "-C", root, "worktree", "remove", "--force", src).Run()
	start := time.Now()
	bin := filepath.Join(tmp, "ticketd")
	if err := run(src, []string{"GOFLAGS=-buildvcs=false"}, "go", "build", "-o", bin, "./cmd/ticketd"); err != nil {
		return oldBuild{err: err}
	}
	how := "built in " + time.Since(start).Round(time.Second).String()
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return oldBuild{err: err}
	}
	// Renamed into place whole: a concurrent run sees all of it or none.
	if err := os.Rename(bin, cached); err != nil {
		return oldBuild{err: err}
	}
	return oldBuild{path: cached, how: how}
}

// statusVersions reads a node's /status: the cluster's command version
// and each member's announced one ("1?" for a member that announced
// none, a build from before versions). An older build has none of them.
func statusVersions(ctx context.Context, n *harness.Node) (cluster float64, members map[string]string, err error) {
	st, err := n.Status(ctx)
	if err != nil {
		return 0, nil, err
	}
	cluster, _ = st.Raw["cluster_command_version"].(float64)
	members = map[string]string{}
	ms, _ := st.Raw["members"].([]any)
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		v := fmt.Sprint(mm["command_version"])
		if ok, _ := mm["command_version_announced"].(bool); !ok {
			v += "?"
		}
		members[fmt.Sprint(mm["id"])] = v
	}
	return cluster, members, nil
}

// upgradeLoad allocates from flickr.Tickets64 on every node of a cluster
// until stopped, recording each call in a history.
type upgradeLoad struct {
	h      *history.History
	stop   chan struct{}
	wg     sync.WaitGroup
	errs   sync.Map // error text and the build that answered -> *atomic.Int64
	failed atomic.Int64
	// cutShort counts the current build's answers that are Go's bare
	// "context canceled" (wire's myErr once let a cancelled statement's
	// error through as its text): none may be.
	cutShort atomic.Int64
}

// answeredBy names the build a statement's answer came from: the node's
// binary when it was called and when it returned ("" is the current
// build). A node's binary changes only while it is down, so an answer is
// the older build's if both are that build, the current one's if both
// are, and either across a restart.
func answeredBy(before, after string) string {
	switch {
	case before != after:
		return "across an upgrade restart"
	case before == "":
		return "current build"
	default:
		return "older build"
	}
}

func startUpgradeLoad(t *testing.T, nodes []*harness.Node, perNode int) *upgradeLoad {
	l := &upgradeLoad{h: history.New(), stop: make(chan struct{})}
	for i, n := range nodes {
		for c := range perNode {
			db, err := sql.Open("mysql", n.DSN("flickr", "readTimeout=10s", "writeTimeout=10s"))
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			t.Cleanup(func() { db.Close() })
			client := i*perNode + c
			l.wg.Go(func() {
				for {
					select {
					case <-l.stop:
						return
					default:
					}
					bin := n.Binary()
					p := l.h.Begin(n.ID(), client)
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					var id int64
					res, err := db.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
					if err == nil {
						id, err = res.LastInsertId()
					}
					cancel()
					l.h.End(p, uint64(id), err)
					if err != nil {
						l.failed.Add(1)
						k := err.Error()
						var me *mysql.MySQLError
						if errors.As(err, &me) {
							k = fmt.Sprintf("%d %s", me.Number, me.Message)
						}
						by := answeredBy(bin, n.Binary())
						if by == "current build" && me != nil && me.Message == context.Canceled.Error() {
							l.cutShort.Add(1)
						}
						k += " (" + by + ")"
						v, _ := l.errs.LoadOrStore(k, new(atomic.Int64))
						v.(*atomic.Int64).Add(1)
						time.Sleep(20 * time.Millisecond)
					}
				}
			})
		}
	}
	return l
}

// TestRollingUpgrade upgrades a loaded three-node cluster, one node at a
// time (SIGTERM, start the current build on the same data directory),
// from the ticketd of each of upgradeSources to this checkout's. Before
// the upgrade the older build writes a row table (Leaf's leaf_alloc) and
// an UPDATE of it, which it goes on updating through its leader while
// the others are upgraded: the current build reads them as that build
// wrote them (for 544f168: JSON, the version-2 UPDATE form, a state file
// of format 1), and after the upgrade every node holds the same rows.
// While any member runs an older build the members show its version in
// /status; for a build from before versions (which cannot decode a
// sequence command) CREATE SEQUENCE is refused with 1235 naming the
// members behind, and nothing of it reaches the log. Once the last member
// runs the current build the cluster's command version rises on every
// node and CREATE SEQUENCE succeeds. No id is handed out twice or out of
// order; the longest cluster-wide gap of each step and the failed
// statements are printed. Starting the older build again on an upgraded
// node is refused.
func TestRollingUpgrade(t *testing.T) {
	for _, src := range upgradeSources {
		t.Run(src.commit, func(t *testing.T) { testRollingUpgrade(t, src) })
	}
}

func testRollingUpgrade(t *testing.T, src upgradeSource) {
	old := oldBinary(t, src.commit)
	harness.Binary(t) // built now, not inside the first upgrade's restart
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hc := harness.StartCluster(ctx, t, 3, harness.Options{Binary: old})
	lead, err := hc.Leader(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", lead.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, q := range append([]string{"CREATE DATABASE flickr", harness.FlickrDDL("flickr.Tickets64")}, leafSetup...) {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	leaf := &leafWrites{}
	leaf.update(ctx, t, lead) // the version-2 form, for a build before 3
	if err := hc.WaitApplied(ctx, lead, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	load := startUpgradeLoad(t, hc.Nodes, 2)
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(load.stop)
			load.wg.Wait()
		}
	}
	defer stopLoad()
	time.Sleep(time.Second)

	// Upgrade the followers first, then the node that led at the start
	// (which will have handed leadership over by then, or lose it on
	// its restart).
	order := []*harness.Node{}
	for _, n := range hc.Nodes {
		if n != lead {
			order = append(order, n)
		}
	}
	order = append(order, lead)
	var steps []upgradeStep
	for i, n := range order {
		failedBefore := load.failed.Load()
		from := time.Now()
		if err := n.Stop(); err != nil {
			t.Fatalf("stop %s (old build): %v", n.ID(), err)
		}
		n.SetBinary("")
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := n.WaitReady(ctx); err != nil {
			t.Fatalf("%s on the current build: %v", n.ID(), err)
		}
		restart := time.Since(from)
		// Let the load run on the mixed cluster before measuring.
		time.Sleep(1500 * time.Millisecond)
		steps = append(steps, upgradeStep{n.ID(), longestGap(load.h.Ops(), from, time.Now()), load.failed.Load() - failedBefore, restart})
		if i == len(order)-1 {
			break
		}
		checkMixed(ctx, t, src, order[:i+1], order[i+1:])
		// The older build's leader goes on writing the row table, in
		// its own form, which the upgraded members apply as it wrote it.
		leaf.update(ctx, t, lead)
	}
	checkUpgraded(ctx, t, hc.Nodes)
	leaf.update(ctx, t, hc.Nodes[2]) // the current build's form
	leaf.check(ctx, t, hc.Nodes)
	checkDowngradeRefused(ctx, t, order[0], old, src.commit)

	time.Sleep(500 * time.Millisecond)
	stopLoad()
	reportUpgrade(t, load, steps, hc.Nodes)
}

// upgradeStep is what the load saw while one node was upgraded.
type upgradeStep struct {
	node    string
	gap     time.Duration
	failed  int64
	restart time.Duration
}

// leafSetup is Leaf's segment table, which every source build takes, and
// its first row.
var leafSetup = []string{
	"CREATE TABLE flickr.leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', " +
		"step int(11) NOT NULL, description varchar(256) DEFAULT NULL, " +
		"update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) ENGINE=InnoDB",
	"INSERT INTO flickr.leaf_alloc (biz_tag, max_id, step, description) VALUES ('u', 1, 1000, 'upgrade'), ('v', 1, 10, NULL)",
}

// leafWrites counts Leaf's segment updates: each that succeeded moved
// max_id of 'u' by its step.
type leafWrites struct {
	ok        int
	uncertain bool // one failed in a way that may have applied it
}

// update takes one segment through n. Through an older build's leader
// during the upgrade it may be refused (1235, when leadership moved to
// an upgraded member and the cluster's version is below the row engine's)
// or fail; either is counted, not a test failure.
func (l *leafWrites) update(ctx context.Context, t *testing.T, n *harness.Node) {
	t.Helper()
	db, err := sql.Open("mysql", n.DSN("flickr"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = 'u'")
	var me *mysql.MySQLError
	switch {
	case err == nil:
		l.ok++
	case errors.As(err, &me) && me.Number == 1235:
		t.Logf("leaf_alloc UPDATE through %s refused: %v", n.ID(), err)
	default:
		l.uncertain = true
		t.Logf("leaf_alloc UPDATE through %s: %v", n.ID(), err)
	}
}

// check reads leaf_alloc on every node (all on the current build): the
// same rows everywhere, and max_id of 'u' moved by every update that
// succeeded.
func (l *leafWrites) check(ctx context.Context, t *testing.T, nodes []*harness.Node) {
	t.Helper()
	var first string
	for _, n := range nodes {
		db, err := sql.Open("mysql", n.DSN("flickr"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, "SELECT biz_tag, max_id, step, IFNULL(description, 'NULL') FROM leaf_alloc ORDER BY biz_tag")
		if err != nil {
			db.Close()
			t.Fatalf("leaf_alloc on %s after the upgrade: %v", n.ID(), err)
		}
		var got []string
		var maxU int64
		for rows.Next() {
			var tag, desc string
			var maxID, step int64
			if err := rows.Scan(&tag, &maxID, &step, &desc); err != nil {
				t.Fatal(err)
			}
			if tag == "u" {
				maxU = maxID
			}
			got = append(got, fmt.Sprintf("%s %d %d %s", tag, maxID, step, desc))
		}
		err = rows.Err()
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		g := strings.Join(got, "; ")
		if first == "" {
			first = g
			t.Logf("leaf_alloc after the upgrade (%d segment updates succeeded): %s", l.ok, g)
		} else if g != first {
			t.Errorf("leaf_alloc on %s: %s; on %s: %s", nodes[0].ID(), first, n.ID(), g)
		}
		if want := int64(1 + 1000*l.ok); !l.uncertain && maxU != want {
			t.Errorf("leaf_alloc 'u' on %s: max_id %d after %d updates, want %d", n.ID(), maxU, l.ok, want)
		}
		if len(got) != 2 {
			t.Errorf("leaf_alloc on %s: %d rows, want 2", n.ID(), len(got))
		}
	}
}

// createSeq runs CREATE SEQUENCE flickr.s through n.
func createSeq(ctx context.Context, n *harness.Node) error {
	db, err := sql.Open("mysql", n.DSN("flickr"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE SEQUENCE flickr.s")
	return err
}

// checkMixed checks a cluster whose members upgraded run the current
// build and whose members behind run src's.
func checkMixed(ctx context.Context, t *testing.T, src upgradeSource, upgraded, behind []*harness.Node) {
	t.Helper()
	oldVersion := strconv.Itoa(src.version)
	if src.version == 1 {
		// A build from before versions announces none, and cannot take a
		// sequence: the new members refuse it, naming the old members.
		oldVersion = "1?"
		for _, u := range upgraded {
			err := createSeq(ctx, u)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1235 {
				t.Fatalf("CREATE SEQUENCE through %s with %d old member(s): %v, want 1235", u.ID(), len(behind), err)
			}
			for _, o := range behind {
				if !strings.Contains(me.Message, o.ID()+" (version 1") {
					t.Errorf("refusal through %s does not name %s: %s", u.ID(), o.ID(), me.Message)
				}
			}
			for _, v := range upgraded {
				if strings.Contains(me.Message, v.ID()+" (") {
					t.Errorf("refusal through %s names the upgraded %s: %s", u.ID(), v.ID(), me.Message)
				}
			}
			t.Logf("mixed (%d old): CREATE SEQUENCE through %s: %v", len(behind), u.ID(), err)
		}
	}
	n := upgraded[len(upgraded)-1]
	cv, ms, err := statusVersions(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mixed (%d old): %s /status: cluster_command_version %v, members %v", len(behind), n.ID(), cv, ms)
	if cv != float64(src.version) || ms[n.ID()] != strconv.Itoa(raftstore.CommandVersion) {
		t.Errorf("%s /status in the mixed phase: cluster %v, members %v; want cluster %d", n.ID(), cv, ms, src.version)
	}
	for _, o := range behind {
		if ms[o.ID()] != oldVersion {
			t.Errorf("%s /status shows the old %s at %q, want %s", n.ID(), o.ID(), ms[o.ID()], oldVersion)
		}
	}
}

// checkUpgraded checks a cluster all on the current build: its version
// rises on every node, and a sequence is created and answered on each.
func checkUpgraded(ctx context.Context, t *testing.T, nodes []*harness.Node) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, n := range nodes {
		for {
			cv, ms, err := statusVersions(ctx, n)
			if err == nil && cv == raftstore.CommandVersion {
				t.Logf("after the upgrade: %s /status: cluster_command_version %v, members %v", n.ID(), cv, ms)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: cluster command version %v, members %v (%v), 15s after the last upgrade", n.ID(), cv, ms, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := createSeq(ctx, nodes[0]); err != nil {
		t.Fatalf("CREATE SEQUENCE after the last upgrade: %v", err)
	}
	for _, n := range nodes {
		db, err := sql.Open("mysql", n.DSN("flickr"))
		if err != nil {
			t.Fatal(err)
		}
		var v int64
		err = db.QueryRowContext(ctx, "SELECT NEXTVAL(flickr.s)").Scan(&v)
		db.Close()
		if err != nil || v < 1 {
			t.Fatalf("NEXTVAL through %s after the upgrade: %d, %v", n.ID(), v, err)
		}
	}
	metricsHaveVersions(ctx, t, nodes[0])
}

// checkDowngradeRefused starts the older build again on the upgraded
// node down: it refuses at start (a build from before versions cannot
// open the current build's state file, format 2; a versioned one finds
// the cluster's version above its own), and down goes back to the
// current build. The load goes on through the other two nodes.
func checkDowngradeRefused(ctx context.Context, t *testing.T, down *harness.Node, old, commit string) {
	t.Helper()
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}
	down.SetBinary(old)
	if err := down.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); down.Running() && time.Since(start) < 20*time.Second; {
		time.Sleep(20 * time.Millisecond)
	}
	if down.Running() || down.ExitError() == nil {
		t.Fatalf("%s started with the older build after the upgrade:\n%s", down.ID(), down.LogTail(10))
	}
	t.Logf("downgrade of %s to %s refused at start: %s", down.ID(), commit, lastLine(down.LogTail(5)))
	down.SetBinary("")
	if err := down.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := down.WaitReady(ctx); err != nil {
		t.Fatalf("%s back on the current build: %v", down.ID(), err)
	}
}

// reportUpgrade prints what the load saw and checks its history, and
// that no member met an entry it could not decode.
func reportUpgrade(t *testing.T, load *upgradeLoad, steps []upgradeStep, nodes []*harness.Node) {
	t.Helper()
	ok, failed := load.h.Counts()
	var errKinds []string
	load.errs.Range(func(k, v any) bool {
		errKinds = append(errKinds, fmt.Sprintf("%d × %s", v.(*atomic.Int64).Load(), k))
		return true
	})
	slices.Sort(errKinds)
	for _, s := range steps {
		t.Logf("upgrade of %s: restart to ready %v, longest cluster-wide gap %v, failed statements %d",
			s.node, s.restart.Round(time.Millisecond), s.gap.Round(time.Millisecond), s.failed)
	}
	t.Logf("allocations: %d ok, %d failed, max id %d; errors: %s", ok, failed, load.h.MaxID(), strings.Join(errKinds, "; "))
	if n := load.cutShort.Load(); n > 0 {
		t.Errorf("the current build answered %d statement(s) with a bare %q: a cancelled statement must say what became of it", n, context.Canceled.Error())
	}
	// No member ever met an entry it could not decode (an older build
	// logs "undecodable log entry" and skips it; this one stops).
	for _, n := range nodes {
		b, err := os.ReadFile(n.LogPath())
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(bytes.ToLower(b), []byte("undecodable")); i >= 0 {
			t.Errorf("%s's log: %s", n.ID(), b[i:min(len(b), i+300)])
		}
	}
	if vs := load.h.Check(); len(vs) > 0 {
		t.Fatalf("history violations:\n%s", history.Report(vs, 10))
	}
	if ok == 0 {
		t.Fatal("no allocation succeeded")
	}
}

// metricsHaveVersions checks /metrics shows the node's, the cluster's
// and each member's command version.
func metricsHaveVersions(ctx context.Context, t *testing.T, n *harness.Node) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTPAddr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cv := strconv.Itoa(raftstore.CommandVersion)
	for _, want := range []string{
		"ticketd_command_version " + cv,
		"ticketd_cluster_command_version " + cv,
		`ticketd_member_command_version{member="n1"} ` + cv,
		`ticketd_member_command_version{member="n3"} ` + cv,
	} {
		if !bytes.Contains(body, []byte(want+"\n")) {
			t.Errorf("/metrics of %s lacks %q", n.ID(), want)
		}
	}
}
