package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/ticket"
)

// State file layout (bbolt):
//
//	meta/format   uint64 BE, stateFormat
//	meta/applied  uint64 BE index, uint64 BE term of the last applied entry
//	dbs/<db>/     one nested bucket per database
//	dbs/<db>/<t>  encodeTable of the table
//	globals/<n>   uint64 BE
var (
	bucketMeta    = []byte("meta")
	bucketDBs     = []byte("dbs")
	bucketGlobals = []byte("globals")
	keyFormat     = []byte("format")
	keyApplied    = []byte("applied")
)

const stateFormat = 1

// Errors from the state store.
var (
	// ErrReadOnly is returned by the mutating methods of the Store passed
	// to View.
	ErrReadOnly = errors.New("raftstore: read-only store")
	// ErrNoDatabase is returned by PutTable for a table whose database does
	// not exist. Apply checks this first, so it means a bug, and the batch
	// fails as a storage failure.
	ErrNoDatabase = errors.New("raftstore: database does not exist")
)

// openState opens (creating if needed) the bbolt state file and checks its
// format.
func openState(path string, noSync bool) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: noSync})
	if err != nil {
		return nil, fmt.Errorf("raftstore: open state %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if v := meta.Get(keyFormat); v != nil {
			if len(v) != 8 || binary.BigEndian.Uint64(v) != stateFormat {
				return fmt.Errorf("%w: state format %x, want %d", ErrCorrupt, v, stateFormat)
			}
		} else if err := meta.Put(keyFormat, binary.BigEndian.AppendUint64(nil, stateFormat)); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bucketDBs); err != nil {
			return err
		}
		_, err = tx.CreateBucketIfNotExists(bucketGlobals)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("raftstore: init state %s: %w", path, err)
	}
	return db, nil
}

// readApplied returns the last applied raft index and term stored in tx.
func readApplied(tx *bolt.Tx) (index, term uint64) {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return 0, 0
	}
	v := b.Get(keyApplied)
	if len(v) != 16 {
		return 0, 0
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
}

func writeApplied(tx *bolt.Tx, index, term uint64) error {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, index)
	binary.BigEndian.PutUint64(v[8:], term)
	return tx.Bucket(bucketMeta).Put(keyApplied, v)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// statePath is where the FSM keeps its state under the data directory.
func statePath(dataDir string) string { return filepath.Join(dataDir, "state.db") }

// txStore is the ticket.Store over one bbolt transaction.
//
// Apply reads a table, changes it and puts it back, once per command. A
// batch of hundreds of REPLACEs on Tickets64 would otherwise decode and
// encode the same table hundreds of times, so tables live decoded in cache
// for the transaction and dirty ones are encoded once, in flush, before the
// commit.
type txStore struct {
	tx       *bolt.Tx
	dbs      *bolt.Bucket
	readOnly bool
	cache    map[tableKey]*cachedTable
}

type tableKey struct{ db, name string }

type cachedTable struct {
	t     *ticket.Table // nil: the table does not exist (deleted or never made)
	dirty bool
	// dbOK records that the database existed when the entry was made;
	// DeleteDatabase drops the entries of the database it removes.
	dbOK bool
}

var _ ticket.Store = (*txStore)(nil)

func newTxStore(tx *bolt.Tx, readOnly bool) (*txStore, error) {
	dbs := tx.Bucket(bucketDBs)
	if dbs == nil {
		return nil, fmt.Errorf("%w: state has no %q bucket", ErrCorrupt, bucketDBs)
	}
	s := &txStore{tx: tx, dbs: dbs, readOnly: readOnly}
	if !readOnly {
		s.cache = make(map[tableKey]*cachedTable)
	}
	return s, nil
}

func (s *txStore) Database(name string) (bool, error) {
	return name != "" && s.dbs.Bucket([]byte(name)) != nil, nil
}

func (s *txStore) Databases() ([]string, error) {
	var out []string
	err := s.dbs.ForEachBucket(func(k []byte) error {
		out = append(out, string(k))
		return nil
	})
	return out, err
}

func (s *txStore) PutDatabase(name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if _, err := s.dbs.CreateBucketIfNotExists([]byte(name)); err != nil {
		return fmt.Errorf("raftstore: create database %q: %w", name, err)
	}
	return nil
}

func (s *txStore) DeleteDatabase(name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	for k := range s.cache {
		if k.db == name {
			delete(s.cache, k)
		}
	}
	if name == "" {
		return nil
	}
	err := s.dbs.DeleteBucket([]byte(name))
	if err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return fmt.Errorf("raftstore: drop database %q: %w", name, err)
	}
	return nil
}

