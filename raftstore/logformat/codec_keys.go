package logformat

import (
	"encoding/binary"
	"fmt"

	"github.com/ticketd/ticketd/ticket/model"
)

// The Redis key space in the log format (command version 10). A key
// command is present behind its own command bit (cmdKeyCmd), a restore's
// keys behind another (cmdDumpKeys), and a reply behind a result bit
// (resKey), so that nothing written before keys changes. Each part begins
// with its own presence mask.

// KeyCommand presence bits.
const (
	kcOp = 1 << iota
	kcDB
	kcFlags
	kcKeys
	kcDelta
	kcValue
	kcTTL
	kcKnown = kcTTL<<1 - 1
)

func appendKeyCommand(b []byte, c *model.KeyCommand) []byte {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(kcOp, c.Op != 0)
	set(kcDB, c.DB != 0)
	set(kcFlags, c.Flags != 0)
	set(kcKeys, len(c.Keys) > 0)
	set(kcDelta, c.Delta != 0)
	set(kcValue, c.Value != "")
	set(kcTTL, c.TTL != 0)
	b = binary.AppendUvarint(b, m)
	if m&kcOp != 0 {
		b = append(b, byte(c.Op))
	}
	if m&kcDB != 0 {
		b = append(b, c.DB)
	}
	if m&kcFlags != 0 {
		b = binary.AppendUvarint(b, uint64(c.Flags))
	}
	if m&kcKeys != 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Keys)))
		for _, k := range c.Keys {
			b = appendString(b, k)
		}
	}
	if m&kcDelta != 0 {
		b = binary.AppendVarint(b, c.Delta)
	}
	if m&kcValue != 0 {
		b = appendString(b, c.Value)
	}
	if m&kcTTL != 0 {
		b = binary.AppendVarint(b, c.TTL)
	}
	return b
}

func (d *decoder) keyCommand() *model.KeyCommand {
	c := new(model.KeyCommand)
	m := d.mask(kcKnown)
	if m&kcOp != 0 {
		c.Op = model.KeyOp(d.byte())
	}
	if m&kcDB != 0 {
		c.DB = d.byte()
	}
	if m&kcFlags != 0 {
		f := d.uvarint()
		if f > 1<<16-1 && d.err == nil {
			d.fail("key flags %d out of range", f)
		}
		c.Flags = model.KeyFlags(f)
	}
	if m&kcKeys != 0 {
		n := d.count(1)
		c.Keys = make([]string, n)
		for i := range c.Keys {
			c.Keys[i] = d.string()
		}
	}
	if m&kcDelta != 0 {
		c.Delta = d.nonZeroInt()
	}
	if m&kcValue != 0 {
		c.Value = d.nonEmpty()
	}
	if m&kcTTL != 0 {
		c.TTL = d.nonZeroInt()
	}
	return c
}

// KeyReply presence bits.
const (
	krKind = 1 << iota
	krInt
	krStr
	krKnown = krStr<<1 - 1
)

// A reply: a presence mask, then its kind, integer and string. The kind
// is not judged here: a reply of a kind the front door does not know is
// its error to answer, not the forwarding protocol's.
func appendKeyReply(b []byte, r *model.KeyReply) []byte {
	var m uint64
	if r.Kind != 0 {
		m |= krKind
	}
	if r.Int != 0 {
		m |= krInt
	}
	if r.Str != "" {
		m |= krStr
	}
	b = binary.AppendUvarint(b, m)
	if m&krKind != 0 {
		b = append(b, byte(r.Kind))
	}
	if m&krInt != 0 {
		b = binary.AppendVarint(b, r.Int)
	}
	if m&krStr != 0 {
		b = appendString(b, r.Str)
	}
	return b
}

func (d *decoder) keyReply() *model.KeyReply {
	r := new(model.KeyReply)
	m := d.mask(krKnown)
	if m&krKind != 0 {
		r.Kind = model.ReplyKind(d.byte())
	}
	if m&krInt != 0 {
		r.Int = d.nonZeroInt()
	}
	if m&krStr != 0 {
		r.Str = d.nonEmpty()
	}
	return r
}

// A restore's keys: a count, then each key's database, name and value
// (AppendKeyVal, length-prefixed).
func appendKeyEntries(b []byte, keys []model.KeyEntry) []byte {
	b = binary.AppendUvarint(b, uint64(len(keys)))
	var buf []byte
	for i := range keys {
		k := &keys[i]
		b = append(b, k.DB)
		b = appendString(b, k.Name)
		buf = AppendKeyVal(buf[:0], &k.KeyVal)
		b = binary.AppendUvarint(b, uint64(len(buf)))
		b = append(b, buf...)
	}
	return b
}

func (d *decoder) keyEntries() []model.KeyEntry {
	n := d.count(3)
	if n == 0 && d.err == nil {
		d.fail("empty keys marked present")
	}
	out := make([]model.KeyEntry, n)
	for i := range out {
		out[i].DB = d.byte()
		out[i].Name = d.string()
		raw := d.bytes()
		if d.err != nil {
			return nil
		}
		kv, err := DecodeKeyVal(raw)
		if err != nil {
			d.fail("restore key %d: %v", i, err)
			return nil
		}
		out[i].KeyVal = kv
	}
	return out
}

// AppendKeyVal encodes a key's value: varint(ExpireAt), then the value's
// bytes to the end.
func AppendKeyVal(b []byte, v *model.KeyVal) []byte {
	b = binary.AppendVarint(b, v.ExpireAt)
	return append(b, v.Val...)
}

// DecodeKeyVal decodes what AppendKeyVal encoded.
func DecodeKeyVal(b []byte) (model.KeyVal, error) {
	at, n := binary.Varint(b)
	if n <= 0 {
		return model.KeyVal{}, fmt.Errorf("%w: key value header", ErrCorrupt)
	}
	return model.KeyVal{ExpireAt: at, Val: string(b[n:])}, nil
}
