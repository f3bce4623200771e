package resp

import (
	"slices"
	"strings"
)

// spec is one command the front door serves.
type spec struct {
	// arity is Redis's: n exactly n arguments (the name included), -n at
	// least n.
	arity int
	// noAuth: allowed before AUTH (Redis's no-auth commands).
	noAuth bool
	// write: changes keys (the alloc role may run few of them).
	write bool
	// keys: reads or writes keys, so waits for the local state to serve.
	keys bool
	// flags, first/last/step key positions and ACL categories, as
	// COMMAND answers them (Redis 7.0's).
	flags             []string
	first, last, step int
	acl               []string
	run               func(*client, *writer, [][]byte) string
}

func (s *spec) arityOK(n int) bool {
	if s.arity >= 0 {
		return n == s.arity
	}
	return n >= -s.arity
}

// commands are the commands served; filled in init (COMMAND reads the
// table itself).
var commands map[string]*spec

func init() {
	rw := func(arity int, run func(*client, *writer, [][]byte) string, flags ...string) *spec {
		return &spec{arity: arity, write: true, keys: true, first: 1, last: 1, step: 1,
			flags: append([]string{"write"}, flags...), acl: []string{"@write", "@string"}, run: run}
	}
	ro := func(arity int, last int, run func(*client, *writer, [][]byte) string, acl ...string) *spec {
		return &spec{arity: arity, keys: true, first: 1, last: last, step: 1,
			flags: []string{"readonly", "fast"}, acl: append([]string{"@read"}, acl...), run: run}
	}
	conn := func(arity int, noAuth bool, run func(*client, *writer, [][]byte) string, flags ...string) *spec {
		return &spec{arity: arity, noAuth: noAuth, flags: flags, acl: []string{"@connection"}, run: run}
	}
	commands = map[string]*spec{
		"incr":      rw(2, cmdIncr, "denyoom", "fast"),
		"incrby":    rw(3, cmdIncrBy, "denyoom", "fast"),
		"decr":      rw(2, cmdDecr, "denyoom", "fast"),
		"decrby":    rw(3, cmdDecrBy, "denyoom", "fast"),
		"set":       rw(-3, cmdSet, "denyoom"),
		"getset":    rw(3, cmdGetSet, "denyoom", "fast"),
		"del":       rw(-2, cmdDel),
		"expire":    rw(-3, expireCmd(true, false), "fast"),
		"pexpire":   rw(-3, expireCmd(false, false), "fast"),
		"expireat":  rw(-3, expireCmd(true, true), "fast"),
		"pexpireat": rw(-3, expireCmd(false, true), "fast"),
		"persist":   rw(2, cmdPersist, "fast"),
		"get":       ro(2, 1, cmdGet, "@string"),
		"mget":      ro(-2, -1, cmdMGet, "@string"),
		"exists":    ro(-2, -1, cmdExists, "@keyspace"),
		"ttl":       ro(2, 1, ttlCmd(false), "@keyspace"),
		"pttl":      ro(2, 1, ttlCmd(true), "@keyspace"),
		"type":      ro(2, 1, cmdType, "@keyspace"),
		"keys":      {arity: 2, keys: true, flags: []string{"readonly"}, acl: []string{"@keyspace", "@read", "@slow", "@dangerous"}, run: cmdKeys},
		"scan":      {arity: -2, keys: true, flags: []string{"readonly"}, acl: []string{"@keyspace", "@read", "@slow"}, run: cmdScan},
		"dbsize":    {arity: 1, keys: true, flags: []string{"readonly", "fast"}, acl: []string{"@keyspace", "@read", "@fast"}, run: cmdDBSize},
		"ping":      conn(-1, false, cmdPing, "fast"),
		"echo":      conn(2, false, cmdEcho, "fast"),
		"auth":      conn(-2, true, cmdAuth, "noscript", "loading", "stale", "fast", "no_auth", "allow_busy"),
		"hello":     conn(-1, true, cmdHello, "noscript", "loading", "stale", "fast", "no_auth", "allow_busy"),
		"select":    conn(2, false, cmdSelect, "loading", "stale", "fast"),
		"client":    conn(-2, false, cmdClient, "loading", "stale"),
		"quit":      conn(-1, true, cmdQuit, "allow_busy", "noscript", "loading", "stale", "fast", "no_auth"),
		"reset":     conn(1, true, cmdReset, "noscript", "loading", "stale", "fast", "no_auth", "allow_busy"),
		"info":      {arity: -1, flags: []string{"loading", "stale"}, acl: []string{"@slow", "@dangerous"}, run: cmdInfo},
		"command":   {arity: -1, flags: []string{"loading", "stale"}, acl: []string{"@slow", "@connection"}, run: cmdCommand},
	}
	commands["get"].flags = []string{"readonly", "fast"}
	commands["mget"].flags = []string{"readonly", "fast"}
}

