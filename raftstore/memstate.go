package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// memState is the applied state, decoded: entries are applied to it and
// every read sees it. The state file is its checkpoint (FSM.checkpoint),
// written from the keys changed since the last one. Encoding the tables
// and committing a bbolt transaction for every Raft entry cost each node
// tens of microseconds per entry on the hot path, for a file that is only
// read at start and by snapshots and backups.
//
// memState is not safe for concurrent use; the FSM's lock guards it.
type memState struct {
	dbs     map[string]struct{}
	tables  map[tableKey]*model.Table
	globals map[string]uint64
	// rows are the row tables' rows, tracking the keys written since the
	// last checkpoint (which writes only those rows).
	rows map[tableKey]*rowengine.RowTree
	// keys is the Redis key space (keys_state.go).
	keys keySpace

	// What changed since the last checkpoint. A dropped database's tables
	// are marked too, so that a database dropped and created again before
	// the checkpoint does not keep them in the file.
	dirtyDBs     map[string]struct{}
	dirtyTables  map[tableKey]struct{}
	dirtyGlobals map[string]struct{}
	dirtyKeys    map[keyRef]struct{}
	// rewrite names row tables whose row bucket the next checkpoint
	// replaces whole: created, dropped or restored since the last one.
	rewrite map[tableKey]struct{}
	// upgrade is set when the file is of an older format, which the next
	// checkpoint rewrites.
	upgrade bool
}

func newMemState() *memState {
	return &memState{
		dbs:          map[string]struct{}{},
		tables:       map[tableKey]*model.Table{},
		globals:      map[string]uint64{},
		rows:         map[tableKey]*rowengine.RowTree{},
		rewrite:      map[tableKey]struct{}{},
		dirtyDBs:     map[string]struct{}{},
		dirtyTables:  map[tableKey]struct{}{},
		dirtyGlobals: map[string]struct{}{},
		dirtyKeys:    map[keyRef]struct{}{},
	}
}

