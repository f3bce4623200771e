package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrDataDirLocked: another process (or another Node of this one) has the
// data directory open. Two nodes on one directory would write one Raft
// log and one state file at once.
var ErrDataDirLocked = errors.New("raftstore: data directory in use")

// dirLock is an exclusive flock on DataDir/LOCK, held for the Node's
// life. The kernel drops it when the process dies, so a kill -9 never
// leaves a stale lock behind. The file holds the holder's pid, for the
// message the next process prints.
type dirLock struct{ f *os.File }

func lockDataDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("raftstore: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("%w: %s is held by process %s (another ticketd on the same --data-dir?)", ErrDataDirLocked, dir, pid)
		}
		return nil, fmt.Errorf("raftstore: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// release gives the directory up; closing the file drops the flock.
func (l *dirLock) release() error { return l.f.Close() }
