package alloc

import (
	"context"
	"sync"
	"time"
)

// verifyTimeout bounds one VerifyLeader round.
const verifyTimeout = 5 * time.Second

// How long a round waits for requests to join it at most: holdRounds
// times the last round's duration, at most maxHold (verifier's fields
// override them in tests).
const (
	holdRounds = 4
	maxHold    = 2 * time.Millisecond
)

// verifier shares VerifyLeader rounds between concurrent requests. A
// request joins the next round that has not started yet, never one in
// flight: the confirmation must come from a quorum contacted after the
// request's ids were assigned.
//
// A round costs every follower a heartbeat and the leader an
// AppendEntries to each, the same for one request as for sixty: at 64
// Redis clients, rounds sent back to back with whoever had arrived
// meanwhile served 15 INCRs each and were 40% of the CPU the three
// nodes spent per INCR. So while requests keep coming, the next round
// waits until as many requests have joined as the last round served,
// and at most holdRounds times as long as the last round took (maxHold
// at most). A lone request, or the first after an idle spell, starts its
// round at once, and so does every round at a steady concurrency below
// the last round's size. Waiting only ever starts a round later than
// the requests in it, which is all they need of it; it is no lease.
type verifier struct {
	lead    Leadership
	mu      sync.Mutex
	next    *round
	running bool
	// want is how many requests the next round waits for and hold how
	// long at most: the last round's size and holdRounds times its
	// duration; both 0 after an idle spell or a failed round.
	want int
	hold time.Duration
	// full tells run that the next round has want requests.
	full chan struct{}
	// rounds counts the rounds run; holdRounds and maxHold, when set,
	// replace the constants (tests).
	rounds     int
	holdRounds int
	maxHold    time.Duration
}

type round struct {
	done chan struct{}
	n    int // requests that joined
	term uint64
	err  error
}

func (v *verifier) verify(ctx context.Context) (uint64, error) {
	v.mu.Lock()
	if v.next == nil {
		v.next = &round{done: make(chan struct{})}
	}
	r := v.next
	r.n++
	switch {
	case !v.running:
		v.running = true
		if v.full == nil {
			v.full = make(chan struct{}, 1)
		}
		go v.run()
	case r.n == v.want:
		select {
		case v.full <- struct{}{}:
		default:
		}
	}
	v.mu.Unlock()
	select {
	case <-r.done:
		return r.term, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run performs rounds while requests keep joining, and ends when a
// round finds none.
func (v *verifier) run() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		v.mu.Lock()
		r := v.next
		if r == nil {
			v.running, v.want, v.hold = false, 0, 0
			v.mu.Unlock()
			return
		}
		if r.n < v.want && v.hold > 0 {
			hold := v.hold
			v.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(hold)
			} else {
				timer.Reset(hold)
			}
			select {
			case <-v.full:
			case <-timer.C:
			}
			timer.Stop()
			v.mu.Lock()
		}
		select {
		case <-v.full: // a signal for this round that came late
		default:
		}
		v.next = nil
		v.want = r.n
		v.rounds++
		v.mu.Unlock()

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
		r.term, r.err = v.lead.VerifyLeader(ctx)
		cancel()
		took := time.Since(start)
		v.mu.Lock()
		v.hold = v.holdFor(took)
		if r.err != nil {
			v.want, v.hold = 0, 0
		}
		v.mu.Unlock()
		close(r.done)
	}
}

// holdFor is how long the round after one that took d waits at most.
// v.mu is held.
func (v *verifier) holdFor(d time.Duration) time.Duration {
	rounds, most := time.Duration(holdRounds), maxHold
	if v.holdRounds > 0 {
		rounds = time.Duration(v.holdRounds)
	}
	if v.maxHold > 0 {
		most = v.maxHold
	}
	return min(rounds*d, most)
}
