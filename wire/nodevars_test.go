package wire

import (
	"path/filepath"
	"testing"
)

// TestNodeInfoVars: the variables describing the node follow its flags;
// a Server without NodeInfo keeps MySQL's defaults.
func TestNodeInfoVars(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		info NodeInfo
		want map[string]any
	}{
		{NodeInfo{}, map[string]any{"port": int64(3306), "server_id": int64(1)}},
		{NodeInfo{Listen: "127.0.0.1:0", Port: 41234, DataDir: dir, NodeID: "n2", Hostname: "db7"},
			map[string]any{"port": int64(41234), "bind_address": "127.0.0.1", "datadir": dir + string(filepath.Separator),
				"hostname": "db7", "server_id": int64(ServerID("n2"))}},
		{NodeInfo{Listen: ":3307", Port: 3307, DataDir: dir + "/", Hostname: "h"},
			map[string]any{"port": int64(3307), "bind_address": "*", "datadir": dir + "/"}},
	} {
		vars := sysVars("v")
		tc.info.setVars(vars)
		for name, want := range tc.want {
			if got := vars[name].value; got != want {
				t.Errorf("%+v: @@%s = %v (%T), want %v", tc.info, name, got, got, want)
			}
		}
	}
	if ServerID("n1") == ServerID("n2") || ServerID("n1") == 0 {
		t.Errorf("server ids: n1 %d, n2 %d", ServerID("n1"), ServerID("n2"))
	}
}
