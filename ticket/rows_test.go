package ticket

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// leafSpec is Meituan Leaf-segment's leaf_alloc as its DDL declares it.
func leafSpec() *model.TableSpec {
	return &model.TableSpec{DB: "ids", Name: "leaf_alloc", Engine: "InnoDB", Columns: []model.ColumnSpec{
		{Name: "biz_tag", Type: "varchar", Width: 128, NotNull: true, HasDefault: true, Default: model.Value{Kind: model.ValString}},
		{Name: "max_id", Type: "bigint", Width: 20, NotNull: true, HasDefault: true, Default: model.Value{Kind: model.ValString, Str: "1"}},
		{Name: "step", Type: "int", Width: 11, NotNull: true},
		{Name: "description", Type: "varchar", Width: 256, HasDefault: true, Default: model.Value{Kind: model.ValNull}},
		{Name: "update_time", Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"biz_tag"}}}}
}

// workerSpec is Baidu UidGenerator's WORKER_NODE, less its comments.
func workerSpec() *model.TableSpec {
	return &model.TableSpec{DB: "ids", Name: "WORKER_NODE", Columns: []model.ColumnSpec{
		{Name: "ID", Type: "bigint", NotNull: true, AutoInc: true},
		{Name: "HOST_NAME", Type: "varchar", Width: 64, NotNull: true},
		{Name: "PORT", Type: "varchar", Width: 64, NotNull: true},
		{Name: "LAUNCH_DATE", Type: "date", NotNull: true},
		{Name: "CREATED", Type: "timestamp", NotNull: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"ID"}}}}
}

func rowsEnv(t testing.TB, specs ...*model.TableSpec) *env {
	e := &env{t: t, s: NewMemStore()}
	e.ok(model.Command{Op: model.OpCreateDB, DB: "ids"})
	for _, s := range specs {
		d, err := NewTableDef(s)
		if err != nil {
			t.Fatalf("NewTableDef(%s): %v", s.Name, err)
		}
		if d.Rows == nil {
			t.Fatalf("%s: not a row table", s.Name)
		}
		e.ok(model.Command{Op: model.OpCreateTable, Def: d})
	}
	return e
}

func str(s string) model.Value { return model.Value{Kind: model.ValString, Str: s} }
func num(n int64) model.Value  { return model.Value{Kind: model.ValInt, Int: n} }

