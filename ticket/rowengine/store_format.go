package rowengine

import (
	"encoding/binary"
	"fmt"

	"github.com/ticketd/ticketd/ticket/model"
)

// The byte forms of a row table (store.go): the memcomparable key of
// each index (keyBytes, IndexKey, ValueKey, PrefixEnd) and the stored
// form of a row (AppendRow, DecodeRow), which the state file and
// backups hold.

// keyBytes appends d's key encoding as a value of col in a table of
// collation coll: NULL as 0x00 (NULL sorts first, as in MySQL); any other
// value as 0x01 and then integers as 8 big-endian bytes (signed ones with
// the sign bit flipped), strings as their collation key (appendCollKey:
// byte order is the collation's order, equal keys are equal strings) and
// dates as their canonical text with 0x00 escaped as 0x00 0xFF and ended
// by 0x00 0x01; each value ends where no other value of its column does,
// so a key of several columns orders column by column.
func keyBytes(b []byte, coll model.Collation, col *model.RowCol, d model.Datum) []byte {
	if d.Null {
		return append(b, 0)
	}
	b = append(b, 1)
	switch col.Kind {
	case model.ColInt:
		var n big
		n.parse(d.S)
		var u uint64
		switch {
		case col.Int.Unsigned:
			u = n.abs
		case n.neg:
			u = uint64(-int64(n.abs-1)-1) ^ 1<<63
		default:
			u = n.abs ^ 1<<63
		}
		return binary.BigEndian.AppendUint64(b, u)
	case model.ColString:
		return appendCollKey(b, coll, d.S)
	}
	return appendEscaped(b, d.S)
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == 0 {
			b = append(b, 0xff)
		}
	}
	return append(b, 0, 1)
}

// IndexKey is row's encoded key for rd.Keys[k]; null reports a NULL in
// one of its columns (such a key never collides).
func IndexKey(rd *model.RowsDef, k int, row []model.Datum) (key string, null bool) {
	var buf [64]byte
	b := buf[:0]
	for _, c := range rd.Keys[k].Cols {
		null = null || row[c].Null
		b = keyBytes(b, rd.CollOf(&rd.Cols[c]), &rd.Cols[c], row[c])
	}
	return string(b), null
}

// ValueKey encodes values of the first len(vals) columns of key k, for
// Scan bounds: every row whose key starts with these values has an index
// key >= the result and < PrefixEnd of it.
func ValueKey(rd *model.RowsDef, k int, vals []model.Datum) string {
	var buf [64]byte
	b := buf[:0]
	for i, d := range vals {
		c := rd.Keys[k].Cols[i]
		b = keyBytes(b, rd.CollOf(&rd.Cols[c]), &rd.Cols[c], d)
	}
	return string(b)
}

// PrefixEnd is the least key above every key starting with p ("" if none,
// which Scan reads as no bound).
func PrefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// AppendRow appends the stored form of a row: per value a byte (0 text,
// 1 NULL) and, for text, its length as a uvarint and its bytes. It is the
// value of a row in memory and in the state file.
func AppendRow(b []byte, r []model.Datum) []byte {
	for _, v := range r {
		if v.Null {
			b = append(b, 1)
			continue
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(v.S)))
		b = append(b, v.S...)
	}
	return b
}

// DecodeRow decodes a row of ncols values that AppendRow wrote. The
// values share s's memory.
func DecodeRow(s string, ncols int) ([]model.Datum, error) {
	r := make([]model.Datum, ncols)
	for i := range r {
		if len(s) == 0 {
			return nil, fmt.Errorf("%w: %d of %d values", ErrRowsCorrupt, i, ncols)
		}
		flag := s[0]
		s = s[1:]
		switch flag {
		case 1:
			r[i].Null = true
			continue
		case 0:
		default:
			return nil, fmt.Errorf("%w: value flag %d", ErrRowsCorrupt, flag)
		}
		n, w := uvarintString(s)
		if w <= 0 || uint64(len(s)-w) < n {
			return nil, fmt.Errorf("%w: value length", ErrRowsCorrupt)
		}
		r[i].S = s[w : w+int(n)]
		s = s[w+int(n):]
	}
	if len(s) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after %d values", ErrRowsCorrupt, len(s), ncols)
	}
	return r, nil
}

func uvarintString(s string) (uint64, int) {
	var x uint64
	var sh uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<sh, i + 1
		}
		x |= uint64(c&0x7f) << sh
		sh += 7
	}
	return 0, -1
}
