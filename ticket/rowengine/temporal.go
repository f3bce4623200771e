package rowengine

import (
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Temporal literals as MariaDB 10.11 reads them (str_to_datetime and
// number_to_datetime), for the forms ticketd is sure of; each was
// checked against the server (integration/differential_answers_test.go).
// Builds before RulesV11 read only the padded forms (parseTime), and a
// command applied under the older rules still does.

// timeRead is what readTime made of a literal.
type timeRead uint8

const (
	timeOK      timeRead = iota
	timeInvalid          // MariaDB's 1292 (a warning in a comparison)
	timeUnsure           // a form ticketd does not read: refused with 1235
	// timeCut is a whole date followed by a letter ('2024-1-5x'): a
	// comparison reads the date, with a warning; a store is 1292.
	timeCut
)

// readTime reads a date or datetime string: digits only (YYMMDD,
// YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss), or fields of 1 to 4 (year)
// and 1 or 2 digits between single punctuation characters, the date and
// the time apart by spaces or a 'T', the time's trailing fields optional,
// up to 6 digits of a fraction (cut, as DATETIME(0) stores it); a two-
// digit year is 20YY below 70, 19YY from 70. Leading and trailing spaces
// are skipped. A string that starts with no digit, a field out of range
// (month 13, February 30, hour 24) or text after a whole date is invalid;
// anything else not in these forms (a month or day 0, a year below 1000,
// more fraction digits, other digit counts) is unsure.
func readTime(s string) (time.Time, timeRead) {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	s = s[i:j]
	if s == "" || !isDigit(s[0]) {
		return time.Time{}, timeInvalid
	}
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n == len(s) {
		return digitTime(s)
	}
	var f [7]int // year, month, day, hour, minute, second, nanoseconds
	f[0] = atoi(s[:n])
	if n > 4 {
		return time.Time{}, timeUnsure
	}
	yearDigits := n
	p := n
	field := func(k int) timeRead {
		// One punctuation character, then 1 or 2 digits; two in a row
		// ('2024--01--05') are invalid, and so is a date of fewer than
		// three fields ('2.5', '2024-01').
		if p >= len(s) {
			if k <= 2 {
				return timeInvalid
			}
			return timeUnsure
		}
		if !isPunct(s[p]) {
			return timeUnsure
		}
		p++
		q := p
		for q < len(s) && isDigit(s[q]) && q-p < 2 {
			q++
		}
		switch {
		case q == p && q < len(s) && isPunct(s[q]):
			return timeInvalid
		case q == p || q < len(s) && isDigit(s[q]):
			return timeUnsure
		}
		f[k], p = atoi(s[p:q]), q
		return timeOK
	}
	for k := 1; k <= 2; k++ {
		if r := field(k); r != timeOK {
			return time.Time{}, r
		}
	}
	if yearDigits == 2 {
		f[0] = twoDigitYear(f[0])
	}
	if p < len(s) {
		// The time: after spaces or a 'T'; a letter after a whole date
		// ('2024-1-5x') is invalid.
		q := p
		for q < len(s) && s[q] == ' ' {
			q++
		}
		if q == p && s[q] == 'T' {
			q++
		}
		if q == p && s[q] != 'T' && (s[q]|0x20 >= 'a' && s[q]|0x20 <= 'z') {
			if t, r := fieldsTime(f); r != timeOK {
				return t, r
			}
			t, _ := fieldsTime(f)
			return t, timeCut
		}
		if q == p || q == len(s) || !isDigit(s[q]) {
			return time.Time{}, timeUnsure
		}
		p = q
		for q < len(s) && isDigit(s[q]) && q-p < 2 {
			q++
		}
		if q < len(s) && isDigit(s[q]) {
			return time.Time{}, timeUnsure
		}
		f[3], p = atoi(s[p:q]), q
		k := 4
		for ; k <= 5 && p < len(s) && s[p] != '.'; k++ {
			if r := field(k); r != timeOK {
				return time.Time{}, r
			}
		}
		if p < len(s) && s[p] == '.' && k <= 5 {
			return time.Time{}, timeUnsure // '.' before the seconds: a delimiter or a fraction
		}
		if p < len(s) && s[p] == '.' {
			q := p + 1
			for q < len(s) && isDigit(s[q]) {
				q++
			}
			if q == p+1 || q-p-1 > 6 {
				return time.Time{}, timeUnsure
			}
			frac := s[p+1 : q]
			f[6] = atoi(frac)
			for range 9 - len(frac) {
				f[6] *= 10
			}
			p = q
		}
		if p < len(s) {
			return time.Time{}, timeUnsure
		}
	}
	return fieldsTime(f)
}

// digitTime reads a string of digits by its length, as MariaDB does.
func digitTime(s string) (time.Time, timeRead) {
	var f [7]int
	switch len(s) {
	case 6, 12:
		f[0] = twoDigitYear(atoi(s[:2]))
		s = s[2:]
	case 8, 14:
		f[0] = atoi(s[:4])
		s = s[4:]
	default:
		return time.Time{}, timeUnsure
	}
	for k := 1; len(s) >= 2; k++ {
		f[k], s = atoi(s[:2]), s[2:]
	}
	return fieldsTime(f)
}

// numberTime reads an integer as a date or datetime (number_to_datetime):
// YYMMDD, YYYYMMDD, YYMMDDhhmmss or YYYYMMDDhhmmss by its size; a number
// between those sizes is invalid.
func numberTime(n uint64) (time.Time, timeRead) {
	switch {
	case n == 0:
		return time.Time{}, timeUnsure // the zero date, which ticketd holds none of
	case n < 101:
		return time.Time{}, timeInvalid
	case n <= 691231:
		n = (n + 20000000) * 1000000
	case n < 700101:
		return time.Time{}, timeInvalid
	case n <= 991231:
		n = (n + 19000000) * 1000000
	case n < 10000101:
		return time.Time{}, timeInvalid
	case n <= 99991231:
		n *= 1000000
	case n < 101000000:
		return time.Time{}, timeInvalid
	case n <= 691231235959:
		n += 20000000000000
	case n < 700101000000:
		return time.Time{}, timeInvalid
	case n <= 991231235959:
		n += 19000000000000
	case n < 10000101000000:
		return time.Time{}, timeInvalid
	case n > 99991231235959:
		return time.Time{}, timeInvalid
	}
	var f [7]int
	f[0] = int(n / 10000000000)
	f[1] = int(n / 100000000 % 100)
	f[2] = int(n / 1000000 % 100)
	f[3] = int(n / 10000 % 100)
	f[4] = int(n / 100 % 100)
	f[5] = int(n % 100)
	return fieldsTime(f)
}

// fieldsTime checks the fields and makes the time.
func fieldsTime(f [7]int) (time.Time, timeRead) {
	switch {
	case f[1] > 12 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59:
		return time.Time{}, timeInvalid
	case f[1] == 0 || f[2] == 0 || f[0] < 1000:
		// A zero in a date (MariaDB stores it without NO_ZERO_IN_DATE)
		// and years before 1000: ticketd holds neither.
		return time.Time{}, timeUnsure
	case f[2] > daysIn(time.Month(f[1]), f[0]):
		return time.Time{}, timeInvalid
	}
	return time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6], time.UTC), timeOK
}

