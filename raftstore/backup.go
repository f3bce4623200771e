package raftstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/backupfile"
	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// A backup file is a backupfile envelope around an image of the state
// file, as one read transaction saw it (tx.WriteTo): backupfile owns the
// envelope, this file what is inside.

// BackupTx is a backup in progress: a read transaction on the state that
// WriteTo streams out. Close it to let bbolt reuse the pages it pins.
type BackupTx struct {
	tx  *bolt.Tx
	hdr backupfile.Header
}

// Header describes the backup WriteTo writes.
func (b *BackupTx) Header() backupfile.Header { return b.hdr }

// WriteTo writes the whole backup file to w.
func (b *BackupTx) WriteTo(w io.Writer) (int64, error) {
	return backupfile.Write(w, b.hdr, b.tx)
}

// Close ends the read transaction.
func (b *BackupTx) Close() error { return b.tx.Rollback() }

// beginBackup opens a read transaction for a backup of the FSM's state.
// It writes a checkpoint first: the image is the state file.
func (f *FSM) beginBackup(nodeID string, now time.Time) (*BackupTx, error) {
	f.ckptMu.Lock()
	defer f.ckptMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkpointLocked(); err != nil {
		return nil, fmt.Errorf("raftstore: backup: %w", err)
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("raftstore: backup: %w", err)
	}
	index, term := readApplied(tx)
	return &BackupTx{tx: tx, hdr: backupfile.Header{
		NodeID: nodeID, AppliedIndex: index, AppliedTerm: term,
		Created: now, ImageSize: uint64(tx.Size()),
	}}, nil
}

// BeginBackup starts a backup of this node's state. Unless allowStale, it
// first catches up with the cluster: it asks the leader for its commit
// index (the leader uses its own) and waits until this node has applied
// it, so that the backup holds every allocation acknowledged before the
// call. allowStale backs up whatever this node has applied, for a cluster
// that has lost its quorum; the header's applied index says how far that
// is.
func (n *Node) BeginBackup(ctx context.Context, allowStale bool) (*BackupTx, error) {
	if err := n.fsm.Err(); err != nil {
		return nil, err
	}
	if !allowStale {
		if err := n.syncState(ctx); err != nil {
			return nil, fmt.Errorf("raftstore: backup: %w", err)
		}
	}
	return n.fsm.beginBackup(string(n.id), time.Now())
}

// Backup is a verified backup file's content.
type Backup struct {
	Header backupfile.Header
	// Dump is the state the image holds.
	Dump model.Dump
	// FileSize is the length of the file read.
	FileSize int64
}

