package integration

import (
	"testing"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestMain removes the ticketd binary the harness built for this run.
func TestMain(m *testing.M) { harness.Main(m) }
