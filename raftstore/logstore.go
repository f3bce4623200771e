package raftstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	walmetrics "github.com/hashicorp/raft-wal/metrics"
	bolt "go.etcd.io/bbolt"
)

// The Raft log stores a node can keep its log and votes in.
const (
	// LogStoreBolt is hashicorp/raft-boltdb: one bbolt file, raft.db; each
	// append is a bbolt commit (two fdatasyncs).
	LogStoreBolt = "bolt"
	// LogStoreWAL is hashicorp/raft-wal: segment files under wal/ and a
	// small bbolt meta file; each append is one fdatasync, a torn tail is
	// recognised by the batch's commit frame CRC and dropped (it was
	// never acknowledged).
	LogStoreWAL = "wal"
)

// ErrLogStoreMismatch: the data directory holds a Raft log in another
// store than the one asked for. Opening the asked-for store would start
// from an empty log and forget every acknowledged entry, so the node
// refuses instead.
var ErrLogStoreMismatch = errors.New("raftstore: data directory holds another Raft log store")

// ErrUnknownLogStore: a log store name other than LogStoreBolt or
// LogStoreWAL.
var ErrUnknownLogStore = errors.New("raftstore: unknown Raft log store")

// logStore is what Raft needs of its log and stable store, and what the
// node closes at the end.
type logStore interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// logStorePaths are where each store keeps its files inside the raft
// directory; their presence says which store a directory already uses.
var logStorePaths = map[string]string{
	LogStoreBolt: "raft.db",
	LogStoreWAL:  "wal",
}

// existingLogStore names the store raftDir already holds, or "" when it
// holds none.
func existingLogStore(raftDir string) (string, error) {
	found := ""
	for _, kind := range []string{LogStoreBolt, LogStoreWAL} {
		_, err := os.Stat(filepath.Join(raftDir, logStorePaths[kind]))
		switch {
		case err == nil:
			if found != "" {
				return "", fmt.Errorf("%w: both %s and %s in %s", ErrLogStoreMismatch,
					logStorePaths[found], logStorePaths[kind], raftDir)
			}
			found = kind
		case !errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("raftstore: %w", err)
		}
	}
	return found, nil
}

// DefaultLogStore is the store a new data directory gets when none is
// asked for.
const DefaultLogStore = LogStoreWAL

// openLogStore opens the Raft log of the given kind in raftDir, creating
// it when the directory has none; kind "" keeps the store the directory
// has, or makes a DefaultLogStore one. A directory that already holds the other
// kind is refused with ErrLogStoreMismatch: the operator moves a node to
// another store by emptying its data directory and letting it catch up
// from the leader (or from a backup), never by losing its log silently.
func openLogStore(raftDir, kind string) (logStore, error) {
	if _, ok := logStorePaths[kind]; !ok && kind != "" {
		return nil, fmt.Errorf("%w %q (want %s or %s)", ErrUnknownLogStore, kind, LogStoreBolt, LogStoreWAL)
	}
	have, err := existingLogStore(raftDir)
	if err != nil {
		return nil, err
	}
	if kind == "" {
		kind = cmp.Or(have, DefaultLogStore)
	}
	if have != "" && have != kind {
		return nil, fmt.Errorf("%w: %s has a %q log (%s), asked for %q; start with --raft-log %s, or empty the data directory and rejoin",
			ErrLogStoreMismatch, raftDir, have, logStorePaths[have], kind, have)
	}
	switch kind {
	case LogStoreWAL:
		dir := filepath.Join(raftDir, logStorePaths[LogStoreWAL])
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("raftstore: %w", err)
		}
		// Through go-metrics, like Raft's own measurements, so whatever
		// sink the program installed (the Prometheus one) gets raft_wal_*.
		w, err := wal.Open(dir, wal.WithMetricsCollector(walmetrics.NewGoMetricsCollector([]string{"raft", "wal"}, nil, nil)))
		if err != nil {
			return nil, fmt.Errorf("raftstore: open raft-wal log: %w", err)
		}
		return w, nil
	default:
		// The directory lock keeps other ticketd processes out; the
		// timeout only guards against anything else holding the file.
		s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(raftDir, logStorePaths[LogStoreBolt]),
			BoltOptions: &bolt.Options{Timeout: 5 * time.Second}})
		if err != nil {
			return nil, fmt.Errorf("raftstore: open raft-boltdb log: %w", err)
		}
		return s, nil
	}
}
