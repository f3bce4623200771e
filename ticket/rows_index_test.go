package ticket

import (
	"strings"
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

func alter(table string, drop []string, add ...model.KeySpec) model.Command {
	return model.Command{Op: model.OpAlterTable, DB: "ids", Table: table, DropKeys: drop, AddKeys: add}
}

func workerRow(host, port string) []model.Value {
	return []model.Value{str(host), str(port), str("2026-01-01"), {Kind: model.ValNow}}
}

func (e *env) workers(rows ...[]model.Value) {
	e.t.Helper()
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Columns: []string{"HOST_NAME", "PORT", "LAUNCH_DATE", "CREATED"}, Values: rows})
}

func keyNames(e *env, table string) string {
	tb, _ := e.s.Table("ids", table)
	var names []string
	for _, k := range tb.Def.Rows.Keys {
		names = append(names, k.Name)
	}
	return strings.Join(names, ",")
}

// TestRowsIndexDDL: keys added and dropped through commands, MariaDB's
// errors for the refused ones, and the index serving lookups after.
func TestRowsIndexDDL(t *testing.T) {
	e := rowsEnv(t, workerSpec())
	e.workers(workerRow("a", "1"), workerRow("b", "2"), workerRow("a", "3"))

	// A unique key the rows violate: 1062 and nothing changes.
	r := e.do(alter("WORKER_NODE", nil, model.KeySpec{Name: "host", Unique: true, Columns: []string{"HOST_NAME"}}))
	if r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry || !strings.Contains(r.Err.Message, "'a' for key 'host'") {
		t.Fatalf("unique key over duplicates: %v", r.Err)
	}
	if got := keyNames(e, "WORKER_NODE"); got != "PRIMARY" {
		t.Fatalf("keys after a refused ALTER: %s", got)
	}
	// A plain key, unnamed: named after its column; a second one _2.
	e.ok(alter("WORKER_NODE", nil, model.KeySpec{Columns: []string{"HOST_NAME"}}))
	e.ok(alter("WORKER_NODE", nil, model.KeySpec{Columns: []string{"HOST_NAME", "PORT"}}, model.KeySpec{Name: "hp", Unique: true, Columns: []string{"HOST_NAME", "PORT"}}))
	if got := keyNames(e, "WORKER_NODE"); got != "PRIMARY,hp,HOST_NAME,HOST_NAME_2" {
		t.Fatalf("keys: %s", got)
	}
	tb, _ := e.s.Table("ids", "WORKER_NODE")
	if a := rowengine.ChooseAccess(tb, []model.RowCond{{Col: "host_name", Val: str("A")}}); a.Index < 1 || a.Point || a.Hi == "" {
		t.Errorf("WHERE HOST_NAME = 'A' chose %+v, want a range of a key on HOST_NAME", a)
	}
	if a := rowengine.ChooseAccess(tb, []model.RowCond{{Col: "PORT", Val: str("3")}, {Col: "HOST_NAME", Val: str("a")}}); a.Index != 1 {
		t.Errorf("WHERE on the whole unique key chose %+v", a)
	}
	// The unique key is enforced; the lookup through it finds the row.
	ins := model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Columns: []string{"HOST_NAME", "PORT", "LAUNCH_DATE", "CREATED"},
		Values: [][]model.Value{workerRow("A", "3")}}
	if r := e.do(ins); r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry || !strings.Contains(r.Err.Message, "for key 'hp'") {
		t.Fatalf("insert over the new unique key: %v", r.Err)
	}
	upd := model.Command{Op: model.OpUpdate, DB: "ids", Table: "WORKER_NODE", Rows: &model.RowsCommand{
		Sets:  []model.RowSet{{Col: "PORT", A: model.RowOperand{Val: str("9")}}},
		Where: []model.RowCond{{Col: "HOST_NAME", Val: str("a")}}}}
	// (a,1) -> (a,9), then (a,3) -> (a,9) collides: the statement
	// fails whole.
	if r := e.do(upd); r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry {
		t.Fatalf("update through the index: %+v", r)
	}
	if got := text(e.rows("ids", "WORKER_NODE")); !strings.Contains(got, "1|a|1|") || !strings.Contains(got, "3|a|3|") {
		t.Fatalf("a failed UPDATE changed rows:\n%s", got)
	}

	// Drops: a missing key is 1091 (a note with IF EXISTS); the key the
	// AUTO_INCREMENT column needs cannot go.
	if r := e.do(alter("WORKER_NODE", []string{"nope"})); r.Err == nil || r.Err.Code != mysqlerr.CodeCantDropKey {
		t.Fatalf("drop of a missing key: %v", r.Err)
	}
	c := alter("WORKER_NODE", []string{"nope"})
	c.IfExists = true
	if r := e.ok(c); len(r.Warnings) != 1 || r.Warnings[0].Code != mysqlerr.CodeCantDropKey {
		t.Fatalf("DROP INDEX IF EXISTS of a missing key: %+v", r)
	}
	if r := e.do(alter("WORKER_NODE", []string{"PRIMARY"})); r.Err == nil || r.Err.Code != mysqlerr.CodeWrongAutoKey {
		t.Fatalf("drop of the AUTO_INCREMENT column's key: %v", r.Err)
	}
	if r := e.do(alter("WORKER_NODE", nil, model.KeySpec{Name: "hp", Columns: []string{"PORT"}})); r.Err == nil || r.Err.Code != mysqlerr.CodeDupKeyName {
		t.Fatalf("a key name twice: %v", r.Err)
	}
	if r := e.do(alter("WORKER_NODE", nil, model.KeySpec{Primary: true, Columns: []string{"PORT"}})); r.Err == nil || r.Err.Code != mysqlerr.CodeMultiplePK {
		t.Fatalf("a second primary key: %v", r.Err)
	}
	if r := e.do(alter("WORKER_NODE", nil, model.KeySpec{Columns: []string{"nope"}})); r.Err == nil || r.Err.Code != mysqlerr.CodeKeyColumnMissing {
		t.Fatalf("a key over a missing column: %v", r.Err)
	}
	e.ok(alter("WORKER_NODE", []string{"hp", "host_name"}))
	if got := keyNames(e, "WORKER_NODE"); got != "PRIMARY,HOST_NAME_2" {
		t.Fatalf("keys after drops: %s", got)
	}
	e.ok(ins) // the unique key is gone
	if n := len(e.rows("ids", "WORKER_NODE")); n != 4 {
		t.Fatalf("%d rows", n)
	}
}

