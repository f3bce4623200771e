package integration

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// haproxyClients is how many clients allocate through HAProxy: two per
// node under leastconn, so some are always on the leader when it dies.
const haproxyClients = 6

// TestHAProxy runs the shipped cmd/ticketd/deploy/haproxy.cfg (only its
// addresses replaced) in front of a real three-node cluster, allocates
// through it from several reconnecting clients, kills the leader with
// SIGKILL and restarts it. It checks that every node took traffic, that
// HAProxy's health check (/readyz) takes the dead node out and puts it
// back, that every client gets ids again after the kill, and that the
// whole history has no duplicate and no id below one returned before its
// call. It logs the recovery time seen through HAProxy.
func TestHAProxy(t *testing.T) {
	haproxy := haproxyBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	c := harness.StartCluster(ctx, t, 3)
	leader, err := c.Leader(ctx, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	createDB(t, ctx, leader, "hap")
	if err := c.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	hp := startHAProxy(ctx, t, haproxy, c)
	if err := hp.waitStatus(ctx, 15*time.Second, map[string]string{"n1": "UP", "n2": "UP", "n3": "UP"}); err != nil {
		t.Fatal(err)
	}

	// Every connection the kill cuts makes go-sql-driver log; the history
	// records each error instead.
	mysql.SetLogger(log.New(io.Discard, "", 0))
	defer mysql.SetLogger(log.New(os.Stderr, "[mysql] ", log.Ldate|log.Ltime|log.Lshortfile))
	l := &hapLoad{h: history.New(), stop: make(chan struct{}), dsn: harness.DSN(hp.mysqlAddr, "hap", "readTimeout=15s", "writeTimeout=15s")}
	for i := range haproxyClients {
		l.wg.Add(1)
		go l.client(i)
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(l.stop)
			l.wg.Wait()
		}
	}
	defer stopLoad()

	// Steady state: every client allocating, every node holding some of
	// the connections (leastconn over three UP servers).
	if err := waitEveryClient(l.h, haproxyClients, time.Time{}, 20*time.Second); err != nil {
		t.Fatalf("before the kill: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	sessions, err := hp.sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"n1", "n2", "n3"} {
		if sessions[id] == 0 {
			t.Errorf("HAProxy sent no connection to %s (sessions per node: %v): not every node takes traffic", id, sessions)
		}
	}

	kill := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed leader %s (kill -9) at %s", leader.ID(), stamp(kill))
	// Generous bounds: the machine is shared, and what is asserted is
	// that service comes back, not how fast.
	if err := waitEveryClient(l.h, haproxyClients, kill, 25*time.Second); err != nil {
		t.Errorf("after the kill: %v", err)
	}
	if err := hp.waitStatus(ctx, 15*time.Second, map[string]string{leader.ID(): "DOWN"}); err != nil {
		t.Errorf("HAProxy never took the dead node out: %v", err)
	}
	down := time.Now()
	if st, err := hp.servers(ctx, "status"); err == nil {
		t.Logf("HAProxy server status once the dead node is out: %v", st)
	}

	if err := leader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leader.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hp.waitStatus(ctx, 15*time.Second, map[string]string{leader.ID(): "UP"}); err != nil {
		t.Errorf("HAProxy never put the restarted node back: %v", err)
	}
	back := time.Now()
	if err := waitEveryClient(l.h, haproxyClients, back, 20*time.Second); err != nil {
		t.Errorf("after the restart: %v", err)
	}
	stopLoad()

	ops := l.h.Ops()
	if vs := history.Check(ops); len(vs) > 0 {
		t.Errorf("history of %d operations: %s", len(ops), history.Report(vs, 20))
	}
	if m := l.mismatches(); len(m) > 0 {
		t.Errorf("OK packet id and SELECT LAST_INSERT_ID() differ: %v", m)
	}
	ok, failed := l.h.Counts()
	errs := map[string]int{}
	for _, o := range ops {
		if !o.OK() {
			errs[o.Err.Error()]++
		}
	}
	if rec, slowest, err := recovery(ops, kill); err != nil {
		t.Error(err)
	} else {
		t.Logf("recovery through HAProxy after kill -9 of the leader: %v from the last id before the kill to the first after it; %v until every client had an id again",
			rec.Round(time.Millisecond), slowest.Round(time.Millisecond))
	}
	l.mu.Lock()
	connFails := l.connFails
	l.mu.Unlock()
	t.Logf("%d ids, %d failed connects, %d failed statements (retried: %v); dead node marked DOWN %v after the kill, restarted node UP again at +%v",
		ok, connFails, failed, errs, down.Sub(kill).Round(100*time.Millisecond), back.Sub(kill).Round(100*time.Millisecond))
	if t.Failed() {
		t.Logf("HAProxy log:\n%s", hp.logTail())
	}
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// recovery measures the outage in ops as clients saw it: from the last
// successful allocation that returned before the kill to the first one
// called after it, and to the moment the last client to recover got one.
func recovery(ops []history.Op, kill time.Time) (first, slowest time.Duration, err error) {
	var lastBefore time.Time
	var firstAfter time.Time
	perClient := map[int]time.Time{}
	for _, o := range ops {
		if !o.OK() {
			continue
		}
		if o.Return.Before(kill) && o.Return.After(lastBefore) {
			lastBefore = o.Return
		}
		if !o.Call.Before(kill) {
			if firstAfter.IsZero() || o.Return.Before(firstAfter) {
				firstAfter = o.Return
			}
			if t, seen := perClient[o.Client]; !seen || o.Return.Before(t) {
				perClient[o.Client] = o.Return
			}
		}
	}
	if lastBefore.IsZero() || firstAfter.IsZero() {
		return 0, 0, fmt.Errorf("no successful allocation before (%v) or after (%v) the kill", lastBefore, firstAfter)
	}
	var latest time.Time
	for _, t := range perClient {
		if t.After(latest) {
			latest = t
		}
	}
	return firstAfter.Sub(lastBefore), latest.Sub(lastBefore), nil
}

// hapLoad is haproxyClients clients allocating through HAProxy, each on
// one connection that it replaces after any error, as an application's
// pool would.
type hapLoad struct {
	h    *history.History
	dsn  string
	stop chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	mismatch  []string
	connFails int // connects through HAProxy that failed (not in the history)
}

func (l *hapLoad) mismatches() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.mismatch...)
}

