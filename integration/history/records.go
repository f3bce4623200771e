package history

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// record is one operation as a history keeps it. Times are offsets from
// the history's start (noTime for the zero time), the node an index into
// the history's names, the error kept aside (view.errs): most operations
// succeed. 40 bytes, where an Op is 104.
type record struct {
	call, ret int64
	id, hi    uint64
	client    int32
	node      uint16
	failed    bool
}

// noTime stands for the zero time.Time. It sorts before every other
// offset, as the zero time is before every other time.
const noTime = math.MinInt64

// chunkLen records make a chunk; chunks are allocated whole and never
// moved, so a history grows without copying what it holds.
const (
	chunkBits = 12
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
)

type chunk [chunkLen]record

// failure is the error of the operation at index i.
type failure struct {
	i   int
	err error
}

// view is a history's records up to n. Everything below n is written
// once and never again, so a copy of the view (its slice headers) reads
// the same records while the history goes on growing: appends only ever
// write beyond n, into fresh chunks or fresh backing arrays.
type view struct {
	start  time.Time
	chunks []*chunk
	n      int
	nodes  []string
	errs   []failure // by i, ascending
	// src, when the view was built from a slice of Ops (Check), holds
	// them, so that violations report the Ops given, errors and all.
	src []Op
}

// offset is t as an offset from the view's start.
func (v *view) offset(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return int64(t.Sub(v.start))
}

// time is the inverse of offset. start.Add keeps start's monotonic
// reading, so times read back compare as the ones recorded.
func (v *view) time(d int64) time.Time {
	if d == noTime {
		return time.Time{}
	}
	return v.start.Add(time.Duration(d))
}

// add appends op, answered by the node of index node.
func (v *view) add(op Op, node uint16) {
	if v.n%chunkLen == 0 && v.n/chunkLen == len(v.chunks) {
		v.chunks = append(v.chunks, new(chunk))
	}
	*v.at(v.n) = record{
		call: v.offset(op.Call), ret: v.offset(op.Return),
		id: op.ID, hi: op.Hi, client: int32(op.Client), node: node, failed: op.Err != nil,
	}
	if op.Err != nil {
		v.errs = append(v.errs, failure{i: v.n, err: op.Err})
	}
	v.n++
}

func (v *view) at(i int) *record { return &v.chunks[i>>chunkBits][i&chunkMask] }

// op is the i-th operation as an Op.
func (v *view) op(i int) Op {
	if v.src != nil {
		return v.src[i]
	}
	r := v.at(i)
	o := Op{Call: v.time(r.call), Return: v.time(r.ret), ID: r.id, Hi: r.hi, Node: v.nodes[r.node], Client: int(r.client)}
	if r.failed {
		if k, found := slices.BinarySearchFunc(v.errs, i, func(f failure, i int) int { return f.i - i }); found {
			o.Err = v.errs[k].err
		}
	}
	return o
}

// last is the record's last id: hi for a range, id for a single id.
func (r *record) last() uint64 {
	if r.hi == 0 {
		return r.id
	}
	return r.hi
}

// viewOf is ops as a view, for the checker: times as offsets from the
// earliest time among them (so that a zero-time failure does not push
// the others out of range), node names interned.
func viewOf(ops []Op) view {
	var base time.Time
	for _, o := range ops {
		for _, t := range []time.Time{o.Call, o.Return} {
			if !t.IsZero() && (base.IsZero() || t.Before(base)) {
				base = t
			}
		}
	}
	v := view{start: base, src: ops}
	idx := map[string]uint16{}
	for _, o := range ops {
		node, known := idx[o.Node]
		if !known {
			if len(v.nodes) > math.MaxUint16 {
				panic(fmt.Sprintf("history: more than %d node names", math.MaxUint16+1))
			}
			node = uint16(len(v.nodes))
			idx[o.Node] = node
			v.nodes = append(v.nodes, o.Node)
		}
		v.add(o, node)
	}
	return v
}
