package ticket

import (
	"slices"
	"sort"

	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// MemStore is an in-memory Store for tests and for checking other Store
// implementations against. It is not safe for concurrent use.
type MemStore struct {
	dbs     map[string]bool
	tables  map[string]*model.Table
	rows    map[string]*rowengine.RowTree
	globals map[string]uint64
	keys    map[keyID]model.KeyVal // keys_store.go
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{dbs: map[string]bool{}, tables: map[string]*model.Table{}, rows: map[string]*rowengine.RowTree{}, globals: map[string]uint64{}}
}

// Database reports whether the database exists.
func (m *MemStore) Database(name string) (bool, error) { return m.dbs[name], nil }

// Databases lists databases, sorted.
func (m *MemStore) Databases() ([]string, error) {
	var out []string
	for k := range m.dbs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// PutDatabase creates a database.
func (m *MemStore) PutDatabase(name string) error { m.dbs[name] = true; return nil }

// DeleteDatabase removes a database and its tables.
func (m *MemStore) DeleteDatabase(name string) error {
	delete(m.dbs, name)
	for k, t := range m.tables {
		if t.Def.DB == name {
			delete(m.tables, k)
			delete(m.rows, k)
		}
	}
	return nil
}

// Table returns a copy of the table, so that only PutTable changes state.
func (m *MemStore) Table(db, name string) (*model.Table, error) {
	t, ok := m.tables[db+"."+name]
	if !ok {
		return nil, nil
	}
	cp := *t
	cp.Rows = slices.Clone(t.Rows)
	return &cp, nil
}

// Tables lists a database's tables, sorted.
func (m *MemStore) Tables(db string) ([]string, error) {
	var out []string
	for _, t := range m.tables {
		if t.Def.DB == db {
			out = append(out, t.Def.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// PutTable stores a copy of t.
func (m *MemStore) PutTable(t *model.Table) error {
	cp := *t
	cp.Rows = slices.Clone(t.Rows)
	k := t.Def.Key()
	m.tables[k] = &cp
	rt, err := rowengine.PutRowTree(m.rows[k], t.Def.Rows)
	if err != nil {
		return err
	}
	if rt == nil {
		delete(m.rows, k)
	} else {
		m.rows[k] = rt
	}
	return nil
}

// Rows returns a row table's rows.
func (m *MemStore) Rows(db, name string) (rowengine.TableRows, error) {
	if rt := m.rows[db+"."+name]; rt != nil {
		return rt, nil
	}
	return nil, nil
}

// DeleteTable removes a table.
func (m *MemStore) DeleteTable(db, name string) error {
	delete(m.tables, db+"."+name)
	delete(m.rows, db+"."+name)
	return nil
}

// Global returns a global variable.
func (m *MemStore) Global(name string) (uint64, bool, error) {
	v, ok := m.globals[name]
	return v, ok, nil
}

// PutGlobal sets a global variable.
func (m *MemStore) PutGlobal(name string, v uint64) error { m.globals[name] = v; return nil }

// View runs fn on the store; it makes MemStore a Reader.
func (m *MemStore) View(fn func(Store) error) error { return fn(m) }
