package raftstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A follower's forwarded batch and a leader that changed. When the leader
// this node follows changes while a batch it forwarded awaits its answer,
// the old leader may be alive or silent.
//
// A leader that handed leadership over (or was asked after it had) is
// alive and answers: "not the leader", which is certain and retried, or
// the outcome of the batch, which it relays to the new leader if it had
// queued it. The follower gives it time before settling for "unknown":
// longer when a new leader is already known (a handover, most likely), a
// moment when none is (the old one may be dead; this much more is all it
// costs). Whether a new leader is known is asked again every few
// milliseconds: in a handover this node usually learns of the change as
// the target stands for election, before it has won (a measured rolling
// restart under load lost statements whose answers came 6-28 ms after a
// 100 ms grace chosen then).
//
// A leader that is paused (SIGSTOP, a stalled VM) or cut off answers
// nothing at all, and waiting for it held this node's batch workers, and
// so every statement queued behind them, for the whole grace after the
// others had elected a new leader (issue 34: SIGSTOP of the leader
// stalled the cluster 2.7-4.0 s, the election itself taking about 1 s).
// So a batch that waits asks the leader every probeEvery, on the same
// connection, for something any live node answers without waiting (its
// command version); once the leader has changed, a probe unanswered for
// silentAfter (with nothing else heard since it was sent) marks the old
// leader as silent, and the batch ends "unknown" (1105) at once, freeing
// the worker for the new leader. By the time a follower notices that a
// paused leader is gone (a heartbeat timeout or more) its probes have
// long gone unanswered, so it gives up without waiting further. A live
// leader in a handover answers within milliseconds, and keeps its grace.
//
// Why giving up is safe for ids: the batch is never sent again by this
// node; its statements are answered "outcome unknown, no id handed out",
// and the client's retry is a new statement. The batch may still commit:
// the paused leader may have replicated its entry to the follower that
// now leads, which commits it with its own first entry. A resumed old
// leader commits nothing itself (its term is stale: the followers refuse
// its appends, and it steps down). Either way the ids of that entry reach
// no client (the answer, if the old leader ever sends one, finds no
// request waiting), so they are a gap, never a duplicate. And every id
// handed out later comes from an entry the new leader appends after all
// it has committed, this one included, so above it: ids stay strictly
// increasing in real time. Re-sending the batch to the new leader would
// be safe for allocations in the same way (fresh ids, later in the log),
// but not for row writes (an INSERT applied twice answers "duplicate
// key" for a row it did write), so it is not done.

// probeEvery is how often a waiting batch has its leader probed;
// silentAfter is how long a probe goes unanswered before the leader,
// once it has changed, is taken for silent.
const (
	probeEvery  = 100 * time.Millisecond
	silentAfter = 250 * time.Millisecond
)

// liveness is what a forwarding connection knows of its peer's life:
// when it last read a frame, and when it sent the probe that awaits an
// answer.
type liveness struct {
	lastHeard atomic.Int64 // Unix nanoseconds of the last frame read
	mu        sync.Mutex
	probeSent int64 // Unix nanoseconds of the latest probe, 0 if none
}

// heard notes a frame read from the peer: any answer proves it alive.
func (l *liveness) heard() { l.lastHeard.Store(time.Now().UnixNano()) }

// silent reports a probe unanswered for silentAfter, nothing heard since.
func (l *liveness) silent() bool {
	l.mu.Lock()
	sent := l.probeSent
	l.mu.Unlock()
	return sent != 0 && l.lastHeard.Load() < sent && time.Since(time.Unix(0, sent)) >= silentAfter
}

// maybeProbe sends a probe unless one awaits its answer or one went out
// less than probeEvery ago. The answer finds no request waiting for it;
// readLoop notes it (heard) and drops it.
func (c *fconn) maybeProbe(ioTimeout time.Duration) {
	now := time.Now().UnixNano()
	l := &c.live
	l.mu.Lock()
	awaited := l.probeSent != 0 && l.lastHeard.Load() < l.probeSent
	if awaited || now-l.probeSent < int64(probeEvery) {
		l.mu.Unlock()
		return
	}
	l.probeSent = now
	l.mu.Unlock()
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	frame := requestFrame(fwdVersion, id, silentAfter.Milliseconds(), nil)
	go func() {
		// Not under the caller's wait: a peer that reads nothing can
		// block the write until ioTimeout.
		c.wmu.Lock()
		c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
		_, err := c.c.Write(frame)
		c.wmu.Unlock()
		if err != nil {
			c.fail(err)
		}
	}()
}

// afterLeaderChange waits, once the leader has changed, for the answer
// to the request whose channel is ch: through the grace when the old
// leader is alive, not at all once it is known to be silent.
func (c *fconn) afterLeaderChange(ctx context.Context, ch <-chan fwdResp, w *leaderWatch, ioTimeout time.Duration) (fwdResp, error) {
	until := time.Now().Add(changedGrace)
	extended := false
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for time.Now().Before(until) {
		if !extended && w.handedOver != nil && w.handedOver() {
			until, extended = until.Add(handedOverGrace-changedGrace), true
		}
		if c.live.silent() {
			return fwdResp{}, fmt.Errorf("the leader changed, and the old one answers nothing (not even a version probe in %v)", silentAfter)
		}
		c.maybeProbe(ioTimeout)
		select {
		case r := <-ch:
			return r, nil
		case <-c.done:
			// readLoop may have delivered just before failing.
			select {
			case r := <-ch:
				return r, nil
			default:
			}
			return fwdResp{}, errors.New("the leader changed, and the connection to it was lost")
		case <-ctx.Done():
			return fwdResp{}, fmt.Errorf("the leader changed: %w", ctx.Err())
		case <-poll.C:
		}
	}
	return fwdResp{}, errors.New("the leader changed while waiting for its answer")
}
