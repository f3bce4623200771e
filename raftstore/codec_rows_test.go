package raftstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
)

// rowsSeedCommands are row-table commands as the wire layer builds them
// (FuzzDecodeBatch's seeds).
func rowsSeedCommands() []ticket.Command {
	def, err := ticket.NewTableDef(&ticket.TableSpec{DB: "d", Name: "leaf_alloc", Columns: []ticket.ColumnSpec{
		{Name: "biz_tag", Type: "varchar", Width: 128, NotNull: true},
		{Name: "max_id", Type: "bigint", NotNull: true, HasDefault: true, Default: ticket.Value{Kind: ticket.ValInt, Int: 1}},
		{Name: "step", Type: "int", NotNull: true},
		{Name: "update_time", Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
	}, Keys: []ticket.KeySpec{{Primary: true, Columns: []string{"biz_tag"}}}})
	if err != nil {
		panic(err)
	}
	return []ticket.Command{
		{Op: ticket.OpCreateTable, DB: "d", Table: "leaf_alloc", Def: def},
		{Op: ticket.OpInsert, DB: "d", Table: "leaf_alloc", Columns: []string{"biz_tag", "step", "update_time"},
			Values: [][]ticket.Value{{{Kind: ticket.ValString, Str: "a"}, {Kind: ticket.ValInt, Int: 100}, {Kind: ticket.ValNow}}}},
		{Op: ticket.OpUpdate, DB: "d", Table: "leaf_alloc", Rows: &ticket.RowsCommand{
			Sets: []ticket.RowSet{{Col: "max_id", A: ticket.RowOperand{Col: "max_id"}, Op: '+', B: ticket.RowOperand{Col: "step"}},
				{Col: "update_time", A: ticket.RowOperand{Val: ticket.Value{Kind: ticket.ValNow}}}},
			Where: []ticket.RowCond{{Col: "biz_tag", Val: ticket.Value{Kind: ticket.ValString, Str: "a"}}}}},
		{Op: ticket.OpDelete, DB: "d", Table: "leaf_alloc", Rows: &ticket.RowsCommand{}},
	}
}

func TestRowsCommandsRoundTrip(t *testing.T) {
	cmds := rowsSeedCommands()
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
}

// TestRowTableStateAndSnapshot: a row table with rows goes through the
// state file encoding, a result's row images through the forwarding
// encoding, and the FSM applies the commands with the entry's time.
func TestRowTableStateAndSnapshot(t *testing.T) {
	cmds := rowsSeedCommands()
	tb := ticket.Table{Def: *cmds[0].Def, AutoInc: 1, Data: [][]ticket.Datum{
		{{S: "a"}, {S: "101"}, {S: "100"}, {S: "2026-11-22 10:00:00"}},
		{{S: "b"}, {S: "1"}, {S: "5"}, {S: "2026-11-22 10:00:01"}},
	}}
	got, err := decodeTable(encodeTable(nil, &tb))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, tb) {
		t.Fatalf("table round trip\n got %+v\nwant %+v", *got, tb)
	}
	bad := tb
	bad.Data = [][]ticket.Datum{{{S: "only one value"}}}
	if _, err := decodeTable(encodeTable(nil, &bad)); err == nil {
		t.Fatal("a row with the wrong number of values decoded")
	}
	rs := []ticket.Result{{Affected: 1, Images: tb.Data}}
	back, err := DecodeResults(EncodeResults(nil, rs))
	if err != nil || !reflect.DeepEqual(back, rs) {
		t.Fatalf("results round trip: %+v, %v", back, err)
	}

	// Through the state machine: NOW() and CURRENT_TIMESTAMP are the
	// entry's AppendedAt on every replica.
	f := openTestFSM(t, "")
	at := time.Date(2026, 11, 22, 12, 34, 56, 0, time.UTC)
	for i, batch := range [][]ticket.Command{{{Op: ticket.OpCreateDB, DB: "d"}}, cmds[:3]} {
		l := entry(uint64(i+1), batch...)
		l.AppendedAt = at
		for _, r := range applyOK(t, f, l) {
			if r.Err != nil {
				t.Fatalf("entry %d: %v", i+1, r.Err)
			}
		}
	}
	var row []ticket.Datum
	if err := f.View(func(s ticket.Store) error {
		t, err := s.Table("d", "leaf_alloc")
		if err == nil && t != nil && len(t.Data) == 1 {
			row = t.Data[0]
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if row == nil || row[1].S != "101" || row[3].S != "2026-11-22 12:34:56" {
		t.Fatalf("row after insert and update: %v", row)
	}
}

// BenchmarkRowTableEncode is what the state machine pays per Raft entry
// that changes a row table of n rows (ticket.MaxRows at most): the table
// is encoded whole at the transaction's flush, and decoded whole the
// first time an entry touches it.
func BenchmarkRowTableEncode(b *testing.B) {
	def := rowsSeedCommands()[0].Def
	for _, n := range []int{100, 10000, ticket.MaxRows} {
		tb := ticket.Table{Def: *def, AutoInc: 1}
		for i := range n {
			tb.Data = append(tb.Data, []ticket.Datum{{S: fmt.Sprintf("tag%07d", i)}, {S: "1"}, {S: "1000"}, {S: "2026-01-01 00:00:00"}})
		}
		var buf []byte
		b.Run(fmt.Sprint("encode/", n), func(b *testing.B) {
			for range b.N {
				buf = encodeTable(buf[:0], &tb)
			}
			b.SetBytes(int64(len(buf)))
		})
		b.Run(fmt.Sprint("decode/", n), func(b *testing.B) {
			for range b.N {
				if _, err := decodeTable(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
