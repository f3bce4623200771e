package ticket

import (
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

func tickets64(db, name string) *model.TableDef {
	return &model.TableDef{DB: db, Name: name, IDCol: "id", IDType: model.IntType{Kind: model.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, IDKey: "PRIMARY", IDNotNull: true, StubCol: "stub", StubType: "char(1)", StubLen: 1,
		StubKey: "stub", StubNotNull: true, Engine: "MyISAM"}
}

type env struct {
	t testing.TB
	s *MemStore
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, s: NewMemStore()}
	e.ok(model.Command{Op: model.OpCreateDB, DB: "flickr"})
	e.ok(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T")})
	return e
}

func (e *env) do(c model.Command) model.Result {
	e.t.Helper()
	r, err := Apply(e.s, &c)
	if err != nil {
		e.t.Fatalf("Apply(%v): storage error %v", &c, err)
	}
	return r
}

func (e *env) ok(c model.Command) model.Result {
	e.t.Helper()
	r := e.do(c)
	if r.Err != nil {
		e.t.Fatalf("Apply(%v): %v", &c, r.Err)
	}
	return r
}

func replace(stubs ...string) model.Command {
	c := model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Replace: true, Increment: 1, Offset: 1}
	c.Columns = []string{"stub"}
	for _, s := range stubs {
		c.Values = append(c.Values, []model.Value{{Kind: model.ValString, Str: s}})
	}
	return c
}

func (e *env) autoInc(name string) uint64 {
	e.t.Helper()
	t, _ := e.s.Table("flickr", name)
	return t.AutoInc
}

func TestNextIDMatchesMariaDB(t *testing.T) {
	// Values observed on MariaDB 10.11 (MyISAM) and MySQL's formula.
	cases := []struct {
		autoInc, inc, off, want uint64
	}{
		{1, 1, 1, 1},
		{2, 5, 3, 3},
		{4, 5, 3, 8},
		{9, 2, 5, 9}, // offset > increment: the formula, not "offset ignored"
		{10, 2, 5, 11},
		{1, 2, 5, 1}, // unsigned wrap-around, as MySQL computes it
		{2, 2, 5, 3},
		{1, 2, 2, 2},
		{3, 2, 2, 4},
		{1000, 7, 3, 1004},
	}
	for _, c := range cases {
		got, ok := model.NextID(c.autoInc, c.inc, c.off)
		if !ok || got != c.want {
			t.Errorf("NextID(%d,%d,%d) = %d,%v; want %d", c.autoInc, c.inc, c.off, got, ok, c.want)
		}
		if got%c.inc != c.off%c.inc {
			t.Errorf("NextID(%d,%d,%d) = %d not congruent to offset", c.autoInc, c.inc, c.off, got)
		}
	}
	if _, ok := model.NextID(^uint64(0), 2, 2); ok {
		t.Errorf("NextID at 2^64-1 with increment 2 must fail")
	}
}

func TestReplaceSemantics(t *testing.T) {
	e := newEnv(t)
	r := e.ok(replace("a"))
	if r.Affected != 1 || r.InsertID != 1 || !r.SetLastID || r.LastID != 1 {
		t.Fatalf("new stub: %+v", r)
	}
	r = e.ok(replace("a"))
	if r.Affected != 2 || r.InsertID != 2 {
		t.Fatalf("existing stub: %+v", r)
	}
	r = e.ok(replace("a", "a", "a"))
	if r.Affected != 6 || r.InsertID != 3 || r.LastID != 3 {
		t.Fatalf("multi-row existing: %+v", r)
	}
	r = e.ok(replace("c", "d"))
	if r.Affected != 2 || r.InsertID != 6 {
		t.Fatalf("multi-row new: %+v", r)
	}
	tb, _ := e.s.Table("flickr", "T")
	want := []model.Row{{ID: 5, Stub: "a"}, {ID: 6, Stub: "c"}, {ID: 7, Stub: "d"}}
	if len(tb.Rows) != 3 || tb.Rows[0] != want[0] || tb.Rows[1] != want[1] || tb.Rows[2] != want[2] {
		t.Fatalf("rows = %v, want %v", tb.Rows, want)
	}
	if tb.AutoInc != 8 {
		t.Fatalf("AutoInc = %d, want 8", tb.AutoInc)
	}
}

func TestIncrementOffset(t *testing.T) {
	e := newEnv(t)
	e.ok(replace("a")) // id 1
	c := replace("a")
	c.Increment, c.Offset = 5, 3
	if r := e.ok(c); r.InsertID != 3 {
		t.Fatalf("inc 5 off 3: %d, want 3", r.InsertID)
	}
	if r := e.ok(c); r.InsertID != 8 {
		t.Fatalf("inc 5 off 3 again: %d, want 8", r.InsertID)
	}
	if got := e.autoInc("T"); got != 9 {
		t.Fatalf("AutoInc %d, want 9 (MyISAM: max+1)", got)
	}
	c.Increment, c.Offset = 2, 5
	if r := e.ok(c); r.InsertID != 9 {
		t.Fatalf("inc 2 off 5: %d, want 9", r.InsertID)
	}
	if r := e.ok(c); r.InsertID != 11 {
		t.Fatalf("inc 2 off 5 again: %d, want 11", r.InsertID)
	}
}

func TestInsertDuplicateAndOnDup(t *testing.T) {
	e := newEnv(t)
	e.ok(replace("a"))
	ins := model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Increment: 1, Offset: 1, Columns: []string{"stub"}, Values: [][]model.Value{{{Kind: model.ValString, Str: "a"}}}}
	r := e.do(ins)
	if r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry || r.Err.Message != "Duplicate entry 'a' for key 'stub'" {
		t.Fatalf("duplicate insert: %+v", r.Err)
	}
	if got := e.autoInc("T"); got != 2 {
		t.Fatalf("failed insert moved AutoInc to %d", got)
	}
	ins.Values[0][0].Str = "e"
	ins.OnDup = &model.Update{Column: "id", Delta: 1, SetLastID: true}
	r = e.ok(ins)
	if r.Affected != 1 || r.InsertID != 2 || r.LastID != 2 {
		t.Fatalf("on dup, new stub: %+v", r)
	}
	r = e.ok(ins)
	if r.Affected != 2 || r.InsertID != 3 || r.LastID != 3 {
		t.Fatalf("on dup, existing: %+v", r)
	}
	if got := e.autoInc("T"); got != 4 {
		t.Fatalf("AutoInc %d after update to 3, want 4", got)
	}
	ins.OnDup = &model.Update{Delta: 1}
	r = e.ok(ins)
	if r.Affected != 2 || r.SetLastID {
		t.Fatalf("on dup without LAST_INSERT_ID must not set it: %+v", r)
	}
	// Non-transactional multi-row: rows before the failing one stay.
	multi := replace("f", "e", "g")
	multi.Replace = false
	r = e.do(multi)
	if r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry || !r.SetLastID || r.LastID != 5 {
		t.Fatalf("multi-row with duplicate: %+v", r)
	}
	tb, _ := e.s.Table("flickr", "T")
	if len(tb.Rows) != 3 {
		t.Fatalf("rows %v: want a, e, f", tb.Rows)
	}
}

