package sql

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser"
)

// MaxCachedQueryLen is the longest query a Cache keeps: longer ones are
// parsed every time, so that a few huge statements cannot make a bounded
// number of entries use unbounded memory.
const MaxCachedQueryLen = 16 << 10

// Shards bound the cost of a miss: the hot path reads a shard's map with
// one atomic load and no lock, so that many connections sending the same
// query never write a shared cache line; a miss copies its shard's map.
const (
	maxShards    = 256
	shardEntries = 64 // the size shards are split to, when max allows
	cacheLinePad = 64
)

// Cache parses queries and remembers the plans by exact query text. It is
// safe for concurrent use. The plans it returns are shared between callers
// and must not be modified.
type Cache struct {
	seed    maphash.Seed
	mask    uint64
	shards  []cacheShard
	parsers sync.Pool // *parser.Parser: a parser is not safe for concurrent use
}

type cacheShard struct {
	// m is replaced, never modified, once published.
	m   atomic.Pointer[map[string]cacheEntry]
	mu  sync.Mutex // serialises writers
	max int
	// seen holds the hashes of the shard's latest misses (a ring; next
	// is where the next one goes): a text is cached at its second miss,
	// not its first. Caching copies the shard's map, which costs more
	// than the parse itself (BenchmarkCacheUnique: 32.7 us a text against
	// 12.2 us for the parse alone), and texts that come once (a driver
	// that interpolates its parameters: a point SELECT per key) would
	// pay it every time and push out the texts that do repeat.
	seen [seenSlots]atomic.Uint64
	next atomic.Uint32
	_    [cacheLinePad]byte
}

// seenSlots is the length of a shard's ring of recent misses.
const seenSlots = 16

// admit reports whether the text with hash h missed recently, and notes
// this miss otherwise. Races between misses lose a note at worst: the
// text is then cached at a later miss.
func (sh *cacheShard) admit(h uint64) bool {
	for i := range sh.seen {
		if sh.seen[i].Load() == h {
			return true
		}
	}
	sh.seen[sh.next.Add(1)%seenSlots].Store(h)
	return false
}

type cacheEntry struct {
	plans []Plan
	err   error
}

// NewCache returns a cache of at most maxEntries queries; maxEntries <= 0 disables
// caching (every call parses).
func NewCache(maxEntries int) *Cache {
	n := 1
	for n*2 <= maxShards && n*shardEntries < maxEntries {
		n *= 2
	}
	c := &Cache{seed: maphash.MakeSeed(), mask: uint64(n - 1), shards: make([]cacheShard, n)}
	for i := range c.shards {
		c.shards[i].max = maxEntries / n
	}
	c.parsers.New = func() any { return parser.New() }
	return c
}

// Parse is the package's Parse, answered from the cache when the same text
// was parsed before; a text is kept from its second parse on (see
// cacheShard.seen). Parse errors are cached as well.
func (c *Cache) Parse(query string) ([]Plan, error) {
	h := maphash.String(c.seed, query)
	sh := &c.shards[h&c.mask]
	if m := sh.m.Load(); m != nil {
		if e, hit := (*m)[query]; hit {
			return e.plans, e.err
		}
	}

	cache := sh.max > 0 && len(query) <= MaxCachedQueryLen && sh.admit(h)
	if cache {
		// Plans hold substrings of the query; a private copy keeps them
		// valid if the caller's string aliases a reused packet buffer, and
		// does not pin that buffer.
		query = strings.Clone(query)
	}
	p := c.parsers.Get().(*parser.Parser)
	plans, reusable, err := parseWith(p, query)
	if !reusable {
		// A parser that panicked may hold broken state: drop it, and
		// do not cache an internal error.
		return plans, err
	}
	c.parsers.Put(p)
	if !cache {
		return plans, err
	}

	sh.mu.Lock()
	defer sh.mu.Unlock()
	var cur map[string]cacheEntry
	if m := sh.m.Load(); m != nil {
		cur = *m
	}
	if e, hit := cur[query]; hit {
		// Another connection parsed it meanwhile: hand out one copy.
		return e.plans, e.err
	}
	next := make(map[string]cacheEntry, min(len(cur)+1, sh.max))
	// When full, leave out whichever entry map iteration yields first,
	// which Go randomises: no bookkeeping on the hit path, and a hot query
	// that goes comes straight back.
	skip := len(cur) >= sh.max
	for k, v := range cur {
		if skip {
			skip = false
			continue
		}
		next[k] = v
	}
	next[query] = cacheEntry{plans: plans, err: err}
	sh.m.Store(&next)
	return plans, err
}

// Len is the number of cached queries.
func (c *Cache) Len() int {
	n := 0
	for i := range c.shards {
		if m := c.shards[i].m.Load(); m != nil {
			n += len(*m)
		}
	}
	return n
}