func (e *env) rows(db, name string) [][]model.Datum {
	e.t.Helper()
	rows, _ := e.s.Rows(db, name)
	if rows == nil {
		e.t.Fatalf("no row table %s.%s", db, name)
	}
	var out [][]model.Datum
	if err := rows.Scan(rowengine.ClusterIndex, "", "", func(_ string, r []model.Datum) bool {
		out = append(out, r)
		return true
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func text(rows [][]model.Datum) string {
	var b strings.Builder
	for _, r := range rows {
		for i, d := range r {
			if i > 0 {
				b.WriteByte('|')
			}
			if d.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(d.S)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRowsLeafSegment(t *testing.T) {
	e := rowsEnv(t, leafSpec())
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Now: t0, Columns: []string{"biz_tag", "max_id", "step"},
		Values: [][]model.Value{{str("b"), num(1), num(100)}, {str("A"), num(1), num(10)}}})
	if r.Affected != 2 || len(r.Images) != 2 {
		t.Fatalf("insert: %+v", r)
	}
	// Primary key order, as InnoDB returns rows; the default and NOW.
	if got, want := text(e.rows("ids", "leaf_alloc")), "A|1|10|NULL|2026-11-22 10:00:00\nb|1|100|NULL|2026-11-22 10:00:00\n"; got != want {
		t.Fatalf("rows:\n%swant\n%s", got, want)
	}
	t1 := t0.Add(time.Minute)
	upd := model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Now: t1, Rows: &model.RowsCommand{
		Sets:  []model.RowSet{{Col: "max_id", A: model.RowOperand{Col: "max_id"}, Op: '+', B: model.RowOperand{Col: "step"}}},
		Where: []model.RowCond{{Col: "biz_tag", Val: str("B ")}}, // the collation ignores case and trailing spaces
	}}
	r = e.ok(upd)
	if r.Affected != 1 || r.Matched != 1 || len(r.Images) != 1 || r.Images[0][1].S != "101" || r.Images[0][4].S != "2026-11-22 10:01:00" {
		t.Fatalf("update: %+v", r)
	}
	// A row set to what it holds is matched, not changed, and keeps its
	// ON UPDATE column.
	same := model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Now: t1.Add(time.Hour), Rows: &model.RowsCommand{
		Sets: []model.RowSet{{Col: "step", A: model.RowOperand{Col: "step"}}}, Where: []model.RowCond{{Col: "biz_tag", Val: str("a")}}}}
	if r = e.ok(same); r.Affected != 0 || r.Matched != 1 {
		t.Fatalf("no-op update: %+v", r)
	}
	if got := e.rows("ids", "leaf_alloc")[0][4].S; got != "2026-11-22 10:00:00" {
		t.Fatalf("unchanged row's update_time moved to %s", got)
	}
	// Errors, and nothing written by a failing statement.
	before := text(e.rows("ids", "leaf_alloc"))
	for _, c := range []struct {
		cmd  model.Command
		code uint16
	}{
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"}, Values: [][]model.Value{{str("c"), num(1)}, {str("a"), num(1)}}}, mysqlerr.CodeDupEntry},
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag"}, Values: [][]model.Value{{str("d")}}}, mysqlerr.CodeNoDefault},
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"}, Values: [][]model.Value{{str("d"), {Kind: model.ValNull}}}}, mysqlerr.CodeBadNull},
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"}, Values: [][]model.Value{{str(strings.Repeat("x", 129)), num(1)}}}, mysqlerr.CodeDataTooLong},
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"}, Values: [][]model.Value{{str("e"), num(1 << 40)}}}, mysqlerr.CodeDataOutOfRange},
		{model.Command{Op: model.OpInsert, DB: "ids", Table: "leaf_alloc", Columns: []string{"biz_tag", "step"}, Values: [][]model.Value{{str("e"), str("ten")}}}, mysqlerr.CodeIncorrectValue},
		{model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Rows: &model.RowsCommand{Sets: []model.RowSet{{Col: "biz_tag", A: model.RowOperand{Val: str("a")}}}}}, mysqlerr.CodeDupEntry},
		{model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Rows: &model.RowsCommand{Sets: []model.RowSet{{Col: "max_id", A: model.RowOperand{Col: "max_id"}, Op: '+', B: model.RowOperand{Val: num(1<<63 - 1)}}}}}, mysqlerr.CodeValueOutOfRange},
		{model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Rows: &model.RowsCommand{Sets: []model.RowSet{{Col: "nosuch", A: model.RowOperand{Val: num(1)}}}}}, mysqlerr.CodeBadField},
	} {
		if r := e.do(c.cmd); r.Err == nil || r.Err.Code != c.code {
			t.Errorf("%v: %v, want error %d", &c.cmd, r.Err, c.code)
		}
	}
	if got := text(e.rows("ids", "leaf_alloc")); got != before {
		t.Fatalf("failing statements changed the table:\n%swas\n%s", got, before)
	}
	if r := e.ok(model.Command{Op: model.OpDelete, DB: "ids", Table: "leaf_alloc", Rows: &model.RowsCommand{Where: []model.RowCond{{Col: "biz_tag", Val: str("A")}}}}); r.Affected != 1 || len(e.rows("ids", "leaf_alloc")) != 1 {
		t.Fatalf("delete: %+v", r)
	}
}

