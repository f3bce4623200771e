// Package history records concurrent id allocations and checks them
// against ticketd's invariants (DESIGN §5): every id is unique, and the
// counter is linearizable: if allocation A returned before allocation B was
// called, B's id is above A's. Gaps are allowed; failed operations (their
// ids may or may not have been used) constrain nothing.
//
// Clients record with Begin/End from any number of goroutines:
//
//	op := h.Begin("n1", client)
//	id, err := allocate()
//	h.End(op, id, err)
//
// and the test calls Check (or h.Check) once the load has stopped.
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
// it, and its outcome.
type Op struct {
	Call   time.Time
	Return time.Time
	ID     uint64
	Node   string
	Client int
	Err    error
}

// OK reports whether the allocation succeeded, i.e. its id counts.
func (o Op) OK() bool { return o.Err == nil }

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

// MaxID returns the largest successfully returned id (0 if none).
func (h *History) MaxID() uint64 {
	var m uint64
	for _, o := range h.Ops() {
		if o.OK() && o.ID > m {
			m = o.ID
		}
	}
	return m
}

// Check checks the recorded history; see Check.
func (h *History) Check() []Violation {
	return Check(h.Ops())
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
)

// Violation is one broken invariant: Op is the offending operation and
// Prior the earlier one it conflicts with.
type Violation struct {
	Kind  Kind
	Op    Op
	Prior Op
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: id %d\n  offending: %s\n  earlier:   %s", v.Kind, v.Op.ID, format(v.Op, time.Time{}), format(v.Prior, time.Time{}))
}

func format(o Op, start time.Time) string {
	ts := func(t time.Time) string {
		if start.IsZero() {
			return t.Format("15:04:05.000000")
		}
		return t.Sub(start).String()
	}
	res := fmt.Sprintf("id=%d", o.ID)
	if !o.OK() {
		res = "err=" + o.Err.Error()
	}
	return fmt.Sprintf("node=%s client=%d call=%s return=%s %s", o.Node, o.Client, ts(o.Call), ts(o.Return), res)
}

// Check returns every violation in ops, sorted by the offending
// operation's call time. Only successful operations count.
//
// Uniqueness: every id appears at most once. Real-time order: for each
// operation B, let M be the largest id among operations whose Return is
// strictly before B's Call; B's id must be > M. Operations that overlap
// in time may return ids in either order. This is exactly linearizability
// for a counter whose ids are unique and increasing (DESIGN §5.2).
func Check(ops []Op) []Violation {
	var good []Op
	for _, o := range ops {
		if o.OK() {
			good = append(good, o)
		}
	}
	var out []Violation

	first := make(map[uint64]Op, len(good))
	for _, o := range good {
		if p, dup := first[o.ID]; dup {
			// Report against whichever was called first, so the
			// message reads in time order.
			if o.Call.Before(p.Call) {
				o, p = p, o
				first[o.ID] = p
			}
			out = append(out, Violation{Kind: Duplicate, Op: o, Prior: p})
			continue
		}
		first[o.ID] = o
	}

	// byReturn sorted by return time, with prefix maxima: best[i] is the
	// operation with the largest id among byReturn[0..i].
	byReturn := append([]Op(nil), good...)
	sort.Slice(byReturn, func(i, j int) bool { return byReturn[i].Return.Before(byReturn[j].Return) })
	best := make([]int, len(byReturn))
	for i := range byReturn {
		best[i] = i
		if i > 0 && byReturn[best[i-1]].ID > byReturn[i].ID {
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
		// equal id is a duplicate, already reported above.
		prior := byReturn[best[n-1]]
		if o.ID < prior.ID {
			out = append(out, Violation{Kind: NotIncreasing, Op: o, Prior: prior})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Op.Call.Before(out[j].Op.Call) })
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
