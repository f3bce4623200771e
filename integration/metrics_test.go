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
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ticketd/ticketd/integration/harness"
)

// families is one scrape of /metrics.
type families map[string]*dto.MetricFamily

// scrape GETs a node's /metrics and parses it as Prometheus text.
func scrape(t *testing.T, ctx context.Context, n *harness.Node) families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(scrapeText(t, ctx, n)))
	if err != nil {
		t.Fatalf("scrape %s: parse: %v", n.ID(), err)
	}
	return fams
}

// scrapeText GETs a node's /metrics.
func scrapeText(t *testing.T, ctx context.Context, n *harness.Node) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTPAddr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", n.ID(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", n.ID(), resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", n.ID(), err)
	}
	return b
}

// promtoolLint runs `promtool check metrics` (Prometheus' naming lint, as
// a CI that lints scrapes runs it) on a node's /metrics. CI sets
// TICKETD_REQUIRE_PROMTOOL=1 so that a missing promtool fails there.
func promtoolLint(t *testing.T, ctx context.Context, n *harness.Node) {
	t.Helper()
	pt, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TICKETD_REQUIRE_PROMTOOL") == "1" {
			t.Fatalf("promtool not found and TICKETD_REQUIRE_PROMTOOL=1: %v", err)
		}
		t.Log("promtool not installed (apt-get install prometheus): /metrics not linted; set TICKETD_REQUIRE_PROMTOOL=1 to fail instead")
		return
	}
	cmd := exec.CommandContext(ctx, pt, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrapeText(t, ctx, n))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics on %s's /metrics: %v\n%s", n.ID(), err, out)
	}
}

