// Package history records concurrent id allocations and checks them
// against ticketd's invariants (DESIGN §5): every id is unique, and the
// counter is linearizable: if allocation A returned before allocation B was
// called, B's id is above A's. Gaps are allowed; failed operations (their
// ids may or may not have been used) constrain nothing.
//
// An allocation hands out either one id (a ticket, a NEXTVAL, a worker id)
// or a range of them (a Leaf or Tinyid segment, a reserved block): a range
// [lo, hi] must overlap no other successful range, and must lie entirely
// above every range that returned before it was called. A single id is
// the range [id, id], so both kinds share one checker.
//
// Clients record with Begin/End (or EndRange) from any number of
// goroutines:
//
//	op := h.Begin("n1", client)
//	id, err := allocate()
//	h.End(op, id, err)
//
//	op = h.Begin("n1", client)
//	lo, hi, err := fetchSegment()
//	h.EndRange(op, lo, hi, err)
//
// and the test calls Check (or h.Check) once the load has stopped, or
// CheckNodeScoped (h.CheckNodeScoped) for a node-scoped table, whose ids
// are unique cluster-wide but increasing only within each node's answers.
package history

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Op is one allocation: when it was called and when it returned (both
// from the same process's monotonic clock), which node and client issued
// it, and its outcome: the id ID, or the range [ID, Hi] when Hi is set.
type Op struct {
	Call   time.Time
	Return time.Time
	ID     uint64
	// Hi is the last id of a range starting at ID; zero for a single id,
	// so that Ops built before ranges existed mean what they meant.
	Hi     uint64
	Node   string
	Client int
	Err    error
}

// OK reports whether the allocation succeeded, i.e. its ids count.
func (o Op) OK() bool { return o.Err == nil }

// Lo is the first id the operation handed out.
func (o Op) Lo() uint64 { return o.ID }

// Last is the last id the operation handed out: Hi for a range, ID for a
// single id.
func (o Op) Last() uint64 {
	if o.Hi == 0 {
		return o.ID
	}
	return o.Hi
}

// IsRange reports whether the operation handed out a range.
func (o Op) IsRange() bool { return o.Hi != 0 }

// History is a concurrency-safe log of operations.
type History struct {
	mu    sync.Mutex
	start time.Time
	ops   []Op
}

// New returns an empty history. Times in reports are shown relative to
// its creation.
func New() *History { return &History{start: time.Now()} }

// Pending is an operation that has been called and not yet returned.
type Pending struct {
	node   string
	client int
	call   time.Time
}

// Begin records the call time of an operation. Take it immediately before
// sending the request: a call time taken too early only weakens the
// check, one taken too late could report a false violation.
func (h *History) Begin(node string, client int) Pending {
	return Pending{node: node, client: client, call: time.Now()}
}

// End records the return time and outcome. Take it immediately after the
// response arrives, for the same reason.
func (h *History) End(p Pending, id uint64, err error) {
	ret := time.Now()
	h.Add(Op{Call: p.call, Return: ret, ID: id, Node: p.node, Client: p.client, Err: err})
}

// EndRange is End for an operation that handed out the ids lo..hi, both
// included. hi below lo is recorded as given and reported by Check as an
// empty range (a client computing its segment wrongly), except hi 0:
// Op.Hi 0 means a single id, so [lo, 0] is recorded as the id lo. A
// range of one id (lo == hi) is checked the same as a single id.
func (h *History) EndRange(p Pending, lo, hi uint64, err error) {
	ret := time.Now()
	if hi == 0 && err == nil {
		// Hi 0 means "single id"; a range ending at 0 can only be the
		// empty or the one-id range [0, 0], and [0, 0] is the id 0.
		hi = lo
	}
	h.Add(Op{Call: p.call, Return: ret, ID: lo, Hi: hi, Node: p.node, Client: p.client, Err: err})
}

// Add records a complete operation.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns a copy of the recorded operations.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Counts returns the number of successful and failed operations.
func (h *History) Counts() (ok, failed int) {
	for _, o := range h.Ops() {
		if o.OK() {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// MaxID returns the largest successfully returned id, the last of a
// range (0 if none).
func (h *History) MaxID() uint64 {
	var m uint64
	for _, o := range h.Ops() {
		if o.OK() && o.Last() > m {
			m = o.Last()
		}
	}
	return m
}

// IDs returns how many ids the successful operations handed out (a range
// counts all its ids; an empty range none).
func (h *History) IDs() uint64 {
	var n uint64
	for _, o := range h.Ops() {
		if o.OK() && o.Last() >= o.Lo() {
			n += o.Last() - o.Lo() + 1
		}
	}
	return n
}

// Check checks the recorded history; see Check.
func (h *History) Check() []Violation {
	return Check(h.Ops())
}

// CheckNodeScoped checks the recorded history as a node-scoped table's;
// see CheckNodeScoped.
func (h *History) CheckNodeScoped() []Violation {
	return CheckNodeScoped(h.Ops())
}

// Format renders an operation relative to start (the zero time prints
// absolute times).
func (h *History) Format(o Op) string { return format(o, h.start) }

// Kind names an invariant.
type Kind string

const (
	// Duplicate: two successful operations returned the same id.
	Duplicate Kind = "duplicate id"
	// NotIncreasing: an operation returned an id not above an id that
	// another operation had already returned before it was called.
	NotIncreasing Kind = "not above an id returned before the call"
	// Overlap: two successful operations, at least one of them a range,
	// handed out a common id (Duplicate is kept for two single ids, so
	// reports on ticket histories read as before).
	Overlap Kind = "overlapping ranges"
	// EmptyRange: a successful operation's range ends below its start.
	EmptyRange Kind = "empty range (hi below lo)"
)

// Violation is one broken invariant: Op is the offending operation and
// Prior the earlier one it conflicts with.
type Violation struct {
	Kind  Kind
	Op    Op
	Prior Op
}

func (v Violation) String() string {
	if v.Kind == EmptyRange {
		return fmt.Sprintf("%s: %s\n  offending: %s", v.Kind, ids(v.Op), format(v.Op, time.Time{}))
	}
	return fmt.Sprintf("%s: %s\n  offending: %s\n  earlier:   %s", v.Kind, ids(v.Op), format(v.Op, time.Time{}), format(v.Prior, time.Time{}))
}

// ids renders an operation's id or range.
func ids(o Op) string {
	if o.IsRange() {
		return fmt.Sprintf("ids [%d, %d]", o.ID, o.Hi)
	}
	return fmt.Sprintf("id %d", o.ID)
}

func format(o Op, start time.Time) string {
	ts := func(t time.Time) string {
		if start.IsZero() {
			return t.Format("15:04:05.000000")
		}
		return t.Sub(start).String()
	}
	res := fmt.Sprintf("id=%d", o.ID)
	if o.IsRange() {
		res = fmt.Sprintf("ids=[%d,%d]", o.ID, o.Hi)
	}
	if !o.OK() {
		res = "err=" + o.Err.Error()
	}
	return fmt.Sprintf("node=%s client=%d call=%s return=%s %s", o.Node, o.Client, ts(o.Call), ts(o.Return), res)
}

// Check returns every violation in ops, sorted by the offending
// operation's call time. Only successful operations count; each stands
// for the ids [Lo, Last] (one id: Lo == Last).
//
// Uniqueness: no id is handed out twice, i.e. no two ranges overlap.
// Real-time order: for each operation B, let M be the largest id among
// operations whose Return is strictly before B's Call; B's first id must
// be > M. Operations that overlap in time may return ids in either order.
// This is exactly linearizability for a counter whose ids are unique and
// increasing (DESIGN §5.2), ranges being allocations of several ids at
// once.
func Check(ops []Op) []Violation {
	good, out := unique(ops)
	out = append(out, increasing(good)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Op.Call.Before(out[j].Op.Call) })
	return out
}

// CheckNodeScoped checks the guarantee of a node-scoped table (DESIGN
// §4c): ids unique across all operations, as Check, but real-time order
// only among the operations of one node (Op.Node, the node that
// answered): each node serves its own blocks, in no order with the
// others'.
func CheckNodeScoped(ops []Op) []Violation {
	good, out := unique(ops)
	byNode := map[string][]Op{}
	for _, o := range good {
		byNode[o.Node] = append(byNode[o.Node], o)
	}
	for _, node := range byNode {
		out = append(out, increasing(node)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Op.Call.Before(out[j].Op.Call) })
	return out
}

// unique returns the successful operations and the violations of
// uniqueness among them (overlaps, duplicates, empty ranges).
func unique(ops []Op) (good []Op, out []Violation) {
	for _, o := range ops {
		if !o.OK() {
			continue
		}
		if o.Last() < o.Lo() {
			out = append(out, Violation{Kind: EmptyRange, Op: o})
			continue
		}
		good = append(good, o)
	}

	// Overlaps: sorted by first id (ties: by call, so the later caller
	// is the one flagged), each range either starts above the furthest
	// end seen so far or overlaps the range that reached it. Every
	// operation overlapping some earlier-starting one is reported once.
	byLo := append([]Op(nil), good...)
	sort.SliceStable(byLo, func(i, j int) bool {
		if byLo[i].Lo() != byLo[j].Lo() {
			return byLo[i].Lo() < byLo[j].Lo()
		}
		return byLo[i].Call.Before(byLo[j].Call)
	})
	reach := -1 // index in byLo of the range with the largest Last so far
	for i, o := range byLo {
		if reach >= 0 && o.Lo() <= byLo[reach].Last() {
			p := byLo[reach]
			// Report against whichever was called first, so the
			// message reads in time order.
			a, b := o, p
			if a.Call.Before(b.Call) {
				a, b = b, a
			}
			kind := Overlap
			if a.Lo() == a.Last() && b.Lo() == b.Last() {
				kind = Duplicate
			}
			out = append(out, Violation{Kind: kind, Op: a, Prior: b})
		}
		if reach < 0 || o.Last() > byLo[reach].Last() {
			reach = i
		}
	}
	return good, out
}

// increasing returns the violations of real-time order among good, all
// successful operations.
func increasing(good []Op) (out []Violation) {

	// byReturn sorted by return time, with prefix maxima: best[i] is the
	// operation with the largest last id among byReturn[0..i].
	byReturn := append([]Op(nil), good...)
	sort.Slice(byReturn, func(i, j int) bool { return byReturn[i].Return.Before(byReturn[j].Return) })
	best := make([]int, len(byReturn))
	for i := range byReturn {
		best[i] = i
		if i > 0 && byReturn[best[i-1]].Last() > byReturn[i].Last() {
			best[i] = best[i-1]
		}
	}
	for _, o := range good {
		// Operations that returned strictly before o was called.
		n := sort.Search(len(byReturn), func(i int) bool { return !byReturn[i].Return.Before(o.Call) })
		if n == 0 {
			continue
		}
		// o itself is not among them (it returns after its call), so an
		// equal id is an overlap, already reported above.
		prior := byReturn[best[n-1]]
		if o.Lo() < prior.Last() {
			out = append(out, Violation{Kind: NotIncreasing, Op: o, Prior: prior})
		}
	}
	return out
}

// Report renders violations for a test failure, at most limit of them
// (the first are the most useful: later ones are often consequences).
func Report(vs []Violation, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d violation(s)", len(vs))
	for i, v := range vs {
		if i == limit {
			fmt.Fprintf(&b, "\n... and %d more", len(vs)-limit)
			break
		}
		fmt.Fprintf(&b, "\n%s", v)
	}
	return b.String()
}
