package wire

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// column is one result column. Values of a column are nil, int64, uint64
// or string, and the column's type follows from the first non-nil one
// unless typ is set.
type column struct {
	name  string
	table string
	db    string
	typ   uint8
	flag  uint16 // flags beyond the type's own (UNSIGNED_FLAG)
}

// rowset is a result set before encoding.
type rowset struct {
	cols []column
	rows [][]any
}

func (rs *rowset) add(vals ...any) { rs.rows = append(rs.rows, vals) }

// strCols makes string columns with the given names.
func strCols(names ...string) []column {
	cols := make([]column, len(names))
	for i, n := range names {
		cols[i] = column{name: n}
	}
	return cols
}

// typeOf picks the MySQL type for a column from its values.
func (rs *rowset) typeOf(i int) (typ uint8, flag uint16) {
	typ = rs.cols[i].typ
	if typ == 0 {
		typ = mysql.MYSQL_TYPE_VAR_STRING
	rows:
		for _, r := range rs.rows {
			switch r[i].(type) {
			case nil:
				continue
			case int64:
				typ = mysql.MYSQL_TYPE_LONGLONG
			case uint64:
				typ, flag = mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG
			}
			break rows
		}
	}
	flag |= rs.cols[i].flag
	if isIntType(typ) {
		flag |= mysql.BINARY_FLAG | mysql.NUM_FLAG
	}
	return typ, flag
}

// isIntType reports the integer column types.
func isIntType(typ uint8) bool {
	switch typ {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		return true
	}
	return false
}

// result encodes the rowset in the text or binary row protocol.
func (rs *rowset) result(binaryRows bool, fc *fieldCache) *mysql.Result {
	fields := make([]*mysql.Field, len(rs.cols))
	types := make([]uint8, len(rs.cols))
	for i, c := range rs.cols {
		typ, flag := rs.typeOf(i)
		types[i] = typ
		fields[i] = fc.field(fieldKey{c.name, c.table, c.db, typ, flag})
	}
	rows := make([]mysql.RowData, len(rs.rows))
	for j, r := range rs.rows {
		if binaryRows {
			rows[j] = binaryRow(types, r)
		} else {
			rows[j] = textRow(r)
		}
	}
	return &mysql.Result{Resultset: &mysql.Resultset{Fields: fields, RowDatas: rows}}
}

func textValue(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	default:
		return "", false
	}
}

func textRow(r []any) mysql.RowData {
	var b []byte
	for _, v := range r {
		s, ok := textValue(v)
		if !ok {
			b = append(b, 0xfb)
			continue
		}
		b = appendLenEncString(b, s)
	}
	return b
}

// binaryRow encodes a row of the binary protocol (COM_STMT_EXECUTE
// results): a 0x00 header, a NULL bitmap offset by two bits, then values
// in their binary form.
func binaryRow(types []uint8, r []any) mysql.RowData {
	n := (len(r) + 7 + 2) / 8
	b := make([]byte, 1+n, 1+n+16*len(r))
	for i, v := range r {
		if v == nil {
			b[1+(i+2)/8] |= 1 << uint((i+2)%8)
			continue
		}
		if isIntType(types[i]) {
			var u uint64
			switch x := v.(type) {
			case int64:
				u = uint64(x)
			case uint64:
				u = x
			case float64:
				u = uint64(int64(math.Round(x)))
			case string:
				n, err := strconv.ParseInt(x, 10, 64)
				u = uint64(n)
				if err != nil {
					u, _ = strconv.ParseUint(x, 10, 64)
				}
			}
			// Each integer type has its size in the binary protocol;
			// the column's unsigned flag says how clients read it.
			switch types[i] {
			case mysql.MYSQL_TYPE_TINY:
				b = append(b, byte(u))
			case mysql.MYSQL_TYPE_SHORT:
				b = binary.LittleEndian.AppendUint16(b, uint16(u))
			case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
				b = binary.LittleEndian.AppendUint32(b, uint32(u))
			default:
				b = binary.LittleEndian.AppendUint64(b, u)
			}
			continue
		}
		switch types[i] {
		case mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_FLOAT:
			f, ok := v.(float64)
			if !ok {
				s, _ := textValue(v)
				f, _ = strconv.ParseFloat(s, 64)
			}
			if types[i] == mysql.MYSQL_TYPE_FLOAT {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
			} else {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
			}
			continue
		}
		s, _ := textValue(v)
		switch types[i] {
		case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
			b = appendBinaryTime(b, s)
			continue
		case mysql.MYSQL_TYPE_TIME:
			b = appendBinaryClock(b, s)
			continue
		}
		b = appendLenEncString(b, s)
	}
	return b
}