func twoDigitYear(y int) int {
	if y < 70 {
		return 2000 + y
	}
	return 1900 + y
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isPunct is C's ispunct in ASCII: printable, not a letter, digit or
// space.
func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isDigit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')
}

// readTimeVal reads v, a string or an integer, as RulesV11 stores a
// temporal literal: ok is false for what MariaDB finds no date in; a form
// ticketd does not read is 1235.
func readTimeVal(v val) (time.Time, bool, *model.Error) {
	t, cut, ok, e := readTimeCut(v)
	if cut {
		return time.Time{}, false, nil
	}
	return t, ok, e
}

// readTimeCut is readTimeVal that also reports a date followed by text
// (cut), which a comparison reads with a warning.
func readTimeCut(v val) (t time.Time, cut, ok bool, e *model.Error) {
	var r timeRead
	switch v.k {
	case vInt:
		if v.i < 0 {
			return time.Time{}, false, false, nil
		}
		t, r = numberTime(uint64(v.i))
	case vUint:
		t, r = numberTime(v.u)
	default:
		t, r = readTime(v.text())
	}
	switch r {
	case timeOK:
		return t, false, true, nil
	case timeCut:
		return t, true, true, nil
	case timeInvalid:
		return time.Time{}, false, false, nil
	}
	text := v.text()
	if len(text) > 40 {
		text = text[:40] + "..."
	}
	return time.Time{}, false, false, mysqlerr.NotSupported("the date or datetime form of '" + text + "'")
}

