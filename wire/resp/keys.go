package resp

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// The key commands: argument checks here, in Redis 7.0's order and
// words; the write itself in ticket (keys_apply.go), at the entry's
// replicated time.

func cmdIncr(c *client, w *writer, args [][]byte) string {
	return c.exec(w, model.KeyCommand{Op: model.KeyIncr, Keys: []string{string(args[1])}, Delta: 1})
}

func cmdDecr(c *client, w *writer, args [][]byte) string {
	return c.exec(w, model.KeyCommand{Op: model.KeyIncr, Keys: []string{string(args[1])}, Delta: -1})
}

func cmdIncrBy(c *client, w *writer, args [][]byte) string {
	n, ok := parseInt(args[2])
	if !ok {
		w.err(ticket.ErrNotInteger)
		return outError
	}
	return c.exec(w, model.KeyCommand{Op: model.KeyIncr, Keys: []string{string(args[1])}, Delta: n})
}

func cmdDecrBy(c *client, w *writer, args [][]byte) string {
	n, ok := parseInt(args[2])
	if !ok {
		w.err(ticket.ErrNotInteger)
		return outError
	}
	if n == math.MinInt64 {
		w.err("ERR decrement would overflow")
		return outError
	}
	return c.exec(w, model.KeyCommand{Op: model.KeyIncr, Keys: []string{string(args[1])}, Delta: -n})
}

// invalidExpire is Redis's line for an expiry out of range.
func invalidExpire(cmd string) string {
	return fmt.Sprintf("ERR invalid expire time in '%s' command", cmd)
}

func cmdSet(c *client, w *writer, args [][]byte) string {
	k := model.KeyCommand{Op: model.KeySet, Keys: []string{string(args[1])}, Value: string(args[2])}
	const ex, px, exat, pxat = 1, 2, 3, 4
	unit, expire := 0, []byte(nil)
	for j := 3; j < len(args); j++ {
		opt := strings.ToLower(string(args[j]))
		hasNext := j < len(args)-1
		switch {
		case opt == "nx" && k.Flags&model.KeyXX == 0:
			k.Flags |= model.KeyNX
		case opt == "xx" && k.Flags&model.KeyNX == 0:
			k.Flags |= model.KeyXX
		case opt == "get":
			k.Flags |= model.KeyGet
		case opt == "keepttl" && unit == 0:
			k.Flags |= model.KeyKeepTTL
		case hasNext && k.Flags&model.KeyKeepTTL == 0 &&
			(opt == "ex" && (unit == 0 || unit == ex) || opt == "px" && (unit == 0 || unit == px) ||
				opt == "exat" && (unit == 0 || unit == exat) || opt == "pxat" && (unit == 0 || unit == pxat)):
			unit = map[string]int{"ex": ex, "px": px, "exat": exat, "pxat": pxat}[opt]
			expire = args[j+1]
			j++
		default:
			w.err("ERR syntax error")
			return outError
		}
	}
	if expire != nil {
		ms, ok := parseInt(expire)
		if !ok {
			w.err(ticket.ErrNotInteger)
			return outError
		}
		seconds := unit == ex || unit == exat
		if ms <= 0 || seconds && ms > math.MaxInt64/1000 {
			w.err(invalidExpire("set"))
			return outError
		}
		if seconds {
			ms *= 1000
		}
		k.Flags |= model.KeyExpires
		if unit == exat || unit == pxat {
			k.Flags |= model.KeyAbsolute
		} else if ms > math.MaxInt64-time.Now().UnixMilli() {
			w.err(invalidExpire("set"))
			return outError
		}
		k.TTL = ms
	}
	return c.exec(w, k)
}

func cmdGetSet(c *client, w *writer, args [][]byte) string {
	return c.exec(w, model.KeyCommand{Op: model.KeySet, Keys: []string{string(args[1])}, Value: string(args[2]), Flags: model.KeyGet})
}

func cmdDel(c *client, w *writer, args [][]byte) string {
	keys := make([]string, len(args)-1)
	for i, a := range args[1:] {
		keys[i] = string(a)
	}
	return c.exec(w, model.KeyCommand{Op: model.KeyDel, Keys: keys})
}

func cmdPersist(c *client, w *writer, args [][]byte) string {
	return c.exec(w, model.KeyCommand{Op: model.KeyPersist, Keys: []string{string(args[1])}})
}

// expireCmd is EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT.
func expireCmd(seconds, absolute bool) func(*client, *writer, [][]byte) string {
	return func(c *client, w *writer, args [][]byte) string {
		name := strings.ToLower(string(args[0]))
		k := model.KeyCommand{Op: model.KeyExpire, Keys: []string{string(args[1])}}
		var nx, xx, gt, lt bool
		for _, a := range args[3:] {
			switch strings.ToLower(string(a)) {
			case "nx":
				nx = true
				k.Flags |= model.KeyNX
			case "xx":
				xx = true
				k.Flags |= model.KeyXX
			case "gt":
				gt = true
				k.Flags |= model.KeyGT
			case "lt":
				lt = true
				k.Flags |= model.KeyLT
			default:
				w.err("ERR Unsupported option " + clip(string(a)))
				return outError
			}
		}
		if nx && (xx || gt || lt) {
			w.err("ERR NX and XX, GT or LT options at the same time are not compatible")
			return outError
		}
		if gt && lt {
			w.err("ERR GT and LT options at the same time are not compatible")
			return outError
		}
		when, ok := parseInt(args[2])
		if !ok {
			w.err(ticket.ErrNotInteger)
			return outError
		}
		if seconds {
			if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
				w.err(invalidExpire(name))
				return outError
			}
			when *= 1000
		}
		if absolute {
			k.Flags |= model.KeyAbsolute
		} else if when > math.MaxInt64-time.Now().UnixMilli() {
			w.err(invalidExpire(name))
			return outError
		}
		k.TTL = when
		return c.exec(w, k)
	}
}