// unsupported names the Redis commands a client may send that ticketd
// does not serve, by kind, so that the error says why.
var unsupported = map[string]string{}

func init() {
	for kind, names := range map[string]string{
		"lists":                     "lpush rpush lpop rpop llen lrange lindex lset lrem ltrim linsert blpop brpop lmove blmove rpoplpush brpoplpush lpos lmpop blmpop lpushx rpushx",
		"hashes":                    "hset hget hmset hmget hgetall hdel hexists hincrby hincrbyfloat hkeys hvals hlen hsetnx hstrlen hscan hrandfield",
		"sets":                      "sadd srem smembers sismember smismember scard spop srandmember sinter sunion sdiff sinterstore sunionstore sdiffstore smove sscan sintercard",
		"sorted sets":               "zadd zrem zrange zrangebyscore zrevrange zrank zrevrank zscore zcard zcount zincrby zscan zpopmin zpopmax bzpopmin bzpopmax zrangestore zunionstore zinterstore",
		"streams":                   "xadd xread xrange xrevrange xlen xdel xtrim xgroup xreadgroup xack xclaim xautoclaim xpending xinfo xsetid",
		"scripts and functions":     "eval evalsha eval_ro evalsha_ro script function fcall fcall_ro",
		"transactions":              "multi exec discard watch unwatch",
		"pub/sub":                   "subscribe unsubscribe psubscribe punsubscribe publish pubsub ssubscribe sunsubscribe spublish",
		"cluster and replication":   "cluster readonly readwrite replicaof slaveof sync psync wait waitaof failover asking",
		"server administration":     "flushdb flushall save bgsave bgrewriteaof shutdown debug config monitor slowlog lastsave acl module latency memory swapdb move copy migrate restore dump object lolwut",
		"other string commands":     "append strlen getrange setrange substr incrbyfloat setnx setex psetex getdel getex msetnx mset lcs setbit getbit bitcount bitop bitpos bitfield bitfield_ro",
		"other key commands":        "rename renamenx randomkey touch unlink expiretime pexpiretime sort sort_ro",
		"HyperLogLog and geo types": "pfadd pfcount pfmerge geoadd geodist geohash geopos georadius georadiusbymember geosearch geosearchstore",
	} {
		for _, n := range strings.Fields(names) {
			unsupported[n] = kind
		}
	}
}

// cmdCommand answers COMMAND, COMMAND COUNT, COMMAND INFO, COMMAND LIST
// and COMMAND DOCS (empty: redis-cli then uses its own help) for the
// commands served.
func cmdCommand(c *client, w *writer, args [][]byte) string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(args) == 1 {
		w.array(len(names))
		for _, n := range names {
			writeInfo(w, n, commands[n])
		}
		return outOK
	}
	if !subArity(w, "command", args, map[string]int{"count": 2, "list": -2, "info": -2, "docs": -2}) {
		return outRefused
	}
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "count":
		w.int(int64(len(names)))
	case sub == "list":
		w.array(len(names))
		for _, n := range names {
			w.bulk(n)
		}
	case sub == "info":
		w.array(len(args) - 2)
		for _, a := range args[2:] {
			n := strings.ToLower(string(a))
			if s, ok := commands[n]; ok {
				writeInfo(w, n, s)
			} else {
				w.null()
			}
		}
	case sub == "docs":
		w.mapHeader(0)
	}
	return outOK
}

// writeInfo writes one command's COMMAND entry in Redis 7's ten fields.
func writeInfo(w *writer, name string, s *spec) {
	w.array(10)
	w.bulk(name)
	w.int(int64(s.arity))
	w.array(len(s.flags))
	for _, f := range s.flags {
		w.status(f)
	}
	w.int(int64(s.first))
	w.int(int64(s.last))
	w.int(int64(s.step))
	w.array(len(s.acl))
	for _, a := range s.acl {
		w.status(a)
	}
	w.array(0) // tips
	w.array(0) // key specifications
	w.array(0) // subcommands
}

// CommandNames lists the commands served, sorted, and "other" (every
// other name): the values of the Observer's name, for metrics.
func CommandNames() []string {
	names := make([]string, 0, len(commands)+1)
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return append(names, "other")
}

// Outcomes lists the values of the Observer's outcome.
func Outcomes() []string { return []string{outOK, outError, outRefused, outFailed} }
