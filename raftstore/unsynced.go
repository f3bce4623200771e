package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// A state file checkpointed without fsync (Config.StateNoSync) is as good
// as a synced one after the process dies, kill -9 included: its writes
// are in the kernel's page cache, which outlives the process, and bbolt
// never overwrites the pages of its last committed transaction, so the
// file holds its last complete checkpoint (and its index). Only a crash
// of the machine (or the kernel) can leave it torn: pages written out in
// any order, some never. So the file is kept across restarts within one
// boot of the kernel and rebuilt from the snapshot and the Raft log (which
// is always fsynced) after a reboot.
//
// The boot is the kernel's boot_id, a random UUID drawn at every boot.
// Before the first unsynced write, the node records it, durably, in a file
// beside the state file (state.unsynced). At start:
//
//   - no state.unsynced: every write to the state file was fsynced; it is
//     used as is;
//   - state.unsynced names this boot: the file is whole (its last
//     checkpoint), used as is; started with fsync on (--state-fsync), the
//     file is synced once and the marker removed;
//   - it names another boot, cannot be read, or the boot is not known
//     (not Linux): the file may be torn and is deleted; the state is
//     rebuilt from the snapshot and the log, as every start did before.
//
// A restart then replays the log since the last checkpoint (at most a
// second of entries, none after SIGTERM), not since the last snapshot (up
// to SnapshotThreshold entries): DESIGN §4, "a restart costs the log since
// the checkpoint".

// unsyncedName is the marker file's name in the state file's directory.
const unsyncedName = "state.unsynced"

// bootIDPath is where Linux publishes the boot's id.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// readBootID returns the kernel's boot id, nil when unknown.
func readBootID() []byte {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return nil
	}
	b = bytes.TrimSpace(b)
	if len(b) < 16 {
		return nil
	}
	return b
}

// prepareState decides, before the state file at sp is opened, whether
// its contents can be trusted (see above), deletes it when not, and
// records the boot when the file is about to be written without fsync.
// boot is the kernel's boot id (nil: unknown). It returns whether the
// file, opened with fsync on, must be synced once before the marker goes
// (syncThenClear).
func prepareState(sp string, noSync bool, boot []byte, log *slog.Logger) (syncThenClear bool, err error) {
	marker := filepath.Join(filepath.Dir(sp), unsyncedName)
	prev, rerr := os.ReadFile(marker)
	hasMarker := rerr == nil
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		// Unreadable: as if it named another boot.
		hasMarker, prev = true, nil
	}
	sameBoot := hasMarker && boot != nil && bytes.Equal(bytes.TrimSpace(prev), boot)
	switch {
	case noSync && sameBoot:
		log.Info("state file kept: written without fsync in this boot, whole after a process exit")
		return false, nil
	case !noSync && !hasMarker:
		return false, nil
	case !noSync && sameBoot:
		return true, nil
	}
	// A file that may be torn (or, without fsync and no marker of this
	// boot, one that cannot be told whole): rebuilt from the snapshot
	// and the log. The marker goes after the file, so that a stop in
	// between leaves a marker that still condemns it.
	if err := os.Remove(sp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("raftstore: reset state: %w", err)
	}
	if hasMarker {
		log.Info("state file deleted: written without fsync before the machine restarted; rebuilt from the snapshot and the log")
	}
	if !noSync {
		if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("raftstore: reset state: %w", err)
		}
		return false, nil
	}
	if boot == nil {
		// The boot cannot be told: every start rebuilds.
		if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("raftstore: reset state: %w", err)
		}
		return false, nil
	}
	if err := writeMarker(marker, boot); err != nil {
		return false, fmt.Errorf("raftstore: record the boot of the state file: %w", err)
	}
	return false, nil
}

// writeMarker writes the boot id to path durably (file and directory
// fsynced): it must be on disk before the first unsynced write it covers.
func writeMarker(path string, boot []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(append([]byte{}, boot...), '\n'))
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// clearMarker removes the marker once the state file it covered has been
// synced (the file is then as durable as one written with fsync).
func clearMarker(sp string) error {
	if err := os.Remove(filepath.Join(filepath.Dir(sp), unsyncedName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(sp))
}
