package logformat

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ticketd/ticketd/ticket/model"
)

// Decoding of the row parts' numbered fields (codec_wire.go holds their
// schema and encoders).

// wireMsg reads the fields of one message; failures go to d (sticky).
type wireMsg struct {
	d    *decoder
	b    []byte
	what string
	num  protowire.Number
	typ  protowire.Type
	u    uint64 // a varint field's value
	s    []byte // a length-delimited field's bytes
}

func (d *decoder) msg(b []byte, what string) wireMsg { return wireMsg{d: d, b: b, what: what} }

// next reads the next field; false at the end or on an error.
func (m *wireMsg) next() bool {
	if len(m.b) == 0 || m.d.err != nil {
		return false
	}
	num, typ, n := protowire.ConsumeTag(m.b)
	if n < 0 {
		m.d.fail("%s: bad field tag", m.what)
		return false
	}
	m.b = m.b[n:]
	m.num, m.typ = num, typ
	switch typ {
	case protowire.VarintType:
		m.u, n = protowire.ConsumeVarint(m.b)
	case protowire.BytesType:
		m.s, n = protowire.ConsumeBytes(m.b)
	default:
		m.d.fail("%s: field %d of wire type %d", m.what, num, typ)
		return false
	}
	if n < 0 {
		m.d.fail("%s: field %d truncated", m.what, num)
		return false
	}
	m.b = m.b[n:]
	return true
}

// unknown fails on a field this build does not know (see above).
func (m *wireMsg) unknown() {
	m.d.fail("%s: unknown field %d", m.what, m.num)
}

func (m *wireMsg) is(t protowire.Type) bool {
	if m.typ != t {
		m.d.fail("%s: field %d of wire type %d", m.what, m.num, m.typ)
		return false
	}
	return true
}

func (m *wireMsg) uint() uint64 {
	if !m.is(protowire.VarintType) {
		return 0
	}
	return m.u
}

// small reads a varint field that holds a byte-sized number.
func (m *wireMsg) small() uint8 {
	v := m.uint()
	if v > 0xff {
		m.d.fail("%s: field %d value %d out of range", m.what, m.num, v)
	}
	return uint8(v)
}

func (m *wireMsg) int() int64 { return protowire.DecodeZigZag(m.uint()) }

func (m *wireMsg) bool() bool {
	v := m.uint()
	if v > 1 {
		m.d.fail("%s: field %d bool %d", m.what, m.num, v)
	}
	return v == 1
}

func (m *wireMsg) bytes() []byte {
	if !m.is(protowire.BytesType) {
		return nil
	}
	return m.s
}

func (m *wireMsg) string() string { return string(m.bytes()) }

// name reads a column name: a batch repeats the same few, which are
// allocated once per batch.
func (m *wireMsg) name() string {
	b := m.bytes()
	d := m.d
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if d.names == nil {
		d.names = make(map[string]string, 8)
	}
	if len(d.names) < maxNames {
		d.names[s] = s
	}
	return s
}

// maxNames bounds the names a decoder keeps.
const maxNames = 64

// countFields counts the fields numbered num in a message, so that a
// repeated field's slice is allocated once; errors are left to the
// decoding that follows.
func countFields(b []byte, num protowire.Number) int {
	n := 0
	for len(b) > 0 {
		f, _, k := protowire.ConsumeField(b)
		if k < 0 {
			break
		}
		if f == num {
			n++
		}
		b = b[k:]
	}
	return n
}

func (d *decoder) wireValue(b []byte, v *model.Value) {
	m := d.msg(b, "value")
	for m.next() {
		switch m.num {
		case valKind:
			v.Kind = model.ValueKind(m.small())
		case valIntF:
			v.Int = m.int()
		case valUintF:
			v.Uint = m.uint()
		case valStrF:
			v.Str = m.string()
		default:
			m.unknown()
		}
	}
}

