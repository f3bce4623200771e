package raftstore

import (
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// strictWhereUpdate is UPDATE WORKER_NODE SET PORT = port WHERE TYPE =
// '1abc' in strict mode: MariaDB 10.11 fails it with 1292.
func strictWhereUpdate(port string) model.Command {
	return model.Command{Op: model.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &model.RowsCommand{
		Engine: true,
		Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{
			{Op: model.ECol, Col: "TYPE"}, {Op: model.EVal, Val: &model.Value{Kind: model.ValString, Str: "1abc"}}}},
		Assigns: []model.RowAssign{{Col: "PORT", Expr: model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValString, Str: port}}}},
	}}
}

// TestFSMRulesV11: the row tables' apply rules of model.RulesV11 take
// effect at the entry that raises the cluster's version to it, on every
// replica alike; before it, the same command applies as older builds
// apply it (a cluster of mixed builds never raises it).
func TestFSMRulesV11(t *testing.T) {
	f := openTestFSM(t, "")
	applyOK(t, f, entry(1, createDB("ids"), model.Command{Op: model.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: workerDef("ids")}, workerInsert("ids", 1, 1)))
	// Older rules: the strict-mode UPDATE warns and updates.
	rs := applyOK(t, f, entry(2, strictWhereUpdate("older")))
	if rs[0].Err != nil || rs[0].Affected != 1 || len(rs[0].Warnings) != 1 {
		t.Fatalf("before version %d: %+v", model.RulesV11, rs[0])
	}
	// Older rules: a 3-row INSERT failing at its second row (1048) keeps
	// only the first row's id used.
	if id := failThenInsert(t, f, 20); id != 3 {
		t.Fatalf("before version %d: next id %d after the failed INSERT, want 3", model.RulesV11, id)
	}
	// Older rules: an unpadded date is 1292.
	if rs := applyOK(t, f, entry(24, unpaddedDate(24))); rs[0].Err == nil || rs[0].Err.Code != 1292 {
		t.Fatalf("before version %d: INSERT of '2024-1-5': %+v", model.RulesV11, rs[0])
	}
	applyOK(t, f, entry(25, model.Command{Op: model.OpSetGlobal, Name: clusterVersionGlobal, Value: uint64(model.RulesV11)}))
	// InnoDB's: the statement reserved an id for each of its 3 rows.
	if id := failThenInsert(t, f, 30); id != 7 {
		t.Fatalf("from version %d: next id %d after the failed INSERT, want 7", model.RulesV11, id)
	}
	if rs := applyOK(t, f, entry(39, unpaddedDate(39))); rs[0].Err != nil || rs[0].Images[0][4].S != "2024-01-05" {
		t.Fatalf("from version %d: INSERT of '2024-1-5': %+v", model.RulesV11, rs[0])
	}
	rs = applyOK(t, f, entry(40, strictWhereUpdate("newer")))
	if rs[0].Err == nil || rs[0].Err.Code != 1292 || rs[0].Affected != 0 {
		t.Fatalf("from version %d: want 1292, got %+v", model.RulesV11, rs[0])
	}
	rs = applyOK(t, f, entry(41, model.Command{Op: model.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &model.RowsCommand{
		Engine: true, Assigns: []model.RowAssign{{Col: "TYPE", Expr: model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValInt, Int: 2}}}},
		Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: "ID"}, {Op: model.EVal, Val: &model.Value{Kind: model.ValInt, Int: 1}}}}}}))
	if rs[0].Err != nil || len(rs[0].Images) != 1 || rs[0].Images[0][2].S != "older" {
		t.Fatalf("the failed UPDATE changed the row: %+v", rs[0])
	}
}

// failThenInsert applies, from index idx, a 3-row WORKER_NODE INSERT
// whose second row has a NULL HOST_NAME (1048), then a 1-row INSERT, and
// returns the id the latter generated.
func failThenInsert(t *testing.T, f *FSM, idx uint64) uint64 {
	t.Helper()
	bad := workerInsert("ids", 3, int(idx))
	bad.Increment, bad.Offset, bad.Rows = 1, 1, &model.RowsCommand{Engine: true}
	bad.Values[1][0] = model.Value{Kind: model.ValNull}
	if rs := applyOK(t, f, entry(idx, bad)); rs[0].Err == nil || rs[0].Err.Code != 1048 {
		t.Fatalf("INSERT with a NULL HOST_NAME: %+v", rs[0])
	}
	good := workerInsert("ids", 1, int(idx)+5)
	good.Increment, good.Offset, good.Rows = 1, 1, &model.RowsCommand{Engine: true}
	rs := applyOK(t, f, entry(idx+1, good))
	if rs[0].Err != nil {
		t.Fatalf("INSERT: %v", rs[0].Err)
	}
	return rs[0].InsertID
}

// unpaddedDate is a WORKER_NODE INSERT of LAUNCH_DATE '2024-1-5'.
func unpaddedDate(n int) model.Command {
	c := workerInsert("ids", 1, n)
	c.Increment, c.Offset, c.Rows = 1, 1, &model.RowsCommand{Engine: true}
	c.Values[0][3] = model.Value{Kind: model.ValString, Str: "2024-1-5"}
	return c
}
