package snowflake

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock the test moves. Sleep waits until the monotonic
// clock reaches its deadline; with auto set, a Sleep also moves both
// clocks forward by its duration itself (the caller "waits"), which wakes
// any other sleeper whose deadline passes, except the renewal loop's
// (a Sleep of exactly renewEvery), which only the test moves.
type fakeClock struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	auto    bool
	waiters []waiter
	slept   time.Duration // total auto-advanced by Sleep
	renew   time.Duration // the renewal period, never auto-advanced
}

type waiter struct {
	at time.Duration
	ch chan struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{wall: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), auto: true, renew: 3 * time.Second}
}

// sleptTotal is the time Sleep moved the clocks by itself.
func (c *fakeClock) sleptTotal() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// sleepers is the number of Sleeps waiting.
func (c *fakeClock) sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

func (c *fakeClock) Wall() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

func (c *fakeClock) Mono() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Advance moves both clocks forward by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(d)
}

func (c *fakeClock) advanceLocked(d time.Duration) {
	c.wall = c.wall.Add(d)
	c.mono += d
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at <= c.mono {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// SetWall steps the wall clock only (an NTP step, an operator).
func (c *fakeClock) SetWall(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	w := waiter{at: c.mono + d, ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	if c.auto && d != c.renew {
		c.slept += d
		c.advanceLocked(d)
	}
	c.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fakeStore is a slot table of one slot.
type fakeStore struct {
	mu        sync.Mutex
	claimed   Claim
	renewErr  error
	taken     bool
	renewals  int
	recorded  int64
	released  bool
	releaseMs int64
}

func (s *fakeStore) claim(context.Context) (Claim, error) { return s.claimed, nil }

func (s *fakeStore) renew(_ context.Context, c Claim, lastMs int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.renewErr != nil {
		return false, s.renewErr
	}
	if s.taken {
		return false, nil
	}
	s.renewals++
	s.recorded = lastMs
	return true, nil
}

func (s *fakeStore) release(_ context.Context, c Claim, lastMs int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released, s.releaseMs = true, lastMs
	return nil
}

func (s *fakeStore) set(f func(*fakeStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

type storeView struct {
	renewals  int
	recorded  int64
	released  bool
	releaseMs int64
}

func (s *fakeStore) get() storeView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return storeView{renewals: s.renewals, recorded: s.recorded, released: s.released, releaseMs: s.releaseMs}
}

func startFake(t *testing.T, clk *fakeClock, st *fakeStore, mod func(*Config)) *Generator {
	t.Helper()
	cfg := Config{Service: "svc", Instance: "i1", Clock: clk, Lease: 10 * time.Second, RenewEvery: 3 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.setDefaults(); err != nil {
		t.Fatal(err)
	}
	g, err := start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

// issued checks the ids it is given are new, and above the floor, in slot.
type issued struct {
	t     *testing.T
	seen  map[int64]bool
	slot  int
	floor int64
	last  int64
}

func (is *issued) add(id int64) {
	is.t.Helper()
	if is.seen[id] {
		is.t.Fatalf("id %d issued twice", id)
	}
	is.seen[id] = true
	ms, slot, _ := Decode(id, 10, 12, TwitterEpoch)
	if slot != is.slot || ms <= is.floor {
		is.t.Fatalf("id %d: slot %d ms %d (want slot %d, ms above floor %d)", id, slot, ms, is.slot, is.floor)
	}
	if id <= is.last {
		is.t.Fatalf("id %d after %d", id, is.last)
	}
	is.last = id
}

// TestStartWaitsForFloor: the first id's timestamp is above the floor,
// which is ahead of the clock: Start waited; a floor further ahead than
// MaxWait refuses.
func TestStartWaitsForFloor(t *testing.T) {
	clk := newFakeClock()
	floor := clk.Wall().Add(1500 * time.Millisecond).UnixMilli()
	st := &fakeStore{claimed: Claim{Slot: 7, RowID: 1, Epoch: 1, Floor: floor}}
	g := startFake(t, clk, st, nil)
	if clk.sleptTotal() < 1500*time.Millisecond {
		t.Fatalf("Start slept %v for a floor 1.5 s ahead", clk.sleptTotal())
	}
	is := &issued{t: t, seen: map[int64]bool{}, slot: 7, floor: floor}
	for range 10 {
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		is.add(id)
	}

	clk2 := newFakeClock()
	st2 := &fakeStore{claimed: Claim{Slot: 1, Floor: clk2.Wall().Add(time.Minute).UnixMilli()}}
	cfg := Config{Service: "svc", Instance: "i2", Clock: clk2, RenewEvery: clk2.renew}
	_ = cfg.setDefaults()
	if _, err := start(context.Background(), st2, cfg); !errors.Is(err, ErrClockBehind) {
		t.Fatalf("floor a minute ahead: %v, want ErrClockBehind", err)
	}
	// The refusal gave the slot back, its floor unchanged.
	if got := st2.get(); !got.released || got.releaseMs != st2.claimed.Floor {
		t.Fatalf("after the refusal: %+v, want released at the floor %d", got, st2.claimed.Floor)
	}
}

// TestClockRollback: a clock set back within MaxWait makes NextID wait
// for it; further back, it refuses; it never repeats an id, and the ids
// keep increasing.
func TestClockRollback(t *testing.T) {
	clk := newFakeClock()
	st := &fakeStore{claimed: Claim{Slot: 3, Floor: clk.Wall().Add(-time.Hour).UnixMilli()}}
	g := startFake(t, clk, st, nil)
	is := &issued{t: t, seen: map[int64]bool{}, slot: 3, floor: st.claimed.Floor}
	next := func() error {
		id, err := g.NextID(context.Background())
		if err == nil {
			is.add(id)
		}
		return err
	}
	for range 100 {
		if err := next(); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Millisecond)
	before := clk.Wall()
	clk.SetWall(before.Add(-2 * time.Second))
	slept := clk.sleptTotal()
	if err := next(); err != nil {
		t.Fatalf("2 s back, MaxWait 5 s: %v", err)
	}
	if clk.sleptTotal()-slept < 2*time.Second || g.RollbackWaits() != 1 {
		t.Fatalf("waited %v (%d waits) for a clock 2 s back", clk.sleptTotal()-slept, g.RollbackWaits())
	}
	clk.SetWall(clk.Wall().Add(-10 * time.Second))
	for range 3 {
		if err := next(); !errors.Is(err, ErrClockBackwards) {
			t.Fatalf("10 s back: %v, want ErrClockBackwards", err)
		}
	}
	// Policy: fail at once.
	g.cfg.MaxWait = -1
	clk.SetWall(clk.Wall().Add(10*time.Second - time.Millisecond))
	if err := next(); !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("1 ms back with MaxWait < 0: %v", err)
	}
	clk.SetWall(clk.Wall().Add(2 * time.Millisecond))
	if err := next(); err != nil {
		t.Fatal(err)
	}
}

// TestSequenceWraps: with 2 sequence bits, the fifth id of a millisecond
// waits for the next one.
func TestSequenceWraps(t *testing.T) {
	clk := newFakeClock()
	st := &fakeStore{claimed: Claim{Slot: 1, Floor: 0}}
	g := startFake(t, clk, st, func(c *Config) { c.SequenceBits = 2; c.WorkerBits = 4 })
	seen := map[int64]bool{}
	var seqs []int64
	for range 9 {
		id, err := g.NextID(context.Background())
		if err != nil || seen[id] {
			t.Fatalf("id %d (seen %v): %v", id, seen[id], err)
		}
		seen[id] = true
		_, slot, seq := Decode(id, 4, 2, TwitterEpoch)
		if slot != 1 {
			t.Fatalf("slot %d", slot)
		}
		seqs = append(seqs, seq)
	}
	if want := []int64{0, 1, 2, 3, 0, 1, 2, 3, 0}; !equal(seqs, want) {
		t.Fatalf("sequences %v, want %v", seqs, want)
	}
	if clk.sleptTotal() != 2*time.Millisecond {
		t.Fatalf("slept %v, want 2 ms", clk.sleptTotal())
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// waitUntil waits for a background renewal's effect.
func waitUntil(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLeaseRenewal: renewals record the highest timestamp used and keep
// the generator issuing; when they fail, it stops when the lease (less a
// second) ends, and issues again after one succeeds; a renewal that
// finds the slot taken ends it for good; Close releases with the
// highest timestamp.
func TestLeaseRenewal(t *testing.T) {
	clk := newFakeClock()
	clk.auto = false
	st := &fakeStore{claimed: Claim{Slot: 2, Floor: 0}}
	g := startFake(t, clk, st, nil)
	ctx := context.Background()
	var last int64
	settle := func() {
		t.Helper()
		waitUntil(t, "the renewal loop to sleep", func() bool { return clk.sleepers() == 1 })
	}
	for i := range 30 { // 30 s, renewed every 3 s
		settle()
		clk.Advance(time.Second)
		id, err := g.NextID(ctx)
		if err != nil {
			t.Fatalf("second %d: %v", i, err)
		}
		last, _, _ = Decode(id, 10, 12, TwitterEpoch)
		if i%3 == 2 {
			waitUntil(t, "a renewal", func() bool { return st.get().renewals == (i+1)/3 })
		}
	}
	if got := st.get(); got.recorded < last-3000 || got.recorded > last {
		t.Fatalf("recorded %d, last used %d", got.recorded, last)
	}

	// Renewals fail: issuing stops 9 s (lease less a second) after the
	// last renewal was sent.
	st.set(func(s *fakeStore) { s.renewErr = errors.New("no quorum") })
	for i := 1; i <= 8; i++ {
		settle()
		clk.Advance(time.Second)
		if _, err := g.NextID(ctx); err != nil {
			t.Fatalf("%d s after the last renewal: %v", i, err)
		}
	}
	settle()
	clk.Advance(time.Second)
	if _, err := g.NextID(ctx); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("9 s after the last renewal: %v, want ErrLeaseExpired", err)
	}
	settle() // the renewal this second woke has failed
	// The store heals: the next renewal restores issuing.
	st.set(func(s *fakeStore) { s.renewErr = nil })
	n := st.get().renewals
	settle()
	clk.Advance(3 * time.Second)
	waitUntil(t, "a renewal after healing", func() bool { return st.get().renewals > n })
	if _, err := g.NextID(ctx); err != nil {
		t.Fatalf("after a renewal: %v", err)
	}
	// Taken by another (its lease had ended on the server): lost for good.
	st.set(func(s *fakeStore) { s.taken = true })
	settle()
	clk.Advance(3 * time.Second)
	waitUntil(t, "the loss", func() bool {
		_, err := g.NextID(ctx)
		return errors.Is(err, ErrSlotLost)
	})
	must(t, g.Close(ctx))
	if st.get().released {
		t.Fatal("a lost slot was released")
	}

	// A clean Close records the exact highest timestamp.
	st2 := &fakeStore{claimed: Claim{Slot: 5, Floor: 0}}
	g2 := startFake(t, clk, st2, nil)
	clk.Advance(time.Millisecond)
	id, err := g2.NextID(ctx)
	must(t, err)
	must(t, g2.Close(ctx))
	ms, _, _ := Decode(id, 10, 12, TwitterEpoch)
	if got := st2.get(); !got.released || got.releaseMs != ms {
		t.Fatalf("release %+v, last id's ms %d", got, ms)
	}
	if _, err := g2.NextID(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
