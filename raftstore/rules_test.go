package raftstore

import (
	"testing"

	"github.com/ticketd/ticketd/ticket"
)

// strictWhereUpdate is UPDATE WORKER_NODE SET PORT = port WHERE TYPE =
// '1abc' in strict mode: MariaDB 10.11 fails it with 1292.
func strictWhereUpdate(port string) ticket.Command {
	return ticket.Command{Op: ticket.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &ticket.RowsCommand{
		Engine: true,
		Filter: &ticket.RowExpr{Op: ticket.EEq, Args: []ticket.RowExpr{
			{Op: ticket.ECol, Col: "TYPE"}, {Op: ticket.EVal, Val: &ticket.Value{Kind: ticket.ValString, Str: "1abc"}}}},
		Assigns: []ticket.RowAssign{{Col: "PORT", Expr: ticket.RowExpr{Op: ticket.EVal, Val: &ticket.Value{Kind: ticket.ValString, Str: port}}}},
	}}
}

// TestFSMRulesV11: the row tables' apply rules of ticket.RulesV11 take
// effect at the entry that raises the cluster's version to it, on every
// replica alike; before it, the same command applies as older builds
// apply it (a cluster of mixed builds never raises it).
func TestFSMRulesV11(t *testing.T) {
	f := openTestFSM(t, "")
	applyOK(t, f, entry(1, createDB("ids"), ticket.Command{Op: ticket.OpCreateTable, DB: "ids", Table: "WORKER_NODE", Def: workerDef("ids")}, workerInsert("ids", 1, 1)))
	// Older rules: the strict-mode UPDATE warns and updates.
	rs := applyOK(t, f, entry(2, strictWhereUpdate("older")))
	if rs[0].Err != nil || rs[0].Affected != 1 || len(rs[0].Warnings) != 1 {
		t.Fatalf("before version %d: %+v", ticket.RulesV11, rs[0])
	}
	applyOK(t, f, entry(3, ticket.Command{Op: ticket.OpSetGlobal, Name: clusterVersionGlobal, Value: uint64(ticket.RulesV11)}))
	rs = applyOK(t, f, entry(4, strictWhereUpdate("newer")))
	if rs[0].Err == nil || rs[0].Err.Code != 1292 || rs[0].Affected != 0 {
		t.Fatalf("from version %d: want 1292, got %+v", ticket.RulesV11, rs[0])
	}
	rs = applyOK(t, f, entry(5, ticket.Command{Op: ticket.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &ticket.RowsCommand{
		Engine: true, Assigns: []ticket.RowAssign{{Col: "TYPE", Expr: ticket.RowExpr{Op: ticket.EVal, Val: &ticket.Value{Kind: ticket.ValInt, Int: 2}}}}}}))
	if rs[0].Err != nil || len(rs[0].Images) != 1 || rs[0].Images[0][2].S != "older" {
		t.Fatalf("the failed UPDATE changed the row: %+v", rs[0])
	}
}
