package raftstore

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// A lone voter on a full disk waits for space instead of churning terms
// (issue 34). Raft steps a leader down when its log store refuses an
// entry; a node that is the only voter then stands for election a
// heartbeat timeout later, wins at once (nobody else votes), writes its
// new term (a few bytes, which often still fit), fails its first entry
// the same way and steps down again: a new term about every 0.6 s, and
// the log full of elections, for as long as the disk stays full. In a
// cluster that step-down is what lets a node with space lead, so only a
// lone voter holds: at the failed write (inside Raft's leader loop,
// before it steps down) it raises its heartbeat and election timeouts
// out of reach, so that the follower it becomes does not campaign, and a
// goroutine watches the free space of the Raft directory. Once there is
// room for the store to grow (spaceNeeded), or after electionHoldMax at
// the latest (in case the estimate is wrong: at worst one term per
// electionHoldMax), it restores the timeouts, which wakes the follower's
// timer: it stands for election at once. Meanwhile statements fail with
// the storage error (StorageErr), as they did, but from a node that knows
// why it does not lead.

// electionHoldMax bounds one hold; electionHoldTimeout is the timeout
// that keeps a held follower from campaigning (longer than any hold).
const (
	electionHoldMax     = 30 * time.Second
	electionHoldTimeout = time.Hour
	spacePoll           = 250 * time.Millisecond
)

// spaceNeeded is the free space at which a held lone voter stands for
// election again: raft-wal creates its 64 MiB segment files whole, so
// it needs room for one more; bbolt grows its file a few pages at a
// time.
func spaceNeeded(kind string) uint64 {
	if kind == LogStoreWAL {
		return 72 << 20
	}
	return 8 << 20
}

// electionHold is a lone voter's hold on elections while its disk is
// full.
type electionHold struct {
	held  atomic.Bool
	mu    sync.Mutex
	saved raft.ReloadableConfig // the timeouts to restore
}

// noSpace reports a write that failed for lack of space (or quota).
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		strings.Contains(err.Error(), "no space left on device")
}

// storeRefused is told of every failed write of the log or stable store
// (watchedStore). It may run inside Raft's leader loop, so it only
// reloads Raft's configuration (which does not wait for the loop) and
// reads what watchMembership keeps.
func (n *Node) storeRefused(err error) {
	if !noSpace(err) || !n.lone.Load() || n.isClosed() {
		return
	}
	h := &n.hold
	if !h.held.CompareAndSwap(false, true) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.saved = n.raft.ReloadableConfig()
	rc := h.saved
	rc.HeartbeatTimeout, rc.ElectionTimeout = electionHoldTimeout, electionHoldTimeout
	if rerr := n.raft.ReloadConfig(rc); rerr != nil {
		n.log.Error("disk full: could not hold elections until there is space", "err", rerr)
		h.held.Store(false)
		return
	}
	kind, _ := existingLogStore(n.raftDir())
	need := spaceNeeded(kind)
	free, _ := freeSpace(n.raftDir())
	n.log.Warn("disk full: this node, the only voter, stands for no election until there is space for its Raft log, instead of winning one and failing its first entry again",
		"free_bytes", free, "needed_bytes", need, "retry_within", electionHoldMax)
	go n.waitForSpace(need, time.Now())
}

// waitForSpace ends a hold once the Raft directory has need bytes free,
// or after electionHoldMax.
func (n *Node) waitForSpace(need uint64, began time.Time) {
	t := time.NewTicker(spacePoll)
	defer t.Stop()
	var free uint64
	for {
		select {
		case <-n.closed:
			return
		case <-t.C:
		}
		var err error
		free, err = freeSpace(n.raftDir())
		if err == nil && free >= need || time.Since(began) >= electionHoldMax {
			break
		}
	}
	h := &n.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	// Lowering the heartbeat timeout wakes the follower's timer: with no
	// leader heard from, it stands for election now.
	if err := n.raft.ReloadConfig(h.saved); err != nil {
		n.log.Error("could not restore Raft's timeouts after a full disk", "err", err)
	}
	h.held.Store(false)
	n.log.Info("standing for election again after a full disk", "free_bytes", free, "needed_bytes", need,
		"held_for", time.Since(began).Round(time.Millisecond))
}

// raftDir is where the Raft log lives.
func (n *Node) raftDir() string { return filepath.Join(n.cfg.DataDir, "raft") }

// freeSpace is the space available to this process on dir's filesystem.
func freeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
