package rowengine

import (
	"fmt"
	mb "math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Storing a value into a row table's column, as MariaDB 10.11 does. In
// strict mode (the default) a value that does not fit is an error; with
// INSERT IGNORE or without STRICT_TRANS_TABLES/STRICT_ALL_TABLES it is
// clamped or cut and the statement warns. Measured on MariaDB (see the
// differential test):
//
//	INT     ← 300 into TINYINT: 1264 / clamped to 127, warning 1264
//	INT     ← 5.5 or '5.5': 6 (rounded half away from zero, silently)
//	INT     ← '5abc': 1265 / 5, warning 1265; ' 7 ': 7, note 1265
//	INT     ← 'abc' or '': 1366 / 0, warning 1366
//	VARCHAR ← too long: 1406 / cut, warning 1265; only spaces cut: note 1265
//	CHAR    ← trailing spaces are removed
//	DATE    ← 20240101, '20240101', '2024-01-01'; a time part is cut, note 1265
//	DATE    ← 'not a date': 1292 (non-strict: refused, 1235)

// storeCtx is how a statement stores values: its mode, whether it is
// IGNORE, and where it reports.
type storeCtx struct {
	strict    bool // errors rather than warnings
	db, table string
	warns     *[]model.Warning
	// rd, when set, is the table stored into: a utf8mb3 column refuses
	// the characters beyond the BMP. Lookups (a key built from a literal)
	// leave it nil: MariaDB compares such a literal in utf8mb4.
	rd *model.RowsDef
	// older applies the rules of builds before RulesV11 (temporal
	// literals in the padded forms only).
	older bool
}

func (sc *storeCtx) warn(level string, code uint16, format string, args ...any) {
	e := mysqlerr.New(code, format, args...)
	*sc.warns = append(*sc.warns, model.Warning{Level: level, Code: code, Message: e.Message})
}

// fail is an error in strict mode, a warning otherwise (ok then says to
// go on with the clamped value).
func (sc *storeCtx) fail(e *model.Error) (ok bool, err *model.Error) {
	if sc.strict {
		return false, e
	}
	*sc.warns = append(*sc.warns, model.Warning{Level: "Warning", Code: e.Code, Message: e.Message})
	return true, nil
}

// store converts v into col's stored form. row is the 1-based row number
// MariaDB's messages quote.
func (sc *storeCtx) store(col *model.RowCol, v val, row int) (model.Datum, *model.Error) {
	if v.k == vNull {
		return model.Datum{Null: true}, nil
	}
	switch col.Kind {
	case model.ColInt:
		return sc.storeInt(col, v, row)
	case model.ColString:
		if v.dbl {
			// A double is written to fit the column (MariaDB's my_gcvt).
			f, _ := v.r.Float64()
			return sc.storeString(col, DoubleTextIn(f, min(col.Len, wideDouble)), row)
		}
		return sc.storeString(col, v.text(), row)
	case model.ColDate, model.ColDateTime, model.ColTimestamp:
		return sc.storeTime(col, v, row)
	}
	return model.Datum{}, mysqlerr.NotSupported(fmt.Sprintf("a value for column %s of kind %d", col.Name, col.Kind))
}

func (sc *storeCtx) storeInt(col *model.RowCol, v val, row int) (model.Datum, *model.Error) {
	var r *mb.Rat
	switch v.k {
	case vInt, vUint, vDec:
		r = v.rat()
	case vTime:
		r, _ = new(mb.Rat).SetString(v.t.Format("20060102150405"))
		if v.date {
			r, _ = new(mb.Rat).SetString(v.t.Format("20060102"))
		}
		if v.clock {
			r = clockNumber(v.s)
		}
	case vStr:
		prefix, rest := NumericPrefix(v.s)
		r = new(mb.Rat)
		if prefix != "" {
			r.SetString(prefix)
		}
		switch {
		case prefix == "":
			if ok, e := sc.fail(mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect integer value: '%s' for column %s at row %d", v.s, colName(sc.db, sc.table, col.Name), row)); !ok {
				return model.Datum{}, e
			}
		case strings.TrimRight(rest, " ") != "":
			if ok, e := sc.fail(mysqlerr.New(mysqlerr.CodeDataTruncated, "Data truncated for column '%s' at row %d", col.Name, row)); !ok {
				return model.Datum{}, e
			}
		case rest != "":
			sc.warn("Note", mysqlerr.CodeDataTruncated, "Data truncated for column '%s' at row %d", col.Name, row)
		}
	}
	n := roundHalfAway(r)
	if v.dbl {
		n = roundHalfEven(r)
	}
	lo, hi := new(mb.Int), new(mb.Int).SetUint64(col.Int.Max())
	if !col.Int.Unsigned {
		lo.Neg(hi)
		lo.Sub(lo, mb.NewInt(1))
	}
	switch {
	case n.Cmp(lo) < 0:
		if ok, e := sc.fail(mysqlerr.OutOfRange(col.Name, row)); !ok {
			return model.Datum{}, e
		}
		n = lo
	case n.Cmp(hi) > 0:
		if ok, e := sc.fail(mysqlerr.OutOfRange(col.Name, row)); !ok {
			return model.Datum{}, e
		}
		n = hi
	}
	return model.Datum{S: n.String()}, nil
}

// roundHalfAway rounds r to an integer, halves away from zero.
func roundHalfAway(r *mb.Rat) *mb.Int {
	if r.IsInt() {
		return new(mb.Int).Set(r.Num())
	}
	abs := new(mb.Rat).Abs(r)
	abs.Add(abs, mb.NewRat(1, 2))
	q := new(mb.Int).Quo(abs.Num(), abs.Denom())
	if r.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

func (sc *storeCtx) storeString(col *model.RowCol, s string, row int) (model.Datum, *model.Error) {
	if sc.rd != nil && sc.rd.CollOf(col).MB3() {
		if at := wideAt(s); at >= 0 {
			e := mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect string value: '%s' for column %s at row %d", printable(s[at:]), colName(sc.db, sc.table, col.Name), row)
			if ok, e := sc.fail(e); !ok {
				return model.Datum{}, e
			}
			s = narrow(s)
		}
	}
	if utf8.RuneCountInString(s) > col.Len {
		cut := s
		if i := runeOffset(s, col.Len); i >= 0 {
			cut = s[:i]
		}
		if strings.TrimRight(s[len(cut):], " ") == "" {
			sc.warn("Note", mysqlerr.CodeDataTruncated, "Data truncated for column '%s' at row %d", col.Name, row)
		} else {
			e := mysqlerr.New(mysqlerr.CodeDataTooLong, "Data too long for column '%s' at row %d", col.Name, row)
			if sc.strict {
				return model.Datum{}, e
			}
			sc.warn("Warning", mysqlerr.CodeDataTruncated, "Data truncated for column '%s' at row %d", col.Name, row)
		}
		s = cut
	}
	if strings.HasPrefix(col.Type, "char") {
		// CHAR drops trailing spaces on store (no PAD_CHAR_TO_FULL_LENGTH).
		s = strings.TrimRight(s, " ")
	}
	return model.Datum{S: s}, nil
}

// runeOffset is the byte offset of the n-th rune of s, or -1.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return -1
}

func (sc *storeCtx) storeTime(col *model.RowCol, v val, row int) (model.Datum, *model.Error) {
	var t time.Time
	ok := true
	hasTime := true
	switch v.k {
	case vTime:
		t, hasTime = v.t, !v.date
	case vDec:
		// A number is a date by its digits (20240102); its fraction would
		// be microseconds, which ticketd does not take this way.
		if !v.r.IsInt() {
			return model.Datum{}, mysqlerr.NotSupported("a number with a fraction as a date")
		}
		v = val{k: vStr, s: v.r.Num().String()}
		fallthrough
	case vStr, vInt, vUint:
		if zeroDate(v.text()) || (v.k != vStr && v.text() == "0") {
			// MariaDB stores these, and the number 0 as '0000-00-00'
			// (without NO_ZERO_DATE/NO_ZERO_IN_DATE); ticketd holds no
			// zero date.
			return model.Datum{}, mysqlerr.NotSupported("zero dates")
		}
		if sc.older {
			t, ok = parseTime(v.text())
		} else {
			var e *model.Error
			if t, ok, e = readTimeVal(v); e != nil {
				return model.Datum{}, e
			}
		}
		hasTime = ok && (t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0)
	default:
		ok = false
	}
	if !ok || (t.Year() < 1000 && !v.now) {
		what := "datetime"
		if col.Kind == model.ColDate {
			what = "date"
		}
		e := mysqlerr.New(mysqlerr.CodeTruncatedWrongValue, "Incorrect %s value: '%s' for column %s at row %d", what, v.text(), colName(sc.db, sc.table, col.Name), row)
		if sc.strict {
			return model.Datum{}, e
		}
		// MariaDB stores a zero date here; ticketd holds none.
		return model.Datum{}, mysqlerr.NotSupported("zero dates (an invalid date without strict mode)")
	}
	if col.Kind == model.ColDate {
		if hasTime && (t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0) {
			sc.warn("Note", mysqlerr.CodeDataTruncated, "Data truncated for column '%s' at row %d", col.Name, row)
		}
		return model.Datum{S: t.Format(dateFormat)}, nil
	}
	// DATETIME(0) drops fractions of a second (TIME_ROUND_FRACTIONAL is off).
	t = t.Truncate(time.Second)
	// A TIMESTAMP holds 1970-01-01 00:00:01 UTC on (builds before
	// RulesV11 took 00:00:00, which MariaDB refuses).
	minStamp := time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)
	if sc.older {
		minStamp = minStamp.Add(-time.Second)
	}
	if col.Kind == model.ColTimestamp && !v.now && (t.Before(minStamp) || t.After(time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC))) {
		e := mysqlerr.New(mysqlerr.CodeTruncatedWrongValue, "Incorrect datetime value: '%s' for column %s at row %d", v.text(), colName(sc.db, sc.table, col.Name), row)
		if sc.strict {
			return model.Datum{}, e
		}
		return model.Datum{}, mysqlerr.NotSupported("zero dates (an invalid date without strict mode)")
	}
	return model.Datum{S: t.Format(dateTimeFormat)}, nil
}

