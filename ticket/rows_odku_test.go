package ticket

import (
	"testing"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// TestRowsOnDuplicateKeyUpdate: INSERT ... ON DUPLICATE KEY UPDATE on a
// row table (MariaDB's write_record): the counts, the row a collision
// picks, VALUES(col), LAST_INSERT_ID(expr) and the given-back id, and a
// failing update that leaves nothing changed.
func TestRowsOnDuplicateKeyUpdate(t *testing.T) {
	spec := &model.TableSpec{DB: "ids", Name: "od", Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true, AutoInc: true},
		{Name: "k", Type: "varchar", Width: 10, NotNull: true},
		{Name: "u", Type: "int"},
		{Name: "n", Type: "int", HasDefault: true, Default: num(0)},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "k", Unique: true, Columns: []string{"k"}}, {Name: "u", Unique: true, Columns: []string{"u"}}}}
	e := rowsEnv(t, spec)
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	engine := func(onDup ...model.RowAssign) *model.RowsCommand {
		return &model.RowsCommand{Engine: true, OnDup: onDup}
	}
	ins := func(rc *model.RowsCommand, rows ...[]model.Value) model.Command {
		return model.Command{Op: model.OpInsert, DB: "ids", Table: "od", Now: now, Columns: []string{"k", "u"}, Values: rows, Rows: rc, Increment: 1, Offset: 1}
	}
	col := func(c string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: c} }
	lit := func(n int64) model.RowExpr { v := num(n); return model.RowExpr{Op: model.EVal, Val: &v} }
	plus := func(a, b model.RowExpr) model.RowExpr {
		return model.RowExpr{Op: model.EAdd, Args: []model.RowExpr{a, b}}
	}

	e.ok(ins(engine(), []model.Value{str("a"), num(1)}, []model.Value{str("b"), num(2)}))
	incr := model.RowAssign{Col: "n", Expr: plus(col("n"), lit(1))}
	check := func(what string, r model.Result, affected, matched, insertID uint64, setLast bool) {
		t.Helper()
		if r.Err != nil || r.Affected != affected || r.Matched != matched || r.InsertID != insertID || r.SetLastID != setLast {
			t.Fatalf("%s: %+v, want affected %d matched %d insert id %d set LAST_INSERT_ID %v", what, r, affected, matched, insertID, setLast)
		}
	}
	// A changed row: 2; its generated id (3) is not LAST_INSERT_ID, and
	// the OK packet carries the updated row's id.
	check("update", e.ok(ins(engine(incr), []model.Value{str("a"), num(9)})), 2, 2, 1, false)
	// Found unchanged: 0, and no id (MariaDB counts no row copied).
	check("unchanged", e.ok(ins(engine(model.RowAssign{Col: "n", Expr: col("n")}), []model.Value{str("a"), num(9)})), 0, 1, 0, false)
	check("insert", e.ok(ins(engine(incr), []model.Value{str("c"), num(3)})), 1, 1, 5, true)
	// ('a', 2) collides on k (row 1) and u (row 2): the first key wins.
	e.ok(ins(engine(model.RowAssign{Col: "n", Expr: lit(100)}), []model.Value{str("a"), num(2)}))
	// id = LAST_INSERT_ID(id): unchanged, yet LAST_INSERT_ID() is 2.
	r := e.ok(ins(engine(model.RowAssign{Col: "id", Expr: model.RowExpr{Op: model.ELastID, Args: []model.RowExpr{col("id")}}}), []model.Value{str("z"), num(2)}))
	check("LAST_INSERT_ID(id)", r, 0, 1, 2, true)
	if r.LastID != 2 {
		t.Fatalf("LAST_INSERT_ID(id): %d", r.LastID)
	}
	// Several rows; VALUES(u); the updated row's id goes to the next row.
	r = e.ok(ins(engine(model.RowAssign{Col: "n", Expr: plus(model.RowExpr{Op: model.EValues, Col: "u"}, col("n"))}),
		[]model.Value{str("d"), num(7)}, []model.Value{str("a"), num(1)}, []model.Value{str("e"), num(8)}))
	check("several rows", r, 4, 4, 8, true)
	if got, want := text(e.rows("ids", "od")), "1|a|1|101\n2|b|2|0\n5|c|3|0\n8|d|7|0\n9|e|8|0\n"; got != want {
		t.Fatalf("rows:\n%swant\n%s", got, want)
	}
	// The statement took one id per row: the next is 11.
	check("next", e.ok(ins(engine(), []model.Value{str("f"), num(10)})), 1, 1, 11, true)
	// An update that collides: 1062, and nothing of the statement stays.
	before := text(e.rows("ids", "od"))
	r = e.do(ins(engine(model.RowAssign{Col: "k", Expr: model.RowExpr{Op: model.EVal, Val: &model.Value{Kind: model.ValString, Str: "b"}}}), []model.Value{str("g"), num(11)}, []model.Value{str("a"), num(0)}))
	if r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry {
		t.Fatalf("colliding update: %+v", r)
	}
	if got := text(e.rows("ids", "od")); got != before {
		t.Fatalf("a failed statement changed the table:\n%swas\n%s", got, before)
	}
	// Expressions in VALUES, computed at apply time (the failed statement
	// used ids 12 and 13: InnoDB does not give them back).
	r = e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "od", Now: now, Columns: []string{"k", "u", "n"}, Increment: 1, Offset: 1,
		Values: [][]model.Value{{str("h"), {Kind: model.ValNull}, {Kind: model.ValNull}}},
		Rows:   &model.RowsCommand{Engine: true, Exprs: [][]model.RowExpr{{{}, plus(lit(20), lit(1)), {Op: model.ENeg, Args: []model.RowExpr{lit(5)}}}}}})
	if got := text(r.Images); got != "14|h|21|-5\n" {
		t.Fatalf("expressions in VALUES: %q", got)
	}
}

