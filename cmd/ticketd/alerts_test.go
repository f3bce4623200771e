package main

import (
	"os"
	"os/exec"
	"testing"
)

// promtool finds Debian's promtool (package prometheus). CI sets
// TICKETD_REQUIRE_PROMTOOL=1 so that a missing promtool fails there
// instead of skipping.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TICKETD_REQUIRE_PROMTOOL") == "1" {
			t.Fatalf("promtool not found and TICKETD_REQUIRE_PROMTOOL=1: %v", err)
		}
		t.Skip("promtool not installed (apt-get install prometheus); set TICKETD_REQUIRE_PROMTOOL=1 to fail instead")
	}
	return path
}

// The example alerts are valid rules, and fire as their unit tests say.
func TestAlertRules(t *testing.T) {
	pt := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "ticketd-alerts.yml"},
		{"test", "rules", "testdata/ticketd-alerts.test.yml"},
	} {
		out, err := exec.Command(pt, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
