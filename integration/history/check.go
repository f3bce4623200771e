package history

import (
	"cmp"
	"slices"
	"sort"
)

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
	v := viewOf(ops)
	return check(&v)
}

// CheckNodeScoped checks the guarantee of a node-scoped table (DESIGN
// §4c): ids unique across all operations, as Check, but real-time order
// only among the operations of one node (Op.Node, the node that
// answered): each node serves its own blocks, in no order with the
// others'.
func CheckNodeScoped(ops []Op) []Violation {
	v := viewOf(ops)
	return checkNodeScoped(&v)
}

// check is Check over a view: it sorts indexes into the view's records,
// never copies of the operations, and builds Ops only for violations.
func check(v *view) []Violation {
	good, out := unique(v)
	out = append(out, increasing(v, good)...)
	return byCall(out)
}

func checkNodeScoped(v *view) []Violation {
	good, out := unique(v)
	byNode := make([][]int32, len(v.nodes))
	for _, i := range good {
		n := v.at(int(i)).node
		byNode[n] = append(byNode[n], i)
	}
	for _, node := range byNode {
		out = append(out, increasing(v, node)...)
	}
	return byCall(out)
}

func byCall(out []Violation) []Violation {
	sort.SliceStable(out, func(i, j int) bool { return out[i].Op.Call.Before(out[j].Op.Call) })
	return out
}

// unique returns the successful operations (their indexes, in the order
// recorded) and the violations of uniqueness among them (overlaps,
// duplicates, empty ranges).
func unique(v *view) (good []int32, out []Violation) {
	for i := range v.n {
		r := v.at(i)
		if r.failed {
			continue
		}
		if r.last() < r.id {
			out = append(out, Violation{Kind: EmptyRange, Op: v.op(i)})
			continue
		}
		good = append(good, int32(i))
	}

	// Overlaps: sorted by first id (ties: by call, so the later caller
	// is the one flagged), each range either starts above the furthest
	// end seen so far or overlaps the range that reached it. Every
	// operation overlapping some earlier-starting one is reported once.
	byLo := slices.Clone(good)
	slices.SortStableFunc(byLo, func(a, b int32) int {
		ra, rb := v.at(int(a)), v.at(int(b))
		return cmp.Or(cmp.Compare(ra.id, rb.id), cmp.Compare(ra.call, rb.call))
	})
	var reach *record // the range with the largest last id so far
	reachAt := -1
	for _, i := range byLo {
		r := v.at(int(i))
		if reach != nil && r.id <= reach.last() {
			// Report against whichever was called first, so the
			// message reads in time order.
			a, b := int(i), reachAt
			if r.call < reach.call {
				a, b = b, a
			}
			ra, rb := v.at(a), v.at(b)
			kind := Overlap
			if ra.id == ra.last() && rb.id == rb.last() {
				kind = Duplicate
			}
			out = append(out, Violation{Kind: kind, Op: v.op(a), Prior: v.op(b)})
		}
		if reach == nil || r.last() > reach.last() {
			reach, reachAt = r, int(i)
		}
	}
	return good, out
}

// increasing returns the violations of real-time order among good, the
// indexes of successful operations.
func increasing(v *view, good []int32) (out []Violation) {
	// byReturn sorted by return time, with prefix maxima: best[k] is the
	// operation with the largest last id among byReturn[0..k].
	byReturn := slices.Clone(good)
	slices.SortFunc(byReturn, func(a, b int32) int { return cmp.Compare(v.at(int(a)).ret, v.at(int(b)).ret) })
	best := make([]int32, len(byReturn))
	for k, i := range byReturn {
		best[k] = i
		if k > 0 && v.at(int(best[k-1])).last() > v.at(int(i)).last() {
			best[k] = best[k-1]
		}
	}
	for _, i := range good {
		r := v.at(int(i))
		// Operations that returned strictly before this one was called.
		n := sort.Search(len(byReturn), func(k int) bool { return v.at(int(byReturn[k])).ret >= r.call })
		if n == 0 {
			continue
		}
		// It is not among them itself (it returns after its call), so
		// an equal id is an overlap, already reported above.
		prior := best[n-1]
		if r.id < v.at(int(prior)).last() {
			out = append(out, Violation{Kind: NotIncreasing, Op: v.op(int(i)), Prior: v.op(int(prior))})
		}
	}
	return out
}
