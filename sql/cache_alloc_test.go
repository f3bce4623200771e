//go:build !race

package sql

import "testing"

// The race detector allocates on its own, so this test is built only
// without it; `make test` runs it in a separate non-race pass.

func TestCacheHitDoesNotAllocate(t *testing.T) {
	c := NewCache(100)
	if _, err := c.Parse(multiQuery); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := c.Parse(multiQuery); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a cache hit allocates %v times", allocs)
	}
}
