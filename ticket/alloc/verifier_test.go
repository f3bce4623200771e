package alloc

import (
	"context"
	"testing"
	"time"
)

// gatedLead is a leadership whose VerifyLeader rounds the test lets
// finish one by one: started gets a token when one starts, release ends
// it.
type gatedLead struct {
	started chan struct{}
	release chan struct{}
}

func (g *gatedLead) LeaderTerm() (uint64, bool) { return 1, true }

func (g *gatedLead) VerifyLeader(context.Context) (uint64, error) {
	g.started <- struct{}{}
	<-g.release
	return 1, nil
}

// joiner runs verify in a goroutine; its channel gets the outcome.
func joiner(v *verifier) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := v.verify(context.Background())
		out <- err
	}()
	return out
}

// joined waits until the verifier's next round has n requests.
func joined(t *testing.T, v *verifier, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v.mu.Lock()
		got := 0
		if v.next != nil {
			got = v.next.n
		}
		v.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the next round has %d requests, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func started(t *testing.T, g *gatedLead) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no round started")
	}
}

func answered(t *testing.T, outs ...<-chan error) {
	t.Helper()
	for _, out := range outs {
		select {
		case err := <-out:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a request was not answered")
		}
	}
}

// A round waits until as many requests have joined as the last one
// served (a lone request's round starts at once), and never starts
// before a request that is in it joined.
func TestVerifierFillsRounds(t *testing.T) {
	g := &gatedLead{started: make(chan struct{}), release: make(chan struct{})}
	// A hold far longer than the test: only joins start rounds here.
	v := &verifier{lead: g, holdRounds: 1 << 20, maxHold: time.Hour}

	a := joiner(v)
	started(t, g) // alone: at once
	b, c, d := joiner(v), joiner(v), joiner(v)
	joined(t, v, 3)
	g.release <- struct{}{}
	answered(t, a)
	started(t, g) // three, more than the one before: at once
	e, f := joiner(v), joiner(v)
	joined(t, v, 2)
	g.release <- struct{}{}
	answered(t, b, c, d)
	select {
	case <-g.started:
		t.Fatal("a round of 2 started after a round of 3, before a third request joined")
	case <-time.After(100 * time.Millisecond):
	}
	h := joiner(v)
	started(t, g)
	g.release <- struct{}{}
	answered(t, e, f, h)
	v.mu.Lock()
	rounds := v.rounds
	v.mu.Unlock()
	if rounds != 3 {
		t.Fatalf("%d rounds for 1, 3 and 3 requests", rounds)
	}
}

// A round that does not fill up starts once its hold has passed, and
// the rounds after an idle spell start at once again.
func TestVerifierHoldEnds(t *testing.T) {
	g := &gatedLead{started: make(chan struct{}), release: make(chan struct{})}
	v := &verifier{lead: g, maxHold: 20 * time.Millisecond}
	a := joiner(v)
	started(t, g)
	b, c := joiner(v), joiner(v)
	joined(t, v, 2)
	time.Sleep(10 * time.Millisecond) // a round long enough for a hold
	g.release <- struct{}{}
	answered(t, a)
	started(t, g)
	d := joiner(v)
	joined(t, v, 1)
	g.release <- struct{}{}
	answered(t, b, c)
	started(t, g) // one of two: after the hold
	g.release <- struct{}{}
	answered(t, d)
	e := joiner(v)
	started(t, g)
	g.release <- struct{}{}
	answered(t, e)
}