// toTime is v as a DATETIME for a comparison with a temporal value; a
// string or number that is no date warns (1292) and is the zero date (ok
// false under the rules before RulesV11: no match).
func (env *evalEnv) toTime(v val, x *model.RowExpr) (time.Time, bool, *model.Error) {
	switch v.k {
	case vTime:
		return v.t, true, nil
	case vStr:
		if x.Op == model.EVal && env.lit != nil {
			if c, ok := env.lit[x]; ok && c.k == vTime {
				return c.t, true, nil
			}
		}
		if x.Op == model.EVal && env.bad[x] {
			return time.Time{}, !env.older, nil
		}
		t, ok, e := env.parseTime(v)
		if e != nil && x.Op != model.EVal {
			// A column's value in a form ticketd does not read: the
			// statement is not refused for a row's data; it compares as
			// what is no date (MariaDB finds none in most such strings:
			// '2.5e', '1e20').
			e = nil
		}
		if e != nil {
			return time.Time{}, false, e
		}
		if !ok {
			// A literal warns once per statement, a column once per row.
			env.warn("Warning", mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect datetime value: '%s'", v.s)
			if x.Op == model.EVal && env.lit != nil {
				if env.bad == nil {
					env.bad = map[*model.RowExpr]bool{}
				}
				env.bad[x] = true
			}
			// MariaDB compares what is no date as the zero date, below
			// every date (builds before RulesV11: as NULL).
			return time.Time{}, !env.older, nil
		}
		if x.Op == model.EVal && env.lit != nil {
			env.lit[x] = val{k: vTime, t: t}
		}
		return t, true, nil
	case vInt, vUint:
		if v.k == vInt && v.i == 0 {
			// 0 is the zero date, below every date, without a warning.
			return time.Time{}, true, nil
		}
		t, ok, e := env.parseTime(v)
		if e != nil {
			return time.Time{}, false, e
		}
		if !ok {
			env.warn("Warning", mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect datetime value: '%s'", v.text())
			return time.Time{}, !env.older, nil
		}
		return t, ok, nil
	}
	t, ok := parseTime(v.text())
	return t, ok, nil
}

// parseTime reads v (a string or an integer) as a date or datetime, by
// the rules the statement applies under: ok is false for what MariaDB
// finds no date in, and a form ticketd does not read is 1235; a date
// followed by text is that date, with a warning.
func (env *evalEnv) parseTime(v val) (time.Time, bool, *model.Error) {
	if env.older {
		t, ok := parseTime(v.text())
		return t, ok, nil
	}
	t, cut, ok, e := readTimeCut(v)
	if cut {
		// MariaDB reads the date before the text, and warns.
		env.warn("Warning", mysqlerr.CodeTruncatedWrongValue, "Truncated incorrect datetime value: '%s'", v.text())
	}
	return t, ok, e
}

// timeLayouts are the forms of a date or datetime ticketd reads.
var timeLayouts = []string{
	dateTimeFormat + ".999999999", "2006-01-02T15:04:05.999999999", dateTimeFormat,
	"2006-01-02 15:04", dateFormat, "20060102150405", "20060102",
}

// parseTime reads a DATE or DATETIME literal.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := parseCanonicalTime(s); ok {
		return t, true
	}
	for _, f := range timeLayouts {
		if t, err := time.Parse(f, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseCanonicalTime reads the canonical forms, 2006-01-02 and
// 2006-01-02 15:04:05 (every stored value, and what clients send), as
// time.Parse does with those layouts, without trying the others first: a
// failed time.Parse builds an error, and a replay of a million-row INSERT
// log spent a fifth of its time there. It reports false for anything
// else, invalid dates included, which parseTime's layouts then decide.
func parseCanonicalTime(s string) (time.Time, bool) {
	if len(s) != len(dateFormat) && len(s) != len(dateTimeFormat) {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	if s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	y, m, d := num(0, 4), num(5, 2), num(8, 2)
	if y < 0 || m < 1 || m > 12 || d < 1 || d > daysIn(time.Month(m), y) {
		return time.Time{}, false
	}
	var h, mi, sec int
	if len(s) == len(dateTimeFormat) {
		if s[10] != ' ' || s[13] != ':' || s[16] != ':' {
			return time.Time{}, false
		}
		h, mi, sec = num(11, 2), num(14, 2), num(17, 2)
		if h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
			return time.Time{}, false
		}
	}
	return time.Date(y, time.Month(m), d, h, mi, sec, 0, time.UTC), true
}

// daysIn is the number of days of month m in year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
