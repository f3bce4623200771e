package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// State file layout (bbolt):
//
//	meta/format   uint64 BE, stateFormat
//	meta/applied  uint64 BE index, uint64 BE term of the last applied entry
//	dbs/<db>/     one nested bucket per database
//	dbs/<db>/<t>  logformat.AppendTable of the table (a row table's rows are not in it)
//	globals/<n>   uint64 BE
//	rows/<db>\x00<t>/<pk>  a row table's row: rowengine.AppendRow, under its
//	              clustering key (model.RowsDef.IndexKey); secondary keys
//	              are rebuilt from the rows when the state is loaded
//
// Format 1 (before per-row storage) kept a row table's rows in its table
// value; such a file is read and rewritten as format 2 by the first
// checkpoint.
var (
	bucketMeta    = []byte("meta")
	bucketDBs     = []byte("dbs")
	bucketGlobals = []byte("globals")
	bucketRows    = []byte("rows")
	keyFormat     = []byte("format")
	keyApplied    = []byte("applied")
)

// stateFormat is the format written; formats from minStateFormat up are
// read.
const (
	stateFormat    = 2
	minStateFormat = 1
)

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
			if err := checkFormat(v); err != nil {
				return err
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

// checkFormat checks a stored format number.
func checkFormat(v []byte) error {
	if len(v) != 8 || binary.BigEndian.Uint64(v) < minStateFormat || binary.BigEndian.Uint64(v) > stateFormat {
		return fmt.Errorf("%w: state format %x, want %d to %d", ErrCorrupt, v, minStateFormat, stateFormat)
	}
	return nil
}

// readFormat is the format of the state in tx (0 if unreadable).
func readFormat(tx *bolt.Tx) uint64 {
	if b := tx.Bucket(bucketMeta); b != nil {
		if v := b.Get(keyFormat); len(v) == 8 {
			return binary.BigEndian.Uint64(v)
		}
	}
	return 0
}

func writeFormat(tx *bolt.Tx) error {
	return tx.Bucket(bucketMeta).Put(keyFormat, binary.BigEndian.AppendUint64(nil, stateFormat))
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

// tableKey names a table in the state.
type tableKey struct{ db, name string }
