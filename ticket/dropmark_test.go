package ticket

import (
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// A dropped and re-created table must not hand out an id again.
func TestDropTableKeepsHighWaterMark(t *testing.T) {
	e := newEnv(t)
	var top uint64
	for range 5 {
		top = e.ok(replace("a")).InsertID
	}
	e.ok(model.Command{Op: model.OpReserve, DB: "flickr", Table: "T", Count: 100}) // a leader's cache range
	e.ok(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "T"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T")})
	got := e.ok(replace("a")).InsertID
	if got <= top+100 {
		t.Fatalf("first id after DROP and CREATE = %d, want above %d (ids and the reserved range handed out before)", got, top+100)
	}
	// An explicit lower AUTO_INCREMENT does not go below the mark; a higher one is kept.
	e.ok(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "T"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T"), CreateAutoInc: 2})
	if a := e.autoInc("T"); a <= got {
		t.Fatalf("AUTO_INCREMENT = 2 re-created at %d, want above %d", a, got)
	}
	e.ok(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "T"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T"), CreateAutoInc: 1 << 40})
	if a := e.autoInc("T"); a != 1<<40 {
		t.Fatalf("AUTO_INCREMENT = 2^40 re-created at %d", a)
	}
	// Other names are not affected.
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "U")})
	if a := e.autoInc("U"); a != 1 {
		t.Fatalf("new table U starts at %d, want 1", a)
	}
}

func TestDropDatabaseKeepsMarks(t *testing.T) {
	e := newEnv(t)
	var top uint64
	for range 3 {
		top = e.ok(replace("a")).InsertID
	}
	e.ok(model.Command{Op: model.OpDropDB, DB: "flickr"})
	e.ok(model.Command{Op: model.OpCreateDB, DB: "flickr"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T")})
	if got := e.ok(replace("a")).InsertID; got <= top {
		t.Fatalf("first id after DROP DATABASE = %d, want above %d", got, top)
	}
}

func TestDropMarkOfExhaustedTable(t *testing.T) {
	e := newEnv(t)
	e.ok(model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasAutoInc: true, AutoInc: ^uint64(0)})
	e.ok(replace("a"))
	e.ok(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "T"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T")})
	if r := e.do(replace("a")); r.Err == nil {
		t.Fatalf("re-created exhausted table handed out %d", r.InsertID)
	}
}

// A restore's advance moves the marks with the tables.
func TestAdvanceMovesDropMarks(t *testing.T) {
	d := &model.Dump{Globals: []model.Global{{Name: DropMarkName("flickr", "T"), Value: 10}, {Name: VarIncrement, Value: 2}}}
	if _, err := AdvanceDump(d, 1000, 0); err != nil {
		t.Fatal(err)
	}
	if d.Globals[0].Value != 1010 || d.Globals[1].Value != 2 {
		t.Fatalf("globals after advance: %+v", d.Globals)
	}
	if table, ok := IsDropMark(d.Globals[0].Name); !ok || table != "flickr.T" {
		t.Fatalf("IsDropMark = %q, %v", table, ok)
	}
}
