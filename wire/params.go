package wire

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Binary-protocol parameters. go-mysql v1.16.0 (server/stmt.go) decodes
// a COM_STMT_EXECUTE's parameters into Go values: integers by their size
// and unsigned flag, FLOAT and DOUBLE as float32 and float64, and every
// other type, DATE, DATETIME, TIMESTAMP and TIME included, as a
// mysql.TypedBytes holding the bytes after the length prefix. For the
// temporal types those bytes are the binary protocol's fields (year as
// two bytes, month, day, ...), not text; argValue decodes them. Long data
// (COM_STMT_SEND_LONG_DATA) reaches here spliced into the execute packet
// by mysqlconn.Conn, as a string.

// argValue converts a COM_STMT_EXECUTE argument as go-mysql decodes it
// into a statement value of the parameter's MariaDB type. An argument
// that is no value of its type (a DATETIME of 5 bytes) is error 1210.
func argValue(a any) (model.Value, error) {
	switch x := a.(type) {
	case nil:
		return model.Value{Kind: model.ValNull}, nil
	case int8:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case int16:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case int32:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case int64:
		return model.Value{Kind: model.ValInt, Int: x}, nil
	case int:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case uint8:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case uint16:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case uint32:
		return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
	case uint64:
		if x <= 1<<63-1 {
			return model.Value{Kind: model.ValInt, Int: int64(x)}, nil
		}
		return model.Value{Kind: model.ValUint, Uint: x}, nil
	case float32:
		// MariaDB widens a FLOAT parameter to double (set_param_float).
		return rowengine.DoubleValue(float64(x)), nil
	case float64:
		return rowengine.DoubleValue(x), nil
	case mysql.TypedBytes:
		return typedArg(x)
	case []byte:
		return model.Value{Kind: model.ValString, Str: string(x)}, nil
	case string:
		return model.Value{Kind: model.ValString, Str: x}, nil
	default:
		return model.Value{}, badArg("a parameter of Go type %T", a)
	}
}

// typedArg converts a length-prefixed parameter.
func typedArg(x mysql.TypedBytes) (model.Value, error) {
	b := x.Bytes
	switch x.Type {
	case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL:
		// Text, as MariaDB's set_param_decimal reads it; the row engine
		// refuses one that is no number.
		return model.Value{Kind: model.ValDecimal, Str: string(b)}, nil
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		switch len(b) {
		case 0, 1, 2, 3:
			// MariaDB takes fewer than 4 bytes as the zero date.
			return rowengine.TemporalValue(rowengine.TemporalDate, false, 0, 0, 0, 0, 0, 0, 0), nil
		case 4, 7, 11:
			// A DATE parameter's time part, if any, is ignored (set_param_date).
			return rowengine.TemporalValue(rowengine.TemporalDate, false,
				int(binary.LittleEndian.Uint16(b)), int(b[2]), int(b[3]), 0, 0, 0, 0), nil
		}
		return model.Value{}, badArg("a DATE parameter of %d bytes", len(b))
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		var hour, minute, second, micro int
		switch len(b) {
		case 0, 1, 2, 3:
			return rowengine.TemporalValue(rowengine.TemporalDateTime, false, 0, 0, 0, 0, 0, 0, 0), nil
		case 4:
		case 11:
			micro = int(binary.LittleEndian.Uint32(b[7:]))
			fallthrough
		case 7:
			hour, minute, second = int(b[4]), int(b[5]), int(b[6])
		default:
			return model.Value{}, badArg("a DATETIME parameter of %d bytes", len(b))
		}
		return rowengine.TemporalValue(rowengine.TemporalDateTime, false,
			int(binary.LittleEndian.Uint16(b)), int(b[2]), int(b[3]), hour, minute, second, micro), nil
	case mysql.MYSQL_TYPE_TIME:
		switch len(b) {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			// MariaDB takes fewer than 8 bytes as 00:00:00.
			return rowengine.TemporalValue(rowengine.TemporalTime, false, 0, 0, 0, 0, 0, 0, 0), nil
		case 8, 12:
			var micro int
			if len(b) == 12 {
				micro = int(binary.LittleEndian.Uint32(b[8:]))
			}
			days := int(binary.LittleEndian.Uint32(b[1:]))
			if days > 34 { // beyond TIME's range (838:59:59) by far
				return model.Value{}, badArg("a TIME parameter of %d days", days)
			}
			return rowengine.TemporalValue(rowengine.TemporalTime, b[0] == 1, 0, 0, 0, days*24+int(b[5]), int(b[6]), int(b[7]), micro), nil
		}
		return model.Value{}, badArg("a TIME parameter of %d bytes", len(b))
	}
	// Strings, blobs, ENUM, SET, BIT, JSON, GEOMETRY: their bytes.
	return model.Value{Kind: model.ValString, Str: string(b)}, nil
}

