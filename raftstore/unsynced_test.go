package raftstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
)

// TestPrepareState: which state files are kept, which deleted, and what
// the marker says afterwards, for each mode and marker.
func TestPrepareState(t *testing.T) {
	boot := []byte("0b7d2c6e-4a3e-4f4c-9d8e-1a2b3c4d5e6f")
	other := []byte("11111111-2222-3333-4444-555555555555")
	for _, tc := range []struct {
		name       string
		noSync     bool
		marker     []byte // nil: none
		boot       []byte
		keep, sync bool
		markerOut  []byte // nil: none afterwards
	}{
		{"unsynced, same boot", true, boot, boot, true, false, boot},
		{"unsynced, other boot", true, other, boot, false, false, boot},
		{"unsynced, no marker (an older build's file)", true, nil, boot, false, false, boot},
		{"unsynced, boot unknown", true, boot, nil, false, false, nil},
		{"unsynced, marker garbled", true, []byte("\x00\x00"), boot, false, false, boot},
		{"synced, no marker", false, nil, boot, true, false, nil},
		{"synced after unsynced, same boot", false, boot, boot, true, true, boot},
		{"synced after unsynced, other boot", false, other, boot, false, false, nil},
		{"synced after unsynced, boot unknown", false, boot, nil, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sp := filepath.Join(dir, "state.db")
			must(t, os.WriteFile(sp, []byte("state"), 0o600))
			marker := filepath.Join(dir, unsyncedName)
			if tc.marker != nil {
				must(t, os.WriteFile(marker, tc.marker, 0o600))
			}
			sync, err := prepareState(sp, tc.noSync, tc.boot, testLogger())
			must(t, err)
			_, serr := os.Stat(sp)
			if kept := serr == nil; kept != tc.keep {
				t.Errorf("state file kept: %v, want %v", kept, tc.keep)
			}
			if sync != tc.sync {
				t.Errorf("sync once: %v, want %v", sync, tc.sync)
			}
			got, merr := os.ReadFile(marker)
			switch {
			case tc.markerOut == nil && merr == nil:
				t.Errorf("marker left: %q", got)
			case tc.markerOut != nil && !bytes.Equal(bytes.TrimSpace(got), tc.markerOut):
				t.Errorf("marker %q (%v), want %q", got, merr, tc.markerOut)
			}
		})
	}
}

// TestUnsyncedStateKept: a node checkpointing without fsync starts again
// from its own state file in the same boot of the machine (the file is
// the same one, not rebuilt), from a rebuilt one after a reboot, and
// with fsync on after it syncs the file once and drops the marker; the
// state is whole every time.
func TestUnsyncedStateKept(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("n1", dir, nil)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.AdvertiseAddr = "127.0.0.1:1" // a lone voter never dials itself
	cfg.StateNoSync = true
	boot := []byte("boot-1")
	cfg.bootIDFunc = func() []byte { return boot }
	sp := statePath(dir)
	var want uint64
	start := func(what string) os.FileInfo {
		t.Helper()
		n := openNode(t, cfg)
		must(t, n.WaitReady(ctxT(t, 10*time.Second)))
		if want == 0 {
			propose(t, n, setupCmds()...)
		}
		want = propose(t, n, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID + 1
		if v := autoInc(t, n, "flickr", "Tickets64"); v != want {
			t.Fatalf("%s: next id %d, want %d", what, v, want)
		}
		st, err := os.Stat(sp)
		must(t, err)
		must(t, n.Close())
		return st
	}
	first := start("first start")
	if got := start("same boot"); !os.SameFile(first, got) {
		t.Fatal("same boot: the state file was rebuilt")
	}
	boot = []byte("boot-2")
	rebooted := start("after a reboot")
	if os.SameFile(first, rebooted) {
		t.Fatal("after a reboot: the unsynced state file was kept")
	}
	cfg.StateNoSync = false
	if got := start("fsync on, same boot"); !os.SameFile(rebooted, got) {
		t.Fatal("fsync on: the state file written in this boot was rebuilt")
	}
	if _, err := os.Stat(filepath.Join(dir, unsyncedName)); !os.IsNotExist(err) {
		t.Fatalf("marker after the first start with fsync: %v", err)
	}
}

// TestStateWithoutRaftStateReset: a data directory whose raft/ was
// emptied but whose state file was kept starts from an empty state: a
// new log starts at index 1, and a state machine holding a later index
// would skip its entries. Before the state file was kept across
// restarts, only --state-fsync kept it.
func TestStateWithoutRaftStateReset(t *testing.T) {
	for _, noSync := range []bool{true, false} {
		dir := t.TempDir()
		cfg := testConfig("n1", dir, nil)
		cfg.RaftAddr = "127.0.0.1:0"
		cfg.AdvertiseAddr = "127.0.0.1:1"
		cfg.StateNoSync = noSync
		n := openNode(t, cfg)
		must(t, n.WaitReady(ctxT(t, 10*time.Second)))
		propose(t, n, setupCmds()...)
		must(t, n.Close())
		must(t, os.RemoveAll(filepath.Join(dir, "raft")))

		n = openNode(t, cfg)
		must(t, n.WaitReady(ctxT(t, 10*time.Second)))
		must(t, n.View(func(s ticket.Store) error {
			if ok, _ := s.Database("flickr"); ok {
				t.Errorf("noSync=%v: the old state's database is there after raft/ was emptied", noSync)
			}
			return nil
		}))
		propose(t, n, setupCmds()...)
		if v := autoInc(t, n, "flickr", "Tickets64"); v != 1 {
			t.Errorf("noSync=%v: next id %d in the new state, want 1", noSync, v)
		}
		must(t, n.Close())
	}
}