// Reads.

func cmdGet(c *client, w *writer, args [][]byte) string {
	var v model.KeyVal
	var ok bool
	if !c.readView(w, func(st ticket.Store, now int64) (err error) {
		v, ok, err = ticket.Live(st, c.db, string(args[1]), now)
		return err
	}) {
		return outFailed
	}
	if !ok {
		w.null()
	} else {
		w.bulk(v.Val)
	}
	return outOK
}

func cmdMGet(c *client, w *writer, args [][]byte) string {
	vals := make([]*string, len(args)-1)
	if !c.readView(w, func(st ticket.Store, now int64) error {
		for i, a := range args[1:] {
			v, ok, err := ticket.Live(st, c.db, string(a), now)
			if err != nil {
				return err
			}
			if ok {
				vals[i] = &v.Val
			}
		}
		return nil
	}) {
		return outFailed
	}
	w.array(len(vals))
	for _, v := range vals {
		if v == nil {
			w.null()
		} else {
			w.bulk(*v)
		}
	}
	return outOK
}

func cmdExists(c *client, w *writer, args [][]byte) string {
	var n int64
	if !c.readView(w, func(st ticket.Store, now int64) error {
		for _, a := range args[1:] {
			_, ok, err := ticket.Live(st, c.db, string(a), now)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	}) {
		return outFailed
	}
	w.int(n)
	return outOK
}

// ttlCmd is TTL and PTTL: -2 without the key, -1 without an expiry.
func ttlCmd(ms bool) func(*client, *writer, [][]byte) string {
	return func(c *client, w *writer, args [][]byte) string {
		var ttl int64
		if !c.readView(w, func(st ticket.Store, now int64) error {
			v, ok, err := ticket.Live(st, c.db, string(args[1]), now)
			switch {
			case err != nil:
				return err
			case !ok:
				ttl = -2
			case v.ExpireAt == 0:
				ttl = -1
			default:
				ttl = max(v.ExpireAt-now, 0)
				if !ms {
					ttl = (ttl + 500) / 1000
				}
			}
			return nil
		}) {
			return outFailed
		}
		w.int(ttl)
		return outOK
	}
}

func cmdType(c *client, w *writer, args [][]byte) string {
	var ok bool
	if !c.readView(w, func(st ticket.Store, now int64) (err error) {
		_, ok, err = ticket.Live(st, c.db, string(args[1]), now)
		return err
	}) {
		return outFailed
	}
	if ok {
		w.status("string")
	} else {
		w.status("none")
	}
	return outOK
}

// liveKeys lists the database's live keys matching pattern, sorted.
func (c *client) liveKeys(w *writer, pattern string) ([]string, bool) {
	var out []string
	ok := c.readView(w, func(st ticket.Store, now int64) error {
		return st.EachKey(c.db, func(name string, v model.KeyVal) bool {
			if (v.ExpireAt == 0 || v.ExpireAt > now) && (pattern == "*" || match(pattern, name)) {
				out = append(out, name)
			}
			return true
		})
	})
	slices.Sort(out)
	return out, ok
}

func cmdKeys(c *client, w *writer, args [][]byte) string {
	keys, ok := c.liveKeys(w, string(args[1]))
	if !ok {
		return outFailed
	}
	w.array(len(keys))
	for _, k := range keys {
		w.bulk(k)
	}
	return outOK
}

// cmdScan answers every matching key in one reply, with cursor 0: SCAN's
// COUNT is a hint, and Redis too answers a small key space whole. A
// cursor other than 0 (of no SCAN of ours) ends the iteration at once.
func cmdScan(c *client, w *writer, args [][]byte) string {
	cursor, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		w.err("ERR invalid cursor")
		return outError
	}
	pattern, typ := "*", ""
	for i := 2; i < len(args); i += 2 {
		opt := strings.ToLower(string(args[i]))
		if i+1 >= len(args) {
			w.err("ERR syntax error")
			return outError
		}
		switch opt {
		case "count":
			n, ok := parseInt(args[i+1])
			if !ok {
				w.err(ticket.ErrNotInteger)
				return outError
			}
			if n < 1 {
				w.err("ERR syntax error")
				return outError
			}
		case "match":
			pattern = string(args[i+1])
		case "type":
			typ = strings.ToLower(string(args[i+1]))
		default:
			w.err("ERR syntax error")
			return outError
		}
	}
	var keys []string
	if cursor == 0 && (typ == "" || typ == "string") {
		var ok bool
		if keys, ok = c.liveKeys(w, pattern); !ok {
			return outFailed
		}
	}
	w.array(2)
	w.bulk("0")
	w.array(len(keys))
	for _, k := range keys {
		w.bulk(k)
	}
	return outOK
}

func cmdDBSize(c *client, w *writer, args [][]byte) string {
	keys, ok := c.liveKeys(w, "*")
	if !ok {
		return outFailed
	}
	w.int(int64(len(keys)))
	return outOK
}
