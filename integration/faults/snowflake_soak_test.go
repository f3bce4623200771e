//go:build soak

package faults

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSoakSnowflake is TestSnowflakeFaults for TICKETD_SOAK_DURATION
// (default 10m; part of `make soak`): 64 generators on 32 slots, the
// leader killed, paused and partitioned in turn every 6 s, generators
// killed every 2-4 s. TICKETD_SOAK_SEED repeats a run's generator kills.
func TestSoakSnowflake(t *testing.T) {
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
	runSnowflakeFaults(t, sfSpec{gens: 64, bits: 5, dur: dur, gap: 6 * time.Second, seed: seed})
}
