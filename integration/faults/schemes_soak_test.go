//go:build soak

package faults

import (
	"context"
	"math/rand/v2"
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
	dur, seed := soakSettings(t)
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
