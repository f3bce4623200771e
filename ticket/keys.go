package ticket

import (
	"strconv"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// Keys: the Redis key space (DESIGN §4e). A key is a string value in one
// of KeyDBs numbered databases, beside the SQL databases and tables in
// the same replicated state: every write is one OpKeys command through
// Raft, and its reply is computed by Apply on the committed state, so
// that an INCR's answer is never given twice, whichever node leads.
//
// Expiry runs on the replicated clock: a key whose ExpireAt is at or
// before a command's time (Command.Now, stamped by the leader and never
// going back) is absent for that command, and a write that meets it
// deletes it. The leader deletes the others through the log too
// (KeySweep); readers treat a key whose time has passed by their own
// clock as absent meanwhile (Live).

// KeyStore is the key-space part of the replicated state (Store embeds
// it). Names are binary-safe strings.
type KeyStore interface {
	// Key returns a key's stored value, expired or not.
	Key(db uint8, name string) (model.KeyVal, bool, error)
	PutKey(db uint8, name string, v model.KeyVal) error
	DeleteKey(db uint8, name string) error
	// EachKey calls fn for every key of a database, in no set order,
	// until fn returns false. fn must not change the store.
	EachKey(db uint8, fn func(name string, v model.KeyVal) bool) error
	// EachExpiring is EachKey for the keys with an expiry, and their
	// ExpireAt: what the leader's sweep reads.
	EachExpiring(db uint8, fn func(name string, expireAt int64) bool) error
}

// Redis 7's error lines for the key commands.
const (
	ErrNotInteger = "ERR value is not an integer or out of range"
	ErrOverflow   = "ERR increment or decrement would overflow"
)

// ParseInt reads a string as Redis's string2ll does: an optional '-', no
// '+', no spaces, no leading zeros ("-0" neither), within int64. It is
// what INCR accepts as a stored value and every command as an integer
// argument.
func ParseInt(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// Live reports a key's value when it exists and has not expired at
// nowMS (Unix milliseconds).
func Live(s KeyStore, db uint8, name string, nowMS int64) (model.KeyVal, bool, error) {
	v, ok, err := s.Key(db, name)
	if err != nil || !ok {
		return model.KeyVal{}, false, err
	}
	if v.ExpireAt != 0 && v.ExpireAt <= nowMS {
		return model.KeyVal{}, false, nil
	}
	return v, true, nil
}

// KeyNow is the time reads judge expiry by: the later of the local clock
// and the replicated clock as this node applied it (zero when unknown),
// so that a reader never sees a key a write before it found expired.
func KeyNow(replicated time.Time) int64 {
	now := time.Now().UnixMilli()
	if r := replicated.UnixMilli(); !replicated.IsZero() && r > now {
		return r
	}
	return now
}
