package ticket

import (
	"math"
	"strconv"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// applyKeys runs an OpKeys command at the command's time. Statement
// errors are Redis error lines in the reply; nothing changes with them.
func applyKeys(s Store, c *Command) (Result, error) {
	k := c.Key
	if !k.Valid() {
		return Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "malformed key command")}, nil
	}
	now := c.Now.UnixMilli()
	var (
		r   KeyReply
		err error
	)
	switch k.Op {
	case KeyIncr:
		r, err = keyIncr(s, k, now)
	case KeySet:
		r, err = keySet(s, k, now)
	case KeyDel:
		r, err = keyDel(s, k, now)
	case KeyExpire:
		r, err = keyExpire(s, k, now)
	case KeyPersist:
		r, err = keyPersist(s, k, now)
	case KeySweep:
		r, err = keySweep(s, k, now)
	case KeyReserve:
		r, err = keyReserve(s, k, now)
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Key: &r}, nil
}

// live is Live for a write: an expired key met by it is deleted.
func live(s Store, db uint8, name string, now int64) (KeyVal, bool, error) {
	v, ok, err := s.Key(db, name)
	if err != nil || !ok {
		return KeyVal{}, false, err
	}
	if v.ExpireAt != 0 && v.ExpireAt <= now {
		return KeyVal{}, false, s.DeleteKey(db, name)
	}
	return v, true, nil
}

func errReply(line string) KeyReply { return KeyReply{Kind: ReplyErr, Str: line} }

func intReply(n int64) KeyReply { return KeyReply{Kind: ReplyInt, Int: n} }

func keyIncr(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	v, ok, err := live(s, k.DB, k.Keys[0], now)
	if err != nil {
		return KeyReply{}, err
	}
	var cur int64
	if ok {
		if cur, ok = ParseInt(v.Val); !ok {
			return errReply(ErrNotInteger), nil
		}
	}
	if (k.Delta < 0 && cur < math.MinInt64-k.Delta) || (k.Delta > 0 && cur > math.MaxInt64-k.Delta) {
		return errReply(ErrOverflow), nil
	}
	cur += k.Delta
	v.Val = formatInt(cur)
	return intReply(cur), s.PutKey(k.DB, k.Keys[0], v)
}

// expireAt is the absolute expiry k asks for, saturating.
func expireAt(k *KeyCommand, now int64) int64 {
	if k.Flags&KeyAbsolute != 0 {
		return k.TTL
	}
	if k.TTL > 0 && now > math.MaxInt64-k.TTL {
		return math.MaxInt64
	}
	return now + k.TTL
}

// keySet is SET as Redis 7's setGenericCommand: with GET the reply is the
// old value whether or not NX/XX let the write happen; an expiry already
// past deletes the key (and still answers OK).
func keySet(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	name := k.Keys[0]
	old, exists, err := live(s, k.DB, name, now)
	if err != nil {
		return KeyReply{}, err
	}
	reply := KeyReply{Kind: ReplyOK}
	if k.Flags&KeyGet != 0 {
		reply = KeyReply{Kind: ReplyNil}
		if exists {
			reply = KeyReply{Kind: ReplyBulk, Str: old.Val}
		}
	}
	if (k.Flags&KeyNX != 0 && exists) || (k.Flags&KeyXX != 0 && !exists) {
		if k.Flags&KeyGet == 0 {
			reply = KeyReply{Kind: ReplyNil}
		}
		return reply, nil
	}
	v := KeyVal{Val: k.Value}
	switch {
	case k.Flags&KeyExpires != 0:
		v.ExpireAt = expireAt(k, now)
		if v.ExpireAt <= now {
			return reply, s.DeleteKey(k.DB, name)
		}
	case k.Flags&KeyKeepTTL != 0 && exists:
		v.ExpireAt = old.ExpireAt
	}
	return reply, s.PutKey(k.DB, name, v)
}

func keyDel(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	var n int64
	for _, name := range k.Keys {
		_, ok, err := live(s, k.DB, name, now)
		if err != nil {
			return KeyReply{}, err
		}
		if ok {
			if err := s.DeleteKey(k.DB, name); err != nil {
				return KeyReply{}, err
			}
			n++
		}
	}
	return intReply(n), nil
}

// keyExpire is Redis 7's expireGenericCommand after its argument checks:
// 0 for a missing key or an NX/XX/GT/LT condition not met (no expiry
// counts as an infinite one for GT and LT), 1 otherwise; a time already
// past deletes the key.
func keyExpire(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	name := k.Keys[0]
	v, ok, err := live(s, k.DB, name, now)
	if err != nil || !ok {
		return intReply(0), err
	}
	when := expireAt(k, now)
	cur, has := v.ExpireAt, v.ExpireAt != 0
	switch {
	case k.Flags&KeyNX != 0 && has,
		k.Flags&KeyXX != 0 && !has,
		k.Flags&KeyGT != 0 && (!has || when <= cur),
		k.Flags&KeyLT != 0 && has && when >= cur:
		return intReply(0), nil
	}
	if when <= now {
		return intReply(1), s.DeleteKey(k.DB, name)
	}
	v.ExpireAt = when
	return intReply(1), s.PutKey(k.DB, name, v)
}

func keyPersist(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	v, ok, err := live(s, k.DB, k.Keys[0], now)
	if err != nil || !ok || v.ExpireAt == 0 {
		return intReply(0), err
	}
	v.ExpireAt = 0
	return intReply(1), s.PutKey(k.DB, k.Keys[0], v)
}

func keySweep(s Store, k *KeyCommand, now int64) (KeyReply, error) {
	var n int64
	for _, name := range k.Keys {
		v, ok, err := s.Key(k.DB, name)
		if err != nil {
			return KeyReply{}, err
		}
		if ok && v.ExpireAt != 0 && v.ExpireAt <= now {
			if err := s.DeleteKey(k.DB, name); err != nil {
				return KeyReply{}, err
			}
			n++
		}
	}
	return intReply(n), nil
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