// value is the sample of name whose labels include want (a counter's,
// gauge's or untyped value; a summary's or histogram's count), and
// whether there is one.
func (f families) value(name string, want ...string) (float64, bool) {
	mf := f[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount()), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// TestMetrics drives a three-node cluster through a follower and checks
// what both the follower's and the leader's /metrics say about it:
// ticketd's own counters with exact values, the Raft gauges, and
// hashicorp/raft's own measurements.
func TestMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Small snapshot settings, so that a snapshot happens in the test.
	c := harness.StartCluster(ctx, t, 3, harness.Options{
		Args: []string{"--snapshot-threshold", "16", "--snapshot-interval", "200ms"},
	})
	leader, err := c.Leader(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var follower *harness.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
			break
		}
	}

	db := openDB(t, follower.DSN(""))
	conn := pinConn(t, ctx, db)
	mustExec(t, ctx, conn, "CREATE DATABASE m")
	mustExec(t, ctx, conn, "USE m")
	mustExec(t, ctx, conn, harness.FlickrDDL("Tickets64"))
	const n = 25
	for i := range n {
		stub := "a"
		if i%2 == 1 {
			stub = "b"
		}
		mustExec(t, ctx, conn, "REPLACE INTO Tickets64 (stub) VALUES (?)", stub)
	}
	// Two ids in one statement.
	mustExec(t, ctx, conn, "REPLACE INTO Tickets64 (stub) VALUES ('c'), ('d')")
	// One text shape with three values, as an interpolating driver sends
	// them: the parser reads the first two, a template answers the third.
	for _, stub := range []string{"a", "b", "c"} {
		var id int64
		if err := conn.QueryRowContext(ctx, "SELECT id FROM Tickets64 WHERE stub = '"+stub+"'").Scan(&id); err != nil {
			t.Fatalf("select stub %s: %v", stub, err)
		}
	}
	_, err = conn.ExecContext(ctx, "REPLACE INTO NoSuchTable (stub) VALUES ('a')")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1146 {
		t.Fatalf("unknown table: %v, want error 1146", err)
	}
	bad, err := sql.Open("mysql", fmt.Sprintf("root:wrong@tcp(%s)/", follower.MySQLAddr()))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.PingContext(ctx); !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("wrong password: %v, want error 1045", err)
	}

	f := scrape(t, ctx, follower)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		// Prepared statements with an argument: go-sql-driver prepares
		// and executes each REPLACE, one statement each.
		{"ticketd_ids_allocated_total", []string{"table", "m.Tickets64"}, n + 2},
		{"ticketd_statements_total", []string{"kind", "replace"}, n + 2},
		{"ticketd_statements_total", []string{"kind", "ddl"}, 2},
		{"ticketd_query_plans_total", []string{"source", "template"}, 1},
		{"ticketd_errors_total", []string{"code", "1146"}, 1},
		{"ticketd_auth_failures_total", nil, 1},
		{"ticketd_allocation_duration_seconds", []string{"path", "raft"}, n + 1},
		{"ticketd_raft_state", []string{"state", "Follower"}, 1},
		{"ticketd_raft_state", []string{"state", "Leader"}, 0},
		{"ticketd_raft_has_leader", nil, 1},
		{"ticketd_raft_members", []string{"suffrage", "voter"}, 3},
		{"ticketd_ready", nil, 1},
		{"ticketd_fsm_failed", nil, 0},
	} {
		got, ok := f.value(c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("follower %s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// Every allocation and the DDL went through the leader, in batches the
	// follower forwarded.
	if got, _ := f.value("ticketd_forwarded_batches_total", "result", "ok"); got < n+3 {
		t.Errorf("follower forwarded %v batches, want at least %d", got, n+3)
	}
	if got, _ := f.value("ticketd_connections_total"); got < 2 {
		t.Errorf("follower accepted %v connections, want at least 2", got)
	}
	for _, name := range []string{"ticketd_raft_term", "ticketd_raft_applied_index", "ticketd_raft_commit_index", "ticketd_state_db_bytes"} {
		if got, ok := f.value(name); !ok || got <= 0 {
			t.Errorf("follower %s = %v (present %v), want > 0", name, got, ok)
		}
	}
	// hashicorp/raft's own metrics, through go-metrics: a follower stores
	// the leader's entries.
	if got, ok := f.value("raft_rpc_append_entries_store_logs"); !ok || got == 0 {
		t.Errorf("follower raft_rpc_append_entries_store_logs count = %v (present %v), want > 0", got, ok)
	}
	if _, ok := f.value("go_goroutines"); !ok {
		t.Error("follower: no Go runtime metrics")
	}

	// The leader committed the entries; its clients allocated nothing.
	// Snapshots are taken in the background: wait for one (16 entries
	// threshold, checked every 200-400ms).
	var l families
	deadline := time.Now().Add(30 * time.Second)
	for {
		l = scrape(t, ctx, leader)
		if v, _ := l.value("ticketd_snapshots_total", "result", "ok"); v >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ticketd_raft_state", []string{"state", "Leader"}, 1},
		{"ticketd_statements_total", []string{"kind", "replace"}, 0},
		{"ticketd_snapshots_total", []string{"result", "error"}, 0},
	} {
		got, ok := l.value(c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("leader %s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := l.value("ticketd_ids_allocated_total", "table", "m.Tickets64"); ok {
		t.Error("leader counts ids allocated by the follower's clients")
	}
	if got, _ := l.value("ticketd_snapshots_total", "result", "ok"); got < 1 {
		t.Errorf("leader took %v snapshots, want at least 1", got)
	}
	if got, _ := l.value("ticketd_snapshot_duration_seconds"); got < 1 {
		t.Errorf("leader snapshot durations observed: %v, want at least 1", got)
	}
	// Batches: the forwarded ones, proposed by the leader's batcher.
	if got, _ := l.value("ticketd_batch_size"); got < 1 {
		t.Errorf("leader ticketd_batch_size count = %v, want > 0", got)
	}
	// raft_wal_log_appends_total: the log store's own counter (raft-wal,
	// the default store), through the same go-metrics sink as Raft's.
	for _, name := range []string{"raft_commit_time", "raft_leader_dispatch_log", "raft_fsm_apply_batch", "raft_wal_log_appends_total"} {
		if got, ok := l.value(name); !ok || got == 0 {
			t.Errorf("leader %s count = %v (present %v), want > 0", name, got, ok)
		}
	}
	// Both scrapes, every series raft and ticketd report by now, pass
	// Prometheus' lint (it exited 3 on raft's camelCase names).
	promtoolLint(t, ctx, follower)
	promtoolLint(t, ctx, leader)
}
