package resp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/redcon"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// client is one connection's state.
type client struct {
	srv      *Server
	rc       redcon.Conn
	id       int64
	addr     string
	laddr    string
	loopback bool
	created  time.Time
	last     time.Time
	lastCmd  string

	db    uint8
	proto int // 2 or 3
	name  string
	lib   [2]string // CLIENT SETINFO LIB-NAME, LIB-VER
	// user is the logged-in account, "" until AUTH when the accounts
	// need a password.
	user string
	role mysqlconn.Role
	// collect, while set, makes exec add the key command to it instead
	// of committing it (a pipeline's run of writes; pipeline.go).
	collect *[]model.KeyCommand
	// cmds bounds each key write by the server's Timeout.
	cmds cmdContexts
}

func (s *Server) newClient(rc redcon.Conn) *client {
	now := time.Now()
	c := &client{srv: s, rc: rc, id: s.lastID.Add(1), addr: rc.RemoteAddr(), created: now, last: now, proto: 2}
	if nc := rc.NetConn(); nc != nil {
		c.laddr = nc.LocalAddr().String()
		if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
			c.loopback = ta.IP.IsLoopback()
		}
	}
	c.loginDefault()
	return c
}

// loginDefault logs the connection in as the account that needs no
// password, if there is one.
func (c *client) loginDefault() {
	c.user, c.role = "", 0
	if name, role, ok := c.srv.cfg.Users.NoPassword(c.loopback); ok {
		c.user, c.role = name, role
	}
}

// handle is redcon's handler: a command of a connection, and the
// commands pipelined behind it (pipeline.go).
func (s *Server) handle(rc redcon.Conn, cmd redcon.Command) {
	c, _ := rc.Context().(*client)
	if c == nil {
		return
	}
	if len(rc.PeekPipeline()) == 0 {
		// Alone (the common case): no slice to build.
		s.one(rc, c, cmd)
		return
	}
	c.pipeline(rc, append([]redcon.Command{cmd}, rc.ReadPipeline()...))
}

// one runs one command.
func (s *Server) one(rc redcon.Conn, c *client, cmd redcon.Command) {
	if len(cmd.Args) == 0 {
		return
	}
	start := time.Now()
	c.last = start
	name := strings.ToLower(string(cmd.Args[0]))
	c.lastCmd = name
	w := &writer{rc: rc, proto: c.proto}
	outcome := c.dispatch(w, name, cmd.Args)
	label := name
	if _, known := commands[name]; !known {
		label = "other"
	}
	s.obs.Command(label, outcome, time.Since(start))
}

// Outcomes of a command, for the Observer.
const (
	outOK      = "ok"
	outError   = "error"
	outRefused = "refused"
	outFailed  = "failed"
	// outCollected: a pipelined write taken into its run (pipeline.go),
	// answered later.
	outCollected = "collected"
)

// dispatch runs one command and returns its outcome.
func (c *client) dispatch(w *writer, name string, args [][]byte) string {
	spec, known := commands[name]
	if !known {
		if what, ok := unsupported[name]; ok {
			w.err(fmt.Sprintf("ERR '%s' is not supported by ticketd (%s); it serves string keys: see the manual's Redis section", strings.ToUpper(name), what))
			return outRefused
		}
		w.err(unknownCommand(name, args))
		return outRefused
	}
	if c.user == "" && !spec.noAuth {
		w.err("NOAUTH Authentication required.")
		return outRefused
	}
	if !spec.arityOK(len(args)) {
		w.err(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name))
		return outRefused
	}
	if spec.write && c.role == mysqlconn.RoleAlloc && !allocMay(name, args) {
		w.err(fmt.Sprintf("NOPERM User %s has no permissions to run the '%s' command", c.user, name))
		return outRefused
	}
	if spec.keys {
		if g := c.srv.cfg.Gate; g != nil {
			if err := g.Serving(); err != nil {
				ctx, cancel := context.WithTimeout(c.srv.ctx, c.srv.cfg.Timeout)
				err = g.WaitServing(ctx)
				cancel()
				if err != nil {
					w.err("LOADING ticketd: this node cannot answer yet: " + oneLine(err.Error()))
					return outFailed
				}
			}
		}
	}
	return spec.run(c, w, args)
}

