package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/raftstore"
)

// TestMemberRows checks the lag (the highest commit index reported minus
// each member's applied index), a member that did not answer, and a failed
// state machine shown as not ready.
func TestMemberRows(t *testing.T) {
	doc := func(st nodeStatus) json.RawMessage {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	leader := nodeStatus{Status: raftstore.Status{NodeID: "n1", State: "Leader", Term: 4, AppliedIndex: 10, CommitIndex: 10,
		CommandVersion: 3, ClusterVersion: 2}, Ready: true, Version: "v1"}
	behind := nodeStatus{Status: raftstore.Status{NodeID: "n2", State: "Follower", Term: 4, AppliedIndex: 7, CommitIndex: 8, Error: "state machine stopped"}, Ready: true}
	rows := memberRows([]raftstore.MemberReport{
		{ID: "n1", Addr: "a1", Status: doc(leader)},
		{ID: "n2", Addr: "a2", Status: doc(behind)},
		{ID: "n3", Addr: "a3", Error: "dial a3: connection refused"},
	})
	if r := rows[0]; r.Lag != 0 || !r.Ready || r.Role != "Leader" || r.Version != "v1" || r.CommandVersion != 3 || r.ClusterVersion != 2 {
		t.Errorf("leader row %+v", r)
	}
	if r := rows[1]; r.Lag != 3 || r.Ready || r.NotReady != "state machine stopped" {
		t.Errorf("lagging follower with a failed state machine: %+v", r)
	}
	if r := rows[2]; r.Role != "unreachable" || r.Error == "" || r.Ready {
		t.Errorf("member that did not answer: %+v", r)
	}
	var b bytes.Buffer
	if err := writeStatusTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || lines[4] != "cluster command version: 2" || !regexp.MustCompile(`\sv1\s+3\s+yes$`).MatchString(lines[1]) || !strings.Contains(lines[3], "no: dial a3: connection refused") || !strings.Contains(lines[2], "no: state machine stopped") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestStatusRedisLine: members with a Redis listener are listed under
// the table; without any, the table is as before.
func TestStatusRedisLine(t *testing.T) {
	st := nodeStatus{Status: raftstore.Status{NodeID: "n1", State: "Leader"}, Ready: true, RedisAddr: "127.0.0.1:6379"}
	doc, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	rows := memberRows([]raftstore.MemberReport{{ID: "n1", Addr: "a1", Status: doc}, {ID: "n2", Addr: "a2", Error: "down"}})
	if rows[0].RedisAddr != "127.0.0.1:6379" {
		t.Fatalf("row %+v", rows[0])
	}
	var b bytes.Buffer
	if err := writeStatusTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nredis: n1 127.0.0.1:6379\n") {
		t.Errorf("table:\n%s", b.String())
	}
	rows[0].RedisAddr = ""
	b.Reset()
	if err := writeStatusTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "redis") {
		t.Errorf("a table without Redis listeners mentions them:\n%s", b.String())
	}
}