// implicitDefault is the value MariaDB stores for NULL in a NOT NULL
// column outside strict mode: 0, ” or the current time.
func implicitDefault(col *model.RowCol, now time.Time) (model.Datum, bool) {
	switch col.Kind {
	case model.ColInt:
		return model.Datum{S: "0"}, true
	case model.ColString:
		return model.Datum{S: ""}, true
	case model.ColTimestamp:
		return model.Datum{S: now.UTC().Format(dateTimeFormat)}, true
	}
	return model.Datum{}, false
}

// zeroDate reports a date with a zero year, month or day part
// ('0000-00-00', '2024-00-10', 20240100), which MariaDB accepts outside
// NO_ZERO_DATE and NO_ZERO_IN_DATE and time.Parse does not.
func zeroDate(s string) bool {
	s = strings.TrimSpace(s)
	var y, m, d string
	switch {
	case len(s) >= 10 && s[4] == '-' && s[7] == '-':
		y, m, d = s[:4], s[5:7], s[8:10]
	case len(s) >= 8 && strings.Trim(s[:8], "0123456789") == "":
		y, m, d = s[:4], s[4:6], s[6:8]
	default:
		return false
	}
	return y == "0000" || m == "00" || d == "00"
}

// wideAt is the byte offset of s's first character beyond the BMP, which
// utf8mb3 does not hold, or -1.
func wideAt(s string) int {
	for i, r := range s {
		if r > 0xFFFF {
			return i
		}
	}
	return -1
}

// narrow is s with each character beyond the BMP replaced by '?', as
// MariaDB converts it into utf8mb3 outside strict mode.
func narrow(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// printable is how MariaDB quotes the rest of a string from a character
// it could not store (convert_to_printable): at most 6 bytes, those of
// printable ASCII as they are, the others as \xHH, and "..." when more
// followed.
func printable(s string) string {
	const most = 6
	var b strings.Builder
	for i := 0; i < len(s) && i < most; i++ {
		if c := s[i]; c >= 0x20 && c <= 0x7F {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02X", c)
		}
	}
	if len(s) > most {
		b.WriteString("...")
	}
	return b.String()
}