// unknownCommand is Redis 7's line for a command it does not know.
func unknownCommand(name string, args [][]byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ERR unknown command '%s', with args beginning with: ", clip(string(args[0])))
	for _, a := range args[1:] {
		fmt.Fprintf(&b, "'%s' ", clip(string(a)))
	}
	return b.String()
}

// clip shortens an argument quoted in an error as Redis does (128 bytes).
func clip(s string) string {
	if len(s) > 128 {
		s = s[:128]
	}
	return oneLine(s)
}

// oneLine keeps an error reply on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// allocMay is what the alloc role may write: INCR, and INCRBY by a
// positive step, which can only move a counter forward. Everything that
// resets, lowers or removes a key (SET, DEL, DECR, EXPIRE...) could hand
// out a number again and needs the admin role.
func allocMay(name string, args [][]byte) bool {
	switch name {
	case "incr":
		return true
	case "incrby":
		n, ok := ticket.ParseInt(string(args[2]))
		return !ok || n > 0
	}
	return false
}

// exec commits a key command and writes its reply.
func (c *client) exec(w *writer, k model.KeyCommand) string {
	k.DB = c.db
	if c.collect != nil {
		*c.collect = append(*c.collect, k)
		return outCollected
	}
	ctx := c.cmds.begin(c.srv.ctx, c.srv.cfg.Timeout)
	defer c.cmds.end()
	r, err := c.srv.cfg.Service.ExecFor(ctx, nil, &model.Command{Op: model.OpKeys, Key: &k})
	if err != nil {
		w.err(replicationError(err))
		return outFailed
	}
	if r.Err != nil {
		// A refusal before Apply: the cluster's version, a malformed
		// command.
		w.err("ERR " + oneLine(r.Err.Message))
		return outRefused
	}
	if r.Key == nil {
		w.err("ERR ticketd: no reply for the key command")
		return outFailed
	}
	return w.reply(r.Key)
}