func TestTypeMaximum(t *testing.T) {
	e := newEnv(t)
	def := tickets64("flickr", "T32")
	def.IDType = model.IntType{Kind: model.Int, Unsigned: true, Width: 10}
	e.ok(model.Command{Op: model.OpCreateTable, Def: def})
	e.ok(model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T32", HasAutoInc: true, AutoInc: 4294967294})
	c := replace("a")
	c.Table = "T32"
	if r := e.ok(c); r.InsertID != 4294967294 {
		t.Fatalf("got %d", r.InsertID)
	}
	if r := e.ok(c); r.InsertID != 4294967295 {
		t.Fatalf("got %d", r.InsertID)
	}
	r := e.do(c)
	if r.Err == nil || r.Err.Code != mysqlerr.CodeAutoincRange || r.SetLastID {
		t.Fatalf("past INT UNSIGNED max: %+v", r)
	}
	tb, _ := e.s.Table("flickr", "T32")
	if len(tb.Rows) != 1 || tb.Rows[0].ID != 4294967295 || tb.AutoInc != 4294967296 {
		t.Fatalf("state changed by failed REPLACE: %+v", tb)
	}

	// BIGINT UNSIGNED: the very last id is handed out once, never twice.
	e.ok(model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasAutoInc: true, AutoInc: ^uint64(0)})
	if r := e.ok(replace("a")); r.InsertID != ^uint64(0) {
		t.Fatalf("got %d", r.InsertID)
	}
	if r := e.do(replace("a")); r.Err == nil || r.Err.Code != mysqlerr.CodeAutoincRange {
		t.Fatalf("2^64-1 handed out twice: %+v", r)
	}
}

func TestAlterNeverBackwards(t *testing.T) {
	e := newEnv(t)
	e.ok(model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasAutoInc: true, AutoInc: 1000})
	if r := e.ok(replace("a")); r.InsertID != 1000 {
		t.Fatalf("after ALTER 1000: %d", r.InsertID)
	}
	e.ok(model.Command{Op: model.OpAlterTable, DB: "flickr", Table: "T", HasAutoInc: true, AutoInc: 10})
	if r := e.ok(replace("a")); r.InsertID != 1001 {
		t.Fatalf("ALTER below max moved the counter back: %d", r.InsertID)
	}
}

