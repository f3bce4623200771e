package metrics

import (
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	gmprom "github.com/hashicorp/go-metrics/compat/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// TestRaftSinkBlocksPerEntryInternals: the measurements documented for
// operators reach the registry; the blocked per-entry internals do not.
func TestRaftSinkBlocksPerEntryInternals(t *testing.T) {
	reg := prometheus.NewRegistry()
	uninstall, err := InstallRaftSink(reg)
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()
	start := time.Now()
	for _, k := range [][]string{
		{"raft", "commitTime"}, {"raft", "leader", "dispatchLog"},
		{"raft", "rpc", "appendEntries", "storeLogs"}, {"raft", "rpc", "appendEntries"},
		{"raft", "net", "rpcDecode"}, {"raft", "fsm", "enqueue"},
		{"raft", "rpc", "appendEntries", "processLogs"},
	} {
		gometrics.MeasureSince(k, start)
	}
	gometrics.IncrCounter([]string{"raft", "wal", "log_appends"}, 1)
	gometrics.IncrCounter([]string{"raft", "wal", "log_entries_written"}, 3)
	gometrics.SetGauge([]string{"raft", "commitNumLogs"}, 3)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{"raft_commit_time", "raft_leader_dispatch_log", "raft_rpc_append_entries_store_logs",
		"raft_rpc_append_entries", "raft_wal_log_appends_total"} {
		if !got[name] {
			t.Errorf("%s missing", name)
		}
	}
	for name := range got {
		for _, blocked := range []string{"raft_net_", "raft_fsm_enqueue", "raft_rpc_append_entries_process_logs",
			"raft_wal_log_entries_", "raft_commit_num_logs"} {
			if strings.HasPrefix(name, blocked) {
				t.Errorf("%s reported, but it is blocked", name)
			}
		}
	}
}

// TestSnakeCase: raft's key parts as Prometheus names them.
func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"commitTime": "commit_time", "appendEntries": "append_entries", "storeLogs": "store_logs",
		"getRPCType": "get_rpc_type", "log_appends": "log_appends", "RPC": "rpc", "installSnapshot": "install_snapshot",
		"v2Stats": "v2_stats",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// heartbeatMetrics makes the go-metrics calls hashicorp/raft v1.7.3 makes
// for one heartbeat on a follower: the transport's four (blocked) stages,
// with their rpcType label, processHeartbeat and appendEntries.
func heartbeatMetrics(start time.Time) {
	labels := []gometrics.Label{{Name: "rpcType", Value: "Heartbeat"}}
	gometrics.MeasureSince([]string{"raft", "net", "getRPCType"}, start)
	gometrics.MeasureSinceWithLabels([]string{"raft", "net", "rpcDecode"}, start, labels)
	gometrics.MeasureSinceWithLabels([]string{"raft", "net", "rpcEnqueue"}, start, labels)
	gometrics.MeasureSince([]string{"raft", "rpc", "appendEntries"}, start)
	gometrics.MeasureSince([]string{"raft", "rpc", "processHeartbeat"}, start)
	gometrics.MeasureSinceWithLabels([]string{"raft", "net", "rpcRespond"}, start, labels)
}

// TestBlockedRaftMetricsAllocateNothing: a blocked measurement, the
// transport's four per RPC on every node, costs a lookup and no garbage
// once its key has been seen (go-metrics' own prefix filter joined every
// key into a new string first).
func TestBlockedRaftMetricsAllocateNothing(t *testing.T) {
	uninstall, err := InstallRaftSink(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()
	start := time.Now()
	key := []string{"raft", "net", "getRPCType"}
	gometrics.MeasureSince(key, start)
	if n := testing.AllocsPerRun(100, func() { gometrics.MeasureSince(key, start) }); n != 0 {
		t.Errorf("a blocked measurement allocates %v times, want 0", n)
	}
	counter := []string{"raft", "wal", "log_entries_written"}
	if n := testing.AllocsPerRun(100, func() { gometrics.IncrCounter(counter, 1) }); n != 0 {
		t.Errorf("a blocked counter allocates %v times, want 0", n)
	}
}

// BenchmarkRaftSinkHeartbeat: the metric calls of one follower heartbeat.
func BenchmarkRaftSinkHeartbeat(b *testing.B) {
	uninstall, err := InstallRaftSink(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer uninstall()
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		heartbeatMetrics(start)
	}
}

// TestRaftSummariesAsTheSinkMadeThem: a timing without labels, which
// promNames keeps in a summary of its own, is exposed as go-metrics'
// Prometheus sink exposed it (name, help, type, quantiles), and costs no
// garbage (through the sink: 4 allocations per sample).
func TestRaftSummariesAsTheSinkMadeThem(t *testing.T) {
	reg := prometheus.NewRegistry()
	uninstall, err := InstallRaftSink(reg)
	if err != nil {
		t.Fatal(err)
	}
	defer uninstall()
	sinkReg := prometheus.NewRegistry()
	sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{Registerer: sinkReg, Name: "reference"})
	if err != nil {
		t.Fatal(err)
	}
	key := []string{"raft", "rpc", "processHeartbeat"}
	for _, v := range []float32{0.25, 1.5, 3} {
		gometrics.AddSample(key, v)
		sink.AddSample([]string{"raft", "rpc", "process_heartbeat"}, v)
	}
	family := func(reg *prometheus.Registry) *dto.MetricFamily {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "raft_rpc_process_heartbeat" {
				return mf
			}
		}
		t.Fatal("raft_rpc_process_heartbeat missing")
		return nil
	}
	got, want := family(reg), family(sinkReg)
	for _, mf := range []*dto.MetricFamily{got, want} {
		for _, m := range mf.GetMetric() {
			m.GetSummary().CreatedTimestamp = nil // when each was made
		}
	}
	if !proto.Equal(got, want) {
		t.Errorf("exposed as\n%v\nwant (go-metrics' sink)\n%v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { gometrics.AddSample(key, 1) }); n != 0 {
		t.Errorf("a timing allocates %v times, want 0", n)
	}
}

// BenchmarkRaftSinkSample: one timing without labels (raft_rpc_append_entries).
func BenchmarkRaftSinkSample(b *testing.B) {
	uninstall, err := InstallRaftSink(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer uninstall()
	key := []string{"raft", "rpc", "appendEntries"}
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		gometrics.MeasureSince(key, start)
	}
}
