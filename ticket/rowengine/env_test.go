package rowengine

import (
	"slices"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// The engine's tests apply row commands to testStore, the engine's Store
// in memory, through env, which dispatches as ticket's Apply does for row
// tables (ticket's own tests run the same commands through Apply and its
// MemStore).

// testStore holds tables and their rows in memory. Table returns a copy,
// so that only PutTable changes a table, as every Store does.
type testStore struct {
	tables map[string]*model.Table
	rows   map[string]*RowTree
}

func newTestStore() *testStore {
	return &testStore{tables: map[string]*model.Table{}, rows: map[string]*RowTree{}}
}

func (s *testStore) Table(db, name string) (*model.Table, error) {
	t, ok := s.tables[db+"."+name]
	if !ok {
		return nil, nil
	}
	cp := *t
	cp.Rows = slices.Clone(t.Rows)
	return &cp, nil
}

func (s *testStore) PutTable(t *model.Table) error {
	cp := *t
	cp.Rows = slices.Clone(t.Rows)
	k := t.Def.Key()
	s.tables[k] = &cp
	rt, err := PutRowTree(s.rows[k], t.Def.Rows)
	if err != nil {
		return err
	}
	s.rows[k] = rt
	return nil
}

func (s *testStore) Rows(db, name string) (TableRows, error) {
	if rt := s.rows[db+"."+name]; rt != nil {
		return rt, nil
	}
	return nil, nil
}

// View runs fn on the store, as a replica's read view does.
func (s *testStore) View(fn func(Store) error) error { return fn(s) }

type env struct {
	t testing.TB
	s *testStore
}

// do applies a row table's command: CREATE TABLE puts the definition,
// INSERT, UPDATE and DELETE go to the engine.
func (e *env) do(c model.Command) model.Result {
	e.t.Helper()
	var (
		r   model.Result
		err error
	)
	switch c.Op {
	case model.OpCreateDB:
	case model.OpCreateTable:
		err = e.s.PutTable(&model.Table{Def: *c.Def, AutoInc: max(c.CreateAutoInc, 1)})
	case model.OpInsert, model.OpUpdate, model.OpDelete:
		t, _ := e.s.Table(c.DB, c.Table)
		if t == nil || t.Def.Rows == nil {
			e.t.Fatalf("no row table %s.%s", c.DB, c.Table)
		}
		switch c.Op {
		case model.OpInsert:
			r, err = ApplyInsert(e.s, t, &c)
		case model.OpUpdate:
			r, err = ApplyUpdate(e.s, t, &c)
		default:
			r, err = ApplyDelete(e.s, t, &c)
		}
	default:
		e.t.Fatalf("env: op %d is not a row command", c.Op)
	}
	if err != nil {
		e.t.Fatalf("apply %v: storage error %v", &c, err)
	}
	return r
}

func (e *env) ok(c model.Command) model.Result {
	e.t.Helper()
	r := e.do(c)
	if r.Err != nil {
		e.t.Fatalf("apply %v: %v", &c, r.Err)
	}
	return r
}

// newTableDef is ticket.NewTableDef for the row tables of these tests
// (no CHARACTER SET or COLLATE: utf8mb4_general_ci strings).
func newTableDef(s *model.TableSpec) (*model.TableDef, error) {
	colls := make([]model.Collation, len(s.Columns))
	for i, c := range s.Columns {
		if c.Type == "char" || c.Type == "varchar" {
			colls[i] = model.CollGeneralCI
		}
	}
	return NewRowsDef(s, model.CollGeneralCI, colls)
}

func rowsEnv(t testing.TB, specs ...*model.TableSpec) *env {
	e := &env{t: t, s: newTestStore()}
	for _, s := range specs {
		d, err := newTableDef(s)
		if err != nil {
			t.Fatalf("newTableDef(%s): %v", s.Name, err)
		}
		e.ok(model.Command{Op: model.OpCreateTable, Def: d})
	}
	return e
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

func str(s string) model.Value { return model.Value{Kind: model.ValString, Str: s} }
func num(n int64) model.Value  { return model.Value{Kind: model.ValInt, Int: n} }
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