// ReadBackup reads and verifies a whole backup file from r (OpenBackup)
// and returns its whole content, row tables' rows included (Dump.Rows).
// Restores of large tables use OpenBackup, which streams rows.
func ReadBackup(r io.Reader, dir string) (*Backup, error) {
	f, err := OpenBackup(r, dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := f.Backup
	for _, t := range b.Dump.Tables {
		if t.Def.Rows == nil {
			continue
		}
		var rows [][]model.Datum
		err := f.ScanRows(t.Def.DB, t.Def.Name, 1<<20, func(chunk [][]model.Datum) error {
			rows = append(rows, chunk...)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			if b.Dump.Rows == nil {
				b.Dump.Rows = map[string][][]model.Datum{}
			}
			b.Dump.Rows[t.Def.Key()] = rows
		}
	}
	return &b, nil
}

// BackupFile is a verified backup staged on disk: its header and state
// without row tables' rows (Dump.Rows is nil), which ScanRows streams.
// Close removes the staged image.
type BackupFile struct {
	Backup
	path string
	db   *bolt.DB
	// rowCount is each row table's number of rows, by TableDef.Key.
	rowCount map[string]int
}

// RowCount is how many rows a row table of the backup holds.
func (f *BackupFile) RowCount(db, table string) int { return f.rowCount[db+"."+table] }

// ScanRows calls fn with a row table's rows in clustering order, in
// chunks of about maxBytes of stored rows (at least one row), reading
// them from the staged image: memory holds one chunk, whatever the
// table's size. fn may keep the chunk.
func (f *BackupFile) ScanRows(db, table string, maxBytes int, fn func([][]model.Datum) error) error {
	var def *model.RowsDef
	for i := range f.Dump.Tables {
		if d := &f.Dump.Tables[i].Def; d.DB == db && d.Name == table {
			def = d.Rows
		}
	}
	if def == nil {
		return fmt.Errorf("raftstore: backup has no row table %s.%s", db, table)
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return fmt.Errorf("raftstore: backup rows: %w", err)
	}
	defer tx.Rollback()
	var rows [][]model.Datum
	size := 0
	add := func(r []model.Datum, n int) error {
		rows, size = append(rows, r), size+n
		if size < maxBytes {
			return nil
		}
		err := fn(rows)
		rows, size = nil, 0
		return err
	}
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		return fn(rows)
	}
	// A format-1 image keeps the rows in the table's value.
	if v := tx.Bucket(bucketDBs).Bucket([]byte(db)).Get([]byte(table)); v != nil {
		_, legacy, err := logformat.DecodeTableRows(v)
		if err != nil {
			return fmt.Errorf("%w: table %s.%s: %w", backupfile.ErrCorrupt, db, table, err)
		}
		for _, r := range legacy {
			if err := add(r, len(rowengine.AppendRow(nil, r))); err != nil {
				return err
			}
		}
	}
	if all := tx.Bucket(bucketRows); all != nil {
		if b := all.Bucket(rowsBucketName(tableKey{db, table})); b != nil {
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				r, err := rowengine.DecodeRow(string(v), len(def.Cols))
				if err != nil {
					return fmt.Errorf("%w: table %s.%s: %w", backupfile.ErrCorrupt, db, table, err)
				}
				if err := add(r, len(k)+len(v)); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// Close closes and removes the staged image.
func (f *BackupFile) Close() error {
	err := f.db.Close()
	return errors.Join(err, os.Remove(f.path))
}

// OpenBackup reads and verifies a whole backup file from r: the envelope
// (backupfile.Read: magic, version, length, checksum), then the image
// itself (bbolt opens it, its format is one this binary reads, and every
// table and row decodes). The image is staged in a temporary file in dir
// (bbolt needs a file to open), removed by Close. Errors wrap
// backupfile's ErrNotBackup, ErrVersion, ErrTruncated or ErrCorrupt.
func OpenBackup(r io.Reader, dir string) (_ *BackupFile, err error) {
	tmp, err := os.CreateTemp(dir, "ticketd-backup-*.db")
	if err != nil {
		return nil, fmt.Errorf("raftstore: read backup: %w", err)
	}
	defer tmp.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	hdr, err := backupfile.Read(r, tmp)
	if err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("raftstore: read backup: %w", err)
	}
	db, err := bolt.Open(tmp.Name(), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("%w: image does not open as bbolt: %w", backupfile.ErrCorrupt, err)
	}
	dump, counts, err := readImage(db, hdr.AppliedIndex)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &BackupFile{Backup: Backup{Header: hdr, Dump: *dump, FileSize: hdr.Size()}, path: tmp.Name(), db: db, rowCount: counts}, nil
}

// readImage reads a state image's content, less row tables' rows, which
// it checks and counts.
func readImage(db *bolt.DB, wantApplied uint64) (*model.Dump, map[string]int, error) {
	dump := new(model.Dump)
	counts := map[string]int{}
	err := db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("no meta bucket")
		}
		if err := checkFormat(meta.Get(keyFormat)); err != nil {
			return err
		}
		if applied, _ := readApplied(tx); applied != wantApplied {
			return fmt.Errorf("image applied index %d, header says %d", applied, wantApplied)
		}
		dbs := tx.Bucket(bucketDBs)
		if dbs == nil {
			return fmt.Errorf("no %q bucket", bucketDBs)
		}
		err := dbs.ForEachBucket(func(name []byte) error {
			db := string(name)
			dump.Databases = append(dump.Databases, db)
			return dbs.Bucket(name).ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("database %q: unexpected bucket %q", db, k)
				}
				t, legacy, err := logformat.DecodeTableRows(v)
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", db, k, err)
				}
				if t.Def.DB != db || t.Def.Name != string(k) {
					return fmt.Errorf("table %s.%s is named %s", db, k, t.Def.Key())
				}
				dump.Tables = append(dump.Tables, *t)
				if t.Def.Rows == nil {
					return nil
				}
				n, err := checkRows(tx.Bucket(bucketRows), tableKey{db, string(k)}, t.Def.Rows)
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", db, k, err)
				}
				counts[t.Def.Key()] = n + len(legacy)
				return nil
			})
		})
		if err != nil {
			return err
		}
		if g := tx.Bucket(bucketGlobals); g != nil {
			err = g.ForEach(func(k, v []byte) error {
				if len(v) != 8 {
					return fmt.Errorf("global %q has %d bytes", k, len(v))
				}
				if isClusterGlobal(string(k)) {
					// The source cluster's members and clock, not its data.
					return nil
				}
				dump.Globals = append(dump.Globals, model.Global{Name: string(k), Value: binary.BigEndian.Uint64(v)})
				return nil
			})
		}
		if err == nil {
			err = eachStoredKey(tx, func(k keyRef, v model.KeyVal) error {
				dump.Keys = append(dump.Keys, model.KeyEntry{DB: k.db, Name: k.name, KeyVal: v})
				return nil
			})
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", backupfile.ErrCorrupt, err)
	}
	// bbolt iterates in key order already; sorting again keeps the
	// documented order whatever the iteration does.
	sort.Strings(dump.Databases)
	sort.Slice(dump.Tables, func(i, j int) bool {
		a, b := &dump.Tables[i].Def, &dump.Tables[j].Def
		return a.DB < b.DB || a.DB == b.DB && a.Name < b.Name
	})
	if err := ticket.ValidateDump(dump); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", backupfile.ErrCorrupt, err)
	}
	return dump, counts, nil
}

// checkRows checks that every row of a row table's bucket decodes and
// sits under its own key, and counts them, holding one row at a time.
func checkRows(all *bolt.Bucket, k tableKey, rd *model.RowsDef) (int, error) {
	if all == nil {
		return 0, nil
	}
	b := all.Bucket(rowsBucketName(k))
	if b == nil {
		return 0, nil
	}
	cluster := rowengine.ClusterKey(rd)
	n := 0
	err := b.ForEach(func(pk, v []byte) error {
		r, err := rowengine.DecodeRow(string(v), len(rd.Cols))
		if err != nil {
			return err
		}
		if cluster >= 0 {
			if key, _ := rowengine.IndexKey(rd, cluster, r); key != string(pk) {
				return fmt.Errorf("%w: row stored under another key", rowengine.ErrRowsCorrupt)
			}
		}
		n++
		return nil
	})
	return n, err
}
