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
	// parsed counts the texts the parser read, on misses only: the hit
	// paths write no shared memory.
	parsed atomic.Uint64
}

type cacheShard struct {
	// m is replaced, never modified, once published.
	m   atomic.Pointer[map[string]cacheEntry]
	mu  sync.Mutex // serialises writers
	max int
	// seen holds the hashes of the shard's latest misses: a text is
	// cached at its second miss, not its first. Caching copies the
	// shard's map, which costs more than the parse itself
	// (BenchmarkCacheUnique: 32.7 us a text against 12.2 us for the parse
	// alone), and texts that come once (a driver that interpolates its
	// parameters: a point SELECT per key) would pay it every time and
	// push out the texts that do repeat.
	seen seenRing
	// tmpls are the templates (template.go) by shapeHash, made at a
	// shape's second miss (tseen), under mu as m is.
	tmpls atomic.Pointer[map[uint64]*template]
	tseen seenRing
	_     [cacheLinePad]byte
}

// seenSlots is the length of a ring of recent misses.
const seenSlots = 16

// seenRing holds the hashes of recent misses (next is where the next one
// goes).
type seenRing struct {
	seen [seenSlots]atomic.Uint64
	next atomic.Uint32
}

// admit reports whether hash h missed recently, and notes this miss
// otherwise. Races between misses lose a note at worst: the text is then
// cached at a later miss.
func (r *seenRing) admit(h uint64) bool {
	for i := range r.seen {
		if r.seen[i].Load() == h {
			return true
		}
	}
	r.seen[r.next.Add(1)%seenSlots].Store(h)
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
	if e, hit := c.lookup(h, query); hit {
		return e.plans, e.err
	}
	return c.parseMiss(query, h)
}

// lookup returns the cached entry of query, whose hash is h.
func (c *Cache) lookup(h uint64, query string) (cacheEntry, bool) {
	if m := c.shards[h&c.mask].m.Load(); m != nil {
		e, hit := (*m)[query]
		return e, hit
	}
	return cacheEntry{}, false
}

// parseMiss parses query (hash h), which lookup did not find, and caches
// the plans from the text's second parse on.
func (c *Cache) parseMiss(query string, h uint64) ([]Plan, error) {
	sh := &c.shards[h&c.mask]
	cache := sh.max > 0 && len(query) <= MaxCachedQueryLen && sh.seen.admit(h)
	if cache {
		// Plans hold substrings of the query; a private copy keeps them
		// valid if the caller's string aliases a reused packet buffer, and
		// does not pin that buffer.
		query = strings.Clone(query)
	}
	c.parsed.Add(1)
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
	publish(&sh.m, sh.max, query, cacheEntry{plans: plans, err: err})
	return plans, err
}

// publish stores a copy of *p with k set to v, holding at most max
// entries; the caller holds the shard's lock.
func publish[K comparable, V any](p *atomic.Pointer[map[K]V], max int, k K, v V) {
	var cur map[K]V
	if m := p.Load(); m != nil {
		cur = *m
	}
	next := make(map[K]V, min(len(cur)+1, max))
	// When full, leave out whichever entry map iteration yields first,
	// which Go randomises: no bookkeeping on the hit path, and a hot entry
	// that goes comes straight back.
	skip := len(cur) >= max
	for ck, cv := range cur {
		if skip {
			skip = false
			continue
		}
		next[ck] = cv
	}
	next[k] = v
	p.Store(&next)
}

// PlanSource says where ParseQuery found a text's plans.
type PlanSource uint8

// Plan sources.
const (
	FromCache    PlanSource = iota // the cache, by the exact text
	FromTemplate                   // a template, with the text's values as arguments
	FromParser                     // the parser
)

// PlanSources lists every PlanSource, for metric labels.
func PlanSources() []PlanSource { return []PlanSource{FromCache, FromTemplate, FromParser} }

func (s PlanSource) String() string {
	switch s {
	case FromCache:
		return "cache"
	case FromTemplate:
		return "template"
	}
	return "parser"
}

// ParseQuery is Parse for a text sent to run once (COM_QUERY), which may
// also be answered by a template (template.go): the plans are then a
// template's, with '?' placeholders, and args their values; args is nil
// otherwise. src says which. A prepared statement's text must go through
// Parse: its literals are not placeholders.
func (c *Cache) ParseQuery(query string) (plans []Plan, args []any, src PlanSource, err error) {
	h := maphash.String(c.seed, query)
	if e, hit := c.lookup(h, query); hit {
		return e.plans, nil, FromCache, e.err
	}
	if c.shards[h&c.mask].max <= 0 || len(query) > MaxCachedQueryLen || strings.IndexByte(query, '?') >= 0 {
		plans, err = c.parseMiss(query, h)
		return plans, nil, FromParser, err
	}
	var buf [maxRuns + 1]span
	runs := valueRuns(query, buf[:0])
	if len(runs) == 0 || len(runs) > maxRuns {
		plans, err = c.parseMiss(query, h)
		return plans, nil, FromParser, err
	}
	th := shapeHash(c.seed, query, runs)
	tsh := &c.shards[th&c.mask]
	if m := tsh.tmpls.Load(); m != nil {
		if t := (*m)[th]; t != nil {
			if t.plans != nil {
				if args, ok := t.bind(query, runs); ok {
					return t.plans, args, FromTemplate, nil
				}
			}
			plans, err = c.parseMiss(query, h)
			return plans, nil, FromParser, err
		}
	}
	plans, err = c.parseMiss(query, h)
	if err == nil && tsh.tseen.admit(th) {
		c.learn(tsh, th, query, runs)
	}
	return plans, nil, FromParser, err
}

// learn makes and keeps the template of query, whose shape hashes to th.
func (c *Cache) learn(sh *cacheShard, th uint64, query string, runs []span) {
	// Copies: the caller's text may alias a packet buffer, and its
	// runs an array on its stack.
	own := append([]span(nil), runs...)
	p := c.parsers.Get().(*parser.Parser)
	t, ok := safeTemplate(p, strings.Clone(query), own)
	if !ok {
		// A parser that panicked may hold broken state: drop it.
		return
	}
	c.parsers.Put(p)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if m := sh.tmpls.Load(); m != nil && (*m)[th] != nil {
		return
	}
	publish(&sh.tmpls, sh.max, th, t)
}

// safeTemplate is newTemplate, reporting false when the parser panicked.
func safeTemplate(p *parser.Parser, query string, runs []span) (t *template, ok bool) {
	defer func() {
		if recover() != nil {
			t, ok = nil, false
		}
	}()
	return newTemplate(p, query, runs), true
}

// Parsed is the number of texts Parse and ParseQuery gave the parser:
// those that neither the cache nor a template answered.
func (c *Cache) Parsed() uint64 { return c.parsed.Load() }

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
