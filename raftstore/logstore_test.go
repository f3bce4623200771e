package raftstore

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

func storeSome(t *testing.T, s logStore, from, to uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
}

// TestLogStoreKeepsWhatTheDirectoryHas opens each store, writes entries
// and a vote, and reopens: with the same kind or "" the entries are there;
// with the other kind the open is refused rather than starting empty.
func TestLogStoreKeepsWhatTheDirectoryHas(t *testing.T) {
	for _, kind := range []string{LogStoreBolt, LogStoreWAL} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			s, err := openLogStore(dir, kind)
			if err != nil {
				t.Fatal(err)
			}
			storeSome(t, s, 1, 5)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			other := LogStoreWAL
			if kind == LogStoreWAL {
				other = LogStoreBolt
			}
			if _, err := openLogStore(dir, other); !errors.Is(err, ErrLogStoreMismatch) {
				t.Fatalf("open %s over %s: %v, want ErrLogStoreMismatch", other, kind, err)
			}
			for _, again := range []string{kind, ""} {
				s, err := openLogStore(dir, again)
				if err != nil {
					t.Fatalf("reopen as %q: %v", again, err)
				}
				last, err := s.LastIndex()
				if err != nil || last != 5 {
					t.Errorf("reopen as %q: last index %d, %v; want 5", again, last, err)
				}
				var l raft.Log
				if err := s.GetLog(3, &l); err != nil || l.Data[0] != 3 {
					t.Errorf("reopen as %q: entry 3 = %v, %v", again, l.Data, err)
				}
				term, err := s.GetUint64([]byte("CurrentTerm"))
				if err != nil || term != 7 {
					t.Errorf("reopen as %q: term %d, %v; want 7", again, term, err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestLogStoreNewDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := openLogStore(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if have, err := existingLogStore(dir); err != nil || have != DefaultLogStore {
		t.Errorf("new directory with no store asked for: has %q (%v), want %q", have, err, DefaultLogStore)
	}
	if _, err := openLogStore(t.TempDir(), "rocks"); !errors.Is(err, ErrUnknownLogStore) {
		t.Errorf("unknown store: %v, want ErrUnknownLogStore", err)
	}
}

// BenchmarkLogStoreAppend appends one 300-byte entry per StoreLogs call,
// as a leader does for each batch under light load: the fsyncs dominate.
func BenchmarkLogStoreAppend(b *testing.B) {
	for _, kind := range []string{LogStoreBolt, LogStoreWAL} {
		b.Run(kind, func(b *testing.B) {
			s, err := openLogStore(b.TempDir(), kind)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := make([]byte, 300)
			var i uint64
			for b.Loop() {
				i++
				if err := s.StoreLogs([]*raft.Log{{Index: i, Term: 1, Type: raft.LogCommand, Data: data}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
