package logformat

import (
	"reflect"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// TestTypedParamsRoundTrip: the value kinds of typed binary parameters
// (model.ValTemporal, ValDouble) survive the log, in VALUES and in the
// row engine's expressions.
func TestTypedParamsRoundTrip(t *testing.T) {
	dt := rowengine.TemporalValue(rowengine.TemporalDateTime, false, 2024, 1, 2, 3, 4, 5, 678)
	tm := rowengine.TemporalValue(rowengine.TemporalTime, true, 0, 0, 0, 26, 3, 4, 0)
	dbl := rowengine.DoubleValue(0.1)
	cmds := []model.Command{
		{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{dt, tm, dbl}}, Rows: &model.RowsCommand{Engine: true}},
		{Op: model.OpDelete, DB: "d", Table: "t", Rows: &model.RowsCommand{Engine: true,
			Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: "v"}, {Op: model.EVal, Val: &dbl}}}}},
	}
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
	for i := range cmds {
		if v := Version(&cmds[i]); v != 5 {
			t.Errorf("command %d: version %d, want 5", i, v)
		}
	}
}
