package logformat

import (
	"encoding/binary"
	"fmt"

	"github.com/ticketd/ticketd/ticket/model"
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads the formats above. The first error sticks; later reads
// return zero values, so callers check err once at the end.
type decoder struct {
	b   []byte
	err error
	// floor is the lowest command version whose encodings it reads
	// (legacy.go); zero is Floor. Tests raise it to see what a higher
	// floor refuses.
	floor uint32
	// Batches repeat the same database and table names and column lists;
	// reusing the previous command's saves allocations per command.
	lastDB, lastTable string
	lastColumns       []string
	// names are the column names of the row parts read so far
	// (codec_wire.go).
	names map[string]string
	// Slabs: one backing array each for the values and rows of all
	// commands of a batch.
	values []model.Value
	rows   [][]model.Value
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("unexpected end")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count and checks it against the bytes left, each
// element taking at least min bytes, so that garbage cannot make us
// allocate gigabytes.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail("count %d exceeds input", n)
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string length %d exceeds input", n)
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) string() string { return string(d.bytes()) }

// nonEmpty reads a string that the presence mask says is not empty: a
// zero-length one would not round-trip.
func (d *decoder) nonEmpty() string {
	b := d.bytes()
	if len(b) == 0 && d.err == nil {
		d.fail("empty string marked present")
	}
	return string(b)
}

func (d *decoder) interned(last *string) string {
	b := d.bytes()
	if len(b) == 0 && d.err == nil {
		d.fail("empty string marked present")
	}
	if string(b) == *last {
		return *last
	}
	*last = string(b)
	return *last
}

// nonZero reads a uvarint the presence mask says is not zero.
func (d *decoder) nonZero() uint64 {
	v := d.uvarint()
	if v == 0 && d.err == nil {
		d.fail("zero value marked present")
	}
	return v
}

func (d *decoder) mask(known uint64) uint64 {
	m := d.uvarint()
	if m&^known != 0 {
		d.fail("unknown fields %#x", m&^known)
	}
	return m
}

func (d *decoder) version(want byte, what string) {
	if v := d.byte(); d.err == nil && v != want {
		d.fail("%s version %d, want %d", what, v, want)
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}
