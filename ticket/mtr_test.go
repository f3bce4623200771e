package ticket

import (
	"strings"
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Tests of what MariaDB's regression tests (integration's
// TestMariaDBRegression) found ticketd answering differently.

// TestTicketShape: only Flickr's shape is a ticket table, and it says
// MyISAM, whose semantics it has; every other table is a row table and
// says InnoDB (main/insert, main/auto_increment: a name beside an id, a
// value beside a label, were ticket tables that answered as MyISAM while
// SHOW CREATE TABLE said InnoDB).
func TestTicketShape(t *testing.T) {
	for _, c := range []struct {
		name   string
		spec   *model.TableSpec
		ticket bool
		engine string
	}{
		{"Flickr, ENGINE=InnoDB", &model.TableSpec{DB: "f", Name: "t", Engine: "InnoDB", Columns: []model.ColumnSpec{
			{Name: "id", Type: "bigint", Unsigned: true, NotNull: true, AutoInc: true, PrimaryKey: true},
			{Name: "stub", Type: "char", Width: 1, NotNull: true, Unique: true}}}, true, "MyISAM"},
		{"the manual's sequence table", &model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{
			{Name: "id", Type: "int", NotNull: true}}}, true, "MyISAM"},
		{"a name beside an AUTO_INCREMENT id, no unique stub", &model.TableSpec{DB: "f", Name: "t", Engine: "MyISAM", Columns: []model.ColumnSpec{
			{Name: "id", Type: "tinyint", NotNull: true, AutoInc: true, PrimaryKey: true},
			{Name: "name", Type: "char", Width: 30, NotNull: true}}}, false, "InnoDB"},
		{"a string and an int, no keys", &model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{
			{Name: "a", Type: "char", Width: 10}, {Name: "b", Type: "int"}}}, false, "InnoDB"},
		{"a unique stub without AUTO_INCREMENT", &model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{
			{Name: "id", Type: "int", NotNull: true, PrimaryKey: true},
			{Name: "stub", Type: "varchar", Width: 8, Unique: true}}}, false, "InnoDB"},
	} {
		d, err := NewTableDef(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (d.Rows == nil) != c.ticket || d.Engine != c.engine {
			t.Errorf("%s: ticket table %v, engine %s; want %v, %s", c.name, d.Rows == nil, d.Engine, c.ticket, c.engine)
		}
	}
}

// TestReplaceIdenticalRow: a REPLACE whose row is already there, colliding
// on the last unique key, counts one affected row, as MariaDB updates it
// in place (main/replace); a changed row counts two, and a collision on an
// earlier key (deleted, then re-inserted) two as well.
func TestReplaceIdenticalRow(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "r", Columns: []model.ColumnSpec{
		{Name: "a", Type: "int", NotNull: true}, {Name: "b", Type: "int", NotNull: true}},
		Keys: []model.KeySpec{{Primary: true, Columns: []string{"a", "b"}}}},
		&model.TableSpec{DB: "ids", Name: "u", Columns: []model.ColumnSpec{
			{Name: "a", Type: "int", NotNull: true}, {Name: "b", Type: "int", NotNull: true}},
			Keys: []model.KeySpec{{Primary: true, Columns: []string{"a"}}, {Unique: true, Name: "b", Columns: []string{"b"}}}})
	rep := func(table string, a, b int64) uint64 {
		return e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: table, Replace: true, Rows: &model.RowsCommand{Engine: true},
			Values: [][]model.Value{{num(a), num(b)}}}).Affected
	}
	for _, c := range []struct {
		table string
		a, b  int64
		want  uint64
	}{
		{"r", 1, 1, 1}, {"r", 1, 1, 1}, // identical, on PRIMARY (the only key)
		{"u", 1, 1, 1}, {"u", 1, 1, 2}, // identical, but PRIMARY collides first: deleted and inserted
		{"u", 2, 1, 2}, // a new a, the same b: updated in place on b, changed
	} {
		if got := rep(c.table, c.a, c.b); got != c.want {
			t.Errorf("REPLACE INTO %s VALUES (%d, %d): affected %d, want %d", c.table, c.a, c.b, got, c.want)
		}
	}
}