// load decodes a table from the transaction; dbOK reports whether its
// database exists.
func (s *txStore) load(db, name string) (t *ticket.Table, dbOK bool, err error) {
	if db == "" || name == "" {
		return nil, false, nil
	}
	b := s.dbs.Bucket([]byte(db))
	if b == nil {
		return nil, false, nil
	}
	v := b.Get([]byte(name))
	if v == nil {
		return nil, true, nil
	}
	t, err = decodeTable(v)
	if err != nil {
		return nil, true, fmt.Errorf("raftstore: table %s.%s: %w", db, name, err)
	}
	return t, true, nil
}

func (s *txStore) Table(db, name string) (*ticket.Table, error) {
	if s.readOnly {
		// A fresh decode already belongs to the caller.
		t, _, err := s.load(db, name)
		return t, err
	}
	k := tableKey{db, name}
	c, ok := s.cache[k]
	if !ok {
		t, dbOK, err := s.load(db, name)
		if err != nil {
			return nil, err
		}
		c = &cachedTable{t: t, dbOK: dbOK}
		s.cache[k] = c
	}
	if c.t == nil {
		return nil, nil
	}
	// The caller may change the table and then give up (a statement
	// error): it gets a copy so that only PutTable changes state.
	cp := *c.t
	cp.Rows = append([]ticket.Row(nil), c.t.Rows...)
	return &cp, nil
}

func (s *txStore) Tables(db string) ([]string, error) {
	if err := s.flush(); err != nil {
		return nil, err
	}
	if db == "" {
		return nil, nil
	}
	b := s.dbs.Bucket([]byte(db))
	if b == nil {
		return nil, nil
	}
	var out []string
	err := b.ForEach(func(k, v []byte) error {
		if v != nil {
			out = append(out, string(k))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func (s *txStore) PutTable(t *ticket.Table) error {
	if s.readOnly {
		return ErrReadOnly
	}
	k := tableKey{t.Def.DB, t.Def.Name}
	c, ok := s.cache[k]
	if !ok || !c.dbOK {
		if k.db == "" || k.name == "" || s.dbs.Bucket([]byte(k.db)) == nil {
			return fmt.Errorf("raftstore: put table %s.%s: %w", k.db, k.name, ErrNoDatabase)
		}
		if !ok {
			c = &cachedTable{}
			s.cache[k] = c
		}
		c.dbOK = true
	}
	if c.t == nil {
		c.t = new(ticket.Table)
	}
	// Copy into the cached table, reusing its row array: the caller keeps
	// its table, and a batch on one table allocates nothing here.
	rows := c.t.Rows[:0]
	*c.t = *t
	c.t.Rows = append(rows, t.Rows...)
	c.dirty = true
	return nil
}

func (s *txStore) DeleteTable(db, name string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	k := tableKey{db, name}
	if c, ok := s.cache[k]; ok {
		c.t, c.dirty = nil, true
		return nil
	}
	s.cache[k] = &cachedTable{dirty: true}
	return nil
}

func (s *txStore) Global(name string) (uint64, bool, error) {
	v := s.tx.Bucket(bucketGlobals).Get([]byte(name))
	if v == nil {
		return 0, false, nil
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("%w: global %q has %d bytes", ErrCorrupt, name, len(v))
	}
	return binary.BigEndian.Uint64(v), true, nil
}

func (s *txStore) PutGlobal(name string, v uint64) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if err := s.tx.Bucket(bucketGlobals).Put([]byte(name), binary.BigEndian.AppendUint64(nil, v)); err != nil {
		return fmt.Errorf("raftstore: set global %q: %w", name, err)
	}
	return nil
}

// flush writes the dirty cached tables into the transaction.
func (s *txStore) flush() error {
	for k, c := range s.cache {
		if !c.dirty {
			continue
		}
		c.dirty = false
		b := s.dbs.Bucket([]byte(k.db))
		if b == nil {
			if c.t == nil {
				continue // deleting a table of a database that is gone
			}
			return fmt.Errorf("raftstore: flush table %s.%s: %w", k.db, k.name, ErrNoDatabase)
		}
		var err error
		if c.t == nil {
			err = b.Delete([]byte(k.name))
		} else {
			// bbolt keeps a reference to the value until the commit, so
			// every Put gets its own buffer.
			err = b.Put([]byte(k.name), encodeTable(make([]byte, 0, 64+16*len(c.t.Rows)), c.t))
		}
		if err != nil {
			return fmt.Errorf("raftstore: flush table %s.%s: %w", k.db, k.name, err)
		}
	}
	return nil
}