func TestRowsAutoIncrementAndDates(t *testing.T) {
	e := rowsEnv(t, workerSpec())
	now := time.Date(2026, 11, 22, 23, 59, 58, 0, time.UTC)
	ins := func(host string) model.Result {
		return e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Now: now, Increment: 1, Offset: 1,
			Columns: []string{"HOST_NAME", "PORT", "LAUNCH_DATE", "CREATED"},
			Values:  [][]model.Value{{str(host), str("8080"), str("2026-11-22"), {Kind: model.ValNow}}}})
	}
	for i := uint64(1); i <= 3; i++ {
		if r := ins(fmt.Sprint("h", i)); r.InsertID != i || !r.SetLastID || r.LastID != i {
			t.Fatalf("launch %d: %+v", i, r)
		}
	}
	if got := e.rows("ids", "WORKER_NODE")[2]; got[0].S != "3" || got[3].S != "2026-11-22" || got[4].S != "2026-11-22 23:59:58" {
		t.Fatalf("row: %v", got)
	}
	// An explicit id moves the counter; a deleted row's id is not reused.
	e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Now: now, Columns: []string{"ID", "HOST_NAME", "PORT", "LAUNCH_DATE", "CREATED"},
		Values: [][]model.Value{{num(10), str("x"), str("1"), str("2026-01-01"), {Kind: model.ValNow}}}})
	e.ok(model.Command{Op: model.OpDelete, DB: "ids", Table: "WORKER_NODE", Rows: &model.RowsCommand{Where: []model.RowCond{{Col: "ID", Val: num(10)}}}})
	if r := ins("h4"); r.InsertID != 11 {
		t.Fatalf("after id 10 and its delete: insert id %d, want 11", r.InsertID)
	}
	r := e.do(model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Now: now, Columns: []string{"HOST_NAME", "PORT", "LAUNCH_DATE", "CREATED"},
		Values: [][]model.Value{{str("h"), str("1"), str("2026-13-45"), {Kind: model.ValNow}}}})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeTruncatedWrongValue {
		t.Fatalf("bad date: %v, want 1292", r.Err)
	}
}

func TestRowsTableShapes(t *testing.T) {
	// Flickr's table stays a ticket table.
	d, err := NewTableDef(&model.TableSpec{DB: "f", Name: "Tickets64", Columns: []model.ColumnSpec{
		{Name: "id", Type: "bigint", Unsigned: true, NotNull: true, AutoInc: true},
		{Name: "stub", Type: "char", Width: 1, NotNull: true}},
		Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Unique: true, Name: "stub", Columns: []string{"stub"}}}})
	if err != nil || d.Rows != nil {
		t.Fatalf("Tickets64: rows %v, err %v", d.Rows, err)
	}
	for _, c := range []struct {
		spec *model.TableSpec
		code uint16
	}{
		{&model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{{Name: "a", Type: "int"}, {Name: "b", Type: "text"}}}, mysqlerr.CodeNotSupported},
		{&model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{{Name: "a", Type: "int", AutoInc: true}, {Name: "b", Type: "int"}}}, mysqlerr.CodeWrongAutoKey},
		{&model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{{Name: "a", Type: "int"}, {Name: "b", Type: "int", DefaultNow: true, HasDefault: true}}}, mysqlerr.CodeInvalidDefault},
		{&model.TableSpec{DB: "f", Name: "t", Columns: []model.ColumnSpec{{Name: "a", Type: "int"}, {Name: "A", Type: "int"}}}, mysqlerr.CodeDupFieldName},
	} {
		if _, err := NewTableDef(c.spec); err == nil || err.(*model.Error).Code != c.code {
			t.Errorf("%+v: %v, want error %d", c.spec.Columns, err, c.code)
		}
	}
}

// BenchmarkRowsUpdate is one Leaf UPDATE by primary key on a table of n
// rows: O(log n) with per-row storage (it was O(n) with whole-table
// values).
func BenchmarkRowsUpdate(b *testing.B) {
	for _, n := range []int{100, 10000, 1000000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := NewMemStore()
			if _, err := Apply(s, &model.Command{Op: model.OpCreateDB, DB: "ids"}); err != nil {
				b.Fatal(err)
			}
			d, _ := NewTableDef(leafSpec())
			if err := s.PutTable(&model.Table{Def: *d, AutoInc: 1}); err != nil {
				b.Fatal(err)
			}
			rows, _ := s.Rows("ids", "leaf_alloc")
			for i := range n {
				if _, err := rows.Put("", []model.Datum{{S: fmt.Sprintf("tag%07d", i)}, {S: "1"}, {S: "1000"}, {Null: true}, {S: "2026-01-01 00:00:00"}}); err != nil {
					b.Fatal(err)
				}
			}
			c := model.Command{Op: model.OpUpdate, DB: "ids", Table: "leaf_alloc", Rows: &model.RowsCommand{
				Sets:  []model.RowSet{{Col: "max_id", A: model.RowOperand{Col: "max_id"}, Op: '+', B: model.RowOperand{Col: "step"}}},
				Where: []model.RowCond{{Col: "biz_tag", Val: str("tag0000042")}}}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if r, err := Apply(s, &c); err != nil || r.Err != nil {
					b.Fatal(err, r.Err)
				}
			}
		})
	}
}