// TestZeroDateRefused: the number 0 into a DATE and a DEFAULT of a zero
// date are zero dates, which MariaDB stores and ticketd refuses, not 1292
// and 1067 (main/insert, main/delete, main/update).
func TestZeroDateRefused(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "d", Columns: []model.ColumnSpec{{Name: "a", Type: "date"}}})
	r := e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "d", Rows: &model.RowsCommand{Engine: true}, Values: [][]model.Value{{num(0)}}})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeNotSupported {
		t.Errorf("INSERT 0 into a DATE: %v, want 1235", r.Err)
	}
	_, err := NewTableDef(&model.TableSpec{DB: "ids", Name: "z", Columns: []model.ColumnSpec{{Name: "id", Type: "int", PrimaryKey: true},
		{Name: "at", Type: "datetime", NotNull: true, HasDefault: true, Default: str("0000-00-00 00:00:00")}}})
	if err == nil || err.(*model.Error).Code != mysqlerr.CodeNotSupported {
		t.Errorf("DEFAULT '0000-00-00 00:00:00': %v, want 1235", err)
	}
}

// TestTicketIDStrings: a ticket table's id from a string that MariaDB
// would round or cut ('15449237462.0000000000') is refused, not 1366;
// one with no number at all is still 1366 (main/insert).
func TestTicketIDStrings(t *testing.T) {
	e := newEnv(t)
	d, err := NewTableDef(&model.TableSpec{DB: "flickr", Name: "s", Columns: []model.ColumnSpec{{Name: "c1", Type: "bigint", NotNull: true}}})
	if err != nil {
		t.Fatal(err)
	}
	e.ok(model.Command{Op: model.OpCreateTable, Def: d})
	for v, want := range map[string]uint16{"15449237462.0000000000": mysqlerr.CodeNotSupported, "abc": mysqlerr.CodeIncorrectValue} {
		r := e.do(model.Command{Op: model.OpInsert, DB: "flickr", Table: "s", Values: [][]model.Value{{str(v)}}})
		if r.Err == nil || r.Err.Code != want {
			t.Errorf("INSERT '%s': %v, want %d", v, r.Err, want)
		}
	}
}

// TestODKUGeneratedIDWins: an INSERT ... ON DUPLICATE KEY UPDATE id =
// LAST_INSERT_ID(id) whose other row generates an id answers that id, in
// the OK packet and as LAST_INSERT_ID() (main/insert_update).
func TestODKUGeneratedIDWins(t *testing.T) {
	e := newEnv(t)
	e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Columns: []string{"stub"}, Values: [][]model.Value{{str("a")}}, Increment: 1, Offset: 1})
	r := e.ok(model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Ignore: true, Columns: []string{"stub"},
		Values: [][]model.Value{{str("a")}, {str("b")}}, Increment: 1, Offset: 1,
		OnDup: &model.Update{Column: "id", SetLastID: true}})
	if r.InsertID != 2 || r.LastID != 2 {
		t.Fatalf("insert id %d, LAST_INSERT_ID %d; want 2 and 2", r.InsertID, r.LastID)
	}
}

// TestODKUColumnCountsAsGiven: a NOT NULL column without a default that
// ON DUPLICATE KEY UPDATE assigns is not 1364 for a new row, which takes
// its implicit default; one it does not assign still is 1364
// (main/insert_update, under TRADITIONAL).
func TestODKUColumnCountsAsGiven(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "o", Columns: []model.ColumnSpec{
		{Name: "a", Type: "int", NotNull: true, PrimaryKey: true}, {Name: "b", Type: "int", NotNull: true}}})
	ins := func(a int64, set string) model.Result {
		return e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "o", Columns: []string{"a"}, Values: [][]model.Value{{num(a)}},
			Rows: &model.RowsCommand{Engine: true, OnDup: []model.RowAssign{{Col: set, Expr: model.RowExpr{Op: model.ECol, Col: "a"}}}}})
	}
	if r := ins(2, "b"); r.Err != nil || r.Affected != 1 {
		t.Fatalf("ODKU b = a, new row: %+v", r)
	}
	if got := strings.TrimSpace(text(e.rows("ids", "o"))); got != "2|0" {
		t.Errorf("rows %s, want 2|0", got)
	}
	if r := ins(3, "a"); r.Err == nil || r.Err.Code != mysqlerr.CodeNoDefault {
		t.Errorf("ODKU a = a, new row: %v, want 1364", r.Err)
	}
}
