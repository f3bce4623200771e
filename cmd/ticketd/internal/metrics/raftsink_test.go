package metrics

import (
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
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
	for _, name := range []string{"raft_commitTime", "raft_leader_dispatchLog", "raft_rpc_appendEntries_storeLogs",
		"raft_rpc_appendEntries", "raft_wal_log_appends"} {
		if !got[name] {
			t.Errorf("%s missing", name)
		}
	}
	for name := range got {
		for _, blocked := range []string{"raft_net_", "raft_fsm_enqueue", "raft_rpc_appendEntries_processLogs",
			"raft_wal_log_entries_", "raft_commitNumLogs"} {
			if strings.HasPrefix(name, blocked) {
				t.Errorf("%s reported, but it is blocked", name)
			}
		}
	}
}