func badArg(format string, args ...any) error {
	return mysqlerr.New(mysqlerr.CodeWrongArguments, "Incorrect arguments to mysqld_stmt_execute (%s)", fmt.Sprintf(format, args...))
}

// paramColumn is a parameter as a select item (SELECT ?): MariaDB's
// result type for the parameter's type, and the value as the result set
// code takes it (nil, int64, uint64, float64 or string).
func paramColumn(a any) (typ uint8, flag uint16, v any, err error) {
	switch x := a.(type) {
	case nil:
		return mysql.MYSQL_TYPE_NULL, 0, nil, nil
	case int8:
		return mysql.MYSQL_TYPE_TINY, 0, int64(x), nil
	case uint8:
		return mysql.MYSQL_TYPE_TINY, mysql.UNSIGNED_FLAG, int64(x), nil
	case int16:
		return mysql.MYSQL_TYPE_SHORT, 0, int64(x), nil
	case uint16:
		return mysql.MYSQL_TYPE_SHORT, mysql.UNSIGNED_FLAG, int64(x), nil
	case int32:
		return mysql.MYSQL_TYPE_LONG, 0, int64(x), nil
	case uint32:
		return mysql.MYSQL_TYPE_LONG, mysql.UNSIGNED_FLAG, int64(x), nil
	case int64:
		return mysql.MYSQL_TYPE_LONGLONG, 0, x, nil
	case uint64:
		return mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, x, nil
	case float32:
		return mysql.MYSQL_TYPE_FLOAT, 0, float64(x), nil
	case float64:
		return mysql.MYSQL_TYPE_DOUBLE, 0, x, nil
	case mysql.TypedBytes:
		tv, err := typedArg(x)
		if err != nil {
			return 0, 0, nil, err
		}
		switch x.Type {
		case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL:
			return mysql.MYSQL_TYPE_NEWDECIMAL, 0, tv.Str, nil
		case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME:
			if strings.HasPrefix(tv.Str, "!") {
				return 0, 0, nil, mysqlerr.NotSupported("a zero date, or a temporal parameter with fields out of range")
			}
			if tv.Kind != model.ValTemporal {
				return mysql.MYSQL_TYPE_VAR_STRING, 0, tv.Str, nil // February 30th: text
			}
			typ := map[byte]uint8{mysql.MYSQL_TYPE_DATE: mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE: mysql.MYSQL_TYPE_DATE,
				mysql.MYSQL_TYPE_TIME: mysql.MYSQL_TYPE_TIME}[x.Type]
			if typ == 0 {
				typ = mysql.MYSQL_TYPE_DATETIME
			}
			return typ, 0, tv.Str, nil
		case mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_VARCHAR:
			return mysql.MYSQL_TYPE_VAR_STRING, 0, tv.Str, nil
		case mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
			return mysql.MYSQL_TYPE_BLOB, 0, tv.Str, nil
		}
		return mysql.MYSQL_TYPE_STRING, 0, tv.Str, nil
	case []byte:
		return mysql.MYSQL_TYPE_STRING, 0, string(x), nil
	case string:
		return mysql.MYSQL_TYPE_STRING, 0, x, nil
	}
	return 0, 0, nil, badArg("a parameter of Go type %T", a)
}
