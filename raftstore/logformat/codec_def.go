package logformat

import (
	"encoding/binary"

	"github.com/ticketd/ticketd/ticket/model"
)

// Table definitions (model.TableDef) in commands, the state file and
// snapshots: a presence mask and the present fields, like a command's.

// defMask is the presence mask of d's encoding.
func defMask(d *model.TableDef) uint64 {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(defDB, d.DB != "")
	set(defName, d.Name != "")
	set(defIDCol, d.IDCol != "")
	set(defIDKind, d.IDType.Kind != 0)
	set(defIDUnsigned, d.IDType.Unsigned)
	set(defIDWidth, d.IDType.Width != 0)
	set(defAutoInc, d.AutoInc)
	set(defIDKey, d.IDKey != "")
	set(defIDNotNull, d.IDNotNull)
	set(defStubCol, d.StubCol != "")
	set(defStubType, d.StubType != "")
	set(defStubLen, d.StubLen != 0)
	set(defStubDefault, d.StubDefault != "")
	set(defStubKey, d.StubKey != "")
	set(defStubNotNull, d.StubNotNull)
	set(defStubFirst, d.StubFirst)
	set(defEngine, d.Engine != "")
	set(defComment, d.Comment != "")
	set(defCache, d.Cache != 0)
	set(defSeq, d.Seq != nil)
	set(defRows, d.Rows != nil)
	return m
}

func appendDef(b []byte, d *model.TableDef, f Format) []byte {
	m := defMask(d)
	b = binary.AppendUvarint(b, m)
	if m&defDB != 0 {
		b = appendString(b, d.DB)
	}
	if m&defName != 0 {
		b = appendString(b, d.Name)
	}
	if m&defIDCol != 0 {
		b = appendString(b, d.IDCol)
	}
	if m&defIDKind != 0 {
		b = append(b, byte(d.IDType.Kind))
	}
	if m&defIDWidth != 0 {
		b = binary.AppendVarint(b, int64(d.IDType.Width))
	}
	if m&defIDKey != 0 {
		b = appendString(b, d.IDKey)
	}
	if m&defStubCol != 0 {
		b = appendString(b, d.StubCol)
	}
	if m&defStubType != 0 {
		b = appendString(b, d.StubType)
	}
	if m&defStubLen != 0 {
		b = binary.AppendVarint(b, int64(d.StubLen))
	}
	if m&defStubDefault != 0 {
		b = appendString(b, d.StubDefault)
	}
	if m&defStubKey != 0 {
		b = appendString(b, d.StubKey)
	}
	if m&defEngine != 0 {
		b = appendString(b, d.Engine)
	}
	if m&defComment != 0 {
		b = appendString(b, d.Comment)
	}
	if m&defCache != 0 {
		b = binary.AppendUvarint(b, d.Cache)
	}
	if m&defSeq != 0 {
		b = appendSeqDef(b, d.Seq)
	}
	if m&defRows != 0 {
		b = appendRowsPart(b, f, d.Rows, appendWireRowsDef)
	}
	return b
}

func (d *decoder) def(t *model.TableDef) {
	m := d.mask(defKnown)
	if m&defDB != 0 {
		t.DB = d.nonEmpty()
	}
	if m&defName != 0 {
		t.Name = d.nonEmpty()
	}
	if m&defIDCol != 0 {
		t.IDCol = d.nonEmpty()
	}
	if m&defIDKind != 0 {
		t.IDType.Kind = model.IntKind(d.byte())
		if t.IDType.Kind == 0 && d.err == nil {
			d.fail("zero kind marked present")
		}
	}
	t.IDType.Unsigned = m&defIDUnsigned != 0
	if m&defIDWidth != 0 {
		t.IDType.Width = d.int()
	}
	t.AutoInc = m&defAutoInc != 0
	if m&defIDKey != 0 {
		t.IDKey = d.nonEmpty()
	}
	t.IDNotNull = m&defIDNotNull != 0
	if m&defStubCol != 0 {
		t.StubCol = d.nonEmpty()
	}
	if m&defStubType != 0 {
		t.StubType = d.nonEmpty()
	}
	if m&defStubLen != 0 {
		t.StubLen = d.int()
	}
	if m&defStubDefault != 0 {
		t.StubDefault = d.nonEmpty()
	}
	if m&defStubKey != 0 {
		t.StubKey = d.nonEmpty()
	}
	t.StubNotNull = m&defStubNotNull != 0
	t.StubFirst = m&defStubFirst != 0
	if m&defEngine != 0 {
		t.Engine = d.nonEmpty()
	}
	if m&defComment != 0 {
		t.Comment = d.nonEmpty()
	}
	if m&defCache != 0 {
		t.Cache = d.nonZero()
	}
	if m&defSeq != 0 {
		t.Seq = d.seqDef()
	}
	if m&defRows != 0 {
		t.Rows = d.rowsDef()
	}
}