// replicationError is the error line of a write that did not commit, or
// whose outcome is unknown. Nothing it may have written is ever answered
// (an INCR's number is burnt, never handed out).
func replicationError(err error) string {
	switch {
	case errors.Is(err, ticket.ErrUncertain):
		return "ERR ticketd: the write's outcome is unknown (it may or may not have been applied; a number it took is never handed out): " + oneLine(err.Error())
	case errors.Is(err, ticket.ErrNoQuorum):
		// Clients retry TRYAGAIN by themselves: nothing was written.
		return "TRYAGAIN ticketd: no leader with a quorum, nothing was written: " + oneLine(err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// A context that ended may have ended after a proposal.
		return "ERR ticketd: the write's outcome is unknown (it may or may not have been applied; a number it took is never handed out): " + oneLine(err.Error())
	}
	return "ERR ticketd: " + oneLine(err.Error())
}

// readView waits for a read index and reads the local state at the
// reading time (KeyNow).
func (c *client) readView(w *writer, fn func(st ticket.Store, now int64) error) bool {
	if g := c.srv.cfg.Gate; g != nil {
		ctx, cancel := context.WithTimeout(c.srv.ctx, c.srv.cfg.Timeout)
		err := g.WaitRead(ctx)
		cancel()
		if err != nil {
			w.err(replicationError(fmt.Errorf("%w: read index: %w", ticket.ErrNoQuorum, err)))
			return false
		}
	}
	now := ticket.KeyNow(c.srv.cfg.Clock())
	if err := c.srv.cfg.Service.View(func(st ticket.Store) error { return fn(st, now) }); err != nil {
		w.err("ERR ticketd: " + oneLine(err.Error()))
		return false
	}
	return true
}

// parseInt reads an integer argument as Redis does.
func parseInt(b []byte) (int64, bool) { return ticket.ParseInt(string(b)) }

// Connection commands.

func cmdPing(c *client, w *writer, args [][]byte) string {
	if len(args) > 2 {
		w.err("ERR wrong number of arguments for 'ping' command")
		return outRefused
	}
	if len(args) == 2 {
		w.bulk(string(args[1]))
	} else {
		w.status("PONG")
	}
	return outOK
}

func cmdEcho(c *client, w *writer, args [][]byte) string {
	w.bulk(string(args[1]))
	return outOK
}

func cmdQuit(c *client, w *writer, args [][]byte) string {
	w.status("OK")
	c.rc.Close()
	return outOK
}

func cmdReset(c *client, w *writer, args [][]byte) string {
	c.db, c.name, c.proto, c.lib = 0, "", 2, [2]string{}
	c.loginDefault()
	w.proto = 2
	w.status("RESET")
	return outOK
}

func cmdSelect(c *client, w *writer, args [][]byte) string {
	n, ok := parseInt(args[1])
	if !ok {
		w.err(ticket.ErrNotInteger)
		return outError
	}
	if n < 0 || n >= model.KeyDBs {
		w.err("ERR DB index is out of range")
		return outError
	}
	c.db = uint8(n)
	w.status("OK")
	return outOK
}

// auth checks a login; a wrong one leaves the connection as it was.
func (c *client) auth(w *writer, user, pass string) bool {
	if _, ok := c.srv.cfg.Users.CheckPassword(user, pass, c.loopback); !ok {
		if user == "default" && !c.srv.cfg.Users.HasUser("default") && c.user != "" {
			// No password configured for the default user, as Redis
			// without requirepass.
			w.err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return false
		}
		w.err("WRONGPASS invalid username-password pair or user is disabled.")
		return false
	}
	c.user = user
	c.role, _ = c.srv.cfg.Users.CheckPassword(user, pass, c.loopback)
	return true
}

func cmdAuth(c *client, w *writer, args [][]byte) string {
	var user, pass string
	switch len(args) {
	case 2:
		user, pass = "default", string(args[1])
	case 3:
		user, pass = string(args[1]), string(args[2])
	default:
		w.err("ERR syntax error")
		return outRefused
	}
	if !c.auth(w, user, pass) {
		return outRefused
	}
	w.status("OK")
	return outOK
}

// Server identity in HELLO and INFO: the Redis version whose replies
// ticketd matches (Debian 12's redis-server, the differential test's
// reference).
const (
	redisVersion = "7.0.15"
	redisMode    = "standalone"
)

func cmdHello(c *client, w *writer, args [][]byte) string {
	proto := c.proto
	i := 1
	if len(args) > 1 {
		v, ok := parseInt(args[1])
		if !ok {
			w.err("ERR Protocol version is not an integer or out of range")
			return outError
		}
		if v != 2 && v != 3 {
			w.err("NOPROTO unsupported protocol version")
			return outError
		}
		proto = int(v)
		i = 2
	}
	var user, pass, name string
	var hasAuth, hasName bool
	for ; i < len(args); i++ {
		more := len(args) - i - 1
		switch opt := strings.ToLower(string(args[i])); {
		case opt == "auth" && more >= 2:
			user, pass, hasAuth = string(args[i+1]), string(args[i+2]), true
			i += 2
		case opt == "setname" && more >= 1:
			name, hasName = string(args[i+1]), true
			i++
		default:
			w.err(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", clip(string(args[i]))))
			return outError
		}
	}
	if hasAuth {
		if !c.auth(w, user, pass) {
			return outRefused
		}
	} else if c.user == "" {
		w.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return outRefused
	}
	if hasName {
		if !validName(name) {
			w.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return outError
		}
		c.name = name
	}
	c.proto, w.proto = proto, proto
	w.mapHeader(7)
	w.bulk("server")
	w.bulk("redis")
	w.bulk("version")
	w.bulk(redisVersion)
	w.bulk("proto")
	w.int(int64(proto))
	w.bulk("id")
	w.int(c.id)
	w.bulk("mode")
	w.bulk(redisMode)
	w.bulk("role")
	w.bulk("master")
	w.bulk("modules")
	w.array(0)
	return outOK
}

// validName is Redis's rule for client names: printable ASCII, no space.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// subArity is Redis 7's check of a subcommand's arguments: an unknown
// one, or a known one with the wrong count, is an error naming it.
func subArity(w *writer, cmd string, args [][]byte, arities map[string]int) bool {
	sub := strings.ToLower(string(args[1]))
	n, ok := arities[sub]
	if !ok {
		w.err(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", clip(string(args[1])), strings.ToUpper(cmd)))
		return false
	}
	if n >= 0 && len(args) != n || n < 0 && len(args) < -n {
		w.err(fmt.Sprintf("ERR wrong number of arguments for '%s|%s' command", cmd, sub))
		return false
	}
	return true
}

var clientSubs = map[string]int{"setname": 3, "getname": 2, "id": 2, "info": 2, "list": -2, "setinfo": 4, "help": 2}

func cmdClient(c *client, w *writer, args [][]byte) string {
	if !subArity(w, "client", args, clientSubs) {
		return outRefused
	}
	switch strings.ToLower(string(args[1])) {
	case "setname":
		if !validName(string(args[2])) {
			w.err("ERR Client names cannot contain spaces, newlines or special characters.")
			return outError
		}
		c.name = string(args[2])
		w.status("OK")
	case "getname":
		if c.name == "" {
			w.null()
		} else {
			w.bulk(c.name)
		}
	case "id":
		w.int(c.id)
	case "info":
		w.verbatim(c.info() + "\n")
	case "list":
		if len(args) > 2 {
			// CLIENT LIST's TYPE and ID filters are not served.
			w.err("ERR syntax error")
			return outError
		}
		w.verbatim(c.srv.clientList())
	case "setinfo":
		// Redis 7.2's (go-redis and redis-py send it on connect).
		switch attr := strings.ToLower(string(args[2])); attr {
		case "lib-name", "lib-ver":
			v := string(args[3])
			if !validName(v) {
				w.err(fmt.Sprintf("ERR %s cannot contain spaces, newlines or special characters.", strings.ToUpper(attr)))
				return outError
			}
			c.lib[map[string]int{"lib-name": 0, "lib-ver": 1}[attr]] = v
			w.status("OK")
		default:
			w.err(fmt.Sprintf("ERR Unrecognized option '%s'", clip(string(args[2]))))
			return outError
		}
	case "help":
		lines := []string{"CLIENT <subcommand> [<arg> ...]. Subcommands are:", "GETNAME", "    Return the name of the current connection.",
			"ID", "    Return the ID of the current connection.", "INFO", "    Return information about the current client connection.",
			"LIST", "    Return information about client connections.", "SETINFO <option> <value>", "    Set client meta attr (LIB-NAME, LIB-VER).",
			"SETNAME <name>", "    Assign the name <name> to the current connection."}
		w.array(len(lines))
		for _, l := range lines {
			w.status(l)
		}
	}
	return outOK
}

// info is the connection's CLIENT INFO / CLIENT LIST line, in Redis 7's
// fields.
func (c *client) info() string {
	now := time.Now()
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=0 name=%s age=%d idle=%d flags=N db=%d sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.id, c.addr, c.laddr, c.name, int64(now.Sub(c.created).Seconds()), int64(now.Sub(c.last).Seconds()), c.db,
		strings.ReplaceAll(c.lastCmd, " ", "|"), c.user, c.proto, c.lib[0], c.lib[1])
}

func (s *Server) clientList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for c := range s.conns {
		b.WriteString(c.info())
		b.WriteByte('\n')
	}
	return b.String()
}

// cmdInfo answers INFO with the sections clients read: server, clients,
// keyspace (and replication, which says this is a master).
func cmdInfo(c *client, w *writer, args [][]byte) string {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := len(want) == 0 || want["all"] || want["default"] || want["everything"]
	var b strings.Builder
	section := func(name string, body func()) {
		if !all && !want[strings.ToLower(name)] {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + name + "\r\n")
		body()
	}
	line := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	section("Server", func() {
		line("redis_version", redisVersion)
		line("redis_mode", redisMode)
		line("ticketd", "1")
		line("process_id", 0)
		line("tcp_port", portOf(c.laddr))
		line("uptime_in_seconds", int64(time.Since(c.srv.start).Seconds()))
	})
	section("Clients", func() { line("connected_clients", c.srv.Clients()) })
	section("Replication", func() {
		line("role", "master")
		line("connected_slaves", 0)
	})
	section("Keyspace", func() {
		_ = c.srv.cfg.Service.View(func(st ticket.Store) error {
			now := ticket.KeyNow(c.srv.cfg.Clock())
			for db := range uint8(model.KeyDBs) {
				n, exp := 0, 0
				_ = st.EachKey(db, func(_ string, v model.KeyVal) bool {
					if v.ExpireAt == 0 || v.ExpireAt > now {
						n++
						if v.ExpireAt != 0 {
							exp++
						}
					}
					return true
				})
				if n > 0 {
					line(fmt.Sprintf("db%d", db), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", n, exp))
				}
			}
			return nil
		})
	})
	w.verbatim(b.String())
	return outOK
}

func portOf(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "0"
	}
	if _, err := strconv.Atoi(p); err != nil {
		return "0"
	}
	return p
}
