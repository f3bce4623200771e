package ticket

import (
	"fmt"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// pointTable is issue 22's point-select table: a BIGINT AUTO_INCREMENT
// primary key and two VARCHAR columns, n rows with ids 1..n.
func pointTable(t testing.TB, n int) (*env, *model.Table) {
	spec := &model.TableSpec{DB: "ids", Name: "w", Columns: []model.ColumnSpec{
		{Name: "id", Type: "bigint", NotNull: true, AutoInc: true},
		{Name: "host", Type: "varchar", Width: 64, NotNull: true},
		{Name: "port", Type: "varchar", Width: 64, NotNull: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}}}
	e := rowsEnv(t, spec)
	var vals [][]model.Value
	for i := 1; i <= n; i++ {
		vals = append(vals, []model.Value{num(int64(i)), str(fmt.Sprintf("h%d", i)), str(fmt.Sprintf("p%d", i))})
		if len(vals) == 1000 || i == n {
			e.ok(model.Command{Op: model.OpInsert, DB: "ids", Table: "w", Values: vals, Rows: &model.RowsCommand{Engine: true}})
			vals = nil
		}
	}
	var tb *model.Table
	if err := e.s.View(func(s Store) (err error) { tb, err = s.Table("ids", "w"); return err }); err != nil {
		t.Fatal(err)
	}
	return e, tb
}

// BenchmarkPointSelect is the engine's part of a point SELECT by primary
// key (SELECT id, host, port FROM w WHERE id = ?) on tables of 20,000 and
// 1,000,000 rows (100,000 with -short): Session.Select in a View, as wire
// calls it.
func BenchmarkPointSelect(b *testing.B) {
	big := 1_000_000
	if testing.Short() {
		big = 100_000
	}
	for _, n := range []int{20_000, big} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			e, _ := pointTable(b, n)
			s := NewSession(1, 1)
			now := time.Now()
			k := 0
			for b.Loop() {
				k = (k + 7919) % n
				v := num(int64(k + 1))
				q := &rowengine.Query{Filter: &model.RowExpr{Op: model.EEq, Args: []model.RowExpr{{Op: model.ECol, Col: "id"}, {Op: model.EVal, Val: &v}}}, Now: now}
				var res *rowengine.QueryResult
				if err := e.s.View(func(st Store) (err error) {
					_, res, err = s.Select(st, "ids", "w", q)
					return err
				}); err != nil {
					b.Fatal(err)
				}
				if len(res.Rows) != 1 {
					b.Fatalf("%d rows for id %d", len(res.Rows), k+1)
				}
			}
		})
	}
}
