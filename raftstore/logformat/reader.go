package logformat

// Reader reads the primitives of this package's formats (uvarints and
// length-prefixed strings) for the small messages of other protocols that
// share them: raftstore's forwarding payloads. Like the decoder, the first
// error sticks (wrapping ErrCorrupt) and Done reports it.
type Reader struct{ d decoder }

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{d: decoder{b: b}} }

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 { return r.d.uvarint() }

// String reads a string written by AppendString.
func (r *Reader) String() string { return r.d.string() }

// Done reports the first error, or trailing bytes.
func (r *Reader) Done() error { return r.d.done() }

// AppendString appends s with its length in front, as Reader.String reads.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }
