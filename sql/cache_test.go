package sql

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const (
	replaceQuery = "REPLACE INTO Tickets64 (stub) VALUES ('a')"
	multiQuery   = "REPLACE INTO Tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID()"
)

func TestCacheHit(t *testing.T) {
	c := NewCache(100)
	first, err := c.Parse(multiQuery)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Parse(multiQuery)
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("cached parse = %s, want %s", dumpPlans(first), dumpPlans(want))
	}
	// A text is kept from its second parse on.
	if c.Len() != 0 {
		t.Errorf("Len = %d after one parse, want 0", c.Len())
	}
	second, err := c.Parse(multiQuery)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Parse(multiQuery)
	if err != nil {
		t.Fatal(err)
	}
	// A hit hands out the very same plans, not a re-parse.
	if len(again) != 2 || again[0] != second[0] || again[1] != second[1] {
		t.Errorf("third Parse returned different plans")
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1", c.Len())
	}
}

// TestCacheAdmitsRepeats: texts that come once each (interpolated
// parameters) are not cached, and do not stop a text that repeats from
// being cached.
func TestCacheAdmitsRepeats(t *testing.T) {
	c := NewCache(64)
	for i := range 1000 {
		if _, err := c.Parse(fmt.Sprintf("SELECT * FROM t WHERE id = %d", i)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := c.Parse(replaceQuery); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := c.Len(); n != 1 {
		t.Errorf("Len = %d after 1,000 texts seen once and one seen 100 times, want 1", n)
	}
}

func TestCacheErrors(t *testing.T) {
	c := NewCache(10)
	c.Parse("SELEC 1")
	_, err1 := c.Parse("SELEC 1")
	_, err2 := c.Parse("SELEC 1")
	e, ok := err1.(*Error)
	if !ok || e.Code != 1064 {
		t.Fatalf("err = %v, want 1064", err1)
	}
	if err2 != err1 {
		t.Errorf("the parse error was not cached")
	}
	if _, err := c.Parse(""); err == nil || err.(*Error).Code != 1065 {
		t.Errorf("empty query: err = %v, want 1065", err)
	}
}

func TestCacheBounded(t *testing.T) {
	for _, max := range []int{1, 3, 16, 100} {
		c := NewCache(max)
		for i := 0; i < 10*max+50; i++ {
			q := fmt.Sprintf("SELECT %d", i)
			c.Parse(q) // kept from its second parse on
			plans, err := c.Parse(q)
			if err != nil {
				t.Fatal(err)
			}
			if got := plans[0].(*Select).Fields[0].Name; got != fmt.Sprint(i) {
				t.Fatalf("Parse(%q) label %q", q, got)
			}
			if c.Len() > max {
				t.Fatalf("max %d: Len = %d after %d queries", max, c.Len(), i+1)
			}
		}
		if c.Len() == 0 {
			t.Errorf("max %d: nothing cached", max)
		}
	}
}

func TestCacheDisabled(t *testing.T) {
	c := NewCache(0)
	for i := 0; i < 3; i++ {
		if _, err := c.Parse(replaceQuery); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d, want 0", c.Len())
	}
}

func TestCacheLongQueryNotCached(t *testing.T) {
	c := NewCache(10)
	q := "SELECT 1 AS " + strings.Repeat("a", MaxCachedQueryLen)
	if _, err := c.Parse(q); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 {
		t.Errorf("a %d-byte query was cached", len(q))
	}
}

// TestCacheOwnsQuery: the wire layer may hand over a string that aliases a
// packet buffer it reuses; cached plans must not change with it.
func TestCacheOwnsQuery(t *testing.T) {
	c := NewCache(10)
	buf := []byte("SELECT 'abc' AS x")
	q := unsafeString(buf)
	for range 2 { // kept from its second parse on
		if _, err := c.Parse(q); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d, want 1", c.Len())
	}
	copy(buf, "SELECT 'zzz' AS y")
	plans, err := c.Parse("SELECT 'abc' AS x")
	if err != nil {
		t.Fatal(err)
	}
	f := plans[0].(*Select).Fields[0]
	if f.Name != "x" || f.Expr.Value.Str != "abc" {
		t.Errorf("cached plan changed with the caller's buffer: %s", dump(f))
	}
}

// TestCacheConcurrent is meant for go test -race: many connections
// parsing, hitting and evicting at once.
func TestCacheConcurrent(t *testing.T) {
	c := NewCache(32)
	queries := []string{replaceQuery, multiQuery, "SELECT LAST_INSERT_ID()", "SELEC 1",
		"SET autocommit=1", "SHOW VARIABLES LIKE 'auto_increment%'"}
	want := make([][]Plan, len(queries))
	for i, q := range queries {
		want[i], _ = Parse(q)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				k := (i + g) % len(queries)
				plans, _ := c.Parse(queries[k])
				if !reflect.DeepEqual(plans, want[k]) {
					t.Errorf("Parse(%q) = %s", queries[k], dumpPlans(plans))
					return
				}
				// Distinct queries force evictions while others hit.
				if _, err := c.Parse(fmt.Sprintf("SELECT %d", g*1000+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if c.Len() > 32 {
		t.Errorf("Len = %d, above max 32", c.Len())
	}
}

func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(1000)
	if _, err := c.Parse(multiQuery); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Parse(multiQuery); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkParseReplace(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(replaceQuery); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheMiss is a parse with a pooled parser, as a Cache does for
// a query it has not seen.
func BenchmarkCacheMiss(b *testing.B) {
	c := NewCache(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Parse(replaceQuery); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheUnique: texts seen once each (a driver that interpolates
// its parameters, a point SELECT per key), against a full cache of the
// wire server's default size, and against no cache at all (parse only).
func BenchmarkCacheUnique(b *testing.B) {
	for _, size := range []int{0, 4096} {
		b.Run(fmt.Sprintf("cache=%d", size), func(b *testing.B) {
			c := NewCache(size)
			for i := range size {
				if _, err := c.Parse(fmt.Sprintf("SELECT * FROM WORKER_NODE WHERE ID = %d", -1-i)); err != nil {
					b.Fatal(err)
				}
			}
			queries := make([]string, 1<<16)
			for i := range queries {
				queries[i] = fmt.Sprintf("SELECT * FROM WORKER_NODE WHERE ID = %d", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := c.Parse(queries[i%len(queries)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
