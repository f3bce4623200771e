//go:build !race

package wire

import (
	"context"
	"testing"
	"time"
)

// The point of stmtContext: arming it per statement allocates nothing.
func TestStmtContextAllocs(t *testing.T) {
	c := newStmtContext(context.Background(), time.Second)
	defer c.close()
	n := testing.AllocsPerRun(1000, func() {
		ctx := c.begin()
		select {
		case <-ctx.Done():
		default:
		}
		c.end()
	})
	if n != 0 {
		t.Fatalf("%v allocations per statement, want 0", n)
	}
}