// wireRowsCommand decodes what appendWireRowsCommand wrote.
func (d *decoder) wireRowsCommand(b []byte, rc *model.RowsCommand) {
	m := d.msg(b, "row command")
	for m.next() {
		switch m.num {
		case rcSets:
			var s model.RowSet
			d.wireSet(m.bytes(), &s)
			rc.Sets = append(rc.Sets, s)
		case rcWhere:
			rc.Where = append(rc.Where, d.wireCond(m.bytes()))
		case rcEngine:
			rc.Engine = m.bool()
		case rcFilter:
			rc.Filter = new(model.RowExpr)
			d.wireExpr(m.bytes(), rc.Filter, 0)
		case rcAssigns:
			if rc.Assigns == nil {
				rc.Assigns = make([]model.RowAssign, 0, countFields(m.b, rcAssigns)+1)
			}
			rc.Assigns = append(rc.Assigns, d.wireAssign(m.bytes()))
		case rcOrderBy:
			var o model.RowOrder
			c := d.msg(m.bytes(), "row order")
			for c.next() {
				switch c.num {
				case 1:
					o.Col = c.name()
				case 2:
					o.Desc = c.bool()
				default:
					c.unknown()
				}
			}
			rc.OrderBy = append(rc.OrderBy, o)
		case rcHasLimit:
			rc.HasLimit = m.bool()
		case rcLimit:
			rc.Limit = m.uint()
		case rcNotStrict:
			rc.NotStrict = m.bool()
		case rcNoAutoValueOnZero:
			rc.NoAutoValueOnZero = m.bool()
		case rcNow:
			rc.Now = m.int()
		case rcOnDup:
			rc.OnDup = append(rc.OnDup, d.wireAssign(m.bytes()))
		case rcExprs:
			// A tuple without expressions is an empty list, not nil, as
			// JSON decodes it.
			p := m.bytes()
			row := make([]model.RowExpr, 0, countFields(p, 1))
			c := d.msg(p, "VALUES expressions")
			for c.next() {
				if c.num != 1 {
					c.unknown()
					break
				}
				row = append(row, model.RowExpr{})
				d.wireExpr(c.bytes(), &row[len(row)-1], 0)
			}
			rc.Exprs = append(rc.Exprs, row)
		default:
			m.unknown()
		}
	}
}

func (d *decoder) wireAssign(b []byte) model.RowAssign {
	var a model.RowAssign
	c := d.msg(b, "row assignment")
	for c.next() {
		switch c.num {
		case 1:
			a.Col = c.name()
		case 2:
			d.wireExpr(c.bytes(), &a.Expr, 0)
		case 3:
			a.Default = c.bool()
		default:
			c.unknown()
		}
	}
	return a
}

func (d *decoder) wireOperand(b []byte, o *model.RowOperand) {
	m := d.msg(b, "row operand")
	for m.next() {
		switch m.num {
		case 1:
			o.Col = m.name()
		case 2:
			d.wireValue(m.bytes(), &o.Val)
		default:
			m.unknown()
		}
	}
}

func (d *decoder) wireExpr(b []byte, x *model.RowExpr, depth int) {
	if depth > maxExprDepth {
		d.fail("row expression nested deeper than %d", maxExprDepth)
		return
	}
	m := d.msg(b, "row expression")
	for m.next() {
		switch m.num {
		case exOp:
			x.Op = model.ExprOp(m.small())
		case exCol:
			x.Col = m.name()
		case exVal:
			x.Val = new(model.Value)
			d.wireValue(m.bytes(), x.Val)
		case exUnit:
			x.Unit = m.string()
		case exEscape:
			x.Escape = m.small()
		case exArgs:
			if x.Args == nil {
				x.Args = make([]model.RowExpr, 0, countFields(m.b, exArgs)+1)
			}
			x.Args = append(x.Args, model.RowExpr{})
			d.wireExpr(m.bytes(), &x.Args[len(x.Args)-1], depth+1)
		default:
			m.unknown()
		}
	}
}

