//go:build soak

package faults

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSoakSchemes is TestSchemeFaults for TICKETD_SOAK_DURATION (default
// 10m; `make soak-schemes`): schemeMix on a proxied three-node cluster
// and one random fault after another (kill -9 of the leader, of a
// follower, of every node; SIGSTOP of the leader or a follower; the
// leader partitioned; a follower isolated), each checked as in
// TestSchemeFaults, the whole run's histories and final rows at the end.
// TICKETD_SOAK_SEED repeats a run (the seed is always logged).
func TestSoakSchemes(t *testing.T) {
	spec := os.Getenv("TICKETD_SOAK_DURATION")
	if spec == "" {
		spec = "10m"
	}
	dur, err := time.ParseDuration(spec)
	if err != nil || dur <= 0 {
		t.Fatalf("TICKETD_SOAK_DURATION=%q: want a positive Go duration such as 10m", spec)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TICKETD_SOAK_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TICKETD_SOAK_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (TICKETD_SOAK_SEED), duration %v", seed, dur)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	pool := []schemeFault{
		{"kill-leader", killLeader, true},
		{"kill-follower", killFollower, true},
		{"pause-leader", pauseLeader, true},
		{"pause-follower", pauseFollower, true},
		{"partition-leader", partitionLeader, true},
		{"isolate-follower", isolateFollower, true},
		{"kill-all", killAll, false},
	}
	// Room for the last fault and the final checks past the duration.
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	end := time.Now().Add(dur)
	results := runSchemeFaults(ctx, t, schemeMix, func(int) (schemeFault, bool) {
		if time.Now().After(end) {
			return schemeFault{}, false
		}
		return pool[rng.IntN(len(pool))], true
	})
	t.Logf("%d faults in %v", len(results), dur)
}