// TestRowsIndexPrimaryKeyChange: a table without keys (hidden row ids)
// gains a primary key (its rows then shown in key order) and refuses one
// over a NULL.
func TestRowsIndexPrimaryKeyChange(t *testing.T) {
	e := rowsEnv(t, &model.TableSpec{DB: "ids", Name: "t", Columns: []model.ColumnSpec{{Name: "a", Type: "int"}, {Name: "b", Type: "varchar", Width: 6}, {Name: "c", Type: "int"}}})
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "t", Columns: []string{"a", "b"}, Values: [][]model.Value{{num(3), str("x")}, {num(1), str("y")}, {{Kind: model.ValNull}, str("z")}}})
	if got := text(e.rows("ids", "t")); got != "3|x|NULL\n1|y|NULL\nNULL|z|NULL\n" {
		t.Fatalf("insertion order:\n%s", got)
	}
	if r := e.do(alter("t", nil, model.KeySpec{Primary: true, Columns: []string{"a"}})); r.Err == nil || r.Err.Code != mysqlerr.CodeInvalidUseOfNull {
		t.Fatalf("primary key over a NULL: %v", r.Err)
	}
	e.ok(model.Command{Op: model.OpDelete, DB: "ids", Table: "t", Rows: &model.RowsCommand{Where: []model.RowCond{{Col: "b", Val: str("z")}}}})
	e.ok(alter("t", nil, model.KeySpec{Primary: true, Columns: []string{"a"}}))
	if got := text(e.rows("ids", "t")); got != "1|y|NULL\n3|x|NULL\n" {
		t.Fatalf("after ADD PRIMARY KEY:\n%s", got)
	}
	tb, _ := e.s.Table("ids", "t")
	if !tb.Def.Rows.Cols[0].NotNull || !strings.Contains(CreateStatement(tb), "PRIMARY KEY (`a`)") {
		t.Fatalf("definition after ADD PRIMARY KEY:\n%s", CreateStatement(tb))
	}
	e.ok(alter("t", []string{"PRIMARY"}))
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "t", Columns: []string{"a", "b"}, Values: [][]model.Value{{num(1), str("again")}}})
	if got := text(e.rows("ids", "t")); got != "1|y|NULL\n3|x|NULL\n1|again|NULL\n" {
		t.Fatalf("after DROP PRIMARY KEY:\n%s", got)
	}
}

// TestRestoreRowsOnce: a restore's row chunk applies when the table holds
// the rows before it, is a no-op when committed a second time (a sender
// retrying after an unknown outcome), and is refused otherwise.
func TestRestoreRowsOnce(t *testing.T) {
	e := rowsEnv(t, workerSpec())
	row := func(id string) []model.Datum {
		return []model.Datum{{S: id}, {S: "h"}, {S: "p"}, {S: "2026-01-01"}, {S: "2026-01-01 00:00:00"}}
	}
	chunk := func(count uint64, ids ...string) model.Command {
		c := model.Command{Op: model.OpRestoreRows, DB: "ids", Table: "WORKER_NODE", Count: count}
		for _, id := range ids {
			c.RestoreRows = append(c.RestoreRows, row(id))
		}
		return c
	}
	if r := e.ok(chunk(0, "1", "2")); r.Affected != 2 {
		t.Fatalf("first chunk: %+v", r)
	}
	if r := e.ok(chunk(0, "1", "2")); r.Affected != 0 {
		t.Fatalf("the same chunk again: %+v", r)
	}
	if r := e.do(chunk(5, "9")); r.Err == nil {
		t.Fatal("a chunk out of sequence applied")
	}
	if r := e.do(chunk(2, "3", "1")); r.Err == nil || r.Err.Code != mysqlerr.CodeDupEntry {
		t.Fatalf("a chunk colliding with a restored row: %v", r.Err)
	}
	if got := len(e.rows("ids", "WORKER_NODE")); got != 2 {
		t.Fatalf("a refused chunk left rows: %d", got)
	}
	e.ok(chunk(2, "3"))
}