// loadMemState decodes the whole state file.
func loadMemState(tx *bolt.Tx) (*memState, error) {
	m := newMemState()
	dbs := tx.Bucket(bucketDBs)
	if dbs == nil {
		return nil, fmt.Errorf("%w: state has no %q bucket", ErrCorrupt, bucketDBs)
	}
	m.upgrade = readFormat(tx) < stateFormat
	allRows := tx.Bucket(bucketRows)
	err := dbs.ForEachBucket(func(db []byte) error {
		m.dbs[string(db)] = struct{}{}
		return dbs.Bucket(db).ForEach(func(name, v []byte) error {
			if v == nil {
				return nil
			}
			t, legacy, err := logformat.DecodeTableRows(v)
			if err != nil {
				return fmt.Errorf("raftstore: table %s.%s: %w", db, name, err)
			}
			k := tableKey{string(db), string(name)}
			m.tables[k] = t
			if t.Def.Rows == nil {
				return nil
			}
			rt, err := loadRows(allRows, k, t, legacy)
			if err != nil {
				return fmt.Errorf("raftstore: table %s.%s: %w", db, name, err)
			}
			m.rows[k] = rt
			if legacy != nil {
				// A state file from before per-row storage: the table's
				// value loses its rows and the rows get their bucket.
				m.rewrite[k] = struct{}{}
				m.dirtyTables[k] = struct{}{}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if g := tx.Bucket(bucketGlobals); g != nil {
		err = g.ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("%w: global %q has %d bytes", ErrCorrupt, k, len(v))
			}
			m.globals[string(k)] = binary.BigEndian.Uint64(v)
			return nil
		})
	}
	if err == nil {
		err = eachStoredKey(tx, func(k keyRef, v model.KeyVal) error {
			m.keys.put(k, v)
			return nil
		})
	}
	return m, err
}

// rowsBucketName names a row table's bucket within bucketRows.
func rowsBucketName(k tableKey) []byte { return []byte(k.db + "\x00" + k.name) }

// loadRows reads a row table's rows: from its bucket, or from the rows
// a state file of format 1 kept in the table's value (legacy).
func loadRows(all *bolt.Bucket, k tableKey, t *model.Table, legacy [][]model.Datum) (*rowengine.RowTree, error) {
	rt := rowengine.NewRowTree(t.Def.Rows)
	for _, r := range legacy {
		if _, err := rt.Put("", r); err != nil {
			return nil, err
		}
	}
	if all != nil {
		if b := all.Bucket(rowsBucketName(k)); b != nil {
			err := b.ForEach(func(pk, v []byte) error {
				return rt.LoadStored(string(pk), string(v))
			})
			if err != nil {
				return nil, err
			}
		}
	}
	rt.TrackChanges()
	rt.ClearChanged()
	return rt, nil
}

// dirty reports whether anything changed since the last checkpoint.
func (m *memState) dirty() bool {
	if m.upgrade || len(m.dirtyDBs)+len(m.dirtyTables)+len(m.dirtyGlobals)+len(m.dirtyKeys)+len(m.rewrite) > 0 {
		return true
	}
	for _, rt := range m.rows {
		if rt.ChangedLen() > 0 {
			return true
		}
	}
	return false
}

// ckptImage is what one checkpoint writes, taken out of a memState (take)
// so that the memState can go on taking entries while it is written:
// the dirty marks, the tables and globals encoded, and the row tables'
// changed keys with what each holds (rowengine.RowTree.TakeChanged).
// Whole-table rewrites (rewrite) are the exception: they are read from
// the live row trees, so an image with any is written under the FSM's
// lock (FSM.checkpointLocked).
type ckptImage struct {
	dbs     map[string]bool // dirty database: true if it exists
	tables  map[tableKey][]byte
	globals map[string]uint64
	rows    map[tableKey]map[string]string
	rewrite map[tableKey]struct{}
	upgrade bool
	keys    map[keyRef]*model.KeyVal // nil: deleted
}

// take moves what changed since the last checkpoint into an image and
// leaves the memState clean: the image must be written, or handed back
// with putBack.
func (m *memState) take() *ckptImage {
	// A table's row-table part is written as every build that may read
	// this file reads it: JSON while the cluster runs below version 7
	// (a node of an older build may yet start on it, or receive it as a
	// snapshot).
	format := logformat.FormatAt(clusterVersionIn(memStore{m: m, readOnly: true}))
	img := &ckptImage{
		dbs:     make(map[string]bool, len(m.dirtyDBs)),
		tables:  make(map[tableKey][]byte, len(m.dirtyTables)),
		globals: make(map[string]uint64, len(m.dirtyGlobals)),
		rows:    map[tableKey]map[string]string{},
		rewrite: m.rewrite,
		upgrade: m.upgrade,
	}
	for db := range m.dirtyDBs {
		_, ok := m.dbs[db]
		img.dbs[db] = ok
	}
	for k := range m.dirtyTables {
		var enc []byte
		if t := m.tables[k]; t != nil {
			enc = logformat.AppendTable(make([]byte, 0, 64+16*len(t.Rows)), t, format)
		}
		img.tables[k] = enc
	}
	for name := range m.dirtyGlobals {
		img.globals[name] = m.globals[name]
	}
	for k, rt := range m.rows {
		if _, whole := m.rewrite[k]; whole || rt.ChangedLen() == 0 {
			rt.ClearChanged()
			continue
		}
		img.rows[k] = rt.TakeChanged()
	}
	img.keys = m.takeKeys()
	clear(m.dirtyDBs)
	clear(m.dirtyTables)
	clear(m.dirtyGlobals)
	m.rewrite = map[tableKey]struct{}{}
	m.upgrade = false
	return img
}

// putBack returns a failed checkpoint's image to the memState, under
// whatever changed since take: the next checkpoint then writes both, the
// newer value of a key that changed again.
func (m *memState) putBack(img *ckptImage) {
	for db := range img.dbs {
		m.dirtyDBs[db] = struct{}{}
	}
	for k := range img.tables {
		m.dirtyTables[k] = struct{}{}
	}
	for name := range img.globals {
		m.dirtyGlobals[name] = struct{}{}
	}
	for k := range img.rewrite {
		m.rewrite[k] = struct{}{}
	}
	for k, changed := range img.rows {
		if rt := m.rows[k]; rt != nil {
			rt.GiveBackChanged(changed)
		}
		// A table dropped since is in rewrite: its bucket goes whole.
	}
	for k := range img.keys {
		m.dirtyKeys[k] = struct{}{}
	}
	m.upgrade = m.upgrade || img.upgrade
}

// write writes the image into tx: databases dropped, then created, then
// tables, globals and rows. The row tables in rewrite are read from m,
// which the caller must hold still; m may be nil when there are none.
func (img *ckptImage) write(tx *bolt.Tx, m *memState) error {
	dbs := tx.Bucket(bucketDBs)
	if dbs == nil {
		return fmt.Errorf("%w: state has no %q bucket", ErrCorrupt, bucketDBs)
	}
	for db, exists := range img.dbs {
		if exists {
			continue
		}
		if err := dbs.DeleteBucket([]byte(db)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return fmt.Errorf("raftstore: checkpoint: drop database %q: %w", db, err)
		}
	}
	for db, exists := range img.dbs {
		if !exists {
			continue
		}
		if _, err := dbs.CreateBucketIfNotExists([]byte(db)); err != nil {
			return fmt.Errorf("raftstore: checkpoint: create database %q: %w", db, err)
		}
	}
	for k, enc := range img.tables {
		b := dbs.Bucket([]byte(k.db))
		var err error
		switch {
		case enc == nil && b == nil:
			// Dropped with its database.
		case enc == nil:
			err = b.Delete([]byte(k.name))
		case b == nil:
			err = ErrNoDatabase
		default:
			err = b.Put([]byte(k.name), enc)
		}
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: table %s.%s: %w", k.db, k.name, err)
		}
	}
	globals := tx.Bucket(bucketGlobals)
	for name, v := range img.globals {
		if err := globals.Put([]byte(name), binary.BigEndian.AppendUint64(nil, v)); err != nil {
			return fmt.Errorf("raftstore: checkpoint: global %q: %w", name, err)
		}
	}
	if err := img.writeRows(tx, m); err != nil {
		return err
	}
	if err := img.writeKeys(tx); err != nil {
		return err
	}
	if img.upgrade {
		return writeFormat(tx)
	}
	return nil
}

// writeRows writes the row tables' changes: whole buckets for the tables
// in rewrite (from m), the changed rows of the others.
func (img *ckptImage) writeRows(tx *bolt.Tx, m *memState) error {
	all, err := tx.CreateBucketIfNotExists(bucketRows)
	if err != nil {
		return fmt.Errorf("raftstore: checkpoint: rows bucket: %w", err)
	}
	for k := range img.rewrite {
		name := rowsBucketName(k)
		if err := all.DeleteBucket(name); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return fmt.Errorf("raftstore: checkpoint: rows of %s.%s: %w", k.db, k.name, err)
		}
		rt := m.rows[k]
		if rt == nil {
			continue
		}
		b, err := all.CreateBucket(name)
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: rows of %s.%s: %w", k.db, k.name, err)
		}
		// Keys come in order: fill pages as a bulk load does.
		b.FillPercent = 0.9
		err = rt.ScanStored(func(pk, stored string) error {
			return b.Put([]byte(pk), []byte(stored))
		})
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: rows of %s.%s: %w", k.db, k.name, err)
		}
	}
	for k, changed := range img.rows {
		b, err := all.CreateBucketIfNotExists(rowsBucketName(k))
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: rows of %s.%s: %w", k.db, k.name, err)
		}
		// Most tables grow at the end (AUTO_INCREMENT keys): pages
		// filled to 50% at a split, bbolt's default, made a million
		// WORKER_NODE rows a 266 MiB file.
		b.FillPercent = 0.9
		err = rowengine.EachChanged(changed, func(pk, stored string, ok bool) error {
			if !ok {
				return b.Delete([]byte(pk))
			}
			return b.Put([]byte(pk), []byte(stored))
		})
		if err != nil {
			return fmt.Errorf("raftstore: checkpoint: rows of %s.%s: %w", k.db, k.name, err)
		}
	}
	return nil
}

