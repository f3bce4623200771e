//go:build soak

package faults

import (
	"testing"
	"time"
)

// TestSoakSnowflake is TestSnowflakeFaults for TICKETD_SOAK_DURATION
// (default 10m; part of `make soak`): 64 generators on 32 slots, the
// leader killed, paused and partitioned in turn every 6 s, generators
// killed every 2-4 s. TICKETD_SOAK_SEED repeats a run's generator kills.
func TestSoakSnowflake(t *testing.T) {
	dur, seed := soakSettings(t)
	runSnowflakeFaults(t, sfSpec{gens: 64, bits: 5, dur: dur, gap: 6 * time.Second, seed: seed})
}
