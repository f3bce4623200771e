//go:build soak

package faults

import "testing"

// TestSoakRedis is TestSoak's random fault loop (kill -9 of the leader,
// a follower or all three, a follower down long enough to need a
// snapshot, SIGSTOP, partitions, flapping links) under TestRedisFaults'
// load: three clients per node INCR one key over the Redis protocol, one
// of them pipelining. For TICKETD_SOAK_DURATION (default 10m; part of
// `make soak`), extra server flags in TICKETD_SOAK_ARGS (make soak gives
// it --redis-cache, so that the leader's key blocks meet every fault).
// The whole INCR history must hold no number twice and each number above
// every one answered before its call, and every replica's key must end
// equal and at least the largest number answered.
func TestSoakRedis(t *testing.T) { runSoak(t, true) }
