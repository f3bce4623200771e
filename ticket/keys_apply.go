package ticket

import (
	"math"
	"strconv"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// applyKeys runs an OpKeys command at the command's time. Statement
// errors are Redis error lines in the reply; nothing changes with them.
func applyKeys(s Store, c *model.Command) (model.Result, error) {
	k := c.Key
	if !k.Valid() {
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "malformed key command")}, nil
	}
	now := c.Now.UnixMilli()
	var (
		r   model.KeyReply
		err error
	)
	switch k.Op {
	case model.KeyIncr:
		r, err = keyIncr(s, k, now)
	case model.KeySet:
		r, err = keySet(s, k, now)
	case model.KeyDel:
		r, err = keyDel(s, k, now)
	case model.KeyExpire:
		r, err = keyExpire(s, k, now)
	case model.KeyPersist:
		r, err = keyPersist(s, k, now)
	case model.KeySweep:
		r, err = keySweep(s, k, now)
	case model.KeyReserve:
		r, err = keyReserve(s, k, now)
	}
	if err != nil {
		return model.Result{}, err
	}
	return model.Result{Key: &r}, nil
}

// live is Live for a write: an expired key met by it is deleted.
func live(s Store, db uint8, name string, now int64) (model.KeyVal, bool, error) {
	v, ok, err := s.Key(db, name)
	if err != nil || !ok {
		return model.KeyVal{}, false, err
	}
	if v.ExpireAt != 0 && v.ExpireAt <= now {
		return model.KeyVal{}, false, s.DeleteKey(db, name)
	}
	return v, true, nil
}

func errReply(line string) model.KeyReply { return model.KeyReply{Kind: model.ReplyErr, Str: line} }

func intReply(n int64) model.KeyReply { return model.KeyReply{Kind: model.ReplyInt, Int: n} }

func keyIncr(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	v, ok, err := live(s, k.DB, k.Keys[0], now)
	if err != nil {
		return model.KeyReply{}, err
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
func expireAt(k *model.KeyCommand, now int64) int64 {
	if k.Flags&model.KeyAbsolute != 0 {
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
func keySet(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	name := k.Keys[0]
	old, exists, err := live(s, k.DB, name, now)
	if err != nil {
		return model.KeyReply{}, err
	}
	reply := model.KeyReply{Kind: model.ReplyOK}
	if k.Flags&model.KeyGet != 0 {
		reply = model.KeyReply{Kind: model.ReplyNil}
		if exists {
			reply = model.KeyReply{Kind: model.ReplyBulk, Str: old.Val}
		}
	}
	if (k.Flags&model.KeyNX != 0 && exists) || (k.Flags&model.KeyXX != 0 && !exists) {
		if k.Flags&model.KeyGet == 0 {
			reply = model.KeyReply{Kind: model.ReplyNil}
		}
		return reply, nil
	}
	v := model.KeyVal{Val: k.Value}
	switch {
	case k.Flags&model.KeyExpires != 0:
		v.ExpireAt = expireAt(k, now)
		if v.ExpireAt <= now {
			return reply, s.DeleteKey(k.DB, name)
		}
	case k.Flags&model.KeyKeepTTL != 0 && exists:
		v.ExpireAt = old.ExpireAt
	}
	return reply, s.PutKey(k.DB, name, v)
}

func keyDel(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	var n int64
	for _, name := range k.Keys {
		_, ok, err := live(s, k.DB, name, now)
		if err != nil {
			return model.KeyReply{}, err
		}
		if ok {
			if err := s.DeleteKey(k.DB, name); err != nil {
				return model.KeyReply{}, err
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
func keyExpire(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	name := k.Keys[0]
	v, ok, err := live(s, k.DB, name, now)
	if err != nil || !ok {
		return intReply(0), err
	}
	when := expireAt(k, now)
	cur, has := v.ExpireAt, v.ExpireAt != 0
	switch {
	case k.Flags&model.KeyNX != 0 && has,
		k.Flags&model.KeyXX != 0 && !has,
		k.Flags&model.KeyGT != 0 && (!has || when <= cur),
		k.Flags&model.KeyLT != 0 && has && when >= cur:
		return intReply(0), nil
	}
	if when <= now {
		return intReply(1), s.DeleteKey(k.DB, name)
	}
	v.ExpireAt = when
	return intReply(1), s.PutKey(k.DB, name, v)
}

func keyPersist(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	v, ok, err := live(s, k.DB, k.Keys[0], now)
	if err != nil || !ok || v.ExpireAt == 0 {
		return intReply(0), err
	}
	v.ExpireAt = 0
	return intReply(1), s.PutKey(k.DB, k.Keys[0], v)
}

func keySweep(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	var n int64
	for _, name := range k.Keys {
		v, ok, err := s.Key(k.DB, name)
		if err != nil {
			return model.KeyReply{}, err
		}
		if ok && v.ExpireAt != 0 && v.ExpireAt <= now {
			if err := s.DeleteKey(k.DB, name); err != nil {
				return model.KeyReply{}, err
			}
			n++
		}
	}
	return intReply(n), nil
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// keyReserve is KeyReserve's Apply: KeyIncr by Delta, unless the key has
// an expiry (ReplyNil, nothing changed).
func keyReserve(s Store, k *model.KeyCommand, now int64) (model.KeyReply, error) {
	v, ok, err := live(s, k.DB, k.Keys[0], now)
	if err != nil {
		return model.KeyReply{}, err
	}
	if ok && v.ExpireAt != 0 {
		return model.KeyReply{Kind: model.ReplyNil}, nil
	}
	var cur int64
	if ok {
		if cur, ok = ParseInt(v.Val); !ok {
			return errReply(ErrNotInteger), nil
		}
	}
	if k.Delta <= 0 || cur > math.MaxInt64-k.Delta {
		// No room for a block: INCR goes through Raft, and says
		// overflow itself when even one does not fit.
		return model.KeyReply{Kind: model.ReplyNil}, nil
	}
	cur += k.Delta
	v.Val = formatInt(cur)
	return intReply(cur), s.PutKey(k.DB, k.Keys[0], v)
}
