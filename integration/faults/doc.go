// Package faults runs ticketd's three-node fault tests: real ticketd
// processes on 127.0.0.1 (integration/harness), their Raft traffic routed
// through a proxy that can cut links between nodes (integration/netproxy),
// MySQL clients on every node recording every allocation in a history
// (integration/history), and faults injected while they run: kill -9 of
// the leader, of a follower and of every node, SIGSTOP of the leader past
// the election timeout, the leader partitioned from both followers while
// its clients still reach it, one follower isolated, a follower down long
// enough to need a snapshot, and membership changes (join, remove a
// follower, remove the leader).
//
// After every fault the tests check DESIGN §5: no id returned twice, every
// id above any id returned before its call (history.Check), the minority
// side refusing with a MySQL error rather than answering, and allocations
// succeeding again on every node within a bound after healing. They log
// the measured unavailability per fault kind.
//
// TestSchemeFaults does the same for the ID schemes of
// integration/schemes (Leaf segments, Tinyid compare-and-set,
// UidGenerator worker ids, NEXTVAL), one history per counter, under kill
// -9, SIGSTOP and a partition of the leader; TestSoakSchemes (soak tag,
// `make soak-schemes`) loops random faults under them. TestRedisFaults
// runs TestFaults' sequence under clients that INCR a key over the Redis
// protocol; TestSoakRedis (soak tag, part of `make soak`) loops TestSoak's
// random faults under them.
//
// `make test` runs the bounded tests; TestSoak, a randomized fault loop,
// runs only when TICKETD_SOAK_DURATION is set (`make soak`) and prints a
// summary. Everything lives in _test.go files: this package has no API.
package faults
