package ticket

import (
	"strconv"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Names of the replicated global variables.
const (
	VarIncrement = "auto_increment_increment"
	VarOffset    = "auto_increment_offset"
)

// Session is one connection's view of ticket state: LAST_INSERT_ID() and
// the session values of auto_increment_increment/offset. It belongs to a
// single connection and is not safe for concurrent use.
type Session struct {
	LastInsertID uint64
	Increment    uint64
	Offset       uint64
}

// NewSession starts a session with the server's global settings.
func NewSession(globalInc, globalOff uint64) *Session {
	return &Session{Increment: orOne(globalInc), Offset: orOne(globalOff)}
}

func orOne(v uint64) uint64 {
	if v == 0 {
		return 1
	}
	return v
}

// Observe records a statement's effect on LAST_INSERT_ID().
func (s *Session) Observe(r *Result) {
	if r.SetLastID {
		s.LastInsertID = r.LastID
	}
}

// ClampAutoIncVar applies MySQL's range for auto_increment_increment and
// auto_increment_offset (1..65535). Out-of-range values are clamped, with
// the warning MySQL gives (1292) returned as w.
func ClampAutoIncVar(name string, v int64, text string) (uint64, *Warning) {
	c := v
	if c < 1 {
		c = 1
	}
	if c > 65535 {
		c = 65535
	}
	if c == v {
		return uint64(v), nil
	}
	if text == "" {
		text = strconv.FormatInt(v, 10)
	}
	return uint64(c), &Warning{Level: "Warning", Code: mysqlerr.CodeTruncatedWrongValue,
		Message: "Truncated incorrect " + name + " value: '" + text + "'"}
}
