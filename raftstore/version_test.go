package raftstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// TestCommandVersions: the commands of a build from before versions are
// version 1, the others not (logformat's TestCommandVersionTables checks
// that every op, bit and kind has an entry).
func TestCommandVersions(t *testing.T) {
	seq := formattest.SeqSeedCommands()
	for _, tc := range []struct {
		name string
		c    model.Command
		want uint32
	}{
		{"REPLACE", replaceCmd("flickr", "Tickets64", "a"), 1},
		{"CREATE DATABASE", createDB("flickr"), 1},
		{"CREATE TABLE (ticket)", createTickets("flickr", "Tickets64"), 1},
		{"SET GLOBAL", model.Command{Op: model.OpSetGlobal, Name: "auto_increment_increment", Value: 2}, 1},
		{"reservation", model.Command{Op: model.OpReserve, DB: "flickr", Table: "Tickets64", Count: 100}, 1},
		{"version announce", model.Command{Op: model.OpSetGlobal, Name: memberVersionGlobal("n1"), Value: 2}, 1},
		{"DROP TABLE (drop marks)", model.Command{Op: model.OpDropTable, DB: "flickr", Table: "Tickets64"}, 2},
		{"DROP DATABASE (drop marks)", model.Command{Op: model.OpDropDB, DB: "flickr"}, 2},
		{"CREATE SEQUENCE", seq[0], 2},
		{"NEXTVAL", seq[1], 2},
		{"NOW() in VALUES", model.Command{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{{Kind: model.ValNow}}}}, 2},
		{"row-table UPDATE", model.Command{Op: model.OpUpdate, DB: "d", Table: "t", Rows: &model.RowsCommand{}}, 2},
		{"row engine UPDATE", model.Command{Op: model.OpUpdate, DB: "d", Table: "t", Rows: &model.RowsCommand{Engine: true}}, 3},
		{"row engine INSERT", model.Command{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{}}, Rows: &model.RowsCommand{Engine: true}}, 3},
		{"DATETIME parameter in VALUES", model.Command{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{{Kind: model.ValTemporal, Str: "2024-01-02 03:04:05"}}}, Rows: &model.RowsCommand{Engine: true}}, 5},
		{"DOUBLE parameter in a WHERE", model.Command{Op: model.OpDelete, DB: "d", Table: "t", Rows: &model.RowsCommand{Engine: true,
			Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: "v"}, {Op: model.EVal, Val: &model.Value{Kind: model.ValDouble, Str: "2.5"}}}}}}, 5},
		{"DATE parameter in a SET", model.Command{Op: model.OpUpdate, DB: "d", Table: "t", Rows: &model.RowsCommand{Engine: true,
			Assigns: []model.RowAssign{{Col: "d", Expr: model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValTemporal, Str: "2024-01-02"}}}}}}, 5},
		{"legacy row-table UPDATE", model.Command{Op: model.OpUpdate, DB: "d", Table: "t", Rows: &model.RowsCommand{
			Sets: []model.RowSet{{Col: "v", A: model.RowOperand{Col: "v"}, Op: '+', B: model.RowOperand{Val: model.Value{Kind: model.ValInt, Int: 1}}}}}}, 2},
		{"row engine INSERT ... ON DUPLICATE KEY UPDATE", model.Command{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{}},
			Rows: &model.RowsCommand{Engine: true, OnDup: []model.RowAssign{{Col: "n", Expr: model.RowExpr{Op: model.EValues, Col: "n"}}}}}, 6},
		{"row engine INSERT of an expression", model.Command{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{{Kind: model.ValNull}}},
			Rows: &model.RowsCommand{Engine: true, Exprs: [][]model.RowExpr{{{Op: model.EAdd}}}}}, 6},
		{"CREATE TABLE (row, older folding)", formattest.RowsSeedCommands()[0], 2},
		{"CREATE TABLE (row, utf8mb4_general_ci)", formattest.GoldenCollationCommands()[0], 8},
		{"restore of a utf8mb4_general_ci row table", formattest.GoldenCollationCommands()[1], 8},
		{"CREATE TABLE (row, utf8mb4_bin, a utf8mb3 column)", formattest.GoldenColumnCollationCommands()[0], 9},
		{"restore of a row table with column collations", formattest.GoldenColumnCollationCommands()[1], 9},
		{"unknown op", model.Command{Op: 200}, CommandVersion},
	} {
		if got := logformat.Version(&tc.c); got != tc.want {
			t.Errorf("%s: version %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFSMStopsAboveItsVersion: an entry raising the cluster's version
// above the state machine's own stops it there, unapplied.
func TestFSMStopsAboveItsVersion(t *testing.T) {
	f := openTestFSM(t, "")
	f.version = 1
	setupTickets(t, f)
	raise := model.Command{Op: model.OpSetGlobal, Name: clusterVersionGlobal, Value: 2}
	err, _ := f.Apply(entry(2, raise)).(error)
	if !errors.Is(err, ErrFSMFailed) || !errors.Is(err, ErrVersionTooOld) {
		t.Fatalf("raise above the build's version answered %v", err)
	}
	if f.AppliedIndex() != 1 || f.ClusterVersion() != 1 {
		t.Fatalf("applied %d, cluster version %d", f.AppliedIndex(), f.ClusterVersion())
	}
	g := openTestFSM(t, "")
	setupTickets(t, g)
	applyOK(t, g, entry(2, raise, model.Command{Op: model.OpSetGlobal, Name: memberVersionGlobal("n1"), Value: 2}))
	if g.ClusterVersion() != 2 || g.MemberVersions()["n1"] != 2 {
		t.Fatalf("cluster version %d, members %v", g.ClusterVersion(), g.MemberVersions())
	}
}

func statusVersions(n *Node) map[string]uint32 {
	out := map[string]uint32{}
	for _, m := range n.Status().Members {
		if m.VersionAnnounced {
			out[m.ID] = m.CommandVersion
		}
	}
	return out
}

// TestClusterVersionRollingUpgrade plays a rolling upgrade in process: n3
// runs as a build of version 1. A version-2 command is refused with 1235
// naming n3 and nothing is written; version-1 commands go on. Once n3
// restarts as version 2 the leader raises the cluster's version and the
// command commits; n3 restarted as version 1 again is refused at start,
// and a version-1 node cannot join.
func TestClusterVersionRollingUpgrade(t *testing.T) {
	c := startCluster(t, func(cfg *Config) {
		if cfg.NodeID == "n3" {
			cfg.commandVersion = 1
		}
	})
	l := c.leader()
	proposeRetry(t, l, setupCmds()...)
	waitFor(t, "every member's version announced", 10*time.Second, func() bool {
		v := statusVersions(c.nodes["n1"])
		return len(v) == 3 && v["n3"] == 1 && v["n2"] == CommandVersion
	})
	createSeq := append([]model.Command{createDB("d")}, formattest.SeqSeedCommands()[0])
	createSeq[0].IfExists = true
	for _, n := range []*Node{l, c.follower()} {
		before := n.raft.LastIndex()
		res := proposeRetry(t, n, append(createSeq, replaceCmd("flickr", "Tickets64", "a"))...)
		e := res[1].Err
		if e == nil || e.Code != model.CodeNotSupported || !strings.Contains(e.Message, "CREATE SEQUENCE") ||
			!strings.Contains(e.Message, "n3 (version 1") || strings.Contains(e.Message, "n2") {
			t.Fatalf("CREATE SEQUENCE in a mixed cluster through %s: %+v", n.ID(), res[1])
		}
		t.Logf("refused: %s", e.Message)
		if res[0].Err != nil || res[2].Err != nil || res[2].InsertID == 0 {
			t.Fatalf("version-1 commands beside it: %+v %+v", res[0], res[2])
		}
		if n.raft.LastIndex() == before {
			t.Fatal("nothing was committed, not even the version-1 commands")
		}
	}
	c.agree()
	for id, n := range c.nodes {
		must(t, n.View(func(s ticket.Store) error {
			if tb, _ := s.Table("d", "s"); tb != nil {
				t.Errorf("%s holds the refused sequence", id)
			}
			return nil
		}))
		if st := n.Status(); st.ClusterVersion != 1 {
			t.Errorf("%s: cluster version %d in a mixed cluster", id, st.ClusterVersion)
		}
	}

	// Upgrade n3.
	addr3 := c.nodes["n3"].Addr()
	restart := func(version uint32) (*Node, error) {
		cfg := c.cfgs["n3"]
		cfg.Listener = nil
		cfg.RaftAddr = addr3
		cfg.commandVersion = version
		return Open(cfg)
	}
	must(t, c.nodes["n3"].Close())
	n3, err := restart(CommandVersion)
	must(t, err)
	t.Cleanup(func() { n3.Close() })
	c.nodes["n3"] = n3
	waitFor(t, "the cluster's version to rise", 10*time.Second, func() bool {
		for _, n := range c.nodes {
			if n.ClusterVersion() != CommandVersion {
				return false
			}
		}
		return true
	})
	waitFor(t, "n3's new version announced", 10*time.Second, func() bool {
		return statusVersions(c.nodes["n1"])["n3"] == CommandVersion
	})
	res := proposeRetry(t, n3, createSeq...)
	if res[1].Err != nil {
		t.Fatalf("CREATE SEQUENCE after the upgrade: %v", res[1].Err)
	}

	// Downgrade n3: refused at start.
	must(t, n3.Close())
	delete(c.nodes, "n3")
	if n, err := restart(1); !errors.Is(err, ErrDowngrade) {
		if n != nil {
			n.Close()
		}
		t.Fatalf("start as version 1 after the cluster reached 2: %v", err)
	}

	// A version-1 node cannot join.
	cfg := testConfig("n4", t.TempDir(), listen(t))
	cfg.NoBootstrap = true
	cfg.commandVersion = 1
	n4 := openNode(t, cfg)
	if err := c.follower().Join(ctxT(t, 5*time.Second), "n4", n4.Addr()); !errors.Is(err, ErrMemberVersion) {
		t.Fatalf("join of a version-1 node: %v", err)
	}
	cf := c.leader().raft.GetConfiguration()
	must(t, cf.Error())
	for _, s := range cf.Configuration().Servers {
		if s.ID == "n4" || s.Suffrage != raft.Voter {
			t.Fatalf("configuration after the refused join: %+v", cf.Configuration().Servers)
		}
	}
}

// TestNewClusterTakesNewCommandsAtOnce: a new node runs at version 1
// until it raises its cluster's version, within its first second; a
// version-2 command sent as soon as it is ready waits for that instead of
// being refused.
func TestNewClusterTakesNewCommandsAtOnce(t *testing.T) {
	n := openNode(t, testConfig("n1", t.TempDir(), listen(t)))
	must(t, n.WaitReady(ctxT(t, 10*time.Second)))
	res := propose(t, n, append([]model.Command{createDB("d")}, formattest.SeqSeedCommands()[0])...)
	if res[1].Err != nil {
		t.Fatalf("CREATE SEQUENCE on a new node: %v", res[1].Err)
	}
	if n.ClusterVersion() != CommandVersion {
		t.Fatalf("cluster version %d", n.ClusterVersion())
	}
}

// TestMixedClusterRefusesRowUpsert: in a cluster where n3 runs command
// version 5, INSERT ... ON DUPLICATE KEY UPDATE and an expression in
// VALUES on a row table (version 6) are refused with 1235 naming n3, and
// nothing of them is written; an older INSERT on the same table beside them
// commits. A CREATE TABLE of a utf8mb4_general_ci row table (version 8)
// and one with collations of its own (version 9) are refused the same
// way.
func TestMixedClusterRefusesRowUpsert(t *testing.T) {
	c := startCluster(t, func(cfg *Config) {
		if cfg.NodeID == "n3" {
			cfg.commandVersion = 5
		}
	})
	l := c.leader()
	proposeRetry(t, l, createDB("d"), formattest.RowsSeedCommands()[0])
	waitFor(t, "every member's version announced", 10*time.Second, func() bool {
		v := statusVersions(c.nodes["n1"])
		return len(v) == 3 && v["n3"] == 5 && v["n2"] == CommandVersion
	})
	insert := func(tag string, rc model.RowsCommand) model.Command {
		rc.Engine = true
		return model.Command{Op: model.OpInsert, DB: "d", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"},
			Values: [][]model.Value{{{Kind: model.ValString, Str: tag}, {Kind: model.ValInt, Int: 1}}}, Rows: &rc}
	}
	one := model.Value{Kind: model.ValInt, Int: 1}
	upsert := insert("a", model.RowsCommand{OnDup: []model.RowAssign{{Col: "step", Expr: model.RowExpr{Op: model.EValues, Col: "step"}}}})
	expr := insert("b", model.RowsCommand{Exprs: [][]model.RowExpr{{{}, {Op: model.EAdd, Args: []model.RowExpr{{Op: model.EVal, Val: &one}, {Op: model.EVal, Val: &one}}}}}})
	res := proposeRetry(t, c.follower(), upsert, expr, insert("c", model.RowsCommand{}))
	for i, what := range []string{"ON DUPLICATE KEY UPDATE", "expression in VALUES"} {
		e := res[i].Err
		if e == nil || e.Code != model.CodeNotSupported || !strings.Contains(e.Message, "n3 (version 5") || strings.Contains(e.Message, "n2") {
			t.Fatalf("%s in a mixed cluster: %+v", what, res[i])
		}
		t.Logf("refused: %s", e.Message)
	}
	if res[2].Err != nil || res[2].Affected != 1 {
		t.Fatalf("older INSERT beside them: %+v", res[2])
	}
	// A row table of this build (utf8mb4_general_ci, version 8) is
	// refused too; the table of older builds' folding above was not.
	res = proposeRetry(t, l, formattest.GoldenCollationCommands()[0])
	if e := res[0].Err; e == nil || e.Code != model.CodeNotSupported || !strings.Contains(e.Message, "n3 (version 5") || !strings.Contains(e.Message, "utf8mb4_general_ci") {
		t.Fatalf("CREATE TABLE with a collation in a mixed cluster: %+v", res[0])
	}
	// A row table with collations of its own (version 9), too.
	res = proposeRetry(t, l, formattest.GoldenColumnCollationCommands()[0])
	if e := res[0].Err; e == nil || e.Code != model.CodeNotSupported || !strings.Contains(e.Message, "n3 (version 5") || !strings.Contains(e.Message, "COLLATE") {
		t.Fatalf("CREATE TABLE with column collations in a mixed cluster: %+v", res[0])
	}
	c.agree()
	must(t, l.View(func(s ticket.Store) error {
		rows, err := s.Rows("d", "leaf_alloc")
		if err != nil {
			return err
		}
		if n := rows.Len(); n != 1 {
			t.Errorf("%d rows, want only the older INSERT's", n)
		}
		return nil
	}))
}
