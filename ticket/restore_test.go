package ticket

import (
	"errors"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

func int32Table(db, name string, autoInc uint64) model.Table {
	def := tickets64(db, name)
	def.IDType = model.IntType{Kind: model.Int, Unsigned: true}
	return model.Table{Def: *def, AutoInc: autoInc}
}

// seqTable is the MySQL manual's sequence table: no AUTO_INCREMENT, the
// counter is the row.
func seqTable(db, name string, rows ...uint64) model.Table {
	t := model.Table{Def: model.TableDef{DB: db, Name: name, IDCol: "id", IDType: model.IntType{Kind: model.BigInt}}, AutoInc: 1}
	for _, id := range rows {
		t.Rows = append(t.Rows, model.Row{ID: id})
	}
	return t
}

func TestAdvance(t *testing.T) {
	d := model.Dump{
		Databases: []string{"flickr"},
		Tables: []model.Table{
			{Def: *tickets64("flickr", "A"), AutoInc: 500, Rows: []model.Row{{ID: 499, Stub: "a"}}},
			int32Table("flickr", "B", 10),
			seqTable("flickr", "S", 7),
			{Def: *tickets64("flickr", "X"), AutoInc: ^uint64(0), Exhausted: true},
		},
	}
	moves, err := AdvanceDump(&d, 1000, 1200)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Move{
		{Table: "flickr.A", From: 500, To: 1500},
		{Table: "flickr.B", From: 10, To: 1200}, // the floor wins
		{Table: "flickr.S", From: 8, To: 1200},
		{Table: "flickr.X", Exhausted: true},
	}
	for i := range want {
		if moves[i] != want[i] {
			t.Errorf("move %d: %+v, want %+v", i, moves[i], want[i])
		}
	}
	if d.Tables[0].AutoInc != 1500 || d.Tables[0].Rows[0].ID != 499 {
		t.Errorf("A: %+v (rows keep their ids, the counter moves)", d.Tables[0])
	}
	if d.Tables[1].AutoInc != 1200 {
		t.Errorf("B: counter %d", d.Tables[1].AutoInc)
	}
	if d.Tables[2].Rows[0].ID != 1199 {
		t.Errorf("S: the sequence row is %d, want 1199 (next id 1200)", d.Tables[2].Rows[0].ID)
	}
	if !d.Tables[3].Exhausted || d.Tables[3].AutoInc != ^uint64(0) {
		t.Errorf("X: an exhausted table must stay exhausted: %+v", d.Tables[3])
	}
}

// TestAdvanceOverflow: a move past the type's maximum is refused for the
// whole dump, which is left as it was.
func TestAdvanceOverflow(t *testing.T) {
	for name, c := range map[string]struct {
		advance, floor uint64
		table          model.Table
	}{
		"int unsigned advance": {1000, 0, int32Table("d", "t", 4294967000)},
		"int unsigned floor":   {0, 4294967296, int32Table("d", "t", 5)},
		"bigint wraps":         {^uint64(0) - 5, 0, model.Table{Def: *tickets64("d", "t"), AutoInc: 10}},
		"sequence row":         {10, 0, seqTable("d", "t", 1<<63-5)},
	} {
		ok := model.Table{Def: *tickets64("d", "a"), AutoInc: 7}
		d := model.Dump{Databases: []string{"d"}, Tables: []model.Table{ok, c.table}}
		moves, err := AdvanceDump(&d, c.advance, c.floor)
		if !errors.Is(err, ErrAdvanceOverflow) || moves != nil {
			t.Errorf("%s: moves %v err %v, want ErrAdvanceOverflow", name, moves, err)
			continue
		}
		if !strings.Contains(err.Error(), "d.t") {
			t.Errorf("%s: error does not name the table: %v", name, err)
		}
		if d.Tables[0].AutoInc != 7 {
			t.Errorf("%s: the other table moved although the advance was refused", name)
		}
	}
}

func TestApplyRestore(t *testing.T) {
	e := newEnv(t)
	e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Replace: true, Columns: []string{"stub"},
		Values: [][]model.Value{{{Kind: model.ValString, Str: "a"}}}, Increment: 1, Offset: 1})
	d := model.Dump{Databases: []string{"new"}, Tables: []model.Table{{Def: *tickets64("new", "T"), AutoInc: 42}},
		Globals: []model.Global{{Name: "auto_increment_increment", Value: 2}}}

	r := e.do(model.Command{Op: model.OpRestore, Dump: &d})
	if r.Err == nil || !strings.Contains(r.Err.Message, "flickr") {
		t.Fatalf("restore over an existing database: %+v", r)
	}
	if ok, _ := e.s.Database("flickr"); !ok {
		t.Fatal("refused restore changed the state")
	}
	bad := model.Dump{Tables: []model.Table{{Def: *tickets64("missing", "T")}}}
	if r := e.do(model.Command{Op: model.OpRestore, Dump: &bad, Force: true}); r.Err == nil {
		t.Fatal("inconsistent dump accepted")
	}
	if ok, _ := e.s.Database("flickr"); !ok {
		t.Fatal("refused restore changed the state")
	}

	e.ok(model.Command{Op: model.OpRestore, Dump: &d, Force: true})
	if ok, _ := e.s.Database("flickr"); ok {
		t.Error("old database survived")
	}
	r = e.ok(model.Command{Op: model.OpInsert, DB: "new", Table: "T", Replace: true, Columns: []string{"stub"},
		Values: [][]model.Value{{{Kind: model.ValString, Str: "a"}}}, Increment: 1, Offset: 1})
	if r.InsertID != 42 {
		t.Errorf("first id after restore %d, want 42", r.InsertID)
	}
	if v, _, _ := e.s.Global("auto_increment_increment"); v != 2 {
		t.Errorf("global %d, want 2", v)
	}
	// The command's tables are not shared with the state.
	d.Tables[0].AutoInc = 1
	if tb, _ := e.s.Table("new", "T"); tb.AutoInc != 43 {
		t.Errorf("state counter %d, want 43", tb.AutoInc)
	}
}
