package wire

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// The session settings a row command carries (rowsCommand): sql_mode,
// checked against the modes ticketd honours, and SET timestamp, the
// pinned NOW() of the session's statements.

// defaultMode is MariaDB's default sql_mode, the one ticket tables apply.
const defaultMode = sqlMode("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION")

// mode is the session's sql_mode as a set of names.
type sqlMode string

func (m sqlMode) has(name string) bool {
	for _, f := range strings.Split(string(m), ",") {
		if f == name {
			return true
		}
	}
	return false
}

func (s *session) mode() sqlMode {
	if v, ok := s.setVars["sql_mode"].(string); ok {
		return sqlMode(v)
	}
	v, _ := s.vars["sql_mode"].value.(string)
	return sqlMode(v)
}

// sqlModes are MariaDB's sql_mode names in the order it lists them, and
// whether ticketd honours each: a mode that would change an answer
// ticketd gives differently is refused with 1235 rather than shown and
// ignored. Honoured trivially: ERROR_FOR_DIVISION_BY_ZERO (ticketd has
// no division), NO_AUTO_CREATE_USER (no GRANT), NO_ZERO_DATE and
// NO_ZERO_IN_DATE (ticketd stores no zero date in any mode), NO_DIR_IN_CREATE
// (no DATA DIRECTORY), ONLY_FULL_GROUP_BY (no GROUP BY, and aggregates
// beside other columns are refused).
var sqlModes = []struct {
	name string
	ok   bool
}{
	{"REAL_AS_FLOAT", false}, {"PIPES_AS_CONCAT", false}, {"ANSI_QUOTES", false}, {"IGNORE_SPACE", false},
	{"IGNORE_BAD_TABLE_OPTIONS", false}, {"ONLY_FULL_GROUP_BY", true}, {"NO_UNSIGNED_SUBTRACTION", false},
	{"NO_DIR_IN_CREATE", true}, {"POSTGRESQL", false}, {"ORACLE", false}, {"MSSQL", false}, {"DB2", false},
	{"MAXDB", false}, {"NO_KEY_OPTIONS", false}, {"NO_TABLE_OPTIONS", false}, {"NO_FIELD_OPTIONS", false},
	{"MYSQL323", false}, {"MYSQL40", false}, {"ANSI", false}, {"NO_AUTO_VALUE_ON_ZERO", true},
	{"NO_BACKSLASH_ESCAPES", false}, {"STRICT_TRANS_TABLES", true}, {"STRICT_ALL_TABLES", true},
	{"NO_ZERO_IN_DATE", true}, {"NO_ZERO_DATE", true}, {"ALLOW_INVALID_DATES", false},
	{"ERROR_FOR_DIVISION_BY_ZERO", true}, {"TRADITIONAL", true}, {"NO_AUTO_CREATE_USER", true},
	{"HIGH_NOT_PRECEDENCE", false}, {"NO_ENGINE_SUBSTITUTION", true}, {"PAD_CHAR_TO_FULL_LENGTH", false},
	{"EMPTY_STRING_IS_NULL", false}, {"SIMULTANEOUS_ASSIGNMENT", false}, {"TIME_ROUND_FRACTIONAL", false},
}

// traditional is what TRADITIONAL stands for in MariaDB 10.11.
var traditional = []string{"STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
	"ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL", "NO_AUTO_CREATE_USER", "NO_ENGINE_SUBSTITUTION"}

// normalizeMode turns a SET sql_mode value into MariaDB's canonical
// list: known names, upper case, in MariaDB's order, TRADITIONAL
// expanded. An unknown name is 1231; a mode ticketd does not honour 1235.
func normalizeMode(v string) (string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(v, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		known := false
		for _, m := range sqlModes {
			if m.name == f {
				known = true
				if !m.ok {
					return "", unsupported("sql_mode " + f)
				}
			}
		}
		if !known {
			return "", mysqlerr.New(mysqlerr.CodeWrongValueForVar, "Variable 'sql_mode' can't be set to the value of '%s'", f)
		}
		want[f] = true
		if f == "TRADITIONAL" {
			for _, t := range traditional {
				want[t] = true
			}
		}
	}
	var out []string
	for _, m := range sqlModes {
		if want[m.name] {
			out = append(out, m.name)
		}
	}
	return strings.Join(out, ","), nil
}

// now is NOW() for the session's statements that are not replicated:
// SET timestamp's value while it is set, else the local clock or the
// replicated clock, whichever is later (Config.Clock).
func (s *session) now() time.Time {
	if s.pinned != 0 {
		return time.UnixMicro(s.pinned).UTC()
	}
	now := time.Now().UTC()
	if s.srv.cfg.Clock != nil {
		if c := s.srv.cfg.Clock(); c.After(now) {
			return c
		}
	}
	return now
}

// setTimestamp is SET timestamp = n (seconds since the epoch, with up to
// six fraction digits); 0 or DEFAULT goes back to the clock.
func (s *session) setTimestamp(val any, isDefault bool) (func() error, error) {
	if isDefault {
		return func() error { s.pinned = 0; return nil }, nil
	}
	var r *big.Rat
	switch x := val.(type) {
	case int64:
		r = new(big.Rat).SetInt64(x)
	case uint64:
		r = new(big.Rat).SetUint64(x)
	case float64:
		r = new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, errWrongType("timestamp")
		}
	case string:
		var ok bool
		if r, ok = new(big.Rat).SetString(strings.TrimSpace(x)); !ok {
			return nil, errWrongType("timestamp")
		}
	default:
		return nil, errWrongType("timestamp")
	}
	micro := new(big.Rat).Mul(r, big.NewRat(1e6, 1))
	us := new(big.Int).Quo(micro.Num(), micro.Denom())
	// MariaDB takes 1 to 2147483647 (2038-01-19); 0 resets.
	if us.Sign() < 0 || !us.IsInt64() || us.Int64() > math.MaxInt32*1e6 {
		t, _ := textValue(val)
		return nil, mysqlerr.New(mysqlerr.CodeWrongValueForVar, "Variable 'timestamp' can't be set to the value of '%s'", t)
	}
	n := us.Int64()
	return func() error { s.pinned = n; return nil }, nil
}

// timestampVar is @@timestamp: the pinned time or the clock, in seconds
// with six fraction digits, as MariaDB's text protocol shows it.
func (s *session) timestampVar() string {
	us := s.pinned
	if us == 0 {
		us = time.Now().UnixMicro()
	}
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}
