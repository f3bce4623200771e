package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestRaftTimingOptions(t *testing.T) {
	none := func(string) string { return "" }
	o, err := parseOptions(nil, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.electionTimeout != time.Second || o.leaderLease != 500*time.Millisecond {
		t.Fatalf("defaults: election %v, lease %v", o.electionTimeout, o.leaderLease)
	}
	env := map[string]string{"TICKETD_ELECTION_TIMEOUT": "3s", "TICKETD_LEADER_LEASE": "2s"}
	o, err = parseOptions(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || o.electionTimeout != 3*time.Second || o.leaderLease != 2*time.Second {
		t.Fatalf("from the environment: %+v %v", o, err)
	}
	for _, args := range [][]string{
		{"--leader-lease", "2s"}, // longer than the default election timeout
		{"--election-timeout", "400ms"},
		{"--election-timeout", "1ms", "--leader-lease", "1ms"},
		{"--leader-lease", "0s"},
	} {
		if _, err := parseOptions(args, none, io.Discard); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: %v, want a refusal naming the flags", args, err)
		}
	}
}
