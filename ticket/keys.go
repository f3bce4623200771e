package ticket

import (
	"strconv"
	"time"
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

// OpKeys is a write to the key space: Command.Key says which.
const OpKeys Op = 30

// KeyDBs is the number of numbered key databases (Redis's default
// "databases 16"; SELECT 0-15).
const KeyDBs = 16

// KeyVal is one key's value.
type KeyVal struct {
	Val string
	// ExpireAt is the key's expiry time in Unix milliseconds; 0 for none.
	ExpireAt int64
}

// KeyEntry is one key of a database, as a backup carries it.
type KeyEntry struct {
	DB   uint8
	Name string
	KeyVal
}

// KeyStore is the key-space part of the replicated state (Store embeds
// it). Names are binary-safe strings.
type KeyStore interface {
	// Key returns a key's stored value, expired or not.
	Key(db uint8, name string) (KeyVal, bool, error)
	PutKey(db uint8, name string, v KeyVal) error
	DeleteKey(db uint8, name string) error
	// EachKey calls fn for every key of a database, in no set order,
	// until fn returns false. fn must not change the store.
	EachKey(db uint8, fn func(name string, v KeyVal) bool) error
	// EachExpiring is EachKey for the keys with an expiry, and their
	// ExpireAt: what the leader's sweep reads.
	EachExpiring(db uint8, fn func(name string, expireAt int64) bool) error
}

// KeyOp says what an OpKeys command does. The numbers are part of the
// replicated log format.
type KeyOp uint8

// Key operations.
const (
	// KeyIncr adds Delta to the integer in Keys[0] (INCR, INCRBY, DECR,
	// DECRBY): an absent key counts as 0, the expiry is kept.
	KeyIncr KeyOp = 1
	// KeySet stores Value in Keys[0] (SET and its options, GETSET).
	KeySet KeyOp = 2
	// KeyDel deletes Keys (DEL); the reply counts those that existed.
	KeyDel KeyOp = 3
	// KeyExpire sets Keys[0]'s expiry (EXPIRE, PEXPIRE, EXPIREAT,
	// PEXPIREAT with NX, XX, GT, LT).
	KeyExpire KeyOp = 4
	// KeyPersist removes Keys[0]'s expiry.
	KeyPersist KeyOp = 5
	// KeySweep deletes those of Keys whose expiry has passed at the
	// command's time: the leader's expiry through the log.
	KeySweep KeyOp = 6
	// KeyReserve (7, keys_reserve.go) takes a block for the leader.
	keyOpMax = KeyReserve
)

// KeyFlags are a key command's options.
type KeyFlags uint16

// Key command options.
const (
	KeyNX         KeyFlags = 1 << iota // SET NX, EXPIRE NX
	KeyXX                              // SET XX, EXPIRE XX
	KeyGT                              // EXPIRE GT
	KeyLT                              // EXPIRE LT
	KeyGet                             // SET GET, GETSET: reply with the old value
	KeyKeepTTL                         // SET KEEPTTL
	KeyExpires                         // TTL holds an expiry (SET EX/PX/EXAT/PXAT)
	KeyAbsolute                        // TTL is a Unix time in ms, not ms from the command's time
	keyFlagsKnown = KeyAbsolute<<1 - 1
)

// KeyCommand is an OpKeys command's part.
type KeyCommand struct {
	Op    KeyOp
	DB    uint8
	Flags KeyFlags
	Keys  []string
	Delta int64  // KeyIncr
	Value string // KeySet
	// TTL is the expiry of KeySet (with KeyExpires) and KeyExpire: ms
	// after the command's time, or with KeyAbsolute a Unix time in ms.
	TTL int64
}

// Valid reports whether Apply can run c; Propose and the decoder refuse
// others (a malformed command).
func (c *KeyCommand) Valid() bool {
	if c == nil || c.Op == 0 || c.Op > keyOpMax || c.DB >= KeyDBs || c.Flags&^keyFlagsKnown != 0 {
		return false
	}
	switch c.Op {
	case KeyDel, KeySweep:
		return len(c.Keys) > 0
	}
	return len(c.Keys) == 1
}

// ReplyKind says which field of a KeyReply is the answer.
type ReplyKind uint8

// Reply kinds. The numbers are part of the forwarding protocol.
const (
	ReplyOK   ReplyKind = 1 // +OK
	ReplyInt  ReplyKind = 2 // Int
	ReplyBulk ReplyKind = 3 // Str as a bulk string
	ReplyNil  ReplyKind = 4 // a null bulk string
	ReplyErr  ReplyKind = 5 // Str is the error line, "ERR ..."
)

// KeyReply is an OpKeys command's answer, identical on every replica.
type KeyReply struct {
	Kind ReplyKind
	Int  int64
	Str  string
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
func Live(s KeyStore, db uint8, name string, nowMS int64) (KeyVal, bool, error) {
	v, ok, err := s.Key(db, name)
	if err != nil || !ok {
		return KeyVal{}, false, err
	}
	if v.ExpireAt != 0 && v.ExpireAt <= nowMS {
		return KeyVal{}, false, nil
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