// memStore is the ticket.Store over a memState: read-only for View,
// writable for the FSM's Apply.
type memStore struct {
	m        *memState
	readOnly bool
}

var _ ticket.Store = memStore{}

func (s memStore) Database(name string) (bool, error) {
	_, ok := s.m.dbs[name]
	return ok && name != "", nil
}

func (s memStore) Databases() ([]string, error) {
	var out []string
	for db := range s.m.dbs {
		out = append(out, db)
	}
	sort.Strings(out)
	return out, nil
}

func (s memStore) PutDatabase(name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if name == "" {
		return fmt.Errorf("raftstore: create database: %w", bolt.ErrBucketNameRequired)
	}
	if _, ok := s.m.dbs[name]; !ok {
		s.m.dbs[name] = struct{}{}
		s.m.dirtyDBs[name] = struct{}{}
	}
	return nil
}

func (s memStore) DeleteDatabase(name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	for k := range s.m.tables {
		if k.db == name {
			delete(s.m.tables, k)
			s.m.dirtyTables[k] = struct{}{}
			s.dropRows(k)
		}
	}
	if _, ok := s.m.dbs[name]; ok {
		delete(s.m.dbs, name)
		s.m.dirtyDBs[name] = struct{}{}
	}
	return nil
}

// Table returns a copy: Apply may change it and then give up (a statement
// error), and a reader may keep it after View returns. A ticket table's
// rows are copied. A row table's rows are not in the Table (Rows).
func (s memStore) Table(db, name string) (*model.Table, error) {
	t := s.m.tables[tableKey{db, name}]
	if t == nil {
		return nil, nil
	}
	cp := *t
	cp.Rows = nil
	if len(t.Rows) > 0 {
		cp.Rows = slices.Clone(t.Rows)
	}
	return &cp, nil
}