// TestRowsNoDefault: a NOT NULL column without a default that an INSERT
// gives no value is 1364 in strict mode, once for the statement, unless ON
// DUPLICATE KEY UPDATE assigns it (then 0, silently, as MariaDB); outside
// strict mode it is 1235 and nothing is written, where builds before
// command version 6 answered 1364 (a replica of either writes nothing).
func TestRowsNoDefault(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "nd", Columns: []model.ColumnSpec{
		{Name: "a", Type: "int", NotNull: true}, {Name: "b", Type: "int", NotNull: true}, {Name: "c", Type: "varchar", Width: 5},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"a"}}}})
	ins := func(rc model.RowsCommand, ignore bool, rows ...[]model.Value) model.Result {
		rc.Engine = true
		return e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "nd", Columns: []string{"a"}, Values: rows, Rows: &rc, Ignore: ignore})
	}
	if r := ins(model.RowsCommand{}, false, []model.Value{num(1)}, []model.Value{num(2)}); r.Err == nil || r.Err.Code != mysqlerr.CodeNoDefault {
		t.Fatalf("strict: %+v", r)
	}
	b := model.RowAssign{Col: "b", Expr: model.RowExpr{Op: model.ECol, Col: "a"}}
	if r := ins(model.RowsCommand{OnDup: []model.RowAssign{b}}, false, []model.Value{num(1)}); r.Err != nil || r.Affected != 1 {
		t.Fatalf("assigned by ON DUPLICATE KEY UPDATE: %+v", r)
	}
	for _, c := range []struct {
		rc     model.RowsCommand
		ignore bool
	}{{model.RowsCommand{NotStrict: true}, false}, {model.RowsCommand{}, true}} {
		if r := ins(c.rc, c.ignore, []model.Value{num(3)}); r.Err == nil || r.Err.Code != mysqlerr.CodeNotSupported {
			t.Fatalf("not strict %+v: %+v", c, r)
		}
	}
	if got := text(e.rows("ids", "nd")); got != "1|0|NULL\n" {
		t.Fatalf("rows: %q", got)
	}
}

// TestRowsReplayAlike: what builds before this one wrote for the same
// command, where only the answer changed: REPLACE of an identical row on
// a table clustered by hidden row id counts 1 (MariaDB's in-place update)
// but still writes the row again under a new id (it moves to the end, as
// before); a failing INSERT IGNORE whose only generated id went to an
// ignored row leaves the counter where it was.
func TestRowsReplayAlike(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "h", Columns: []model.ColumnSpec{{Name: "a", Type: "int"}, {Name: "b", Type: "int"}},
		Keys: []model.KeySpec{{Name: "a", Unique: true, Columns: []string{"a"}}}},
		&model.TableSpec{DB: "ids", Name: "g", Columns: []model.ColumnSpec{
			{Name: "id", Type: "int", NotNull: true, AutoInc: true}, {Name: "k", Type: "varchar", Width: 5, NotNull: true}, {Name: "d", Type: "date"}},
			Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "k", Unique: true, Columns: []string{"k"}}}})
	rc := func() *model.RowsCommand { return &model.RowsCommand{Engine: true} }
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "h", Values: [][]model.Value{{num(1), num(1)}, {num(2), num(2)}}, Rows: rc()})
	r := e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "h", Replace: true, Values: [][]model.Value{{num(1), num(1)}}, Rows: rc()})
	if r.Affected != 1 {
		t.Fatalf("REPLACE of an identical row: affected %d, want 1", r.Affected)
	}
	if got := text(e.rows("ids", "h")); got != "2|2\n1|1\n" {
		t.Fatalf("hidden-id table after REPLACE:\n%s", got)
	}
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "g", Columns: []string{"k"}, Values: [][]model.Value{{str("a")}}, Rows: rc(), Increment: 1, Offset: 1})
	before := func() uint64 { tb, _ := e.s.Table("ids", "g"); return tb.AutoInc }()
	r = e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "g", Ignore: true, Columns: []string{"k", "d"}, Increment: 1, Offset: 1,
		Values: [][]model.Value{{str("a"), {Kind: model.ValNull}}, {str("b"), str("2024-02-30")}}, Rows: rc()})
	if r.Err == nil {
		t.Fatalf("INSERT IGNORE of a date MariaDB stores as zero: %+v", r)
	}
	if tb, _ := e.s.Table("ids", "g"); tb.AutoInc != before {
		t.Fatalf("counter %d after the failed statement, was %d", tb.AutoInc, before)
	}
}