func (l *hapLoad) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *hapLoad) client(id int) {
	defer l.wg.Done()
	db, err := sql.Open("mysql", l.dsn)
	if err != nil {
		l.h.Add(history.Op{Client: id, Err: err})
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	var conn *sql.Conn
	drop := func() {
		if conn != nil {
			conn.Close()
			conn = nil
		}
	}
	defer drop()
	for !l.stopped() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := l.allocate(ctx, db, &conn, id)
		cancel()
		if err != nil {
			// The connection may be cut (its node died, or HAProxy shut
			// the sessions of a node it marked down): reconnect, through
			// HAProxy, to whichever node it picks. A short pause keeps a
			// refusing backend from turning this into a busy loop.
			drop()
			select {
			case <-l.stop:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// allocate runs one REPLACE (recorded in the history) and checks
// SELECT LAST_INSERT_ID() on the same connection.
func (l *hapLoad) allocate(ctx context.Context, db *sql.DB, conn **sql.Conn, id int) error {
	if *conn == nil {
		c, err := db.Conn(ctx)
		if err != nil {
			l.mu.Lock()
			l.connFails++
			l.mu.Unlock()
			return err
		}
		*conn = c
	}
	p := l.h.Begin("haproxy", id)
	r, err := (*conn).ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	var got int64
	if err == nil {
		got, err = r.LastInsertId()
	}
	l.h.End(p, uint64(got), err)
	if err != nil {
		return err
	}
	var lii int64
	if err := (*conn).QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&lii); err != nil {
		return err
	}
	if lii != got {
		l.mu.Lock()
		l.mismatch = append(l.mismatch, fmt.Sprintf("client %d: OK packet %d, LAST_INSERT_ID() %d", id, got, lii))
		l.mu.Unlock()
	}
	return nil
}

// haproxyBinary is the haproxy the HAProxy and rolling-restart tests run
// in front of their cluster. Those tests are skipped in -short mode and
// without haproxy, unless TICKETD_REQUIRE_HAPROXY=1 (CI) makes a missing
// haproxy a failure.
func haproxyBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("TICKETD_REQUIRE_HAPROXY") == "1" {
			t.Fatalf("haproxy not found and TICKETD_REQUIRE_HAPROXY=1: %v", err)
		}
		t.Skipf("haproxy not installed (apt-get install haproxy): %v", err)
	}
	return haproxy
}

// haproxyProc is a running haproxy with the rendered configuration.
type haproxyProc struct {
	mysqlAddr string
	statsAddr string
	log       string
}

// startHAProxy renders the shipped configuration for c, checks it with
// haproxy -c (warnings included), and runs it in the foreground until the
// test ends.
func startHAProxy(ctx context.Context, t *testing.T, bin string, c *harness.Cluster) *haproxyProc {
	t.Helper()
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join(root, "cmd", "ticketd", "deploy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	hp := &haproxyProc{mysqlAddr: harness.FreeAddr(t), statsAddr: harness.FreeAddr(t)}
	cfg, err := renderHAProxy(string(shipped), hp.mysqlAddr, hp.statsAddr, c, os.Geteuid() == 0)
	if err != nil {
		t.Fatalf("rendering cmd/ticketd/deploy/haproxy.cfg: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "-c", "-f", path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "WARNING") {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}

	hp.log = filepath.Join(dir, "haproxy.log")
	f, err := os.Create(hp.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "-f", path, "-db")
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("haproxy: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	// Listening on the stats port means the configuration is loaded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", hp.statsAddr, time.Second)
		if err == nil {
			conn.Close()
			return hp
		}
		select {
		case <-exited:
			t.Fatalf("haproxy exited: %s", hp.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy not listening after 10s: %v\n%s", err, hp.logTail())
		}
	}
}

// Lines of the shipped configuration that carry addresses. Rendering fails
// when one is missing, so a change to the example cannot silently leave
// the test running something else.
var (
	hapServerLine = regexp.MustCompile(`(?m)^(\s*server (n[123]) )\S+( .*check port )\d+`)
	hapBackupLine = regexp.MustCompile(`(?m)^(\s*server (n[123])-any )\S+( backup)$`)
	hapMySQLBind  = regexp.MustCompile(`(?m)^(\s*bind ):3306$`)
	hapStatsBind  = regexp.MustCompile(`(?m)^(\s*bind )127\.0\.0\.1:8404$`)
	hapUserGroup  = regexp.MustCompile(`(?m)^\s*(user|group) haproxy\n`)
)

// renderHAProxy replaces the example's addresses with the cluster's and
// the test's. Without root, HAProxy cannot switch to the haproxy user, so
// those two lines go.
func renderHAProxy(cfg, mysqlAddr, statsAddr string, c *harness.Cluster, root bool) (string, error) {
	if n := len(hapServerLine.FindAllString(cfg, -1)); n != 3 {
		return "", fmt.Errorf("%d server lines n1..n3 with 'check port', want 3", n)
	}
	var err error
	cfg = hapServerLine.ReplaceAllStringFunc(cfg, func(line string) string {
		m := hapServerLine.FindStringSubmatch(line)
		node := c.Node(m[2])
		_, adminPort, perr := net.SplitHostPort(node.HTTPAddr())
		if perr != nil {
			err = perr
		}
		return m[1] + node.MySQLAddr() + m[3] + adminPort
	})
	if err != nil {
		return "", err
	}
	if n := len(hapBackupLine.FindAllString(cfg, -1)); n != 3 {
		return "", fmt.Errorf("%d backup server lines n1-any..n3-any, want 3", n)
	}
	cfg = hapBackupLine.ReplaceAllStringFunc(cfg, func(line string) string {
		m := hapBackupLine.FindStringSubmatch(line)
		return m[1] + c.Node(m[2]).MySQLAddr() + m[3]
	})
	for _, b := range []struct {
		re   *regexp.Regexp
		addr string
	}{{hapMySQLBind, mysqlAddr}, {hapStatsBind, statsAddr}} {
		if !b.re.MatchString(cfg) {
			return "", fmt.Errorf("no line matching %s", b.re)
		}
		cfg = b.re.ReplaceAllString(cfg, "${1}"+b.addr)
	}
	if !root {
		cfg = hapUserGroup.ReplaceAllString(cfg, "")
	}
	return cfg, nil
}

// stats reads the stats page's CSV: one map per proxy/server row.
func (hp *haproxyProc) stats(ctx context.Context) ([]map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hp.statsAddr+"/;csv", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("haproxy stats: %w", err)
	}
	defer resp.Body.Close()
	recs, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("haproxy stats csv: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("haproxy stats: %d rows", len(recs))
	}
	head := recs[0]
	head[0] = strings.TrimPrefix(head[0], "# ")
	var rows []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, v := range r {
			if i < len(head) {
				row[head[i]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// servers returns column col of each checked server of backend ticketd
// (not the fail-open backups).
func (hp *haproxyProc) servers(ctx context.Context, col string) (map[string]string, error) {
	rows, err := hp.stats(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		if r["pxname"] == "ticketd" && r["svname"] != "BACKEND" && !strings.HasSuffix(r["svname"], "-any") {
			out[r["svname"]] = r[col]
		}
	}
	return out, nil
}

// sessions returns the total connections HAProxy sent each node.
func (hp *haproxyProc) sessions(ctx context.Context) (map[string]int, error) {
	s, err := hp.servers(ctx, "stot")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for k, v := range s {
		var n int
		fmt.Sscan(v, &n)
		out[k] = n
	}
	return out, nil
}

// waitStatus waits until each named server's status is exactly the wanted
// one: "UP 1/2" or "DOWN 1/3" (a change under way) do not count.
func (hp *haproxyProc) waitStatus(ctx context.Context, bound time.Duration, want map[string]string) error {
	deadline := time.Now().Add(bound)
	var last map[string]string
	for {
		st, err := hp.servers(ctx, "status")
		if err == nil {
			last = st
			good := true
			for k, w := range want {
				if st[k] != w {
					good = false
				}
			}
			if good {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("HAProxy server status %v after %v, want %v (err %v)", last, bound, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (hp *haproxyProc) logTail() string {
	b, err := os.ReadFile(hp.log)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
