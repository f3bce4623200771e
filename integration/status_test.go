package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestStatusCommand runs `ticketd status` against one follower's admin
// address of a three-node cluster: every member is listed with its own
// addresses, one leader, all ready, the same term; --json gives the same
// rows. With a member killed, its row says it did not answer, the others
// are still listed, and the exit status is 1.
func TestStatusCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := harness.StartCluster(ctx, t, 3)
	leader, err := c.Leader(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var from, victim *harness.Node
	for _, n := range c.Nodes {
		switch {
		case n == leader:
		case from == nil:
			from = n
		default:
			victim = n
		}
	}
	status := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, harness.Binary(t), append([]string{"status", "--from", from.HTTPAddr()}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	out, stderr, err := status("--json")
	if err != nil {
		t.Fatalf("ticketd status --json: %v\n%s%s", err, out, stderr)
	}
	var rows []struct {
		ID        string `json:"id"`
		RaftAddr  string `json:"raft_addr"`
		MySQLAddr string `json:"mysql_addr"`
		HTTPAddr  string `json:"http_addr"`
		Role      string `json:"role"`
		Term      uint64 `json:"term"`
		Applied   uint64 `json:"applied_index"`
		Commit    uint64 `json:"commit_index"`
		Version   string `json:"version"`
		Ready     bool   `json:"ready"`
		Error     string `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(rows) != 3 {
		t.Fatalf("%d members listed, want 3:\n%s", len(rows), out)
	}
	leaders := 0
	for _, r := range rows {
		n := c.Node(r.ID)
		if n == nil || r.RaftAddr != n.RaftAddr() || r.MySQLAddr != n.MySQLAddr() || r.HTTPAddr != n.HTTPAddr() {
			t.Errorf("member %+v: addresses are not node %s's", r, r.ID)
			continue
		}
		if !r.Ready || r.Error != "" || r.Term != rows[0].Term || r.Version == "" || r.Commit == 0 {
			t.Errorf("member %+v: want ready, no error, the same term, a version and a commit index", r)
		}
		if r.Role == "Leader" {
			leaders++
			if r.ID != leader.ID() {
				t.Errorf("%s listed as leader, the cluster's is %s", r.ID, leader.ID())
			}
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders listed:\n%s", leaders, out)
	}

	out, stderr, err = status()
	if err != nil {
		t.Fatalf("ticketd status: %v\n%s%s", err, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "LAG") ||
		!strings.HasPrefix(lines[4], "cluster command version: ") {
		t.Fatalf("table:\n%s", out)
	}
	for _, l := range lines[1:4] {
		if !strings.HasSuffix(l, "yes") {
			t.Errorf("member not ready in the table: %q", l)
		}
	}
	t.Logf("ticketd status:\n%s", out)

	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, stderr, err = status()
	if err == nil || !strings.Contains(stderr, victim.ID()+" did not answer") {
		t.Errorf("with %s killed: exit %v, stderr %q; want exit status 1 naming it", victim.ID(), err, stderr)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("status with a member down took %v", took)
	}
	found := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 4 && f[0] == victim.ID():
			if f[4] != "unreachable" {
				t.Errorf("killed member's row: %q", l)
			}
			found++
		case len(f) > 0 && (f[0] == from.ID() || f[0] == leader.ID()):
			if !strings.HasSuffix(l, "yes") {
				t.Errorf("live member's row: %q", l)
			}
			found++
		}
	}
	if found != 3 {
		t.Errorf("with %s killed, the table lists %d of 3 members:\n%s", victim.ID(), found, out)
	}
	t.Logf("with %s killed:\n%s%s", victim.ID(), out, stderr)
}