// appendBinaryTime encodes a DATE or DATETIME text (2006-01-02[
// 15:04:05]) in the binary protocol: a length byte, then year (2 bytes),
// month, day, and hour, minute, second when the time is not midnight.
func appendBinaryTime(b []byte, s string) []byte {
	n := func(from, to int) int {
		if to > len(s) {
			return 0
		}
		v, _ := strconv.Atoi(s[from:to])
		return v
	}
	year, month, day := n(0, 4), n(5, 7), n(8, 10)
	hour, minute, second := n(11, 13), n(14, 16), n(17, 19)
	if len(s) > 20 && s[19] == '.' {
		// Microseconds (a parameter's): the 11-byte form.
		micro, _ := strconv.Atoi((s[20:] + "000000")[:6])
		b = append(b, 11)
		b = binary.LittleEndian.AppendUint16(b, uint16(year))
		b = append(b, byte(month), byte(day), byte(hour), byte(minute), byte(second))
		return binary.LittleEndian.AppendUint32(b, uint32(micro))
	}
	if hour == 0 && minute == 0 && second == 0 {
		b = append(b, 4)
		b = binary.LittleEndian.AppendUint16(b, uint16(year))
		return append(b, byte(month), byte(day))
	}
	b = append(b, 7)
	b = binary.LittleEndian.AppendUint16(b, uint16(year))
	return append(b, byte(month), byte(day), byte(hour), byte(minute), byte(second))
}

// appendBinaryClock encodes a TIME text ([-]h:mm:ss[.ffffff]) in the
// binary protocol: a length byte, the sign, days (4 bytes), hour, minute,
// second, and microseconds when there are any.
func appendBinaryClock(b []byte, s string) []byte {
	body, neg := strings.CutPrefix(s, "-")
	hms, frac, _ := strings.Cut(body, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return append(b, 0)
	}
	h, _ := strconv.Atoi(parts[0])
	m, _ := strconv.Atoi(parts[1])
	sec, _ := strconv.Atoi(parts[2])
	micro := 0
	if frac != "" {
		micro, _ = strconv.Atoi((frac + "000000")[:6])
	}
	if h == 0 && m == 0 && sec == 0 && micro == 0 {
		return append(b, 0)
	}
	size := byte(8)
	if micro != 0 {
		size = 12
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	b = append(b, size, sign)
	b = binary.LittleEndian.AppendUint32(b, uint32(h/24))
	b = append(b, byte(h%24), byte(m), byte(sec))
	if micro != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(micro))
	}
	return b
}

func appendLenEncInt(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	default:
		b = append(b, 0xfe)
		return binary.LittleEndian.AppendUint64(b, n)
	}
}

func appendLenEncString(b []byte, s string) []byte {
	b = appendLenEncInt(b, uint64(len(s)))
	return append(b, s...)
}

// fieldKey identifies a column definition packet.
type fieldKey struct {
	name, table, db string
	typ             uint8
	flag            uint16
}

// fieldCache keeps encoded column definitions: the same few result
// columns (LAST_INSERT_ID(), 1, @@max_allowed_packet) go out millions of
// times, and go-mysql sends a Field's Data as it is. Shared by all
// connections; bounded, past which fields are built per result.
type fieldCache struct {
	m sync.Map // fieldKey -> *mysql.Field
	n atomic.Int64
}

const maxCachedFields = 4096

func (fc *fieldCache) field(k fieldKey) *mysql.Field {
	if fc != nil {
		if f, ok := fc.m.Load(k); ok {
			return f.(*mysql.Field)
		}
	}
	f := &mysql.Field{
		Name:    []byte(k.name),
		OrgName: []byte(k.name),
		Table:   []byte(k.table),
		Schema:  []byte(k.db),
		Type:    k.typ,
		Flag:    k.flag,
	}
	if k.typ == mysql.MYSQL_TYPE_VAR_STRING || k.typ == mysql.MYSQL_TYPE_STRING {
		f.Charset = 45 // utf8mb4_general_ci
		f.ColumnLength = 1024
	} else {
		f.Charset = 63 // binary
		f.ColumnLength = 21
	}
	if fc != nil && fc.n.Load() < maxCachedFields {
		f.Data = f.Dump()
		if _, loaded := fc.m.LoadOrStore(k, f); !loaded {
			fc.n.Add(1)
		}
	}
	return f
}
