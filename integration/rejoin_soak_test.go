//go:build soak

package integration

import (
	"testing"
	"time"
)

// TestRejoinAfterOutages is TestRejoinAfterOutage for outages of 5, 15
// and 30 s (about 1.5 minutes).
func TestRejoinAfterOutages(t *testing.T) {
	rejoinAfter(t, []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second})
}