// wireRowsDef decodes what appendWireRowsDef wrote.
func (d *decoder) wireRowsDef(b []byte, rd *model.RowsDef) {
	m := d.msg(b, "row table definition")
	for m.next() {
		switch m.num {
		case 1:
			rd.Cols = append(rd.Cols, model.RowCol{})
			d.wireCol(m.bytes(), &rd.Cols[len(rd.Cols)-1])
		case 2:
			rd.Keys = append(rd.Keys, model.RowKey{})
			d.wireKey(m.bytes(), &rd.Keys[len(rd.Keys)-1])
		case rdCollation:
			rd.Collation = model.Collation(m.small())
			if rd.Collation == model.CollLegacy || !rd.Collation.Known() {
				d.fail("row table collation %d", rd.Collation)
			}
		default:
			m.unknown()
		}
	}
}

func (d *decoder) wireCol(b []byte, c *model.RowCol) {
	m := d.msg(b, "row table column")
	for m.next() {
		switch m.num {
		case rcolName:
			c.Name = m.string()
		case rcolKind:
			c.Kind = model.ColKind(m.small())
		case rcolInt:
			it := d.msg(m.bytes(), "integer type")
			for it.next() {
				switch it.num {
				case 1:
					c.Int.Kind = model.IntKind(it.small())
				case 2:
					c.Int.Unsigned = it.bool()
				case 3:
					c.Int.Width = int(it.int())
				default:
					it.unknown()
				}
			}
		case rcolType:
			c.Type = m.string()
		case rcolLen:
			c.Len = int(m.int())
		case rcolNotNull:
			c.NotNull = m.bool()
		case rcolAutoInc:
			c.AutoInc = m.bool()
		case rcolHasDefault:
			c.HasDefault = m.bool()
		case rcolDefault:
			d.wireDatum(m.bytes(), &c.Default)
		case rcolDefaultNow:
			c.DefaultNow = m.bool()
		case rcolOnUpdateNow:
			c.OnUpdateNow = m.bool()
		case rcolComment:
			c.Comment = m.string()
		case rcolCollation:
			c.Collation = model.Collation(m.small())
			if c.Collation == model.CollLegacy || !c.Collation.Known() {
				d.fail("row table column collation %d", c.Collation)
			}
		default:
			m.unknown()
		}
	}
}

func (d *decoder) wireKey(b []byte, k *model.RowKey) {
	m := d.msg(b, "row table key")
	for m.next() {
		switch m.num {
		case rkName:
			k.Name = m.string()
		case rkPrimary:
			k.Primary = m.bool()
		case rkUnique:
			k.Unique = m.bool()
		case rkCols:
			p := m.bytes()
			for len(p) > 0 && d.err == nil {
				v, n := protowire.ConsumeVarint(p)
				if n < 0 {
					d.fail("row table key: bad column")
					return
				}
				p = p[n:]
				k.Cols = append(k.Cols, int(protowire.DecodeZigZag(v)))
			}
		default:
			m.unknown()
		}
	}
}

func (d *decoder) wireDatum(b []byte, v *model.Datum) {
	m := d.msg(b, "value")
	for m.next() {
		switch m.num {
		case 1:
			v.Null = m.bool()
		case 2:
			v.S = m.string()
		default:
			m.unknown()
		}
	}
}

// wireImages decodes what appendWireImages wrote.
func (d *decoder) wireImages(b []byte) [][]model.Datum {
	var rows [][]model.Datum
	m := d.msg(b, "row images")
	for m.next() {
		if m.num != 1 {
			m.unknown()
			break
		}
		var r []model.Datum
		v := d.msg(m.bytes(), "row image")
		for v.next() {
			if v.num != 1 {
				v.unknown()
				break
			}
			r = append(r, model.Datum{})
			d.wireDatum(v.bytes(), &r[len(r)-1])
		}
		rows = append(rows, r)
	}
	return rows
}
