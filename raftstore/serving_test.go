package raftstore

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// A node reopened on its data directory (state file rebuilt from the log,
// as with StateNoSync) must not serve until its state holds its own log:
// whenever Serving says yes, the database and the counter are there.
func TestReopenServesOnlyCaughtUp(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("n1", dir, nil)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.AdvertiseAddr = "127.0.0.1:1" // a lone voter never dials itself
	cfg.StateNoSync = true
	rebootEveryStart(&cfg) // the state file is rebuilt at every start
	n := openNode(t, cfg)
	must(t, n.WaitServing(ctxT(t, 5*time.Second)))
	rs := propose(t, n, append(setupCmds(), replaceCmd("flickr", "Tickets64", "a"), replaceCmd("flickr", "Tickets64", "a"))...)
	last := rs[len(rs)-1].InsertID
	must(t, n.Close())

	for round := range 5 {
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sawWaiting := false
		for n.Serving() != nil {
			sawWaiting = true
			time.Sleep(100 * time.Microsecond)
		}
		err = n.View(func(st ticket.Store) error {
			tb, err := st.Table("flickr", "Tickets64")
			if err != nil {
				return err
			}
			if tb == nil {
				return errors.New("table missing")
			}
			if tb.AutoInc <= last {
				return errors.New("counter " + strconv.FormatUint(tb.AutoInc, 10) + " not above " + strconv.FormatUint(last, 10))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: serving (after waiting: %v) with %v", round, sawWaiting, err)
		}
		must(t, n.Ready())
		last = propose(t, n, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID
		must(t, n.Close())
	}
}

// A second Open of a directory in use fails at once and names the holder.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("n1", dir, listen(t))
	n := openNode(t, cfg)
	cfg2 := testConfig("n1", dir, listen(t))
	start := time.Now()
	_, err := Open(cfg2)
	if !errors.Is(err, ErrDataDirLocked) {
		t.Fatalf("second open: %v, want ErrDataDirLocked", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second open took %v to fail", d)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("message names neither the directory nor the pid: %v", err)
	}
	must(t, n.Close())
	// Closed, the directory can be opened again.
	n2, err := Open(testConfig("n1", dir, listen(t)))
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	must(t, n2.Close())
}

// TestFollowerReadsOwnWriteAfterNudge: with Raft left to itself, an idle
// follower learns that its forwarded write committed only when the
// leader's CommitTimeout fires (heartbeats carry no commit index); here
// that is an hour. WaitApplied nudges the leader for a barrier entry,
// which carries the commit index, so the write becomes readable on the
// follower long before that.
//
// The two writes are how the test gets a committed entry, not what it
// asserts: a leader that loses its lease under load (-race, load average
// 16 on 2 cores: 250 ms without a reply from either follower) fails them
// with "leadership lost while committing log" or "no leader", and they
// are tried again (proposeRetry); the id a lost one may have burnt is
// below the one that commits.
func TestFollowerReadsOwnWriteAfterNudge(t *testing.T) {
	c := startCluster(t, func(cfg *Config) { cfg.CommitTimeout = time.Hour })
	ctx := ctxT(t, 20*time.Second)
	proposeRetry(t, c.leader(), setupCmds()...)
	f := c.follower()
	res := proposeRetry(t, f, replaceCmd("flickr", "Tickets64", "a"))
	if len(res) != 1 || res[0].Err != nil || res[0].Index == 0 {
		t.Fatalf("forwarded replace: %+v", res)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitApplied(wait, res[0].Index); err != nil {
		t.Fatalf("follower never applied its own write at index %d: %v", res[0].Index, err)
	}
	if got := autoInc(t, f, "flickr", "Tickets64"); got != res[0].InsertID+1 {
		t.Errorf("follower's auto_increment %d after the write of id %d", got, res[0].InsertID)
	}
}

// TestLongReplayBecomesReady: a restarted lone node whose replay of its
// own log outlasts every deadline the barrier of its new term used to
// have (ApplyTimeout plus the forward grace) still becomes ready, as soon
// as the replay is done, and says how far the replay is while it waits.
// Before the fix it gave the barrier up once and never asked again: the
// node led its term but never served (issue 22).
func TestLongReplayBecomesReady(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig("n1", dir, nil)
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.AdvertiseAddr = "127.0.0.1:1" // a lone voter never dials itself
	cfg.StateNoSync = true            // the state is rebuilt from the log at every start
	rebootEveryStart(&cfg)
	n := openNode(t, cfg)
	must(t, n.WaitServing(ctxT(t, 5*time.Second)))
	propose(t, n, setupCmds()...)
	const entries = 40
	var last uint64
	for range entries {
		last = propose(t, n, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID
	}
	must(t, n.Close())

	// Each replayed command now takes 100 ms: about 4 s in all, longer
	// than the barrier's old deadline (200 ms + forwardGrace).
	cfg.ApplyTimeout = 200 * time.Millisecond
	if replay := time.Duration(entries) * 100 * time.Millisecond; replay <= cfg.ApplyTimeout+forwardGrace {
		t.Fatalf("replay of %v does not outlast the old barrier deadline", replay)
	}
	var slow atomic.Bool
	slow.Store(true)
	n, err := open(cfg, func(st ticket.Store, c *model.Command) (model.Result, error) {
		if slow.Load() {
			time.Sleep(100 * time.Millisecond)
		}
		return ticket.Apply(st, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	start := time.Now()
	sawProgress := false
	for {
		err := n.Ready()
		if err == nil {
			break
		}
		sawProgress = sawProgress || strings.Contains(err.Error(), "state at index")
		if time.Since(start) > 30*time.Second {
			t.Fatalf("not ready 30 s after restart (a replay of about 4 s): %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	slow.Store(false)
	t.Logf("ready %v after restart", time.Since(start).Round(time.Millisecond))
	if !sawProgress {
		t.Error("readiness never said how far the replay was")
	}
	if got := propose(t, n, replaceCmd("flickr", "Tickets64", "a"))[0].InsertID; got <= last {
		t.Errorf("id %d after restart, not above %d", got, last)
	}
}
