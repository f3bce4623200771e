package faults

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// snapshotFlags are the server flags the snapshot test needs besides
// --snapshot-threshold: Raft only checks the threshold every
// SnapshotInterval (default 2 minutes) and keeps TrailingLogs entries
// (default 10240) after each snapshot, so with the defaults a test would
// need minutes and ten thousand entries before a lagging follower needs a
// snapshot.
var snapshotFlags = []string{"snapshot-interval", "trailing-logs"}

// compacted matches Raft's log line after a snapshot, e.g.
// msg="compacting logs" node=n1 component=raft from=1 to=136.
var compacted = regexp.MustCompile(`msg="compacting logs".* to=(\d+)`)

// compactedTo returns the highest "to" index of the compactions in log.
func compactedTo(log string) uint64 {
	var m uint64
	for _, sub := range compacted.FindAllStringSubmatch(log, -1) {
		if v, err := strconv.ParseUint(sub[1], 10, 64); err == nil && v > m {
			m = v
		}
	}
	return m
}

// TestSnapshotCatchUp runs a cluster with a low snapshot threshold (64
// entries, checked every 300ms, 32 kept), kills a follower, allocates on
// the others until every survivor has compacted its log past everything
// the follower had, and restarts it: it must catch up by installing the
// leader's snapshot (its log says so), serve ids above all earlier ones,
// and reach the leader's applied index. Then every node is killed with
// SIGKILL and restarted, so the state is rebuilt from snapshots and
// truncated logs, and nothing acknowledged may be lost.
func TestSnapshotCatchUp(t *testing.T) {
	if missing := binaryLacksFlags(t, snapshotFlags...); len(missing) > 0 {
		t.Fatalf("ticketd lacks %s: cmd/ticketd must expose raftstore.Config's SnapshotInterval and TrailingLogs "+
			"for a bounded snapshot test (see this file's snapshotFlags)", strings.Join(missing, ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// raft-boltdb: raft-wal truncates its head by whole 64 MiB segments,
	// so a test-sized log is never compacted and the follower would catch
	// up from the log instead of a snapshot.
	l := startLoaded(ctx, t, loadSpec{db: "snap", clients: 2,
		args: []string{"--snapshot-threshold", "64", "--snapshot-interval", "300ms", "--trailing-logs", "32", "--raft-log", "bolt"}})
	hc, lead, w := l.hc, l.lead, l.w
	// Let the follower apply a few snapshots' worth first, so that it
	// restarts from a snapshot of its own before it needs the leader's.
	victim := others(hc.Nodes, lead)[0]
	for deadline := time.Now().Add(20 * time.Second); ; {
		st, err := victim.Status(ctx)
		if err == nil && st.AppliedIndex >= 300 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower %s has not applied 300 entries in 20s: %+v %v", victim.ID(), st, err)
		}
		w.sleep(50 * time.Millisecond)
	}
	st, err := victim.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	had := st.Raw["last_log_index"]
	lastIndex, _ := had.(float64)
	// The follower may have appended more between the status and the
	// kill (a loaded machine can pause this goroutine for a while); the
	// survivors' last indexes after the kill bound what it can hold. Once
	// they have compacted past that, only a snapshot can bring the
	// follower back (with the status' index alone, a survivor that
	// compacted to 323 still held what a follower killed "at 309" lacked,
	// and it caught up from the log: seen once in a CI-like run).
	// Every survivor is asked, not the leader of the start: leadership
	// may have moved under load, and the follower then holds entries of a
	// leader the test no longer names (a CI-like run: "the leader's was
	// 319" from a node that no longer led, a survivor compacted to 322,
	// and the follower still caught up from the log).
	for _, n := range others(hc.Nodes, victim) {
		ls, err := n.Status(ctx)
		if err != nil {
			t.Fatalf("%s status after the kill: %v", n.ID(), err)
		}
		if li, ok := ls.Raw["last_log_index"].(float64); ok && li > lastIndex {
			lastIndex = li
		}
	}
	t.Logf("killed follower %s at last log index %v (the survivors' highest was %v)", victim.ID(), had, lastIndex)

	// Allocate until both survivors have compacted past the victim's log.
	rest := others(hc.Nodes, victim)
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := true
		for _, n := range rest {
			if compactedTo(logSince(n)) <= uint64(lastIndex) {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("survivors have not compacted their logs past index %v in 60s (no snapshots?)", lastIndex)
		}
		w.sleep(100 * time.Millisecond)
	}
	for _, n := range rest {
		t.Logf("%s compacted its log up to index %d", n.ID(), compactedTo(logSince(n)))
	}

	tStart := time.Now()
	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := victim.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := waitServing(w, []*harness.Node{victim}, tStart, healBound)
	if err != nil {
		t.Fatalf("restarted follower: %v", err)
	}
	t.Logf("restarted follower %s served again %v after its restart", victim.ID(), d.Round(time.Millisecond))
	// It serves (by forwarding) before it has caught up, so wait for the
	// catch-up itself: the leader's snapshot installed, the log applied.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logSince(victim), "Installed remote snapshot"); {
		if time.Now().After(deadline) {
			t.Fatalf("restarted follower %s has not installed a snapshot 20s after its restart (no \"Installed remote snapshot\" in its log)", victim.ID())
		}
		w.sleep(50 * time.Millisecond)
	}
	t.Logf("restarted follower %s installed the leader's snapshot %v after its restart", victim.ID(), time.Since(tStart).Round(time.Millisecond))
	lead, err = settle(ctx, hc)
	if err != nil {
		t.Fatal(err)
	}
	if err := hc.WaitApplied(ctx, lead, 15*time.Second); err != nil {
		t.Error(err)
	}

	// Every node down at once, then up: state rebuilt from snapshot and
	// log on every node.
	killNodes(t, hc.Nodes)
	maxBefore := w.h.MaxID()
	tRestart := time.Now()
	for _, n := range hc.Nodes {
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := waitServing(w, hc.Nodes, tRestart, healBound); err != nil {
		t.Error(err)
	} else {
		t.Logf("after kill -9 of all nodes every node served again within %v", d.Round(time.Millisecond))
	}
	w.halt()
	// The restarted follower's state came from the leader's snapshot:
	// it must hold exactly what the others hold.
	if lead, err = settle(ctx, hc); err != nil {
		t.Fatal(err)
	}
	checkReplicasAgree(ctx, t, hc, lead, "snap", w.h.MaxID())
	for _, o := range w.h.Ops() {
		if o.OK() && !o.Call.Before(tRestart) && o.ID <= maxBefore {
			t.Errorf("after a full restart from snapshots id %d is not above %d, acknowledged before: %s", o.ID, maxBefore, w.h.Format(o))
			break
		}
	}
	dumpHistory(t, w.h)
	w.checkClean(t)
	okN, failed := w.h.Counts()
	t.Logf("snapshots: %d allocations ok, %d failed (%s), max id %d", okN, failed, w.errorClasses(), w.h.MaxID())
}
