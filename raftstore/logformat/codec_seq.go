package logformat

import (
	"encoding/binary"

	"github.com/ticketd/ticketd/ticket/model"
)

// Sequences in the log and state formats. A command's sequence fields and
// a definition's sequence part are present only behind their own presence
// bits (cmdSeq, defSeq), so entries, snapshots and state files written
// before sequences existed decode unchanged. Each part starts with its own
// presence mask.

// SeqCommand presence bits.
const (
	seqOptions = 1 << iota
	seqValue
	seqCount
	seqHasFree
	seqFree
	seqUntil
	seqCmdKnown = seqUntil<<1 - 1
)

// SequenceDef presence bits.
const (
	sdStart = 1 << iota
	sdMin
	sdMax
	sdIncrement
	sdCache
	sdCycle
	sdNext
	sdFree
	sdRound
	seqDefKnown = sdRound<<1 - 1
)

func appendSeqCommand(b []byte, c *model.SeqCommand) []byte {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(seqOptions, c.Options != nil)
	set(seqValue, c.Value != 0)
	set(seqCount, c.Count != 0)
	set(seqHasFree, c.HasFree)
	set(seqFree, c.Free != 0)
	set(seqUntil, c.Until != 0)
	b = binary.AppendUvarint(b, m)
	if m&seqOptions != 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Options)))
		for _, o := range c.Options {
			b = append(b, byte(o.Kind))
			b = binary.AppendVarint(b, o.Value)
		}
	}
	if m&seqValue != 0 {
		b = binary.AppendVarint(b, c.Value)
	}
	if m&seqCount != 0 {
		b = binary.AppendUvarint(b, c.Count)
	}
	if m&seqFree != 0 {
		b = binary.AppendVarint(b, c.Free)
	}
	if m&seqUntil != 0 {
		b = binary.AppendVarint(b, c.Until)
	}
	return b
}

func (d *decoder) seqCommand() *model.SeqCommand {
	c := new(model.SeqCommand)
	m := d.mask(seqCmdKnown)
	if m&seqOptions != 0 {
		n := d.count(2)
		c.Options = make([]model.SeqOption, n)
		for i := range c.Options {
			c.Options[i].Kind = model.SeqOptionKind(d.byte())
			c.Options[i].Value = d.varint()
		}
	}
	if m&seqValue != 0 {
		c.Value = d.nonZeroInt()
	}
	if m&seqCount != 0 {
		c.Count = d.nonZero()
	}
	c.HasFree = m&seqHasFree != 0
	if m&seqFree != 0 {
		c.Free = d.nonZeroInt()
	}
	if m&seqUntil != 0 {
		c.Until = d.nonZeroInt()
	}
	return c
}

func appendSeqDef(b []byte, s *model.SequenceDef) []byte {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(sdStart, s.Start != 0)
	set(sdMin, s.Min != 0)
	set(sdMax, s.Max != 0)
	set(sdIncrement, s.Increment != 0)
	set(sdCache, s.Cache != 0)
	set(sdCycle, s.Cycle)
	set(sdNext, s.Next != 0)
	set(sdFree, s.Free != 0)
	set(sdRound, s.Round != 0)
	b = binary.AppendUvarint(b, m)
	for _, f := range []struct {
		bit uint64
		v   int64
	}{{sdStart, s.Start}, {sdMin, s.Min}, {sdMax, s.Max}, {sdIncrement, s.Increment}} {
		if m&f.bit != 0 {
			b = binary.AppendVarint(b, f.v)
		}
	}
	if m&sdCache != 0 {
		b = binary.AppendUvarint(b, s.Cache)
	}
	for _, f := range []struct {
		bit uint64
		v   int64
	}{{sdNext, s.Next}, {sdFree, s.Free}, {sdRound, s.Round}} {
		if m&f.bit != 0 {
			b = binary.AppendVarint(b, f.v)
		}
	}
	return b
}

func (d *decoder) seqDef() *model.SequenceDef {
	s := new(model.SequenceDef)
	m := d.mask(seqDefKnown)
	for _, f := range []struct {
		bit uint64
		v   *int64
	}{{sdStart, &s.Start}, {sdMin, &s.Min}, {sdMax, &s.Max}, {sdIncrement, &s.Increment}} {
		if m&f.bit != 0 {
			*f.v = d.nonZeroInt()
		}
	}
	if m&sdCache != 0 {
		s.Cache = d.nonZero()
	}
	s.Cycle = m&sdCycle != 0
	for _, f := range []struct {
		bit uint64
		v   *int64
	}{{sdNext, &s.Next}, {sdFree, &s.Free}, {sdRound, &s.Round}} {
		if m&f.bit != 0 {
			*f.v = d.nonZeroInt()
		}
	}
	return s
}

// nonZeroInt reads a varint the presence mask says is not zero.
func (d *decoder) nonZeroInt() int64 {
	v := d.varint()
	if v == 0 && d.err == nil {
		d.fail("zero value marked present")
	}
	return v
}