func TestSequenceUpdate(t *testing.T) {
	e := newEnv(t)
	e.ok(model.Command{Op: model.OpCreateTable, Def: &model.TableDef{DB: "flickr", Name: "seq", IDCol: "id", IDType: model.IntType{Kind: model.Int}, IDNotNull: true}})
	e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "seq", Values: [][]model.Value{{{Kind: model.ValInt, Int: 0}}}})
	up := model.Command{Op: model.OpUpdate, DB: "flickr", Table: "seq", Set: model.Update{Delta: 1, SetLastID: true}}
	for want := uint64(1); want <= 3; want++ {
		r := e.ok(up)
		if r.Affected != 1 || r.InsertID != want || r.LastID != want {
			t.Fatalf("update %d: %+v", want, r)
		}
	}
	e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "seq", Values: [][]model.Value{{{Kind: model.ValInt, Int: 10}}}})
	r := e.ok(up)
	if r.Affected != 2 || r.LastID != 11 {
		t.Fatalf("two-row sequence: %+v", r)
	}
}

func TestDDLErrors(t *testing.T) {
	e := newEnv(t)
	if r := e.do(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T")}); r.Err == nil || r.Err.Code != mysqlerr.CodeTableExists {
		t.Fatalf("create existing: %+v", r)
	}
	if r := e.do(model.Command{Op: model.OpCreateTable, Def: tickets64("flickr", "T"), IfExists: true}); r.Err != nil || len(r.Warnings) != 1 {
		t.Fatalf("create if not exists: %+v", r)
	}
	if r := e.do(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "nope"}); r.Err == nil || r.Err.Code != mysqlerr.CodeBadTable || r.Err.Message != "Unknown table 'flickr.nope'" {
		t.Fatalf("drop unknown: %+v", r)
	}
	if r := e.do(model.Command{Op: model.OpDropTable, DB: "flickr", Table: "nope", IfExists: true}); r.Err != nil || len(r.Warnings) != 1 || r.Warnings[0].Level != "Note" {
		t.Fatalf("drop if exists: %+v", r)
	}
	if r := e.do(replace("toolong")); r.Err == nil || r.Err.Code != mysqlerr.CodeDataTooLong {
		t.Fatalf("long stub: %+v", r)
	}
	if r := e.do(model.Command{Op: model.OpInsert, DB: "flickr", Table: "nope", Values: [][]model.Value{{{Kind: model.ValNull}}}}); r.Err == nil || r.Err.Code != mysqlerr.CodeNoSuchTable {
		t.Fatalf("unknown table: %+v", r)
	}
	if r := e.do(model.Command{Op: model.OpCreateDB, DB: "flickr"}); r.Err == nil || r.Err.Code != mysqlerr.CodeDBCreateExists {
		t.Fatalf("create db twice: %+v", r)
	}
	if r := e.ok(model.Command{Op: model.OpDropDB, DB: "flickr"}); r.Affected != 1 {
		t.Fatalf("drop db: %+v", r)
	}
	if tb, _ := e.s.Table("flickr", "T"); tb != nil {
		t.Fatalf("table survived DROP DATABASE")
	}
}

func TestReserve(t *testing.T) {
	e := newEnv(t)
	r := e.ok(model.Command{Op: model.OpReserve, DB: "flickr", Table: "T", Count: 100})
	if r.First != 1 || r.Last != 100 {
		t.Fatalf("reserve: %+v", r)
	}
	if got := e.ok(replace("a")).InsertID; got != 101 {
		t.Fatalf("id after reservation %d, want 101", got)
	}
}

func TestColumnMapping(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		cols []string
		vals []model.Value
		code uint16
	}{
		{[]string{"zz"}, []model.Value{{Kind: model.ValInt, Int: 1}}, mysqlerr.CodeBadField},
		{[]string{"stub"}, []model.Value{{Kind: model.ValString, Str: "a"}, {Kind: model.ValString, Str: "b"}}, mysqlerr.CodeWrongValueCount},
		{nil, []model.Value{{Kind: model.ValString, Str: "x"}, {Kind: model.ValString, Str: "a"}}, 1366},
		{[]string{"stub"}, []model.Value{{Kind: model.ValNull}}, mysqlerr.CodeBadNull},
		{[]string{"ID", "Stub"}, []model.Value{{Kind: model.ValInt, Int: -1}, {Kind: model.ValString, Str: "a"}}, mysqlerr.CodeDataOutOfRange},
	}
	for _, c := range cases {
		cmd := model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Columns: c.cols, Values: [][]model.Value{c.vals}}
		if r := e.do(cmd); r.Err == nil || r.Err.Code != c.code {
			t.Errorf("%v %v: got %+v, want code %d", c.cols, c.vals, r.Err, c.code)
		}
	}
	// Explicit id in the table's column order; the counter jumps past it.
	r := e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Values: [][]model.Value{{{Kind: model.ValInt, Int: 100}, {Kind: model.ValString, Str: "x"}}}})
	if r.InsertID != 100 || r.SetLastID {
		t.Fatalf("explicit id: %+v", r)
	}
	if got := e.ok(replace("A")).InsertID; got != 101 {
		t.Fatalf("after explicit 100: %d", got)
	}
	// 'a' and 'A' are one row under MySQL's case-insensitive collation.
	if r := e.ok(replace("a")); r.Affected != 2 {
		t.Fatalf("REPLACE 'a' after 'A': %+v", r)
	}
}