func (s memStore) Tables(db string) ([]string, error) {
	var out []string
	for k := range s.m.tables {
		if k.db == db && db != "" {
			out = append(out, k.name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// PutTable stores a copy of t, reusing the ticket-row array of the table
// it replaces: nothing outside memState holds it (Table hands out
// copies), and a batch of REPLACEs on one table then allocates nothing
// here. A row table's rows are created empty with it, and re-indexed
// when its keys change (rowengine.PutRowTree).
func (s memStore) PutTable(t *model.Table) error {
	if s.readOnly {
		return ErrReadOnly
	}
	k := tableKey{t.Def.DB, t.Def.Name}
	if _, ok := s.m.dbs[k.db]; !ok || k.db == "" || k.name == "" {
		return fmt.Errorf("raftstore: put table %s.%s: %w", k.db, k.name, ErrNoDatabase)
	}
	cur := s.m.tables[k]
	if cur == nil {
		cur = new(model.Table)
		s.m.tables[k] = cur
	}
	rows := cur.Rows[:0]
	*cur = *t
	cur.Rows = append(rows, t.Rows...)
	s.m.dirtyTables[k] = struct{}{}
	old := s.m.rows[k]
	rt, err := rowengine.PutRowTree(old, t.Def.Rows)
	if err != nil {
		return fmt.Errorf("raftstore: put table %s.%s: %w", k.db, k.name, err)
	}
	switch {
	case rt == nil && old != nil:
		s.dropRows(k)
	case rt != nil && old == nil:
		rt.TrackChanges()
		s.m.rows[k] = rt
		s.m.rewrite[k] = struct{}{}
	case rt != old:
		// Re-indexed: the new tree lists every key to rewrite.
		s.m.rows[k] = rt
	}
	return nil
}

// dropRows forgets a row table's rows; the checkpoint drops its bucket.
func (s memStore) dropRows(k tableKey) {
	if _, ok := s.m.rows[k]; ok {
		delete(s.m.rows, k)
		s.m.rewrite[k] = struct{}{}
	}
}

// Rows returns a row table's rows; read-only in a View.
func (s memStore) Rows(db, name string) (rowengine.TableRows, error) {
	rt := s.m.rows[tableKey{db, name}]
	if rt == nil {
		return nil, nil
	}
	if s.readOnly {
		return readOnlyRows{rt}, nil
	}
	return rt, nil
}

// readOnlyRows refuses writes, for View.
type readOnlyRows struct{ *rowengine.RowTree }

func (readOnlyRows) Put(string, []model.Datum) (string, error) { return "", ErrReadOnly }
func (readOnlyRows) Delete(string) error                       { return ErrReadOnly }

func (s memStore) DeleteTable(db, name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	k := tableKey{db, name}
	delete(s.m.tables, k)
	s.m.dirtyTables[k] = struct{}{}
	s.dropRows(k)
	return nil
}

func (s memStore) Global(name string) (uint64, bool, error) {
	v, ok := s.m.globals[name]
	return v, ok, nil
}

func (s memStore) PutGlobal(name string, v uint64) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if name == "" {
		return fmt.Errorf("raftstore: set global: %w", bolt.ErrKeyRequired)
	}
	s.m.globals[name] = v
	s.m.dirtyGlobals[name] = struct{}{}
	return nil
}
