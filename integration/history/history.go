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
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
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

// History is a concurrency-safe log of operations, kept compactly: a
// record of 40 bytes an operation (an Op is 104) in chunks that never
// move, so that a soak's millions of operations cost what the check
// needs and reading it copies nothing (All, From). Counts, MaxID and IDs
// are kept as operations are added.
type History struct {
	mu      sync.Mutex
	v       view // grows under mu; a reader copies the header, never the records
	nodeIdx map[string]uint16
	ok      int
	failed  int
	maxID   uint64
	ids     uint64
}

// New returns an empty history. Times in reports are shown relative to
// its creation.
func New() *History {
	return &History{v: view{start: time.Now()}, nodeIdx: map[string]uint16{}}
}

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

// Add records a complete operation. Its times are kept as offsets from
// the history's creation (on the monotonic clock when both have it, as
// time.Time.Sub does), so an Op read back compares with the others
// exactly as the one added; the zero time stays the zero time. Client
// is kept in 32 bits and a history holds at most 65,536 node names.
func (h *History) Add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	node, known := h.nodeIdx[op.Node]
	if !known {
		if len(h.v.nodes) > math.MaxUint16 {
			panic(fmt.Sprintf("history: more than %d node names", math.MaxUint16+1))
		}
		node = uint16(len(h.v.nodes))
		h.nodeIdx[op.Node] = node
		h.v.nodes = append(h.v.nodes, op.Node)
	}
	h.v.add(op, node)
	if op.OK() {
		h.ok++
		h.maxID = max(h.maxID, op.Last())
		if op.Last() >= op.Lo() {
			h.ids += op.Last() - op.Lo() + 1
		}
	} else {
		h.failed++
	}
}

// snapshot is the history as it stands: records below its n are never
// written again, so it can be read without the lock.
func (h *History) snapshot() view {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.v
}

// Len is the number of operations recorded so far; From(Len()) later
// yields just the ones recorded since.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.v.n
}

// All yields the operations recorded when it is called, in the order
// they were added, without copying the history: like a copy, it yields
// the same operations however often it is ranged over.
func (h *History) All() iter.Seq[Op] {
	v := h.snapshot()
	return func(yield func(Op) bool) {
		for i := range v.n {
			if !yield(v.op(i)) {
				return
			}
		}
	}
}

// From yields the operations recorded from the i-th on when it is
// called, with their positions, so that a caller polling the history
// reads each operation once.
func (h *History) From(i int) iter.Seq2[int, Op] {
	v := h.snapshot()
	return func(yield func(int, Op) bool) {
		for j := max(i, 0); j < v.n; j++ {
			if !yield(j, v.op(j)) {
				return
			}
		}
	}
}

// ByCall yields the operations recorded when it is called in the order
// of their calls (those called at once in the order added), sorting 4
// bytes an operation rather than the operations.
func (h *History) ByCall() iter.Seq[Op] {
	v := h.snapshot()
	idx := make([]int32, v.n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(v.at(int(a)).call, v.at(int(b)).call) })
	return func(yield func(Op) bool) {
		for _, i := range idx {
			if !yield(v.op(int(i))) {
				return
			}
		}
	}
}

// Ops returns a copy of the recorded operations: for short histories, or
// to sort them; All reads a long one without the copy.
func (h *History) Ops() []Op {
	v := h.snapshot()
	out := make([]Op, v.n)
	for i := range out {
		out[i] = v.op(i)
	}
	return out
}

// Counts returns the number of successful and failed operations.
func (h *History) Counts() (ok, failed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ok, h.failed
}

// MaxID returns the largest successfully returned id, the last of a
// range (0 if none).
func (h *History) MaxID() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxID
}

// IDs returns how many ids the successful operations handed out (a range
// counts all its ids; an empty range none).
func (h *History) IDs() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids
}

// Check checks the recorded history; see Check. It reads the records in
// place: its own memory is three 4-byte indexes an operation.
func (h *History) Check() []Violation {
	v := h.snapshot()
	return check(&v)
}

// CheckNodeScoped checks the recorded history as a node-scoped table's;
// see CheckNodeScoped.
func (h *History) CheckNodeScoped() []Violation {
	v := h.snapshot()
	return checkNodeScoped(&v)
}

// Format renders an operation relative to start (the zero time prints
// absolute times).
func (h *History) Format(o Op) string { return format(o, h.v.start) }

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
