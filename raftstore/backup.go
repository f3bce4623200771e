package raftstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Backup file format, version 1. Integers are big-endian.
//
//	header   magic "TKTDBKUP" | u16 version | u16 len(node id) | u64 applied index
//	         | u64 applied term | i64 created (Unix ns) | u64 image length | node id
//	image    the bbolt state file as one read transaction saw it (tx.WriteTo)
//	trailer  magic "TKTDEND\n" | u64 image length | SHA-256 of header, image
//	         and the trailer's first 16 bytes
//
// The image length is in the header so that a reader knows where the image
// ends without trusting the end of the stream, and again in the trailer so
// that a truncated file is told apart from a damaged one. Nothing is
// restored from a file until its whole length has been read and its
// checksum matched.
const (
	backupMagic   = "TKTDBKUP"
	backupEnd     = "TKTDEND\n"
	backupVersion = 1

	backupHeaderLen  = 8 + 2 + 2 + 8 + 8 + 8 + 8
	backupTrailerLen = 8 + 8 + sha256.Size

	// maxBackupImage bounds the image a reader accepts (it is written to
	// disk before its checksum can be checked).
	maxBackupImage = 4 << 30
)

// Backup file errors. Each failure to read a backup wraps one of them.
var (
	// ErrNotBackup: the file does not start with the backup magic.
	ErrNotBackup = errors.New("raftstore: not a ticketd backup file")
	// ErrBackupVersion: a backup format this binary does not know.
	ErrBackupVersion = errors.New("raftstore: unsupported backup format version")
	// ErrBackupTruncated: the file ends before its trailer does.
	ErrBackupTruncated = errors.New("raftstore: backup file truncated")
	// ErrBackupCorrupt: the checksum does not match, the trailer is
	// damaged, or the image is not a state file whose tables decode.
	ErrBackupCorrupt = errors.New("raftstore: backup file corrupt")
)

// BackupHeader describes a backup: which node took it, when, and the last
// Raft entry its state includes.
type BackupHeader struct {
	NodeID       string
	AppliedIndex uint64
	AppliedTerm  uint64
	Created      time.Time
	ImageSize    uint64
}

// Size is the length of the whole backup file.
func (h BackupHeader) Size() int64 {
	return int64(backupHeaderLen+len(h.NodeID)) + int64(h.ImageSize) + backupTrailerLen
}

func (h BackupHeader) marshal() []byte {
	b := make([]byte, 0, backupHeaderLen+len(h.NodeID))
	b = append(b, backupMagic...)
	b = binary.BigEndian.AppendUint16(b, backupVersion)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.NodeID)))
	b = binary.BigEndian.AppendUint64(b, h.AppliedIndex)
	b = binary.BigEndian.AppendUint64(b, h.AppliedTerm)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Created.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, h.ImageSize)
	return append(b, h.NodeID...)
}

// BackupTx is a backup in progress: a read transaction on the state that
// WriteTo streams out. Close it to let bbolt reuse the pages it pins.
type BackupTx struct {
	tx  *bolt.Tx
	hdr BackupHeader
}

// Header describes the backup WriteTo writes.
func (b *BackupTx) Header() BackupHeader { return b.hdr }

// WriteTo writes the whole backup file to w.
func (b *BackupTx) WriteTo(w io.Writer) (int64, error) {
	h := sha256.New()
	mw := io.MultiWriter(w, h)
	head := b.hdr.marshal()
	n, err := mw.Write(head)
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	img, err := b.tx.WriteTo(mw)
	total += img
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	if uint64(img) != b.hdr.ImageSize {
		// The header promised another length: better no trailer (the
		// file reads as truncated) than a file that lies.
		return total, fmt.Errorf("raftstore: backup: image is %d bytes, header says %d", img, b.hdr.ImageSize)
	}
	n, err = w.Write(trailer(h, b.hdr.ImageSize))
	total += int64(n)
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	return total, nil
}

