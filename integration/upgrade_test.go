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

// upgradeFrom is the commit of the older ticketd the rolling upgrade test
// starts from: the build issue 23 upgraded from, before command versions
// existed (it counts as version 1, and knows neither sequences nor row
// tables).
const upgradeFrom = "3e891bc"

// oldBinary returns the ticketd of commit upgradeFrom, built from this
// repository's history (git worktree add into a temporary directory) by
// buildOld. The binary is kept under the system's temporary directory,
// named by the commit, so that later runs skip the build. It is the one
// step of make test's integration run that keeps both cores busy for a
// while, so (issue 34, where it held up the package 87 s of its 327 s):
// TestMain starts it in the background when TestRollingUpgrade is to run,
// so that it compiles while the tests before it mostly wait on processes;
// and it is built without -trimpath, which gave every package a build of
// its own: with the build cache make test's vet and builds leave, the
// packages the two commits share are reused (cold cache, then make
// test's builds, on the shared 2-core machine: 63 s wall and 83 s CPU
// with -trimpath, 34 s and 29 s without).
func oldBinary(t *testing.T) string {
	t.Helper()
	start := time.Now()
	b := buildOld()
	if b.skip != "" {
		t.Skip(b.skip)
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	t.Logf("older ticketd (%s) from %s (%s; waited %v for it here)", upgradeFrom, b.path, b.how, time.Since(start).Round(time.Second))
	return b.path
}

// oldBuild is buildOld's result.
type oldBuild struct {
	path string
	how  string // "cached" or how long the build took
	skip string // why the test cannot run here
	err  error
}

// buildOld builds (once per process) or finds the older ticketd.
var buildOld = sync.OnceValue(func() oldBuild {
	root, err := harness.ModuleRoot()
	if err != nil {
		return oldBuild{err: err}
	}
	full, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", upgradeFrom+"^{commit}").Output()
	if err != nil {
		return oldBuild{skip: fmt.Sprintf("no git history with commit %s here (%v): the rolling upgrade needs it to build the older ticketd", upgradeFrom, err)}
	}
	cached := filepath.Join(os.TempDir(), "ticketd-upgrade-"+upgradeFrom, "ticketd")
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
})

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
	errs   sync.Map // error text -> *atomic.Int64
	failed atomic.Int64
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
// from the ticketd of commit upgradeFrom to this checkout's. While any
// member runs the older build, CREATE SEQUENCE (which that build cannot
// decode) is refused with 1235 naming the members behind, and nothing of
// it reaches the log; once the last member runs the current build the
// cluster's command version rises and the same statement succeeds, on
// every node. No id is handed out twice or out of order; the longest
// cluster-wide gap of each step and the failed statements are printed.
// Starting the older build again on an upgraded node is refused.
func TestRollingUpgrade(t *testing.T) {
	old := oldBinary(t)
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
	for _, q := range []string{"CREATE DATABASE flickr", harness.FlickrDDL("flickr.Tickets64")} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
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

	createSeq := func(n *harness.Node) error {
		db, err := sql.Open("mysql", n.DSN("flickr"))
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, "CREATE SEQUENCE flickr.s")
		return err
	}

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
	type step struct {
		node    string
		gap     time.Duration
		failed  int64
		restart time.Duration
	}
	var steps []step
	var upgraded []*harness.Node
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
		upgraded = append(upgraded, n)
		// Let the load run on the mixed cluster before measuring.
		time.Sleep(1500 * time.Millisecond)
		steps = append(steps, step{n.ID(), longestGap(load.h.Ops(), from, time.Now()), load.failed.Load() - failedBefore, restart})

		if i == len(order)-1 {
			break
		}
		// Mixed: the new members refuse what the old cannot apply,
		// naming the old members.
		behind := map[string]bool{}
		for _, o := range order[i+1:] {
			behind[o.ID()] = true
		}
		for _, u := range upgraded {
			err := createSeq(u)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1235 {
				t.Fatalf("CREATE SEQUENCE through %s with %d old member(s): %v, want 1235", u.ID(), len(behind), err)
			}
			for id := range behind {
				if !strings.Contains(me.Message, id+" (version 1") {
					t.Errorf("refusal through %s does not name %s: %s", u.ID(), id, me.Message)
				}
			}
			for _, v := range upgraded {
				if strings.Contains(me.Message, v.ID()+" (") {
					t.Errorf("refusal through %s names the upgraded %s: %s", u.ID(), v.ID(), me.Message)
				}
			}
			t.Logf("mixed (%d old): CREATE SEQUENCE through %s: %v", len(behind), u.ID(), err)
		}
		cv, ms, err := statusVersions(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("mixed (%d old): %s /status: cluster_command_version %v, members %v", len(behind), n.ID(), cv, ms)
		if cv != 1 || ms[n.ID()] != strconv.Itoa(raftstore.CommandVersion) {
			t.Errorf("%s /status in the mixed phase: cluster %v, members %v", n.ID(), cv, ms)
		}
		for id := range behind {
			if ms[id] != "1?" {
				t.Errorf("%s /status shows the old %s at %q, want 1 (not announced)", n.ID(), id, ms[id])
			}
		}
	}

	// All on the current build: the cluster's version rises, on every
	// node, and the statement is accepted.
	deadline := time.Now().Add(15 * time.Second)
	for _, n := range hc.Nodes {
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
	if err := createSeq(hc.Nodes[0]); err != nil {
		t.Fatalf("CREATE SEQUENCE after the last upgrade: %v", err)
	}
	for _, n := range hc.Nodes {
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
	metricsHaveVersions(ctx, t, hc.Nodes[0])

	// A downgrade is refused at start, even by the older build, which
	// knows nothing of versions: the current build's state file (format
	// 2, written at its first checkpoint) is one it will not open. The
	// load goes on through the other two nodes.
	down := order[0]
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
	t.Logf("downgrade of %s to %s refused at start: %s", down.ID(), upgradeFrom, lastLine(down.LogTail(5)))
	down.SetBinary("")
	if err := down.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := down.WaitReady(ctx); err != nil {
		t.Fatalf("%s back on the current build: %v", down.ID(), err)
	}

	time.Sleep(500 * time.Millisecond)
	stopLoad()
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
	// No member ever met an entry it could not decode (an older build
	// logs "undecodable log entry" and skips it).
	for _, n := range hc.Nodes {
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
