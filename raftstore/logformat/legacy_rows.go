package logformat

import "github.com/ticketd/ticketd/ticket/model"

// A row command's version-2 fields (genRowsV2): model.RowsCommand's Sets
// (col = value, col = col +/- n) and Where (a conjunction of col =
// value), the only form of a row-table UPDATE and DELETE that clusters
// below command version 3 write (the build at 544f168 writes nothing
// else for them), marked by presence bit cmdRows where the row engine's
// commands set cmdRowsExpr. Only log entries carry them: no state file,
// snapshot or backup holds a command. ticket/rowengine applies them by
// their own rules (its legacy*.go), so that a replica replaying
// them holds the rows their writer held. In JSON (legacy_json.go) or in
// numbered fields 1 and 2 of RowsCommand (codec_wire.go): this file
// leaves the tree when the floor reaches 3 (legacy.go, DESIGN §4g), and
// those field numbers stay reserved.

// appendWireV2 writes rc's version-2 fields.
func appendWireV2(b []byte, rc *model.RowsCommand) []byte {
	for i := range rc.Sets {
		s := &rc.Sets[i]
		var at int
		b, at = beginMsg(b, rcSets)
		b = wireString(b, 1, s.Col)
		b = appendWireOperand(b, 2, &s.A)
		b = wireUint(b, 3, uint64(s.Op))
		if s.B != (model.RowOperand{}) {
			b = appendWireOperand(b, 4, &s.B)
		}
		b = wireBool(b, 5, s.SetLastID)
		b = endMsg(b, at)
	}
	for i := range rc.Where {
		w := &rc.Where[i]
		var at int
		b, at = beginMsg(b, rcWhere)
		b = wireString(b, 1, w.Col)
		b = appendWireValue(b, 2, &w.Val)
		b = endMsg(b, at)
	}
	return b
}

func (d *decoder) wireSet(b []byte, s *model.RowSet) {
	m := d.msg(b, "row assignment")
	for m.next() {
		switch m.num {
		case 1:
			s.Col = m.name()
		case 2:
			d.wireOperand(m.bytes(), &s.A)
		case 3:
			s.Op = m.small()
		case 4:
			d.wireOperand(m.bytes(), &s.B)
		case 5:
			s.SetLastID = m.bool()
		default:
			m.unknown()
		}
	}
}

// wireCond decodes a version-2 WHERE condition.
func (d *decoder) wireCond(b []byte) model.RowCond {
	var w model.RowCond
	c := d.msg(b, "row condition")
	for c.next() {
		switch c.num {
		case 1:
			w.Col = c.name()
		case 2:
			d.wireValue(c.bytes(), &w.Val)
		default:
			c.unknown()
		}
	}
	return w
}
