package model

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
	// KeyReserve (7, ticket/alloc/keys_reserve.go) takes a block for the leader.
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

// KeyReserve adds Delta to the integer in Keys[0], as KeyIncr, for the
// leader's block of INCRs (keyBlocks): its reply is the block's last
// value. A key with an expiry is not reserved (the reply is ReplyNil and
// nothing changes): a block must not outlive the key.
const KeyReserve KeyOp = 7