// trailer completes h with the trailer's first fields and returns the
// trailer.
func trailer(h hash.Hash, imageSize uint64) []byte {
	t := append([]byte(backupEnd), binary.BigEndian.AppendUint64(nil, imageSize)...)
	h.Write(t)
	return h.Sum(t)
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
	return &BackupTx{tx: tx, hdr: BackupHeader{
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
	Header BackupHeader
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
			return fmt.Errorf("%w: table %s.%s: %w", ErrBackupCorrupt, db, table, err)
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
					return fmt.Errorf("%w: table %s.%s: %w", ErrBackupCorrupt, db, table, err)
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

// OpenBackup reads and verifies a whole backup file from r: magic,
// version, length, checksum, then the image itself (bbolt opens it, its
// format is one this binary reads, and every table and row decodes). The
// image is staged in a temporary file in dir (bbolt needs a file to
// open), removed by Close. Errors wrap ErrNotBackup, ErrBackupVersion,
// ErrBackupTruncated or ErrBackupCorrupt.
func OpenBackup(r io.Reader, dir string) (_ *BackupFile, err error) {
	h := sha256.New()
	tr := io.TeeReader(r, h)
	fixed := make([]byte, backupHeaderLen)
	if n, err := io.ReadFull(tr, fixed); err != nil {
		if n >= len(backupMagic) && string(fixed[:len(backupMagic)]) == backupMagic {
			return nil, fmt.Errorf("%w: %d header bytes of %d", ErrBackupTruncated, n, backupHeaderLen)
		}
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrNotBackup, n)
	}
	if string(fixed[:8]) != backupMagic {
		return nil, fmt.Errorf("%w: starts with %q", ErrNotBackup, fixed[:8])
	}
	if v := binary.BigEndian.Uint16(fixed[8:]); v != backupVersion {
		return nil, fmt.Errorf("%w: version %d, this binary reads %d", ErrBackupVersion, v, backupVersion)
	}
	hdr := BackupHeader{
		AppliedIndex: binary.BigEndian.Uint64(fixed[12:]),
		AppliedTerm:  binary.BigEndian.Uint64(fixed[20:]),
		Created:      time.Unix(0, int64(binary.BigEndian.Uint64(fixed[28:]))),
		ImageSize:    binary.BigEndian.Uint64(fixed[36:]),
	}
	if hdr.ImageSize > maxBackupImage {
		return nil, fmt.Errorf("%w: image length %d", ErrBackupCorrupt, hdr.ImageSize)
	}
	id := make([]byte, binary.BigEndian.Uint16(fixed[10:]))
	if _, err := io.ReadFull(tr, id); err != nil {
		return nil, fmt.Errorf("%w: in the header", ErrBackupTruncated)
	}
	hdr.NodeID = string(id)

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
	if n, err := io.CopyN(tmp, tr, int64(hdr.ImageSize)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: image has %d of %d bytes", ErrBackupTruncated, n, hdr.ImageSize)
		}
		return nil, fmt.Errorf("raftstore: read backup: %w", err)
	}
	// The trailer is read past the hash, which then takes its first
	// fields, as the writer's did.
	tail := make([]byte, backupTrailerLen+1)
	n, err := io.ReadFull(r, tail)
	switch {
	case err == nil:
		return nil, fmt.Errorf("%w: data after the trailer", ErrBackupCorrupt)
	case n < backupTrailerLen:
		return nil, fmt.Errorf("%w: trailer has %d of %d bytes", ErrBackupTruncated, n, backupTrailerLen)
	case !errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("raftstore: read backup: %w", err)
	}
	tail = tail[:backupTrailerLen]
	if string(tail[:8]) != backupEnd || binary.BigEndian.Uint64(tail[8:]) != hdr.ImageSize {
		return nil, fmt.Errorf("%w: bad trailer", ErrBackupCorrupt)
	}
	h.Write(tail[:16])
	if !bytes.Equal(h.Sum(nil), tail[16:]) {
		return nil, fmt.Errorf("%w: SHA-256 mismatch", ErrBackupCorrupt)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("raftstore: read backup: %w", err)
	}
	db, err := bolt.Open(tmp.Name(), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("%w: image does not open as bbolt: %w", ErrBackupCorrupt, err)
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
		return nil, nil, fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
	}
	// bbolt iterates in key order already; sorting again keeps the
	// documented order whatever the iteration does.
	sort.Strings(dump.Databases)
	sort.Slice(dump.Tables, func(i, j int) bool {
		a, b := &dump.Tables[i].Def, &dump.Tables[j].Def
		return a.DB < b.DB || a.DB == b.DB && a.Name < b.Name
	})
	if err := ticket.ValidateDump(dump); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBackupCorrupt, err)
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
