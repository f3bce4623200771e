package mysqlconn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// This file is ticketd's workarounds for go-mysql v1.16.0's server
// package, in one place: each exists only because go-mysql does something
// wrong, slowly or not at all, and each can go when go-mysql is fixed.
//
//  1. Handshake replay (handOver, cannedResponse, replayAuth): a
//     server.Conn can only be made by running go-mysql's own handshake,
//     which cannot do what ticketd's connection phase does (handshake.go).
//     It is fed a canned response from memory and its packets are
//     discarded, so it starts its command phase on the connection
//     ticketd already authenticated.
//  2. Status flags (replayAuth.OnAuthSuccess): go-mysql starts a
//     connection with status 0, which PyMySQL, mysqlclient and
//     Connector/J read as autocommit off.
//  3. Packet size (Conn.feed, Conn.command): go-mysql allocates whatever
//     length a packet header announces and appends every
//     COM_STMT_SEND_LONG_DATA chunk without bound; Conn refuses a packet
//     over max_allowed_packet (frames joined, and the chunks' total)
//     before go-mysql sees it.
//  4. Empty command packets (Conn.feed): go-mysql's dispatch indexes the
//     command byte of an empty packet and panics.
//  5. Re-executions without parameter types (Conn.withTypes): go-mysql
//     passes every parameter as NULL when a COM_STMT_EXECUTE leaves out
//     the types (new-params-bound flag 0, as mysqlnd, libmysqlclient and
//     DBD::mysql send); the last types sent are put back in.
//  6. Cut-off parameter values (Conn.fixExecute, valuesComplete): go-mysql
//     reads a length-encoded value past the packet's end and panics;
//     Conn answers such an execute itself with error 1835.
//  7. A second reply (Conn.DropReply): go-mysql writes an OK after every
//     HandleOtherCommand, even when the handler answered otherwise
//     (COM_STATISTICS answers a bare string).
//  8. A system call per packet (Conn.Write, Conn.Flush): go-mysql writes
//     each packet of a result set on its own (five for SELECT
//     LAST_INSERT_ID()); Conn sends a reply in one write.
//  9. Closing too early (Conn.Close): go-mysql closes the connection on
//     any read error, before ticketd could tell the client why
//     (Conn.Farewell).
// 10. Unbounded writes (Conn.Flush): go-mysql sets no write deadline, so
//     a client that stops reading would hold a goroutine forever.
// 11. Long data (Conn.endSink, Conn.withLongData): go-mysql keeps a
//     COM_STMT_SEND_LONG_DATA chunk as a slice of its read buffer, then
//     reads the execute's values as if the parameter had one in the
//     packet (it has none), which shifts every value after it, and
//     overwrites the long data. Conn keeps the chunks itself and puts
//     them into the execute packet as the parameter's value, a string
//     (MariaDB's reading of long data); go-mysql never sees the chunks.
//
// Not here, because they live in the handler: package wire writes
// COM_STMT_EXECUTE errors itself (go-mysql turns a returned error into
// 1105), answers prepares with a *stmt.PreparedStmt (otherwise go-mysql
// sends nameless column definitions) and recovers go-mysql's panics.

// Protocol violations found by Conn while reading. They end the
// connection; Conn.Farewell tells the client why in MySQL's words.
var (
	errPacketTooLarge = errors.New("wire: client packet over max_allowed_packet")
	errEmptyPacket    = errors.New("wire: empty command packet")
)

// maxFrame is the largest payload of one protocol frame; a frame this long
// is continued by the next one.
const maxFrame = 0xffffff

// Conn is the net.Conn go-mysql's server.Conn reads and writes, over the
// client's TCP or TLS connection, doing what go-mysql cannot: the
// handshake replay and workarounds 3 to 10 above.
type Conn struct {
	net.Conn

	sc *server.Conn // go-mysql's connection over this one, once made

	replay    []byte // canned handshake response not yet read
	replaying bool

	limit int // max_allowed_packet; 0: no framing checks

	// Framing state of the bytes read so far.
	hdr       [4]byte
	hdrN      int  // header bytes seen of the current frame
	remain    int  // payload bytes left in the current frame
	size      int  // payload bytes of the current packet, frames joined
	cont      bool // the current frame is full: the packet goes on
	atCmd     bool // the next payload byte is a command byte
	longData  int  // COM_STMT_SEND_LONG_DATA bytes since the last execute
	allowZero bool // empty packets are legitimate (auth switch responses)
	seq       byte // sequence id of the last frame header
	err       error

	out     []byte // bytes for go-mysql, in order
	outBuf  []byte // out's storage, reused
	hold    []byte // a command packet held back (fixExecute)
	holding bool

	params map[uint32]int    // parameter count per prepared statement id
	types  map[uint32][]byte // the parameter types last sent per statement id

	// Long data: the current COM_STMT_SEND_LONG_DATA packet's payload
	// while sinking, and the chunks so far per statement and parameter,
	// until the statement's next execute (or a reset) takes them.
	sinking bool
	sink    []byte
	long    map[uint32]map[uint16][]byte

	dropNext bool // discard the next Write (see DropReply)

	// A COM_STMT_EXECUTE refused before go-mysql saw it (fixExecute), and
	// bytes read but not fed yet (after a refused execute, or from an
	// execute pipelined behind other commands on): Read answers the
	// refusal and feeds the rest once go-mysql has answered what it has.
	refuse    bool
	refuseSeq byte
	refuseErr *mysql.MyError // nil: malformed packet
	later     []byte

	// wbuf collects go-mysql's writes of one reply: it writes every
	// packet of a result set with its own Write (five for SELECT
	// LAST_INSERT_ID()), a system call each. The reply goes out in one
	// write when go-mysql next reads, i.e. when the command is done.
	wbuf []byte

	writeTimeout time.Duration
	writeSet     time.Time // when the write deadline was last moved
}

func newConn(nc net.Conn, replay []byte, limit int, writeTimeout time.Duration) *Conn {
	c := &Conn{Conn: nc, replay: replay, replaying: true, limit: limit, writeTimeout: writeTimeout}
	c.outBuf = make([]byte, 0, 512)
	c.out = c.outBuf
	return c
}

// Close leaves the connection open: go-mysql closes it on any read error,
// before the client could be told why (Farewell). The owner of the
// client's connection closes it.
func (c *Conn) Close() error { return nil }

// endReplay switches from the canned handshake to the client.
func (c *Conn) endReplay() { c.replaying = false }

func (c *Conn) Read(p []byte) (int, error) {
	if c.replaying {
		if len(c.replay) == 0 {
			return 0, io.EOF
		}
		n := copy(p, c.replay)
		c.replay = c.replay[n:]
		return n, nil
	}
	if err := c.Flush(); err != nil {
		return 0, err
	}
	if c.limit <= 0 {
		return c.Conn.Read(p)
	}
	for len(c.out) == 0 {
		// go-mysql asks for more: it has answered every command handed
		// to it, so a refusal or a deferred execute is next in turn.
		if c.refuse {
			c.refuse = false
			e := &mysql.MyError{Code: mysql.ER_MALFORMED_PACKET, State: "HY000", Message: "Malformed communication packet."}
			if c.refuseErr != nil {
				e, c.refuseErr = c.refuseErr, nil
			}
			c.wbuf = appendPacket(c.wbuf, c.refuseSeq, errPayload(e))
			if err := c.Flush(); err != nil {
				return 0, err
			}
		}
		if c.later != nil {
			rest := c.later
			c.later = nil
			c.feed(rest)
			continue
		}
		if c.err != nil {
			return 0, c.err
		}
		// p is go-mysql's read buffer: read into it, then queue what may
		// pass (all of it, but for held or refused packets) in c.out.
		n, err := c.Conn.Read(p)
		c.feed(p[:n])
		if err != nil && len(c.out) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	if len(c.out) == 0 {
		c.out = c.outBuf[:0]
	}
	return n, nil
}

// feed follows the frames in b, the bytes just read, and queues them in
// c.out for go-mysql. On a violation it stops before the offending frame,
// so go-mysql never sees (or allocates for) it. A one-frame command packet
// is held back until its command byte shows whether it is a
// COM_STMT_EXECUTE to complete (see fixExecute).
func (c *Conn) feed(b []byte) {
	for i := 0; i < len(b); {
		if c.remain == 0 {
			c.hdr[c.hdrN] = b[i]
			c.hdrN++
			i++
			if c.hdrN < 4 {
				continue
			}
			c.hdrN = 0
			n := int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
			c.seq = c.hdr[3]
			start := c.size == 0 && !c.cont
			c.size += n
			if c.size > c.limit {
				c.err = errPacketTooLarge
				return
			}
			if start && n == 0 && !c.allowZero {
				c.err = errEmptyPacket
				return
			}
			c.atCmd = start
			c.cont = n == maxFrame
			c.remain = n
			switch {
			case start && n > 0:
				// Held until its command byte says where it goes: a
				// long-data packet never reaches go-mysql, a one-frame
				// execute may be completed (fixExecute).
				c.hold = append(c.hold[:0], c.hdr[:]...)
				c.holding = true
			case c.sinking:
				// A long-data packet's next frame: go-mysql sees none.
			default:
				c.out = append(c.out, c.hdr[:]...)
			}
			if n == 0 {
				c.size = 0
				c.endSink()
			}
			continue
		}
		k := min(c.remain, len(b)-i)
		if c.atCmd {
			c.atCmd = false
			if err := c.command(b[i]); err != nil {
				c.err = err
				return
			}
			switch {
			case b[i] == mysql.COM_STMT_SEND_LONG_DATA:
				// Kept here (endSink), never passed on.
				c.holding = false
				c.sinking, c.sink = true, c.sink[:0]
			case c.holding && (b[i] != mysql.COM_STMT_EXECUTE || c.cont):
				// Only a one-frame execute stays held.
				c.out = append(c.out, c.hold...)
				c.holding = false
			}
		}
		switch {
		case c.holding:
			c.hold = append(c.hold, b[i:i+k]...)
		case c.sinking:
			c.sink = append(c.sink, b[i:i+k]...)
		default:
			c.out = append(c.out, b[i:i+k]...)
		}
		i += k
		c.remain -= k
		if c.remain == 0 && !c.cont {
			c.size = 0
			c.endSink()
			if c.holding {
				c.holding = false
				if len(c.out) > 0 {
					// Behind other commands, an execute waits until
					// go-mysql has answered them: one of them may
					// prepare the statement it names.
					c.later = append(append([]byte(nil), c.hold...), b[i:]...)
					return
				}
				pkt, ok := c.fixExecute(c.hold)
				if !ok {
					c.refuse, c.refuseSeq = true, c.seq+1
					c.later = append([]byte(nil), b[i:]...)
					return
				}
				c.out = append(c.out, pkt...)
			}
		}
	}
}

// Prepared records a prepared statement's parameter count: fixExecute
// needs it to find the parameter types in an execute packet. go-mysql
// numbers statements 1, 2, ... per connection, one per COM_STMT_PREPARE.
func (c *Conn) Prepared(id uint32, params int) {
	if c.params == nil {
		c.params = map[uint32]int{}
	}
	c.params[id] = params
}

// fixExecute prepares a COM_STMT_EXECUTE packet (with its header) for
// go-mysql: it puts back left-out parameter types (withTypes). ok is false
// when the parameter values are cut off: go-mysql v1.16.0 reads a
// length-encoded value's length without a bounds check and panics, which
// cost the client its connection; such a packet is answered by Read.
func (c *Conn) fixExecute(pkt []byte) (_ []byte, ok bool) {
	pkt = c.withTypes(pkt)
	pkt, ok = c.withLongData(pkt)
	if !ok {
		return nil, false
	}
	if p := pkt[4:]; len(p) >= 10 && !valuesComplete(p, c.params[binary.LittleEndian.Uint32(p[1:])]) {
		return nil, false
	}
	return pkt, true
}

// endSink ends a COM_STMT_SEND_LONG_DATA packet: its chunk is kept for
// its statement's next execute. MySQL answers nothing to it, whatever
// it holds, so a chunk too short to name a statement and a parameter,
// or naming neither, is dropped.
func (c *Conn) endSink() {
	if !c.sinking {
		return
	}
	c.sinking = false
	p := c.sink
	if len(p) < 7 {
		return
	}
	id, param := binary.LittleEndian.Uint32(p[1:]), binary.LittleEndian.Uint16(p[5:])
	if int(param) >= c.params[id] {
		return
	}
	if c.long == nil {
		c.long = map[uint32]map[uint16][]byte{}
	}
	if c.long[id] == nil {
		c.long[id] = map[uint16][]byte{}
	}
	c.long[id][param] = append(c.long[id][param], p[7:]...)
	if cap(c.sink) > 64<<10 {
		c.sink = nil
	}
}

// errLongDataFrame refuses an execute whose long data does not fit one
// protocol frame once put into the execute packet (the reply's sequence
// number would no longer be the one the client expects).
var errLongDataFrame = &mysql.MyError{Code: mysql.ER_NET_PACKET_TOO_LARGE, State: "08S01",
	Message: "Got a packet bigger than 'max_allowed_packet' bytes (ticketd takes at most 16 MB of COM_STMT_SEND_LONG_DATA per execute)"}

// withLongData puts the long data sent for an execute's statement into
// the packet: each such parameter gets its chunks as a length-encoded
// value, typed as a string (MariaDB reads long data as a string) unless
// its type is a string or blob one already. The statement's long data is
// then used up, as in MySQL. ok is false when the packet cannot be read
// (valuesComplete refuses it then) or the result does not fit one frame
// (c.refuseErr says so).
func (c *Conn) withLongData(pkt []byte) (_ []byte, ok bool) {
	p := pkt[4:]
	if len(p) < 10 || len(c.long) == 0 {
		return pkt, true
	}
	id := binary.LittleEndian.Uint32(p[1:])
	long := c.long[id]
	if long == nil {
		return pkt, true
	}
	delete(c.long, id)
	n := c.params[id]
	m := (n + 7) / 8
	if n == 0 || len(p) < 11+m+2*n || p[10+m] != 1 {
		return pkt, true // no types: go-mysql passes NULLs, as before
	}
	nulls := p[10 : 10+m]
	types := append([]byte(nil), p[11+m:11+m+2*n]...)
	out := make([]byte, 0, len(pkt)+64)
	out = append(out, pkt[:4+11+m]...)
	typePos := len(out)
	out = append(out, types...)
	r := reader{b: p, pos: 11 + m + 2*n}
	for i := range n {
		if data, has := long[uint16(i)]; has {
			// Long data wins over the NULL bit, as in MariaDB: mysqlnd
			// sets it for a blob whose PHP variable is null.
			out[4+10+i/8] &^= 1 << (i % 8)
			if !isStringType(types[2*i]) {
				out[typePos+2*i] = mysql.MYSQL_TYPE_STRING
			}
			out = appendLenEnc(out, uint64(len(data)))
			out = append(out, data...)
			continue
		}
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		start := r.pos
		if ok, known := skipValue(&r, types[2*i]); !ok || !known {
			return pkt, true // valuesComplete or go-mysql refuses it
		}
		out = append(out, p[start:r.pos]...)
	}
	out = append(out, p[r.pos:]...)
	l := len(out) - 4
	if l >= maxFrame {
		c.refuseErr = errLongDataFrame
		return nil, false
	}
	out[0], out[1], out[2] = byte(l), byte(l>>8), byte(l>>16)
	return out, true
}

// isStringType reports the parameter types go-mysql passes as their bytes.
func isStringType(t byte) bool {
	switch t {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING:
		return true
	}
	return false
}

// appendLenEnc appends a length-encoded integer.
func appendLenEnc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// valuesComplete walks an execute payload's parameter values (n
// parameters, types bound in the packet) and reports whether each one is
// all there.
func valuesComplete(p []byte, n int) bool {
	m := (n + 7) / 8
	if n == 0 || len(p) < 11+m || p[10+m] != 1 || len(p) < 11+m+2*n {
		return true // no values for go-mysql to read
	}
	nulls, types := p[10:10+m], p[11+m:11+m+2*n]
	r := reader{b: p, pos: 11 + m + 2*n}
	for i := range n {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		ok, known := skipValue(&r, types[2*i])
		if !known {
			return true // go-mysql refuses the type itself
		}
		if !ok {
			return false
		}
	}
	return true
}

// skipValue moves r past one parameter value of type t, as go-mysql
// reads it; ok is false when the value is cut off, known when go-mysql
// knows the type (it refuses the others itself).
func skipValue(r *reader, t byte) (ok, known bool) {
	fixed := func(size int) bool { _, ok := r.bytes(size); return ok }
	switch t {
	case mysql.MYSQL_TYPE_NULL:
		return true, true
	case mysql.MYSQL_TYPE_TINY:
		return fixed(1), true
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		return fixed(2), true
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_FLOAT:
		return fixed(4), true
	case mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_DOUBLE:
		return fixed(8), true
	case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BIT,
		mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB,
		mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_VECTOR, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE,
		mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIME:
		c, ok := r.byte()
		if !ok {
			return false, true
		}
		switch c {
		case 0xfb: // NULL
			return true, true
		case 0xff: // not a length prefix; go-mysql reads it as 255
			return fixed(255), true
		}
		r.pos--
		_, ok = r.lenencBytes()
		return ok, true
	}
	return true, false
}

// withTypes completes an execute packet's parameter types. A client
// executing a statement again with the same parameter types may leave
// them out (new-params-bound flag 0: mysqlnd, libmysqlclient, DBD::mysql
// do); go-mysql v1.16.0 then ignores the parameter values and passes
// every parameter as NULL. The types of the last execute that had them
// are put back in.
func (c *Conn) withTypes(pkt []byte) []byte {
	p := pkt[4:]
	if len(p) < 10 {
		return pkt
	}
	id := binary.LittleEndian.Uint32(p[1:])
	n := c.params[id]
	if n == 0 {
		return pkt
	}
	m := (n + 7) / 8
	if len(p) < 11+m {
		return pkt
	}
	if c.types == nil {
		c.types = map[uint32][]byte{}
	}
	switch p[10+m] {
	case 1:
		if len(p) >= 11+m+2*n {
			c.types[id] = append(c.types[id][:0], p[11+m:11+m+2*n]...)
		}
		return pkt
	case 0:
		t := c.types[id]
		if t == nil {
			return pkt
		}
		fixed := make([]byte, 0, len(pkt)+len(t))
		fixed = append(fixed, pkt[:4+10+m]...)
		fixed = append(fixed, 1)
		fixed = append(fixed, t...)
		fixed = append(fixed, p[11+m:]...)
		l := len(fixed) - 4
		if l >= maxFrame {
			return pkt
		}
		fixed[0], fixed[1], fixed[2] = byte(l), byte(l>>8), byte(l>>16)
		return fixed
	}
	return pkt
}

// command accounts for a packet's command byte once its header is known.
func (c *Conn) command(cmd byte) error {
	switch cmd {
	case mysql.COM_STMT_SEND_LONG_DATA:
		// go-mysql appends every chunk to the parameter without bound;
		// MySQL bounds a parameter's long data by max_allowed_packet.
		c.longData += c.size
		if c.longData > c.limit {
			return errPacketTooLarge
		}
	case mysql.COM_STMT_EXECUTE:
		c.longData = 0
	case mysql.COM_STMT_RESET, mysql.COM_STMT_CLOSE, mysql.COM_RESET_CONNECTION, mysql.COM_CHANGE_USER:
		// A reset drops its statement's long data; the statement is not
		// known before the packet's end, so all of it goes (a client
		// sends long data for one statement at a time).
		c.longData = 0
		clear(c.long)
	}
	return nil
}

// betweenPackets reports whether the client is not in the middle of
// sending a packet (for telling an idle timeout from a stalled upload).
func (c *Conn) betweenPackets() bool {
	return c.hdrN == 0 && c.remain == 0 && !c.cont
}

// DropReply discards the next packet go-mysql writes: a handler that wrote
// its command's reply itself calls it before returning. go-mysql writes
// the OK it then sends in one Write call (writeOK builds one small packet).
func (c *Conn) DropReply() { c.dropNext = true }

func (c *Conn) Write(p []byte) (int, error) {
	if c.replaying {
		return len(p), nil
	}
	if c.dropNext {
		c.dropNext = false
		return len(p), nil
	}
	c.wbuf = append(c.wbuf, p...)
	if len(c.wbuf) >= maxBuffered {
		if err := c.Flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// handOver builds go-mysql's server.Conn serving h over nc, whose client
// authenticated as l, by replaying a canned handshake to it
// (workaround 1).
func (a *Acceptor) handOver(nc net.Conn, l *login, h server.Handler) (*server.Conn, *Conn, error) {
	cc := newConn(nc, cannedResponse(l), a.cfg.MaxAllowedPacket, a.cfg.WriteTimeout)
	c, err := a.proto.NewCustomizedConn(cc, replayAuth{}, h)
	if err != nil {
		return nil, nil, fmt.Errorf("replaying the handshake to go-mysql: %w", err)
	}
	cc.endReplay()
	cc.sc = c
	return c, cc, nil
}

// newGoMySQLServer is the go-mysql server configuration, built once and
// without keys: ticketd does TLS and authentication itself.
func newGoMySQLServer(version string) *server.Server {
	return server.NewServer(version, mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, nil)
}

// cannedResponse is the handshake response replayed to go-mysql: the
// client's user and negotiated capabilities (less those of the connection
// phase, which is over), an empty mysql_native_password response that
// replayAuth accepts, and no database (ready has selected it).
func cannedResponse(l *login) []byte {
	caps := l.caps&^(mysql.CLIENT_SSL|mysql.CLIENT_CONNECT_WITH_DB|mysql.CLIENT_CONNECT_ATTRS) |
		mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_PLUGIN_AUTH |
		mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
	b := make([]byte, 4, 4+32+len(l.user)+1+1+len(NativePassword)+1)
	b = binary.LittleEndian.AppendUint32(b, caps)
	b = append(b, make([]byte, 4+1+23)...)
	b = append(b, l.user...)
	b = append(b, 0, 0) // NUL after the user, then an empty lenenc auth response
	b = append(b, NativePassword...)
	b = append(b, 0)
	n := len(b) - 4
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), 1
	return b
}

// replayAuth is go-mysql's authentication handler for the replayed
// handshake: the client is already authenticated, so the canned empty
// password is accepted.
type replayAuth struct{}

func (replayAuth) GetCredential(string) (server.Credential, bool, error) {
	return server.Credential{Passwords: []string{""}, AuthPluginName: NativePassword}, true, nil
}

// OnAuthSuccess sets the autocommit status flag: go-mysql starts with
// status 0, which PyMySQL, mysqlclient and Connector/J read as autocommit
// off.
func (replayAuth) OnAuthSuccess(c *server.Conn) error {
	c.SetStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
	return nil
}

func (replayAuth) OnAuthFailure(*server.Conn, error) {}

// maxBuffered bounds the reply bytes held before writing (large result
// sets go out in pieces of about this size).
const maxBuffered = 64 << 10

// Flush writes the buffered reply (the last one may still be buffered
// when the command phase ends).
func (c *Conn) Flush() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	if c.writeTimeout > 0 {
		// Moving the deadline on every write costs a timer update per
		// packet; moving it when half of it is used keeps every write
		// at least writeTimeout/2 from its deadline for far less.
		if now := time.Now(); now.Sub(c.writeSet) > c.writeTimeout/2 {
			c.writeSet = now
			_ = c.Conn.SetWriteDeadline(now.Add(c.writeTimeout))
		}
	}
	_, err := c.Conn.Write(c.wbuf)
	if cap(c.wbuf) > maxBuffered {
		c.wbuf = nil
	} else {
		c.wbuf = c.wbuf[:0]
	}
	return err
}

// writeRaw writes one packet straight to the client, outside go-mysql (for
// the last words before closing a connection).
func (c *Conn) writeRaw(seq byte, payload []byte) error {
	_ = c.Flush()
	_ = c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, err := c.Conn.Write(appendPacket(nil, seq, payload))
	return err
}

// appendPacket appends one packet (header and payload) to b.
func appendPacket(b []byte, seq byte, payload []byte) []byte {
	b = append(b, byte(len(payload)), byte(len(payload)>>8), byte(len(payload)>>16), seq)
	return append(b, payload...)
}

// errPayload is an ERR packet's payload.
func errPayload(e *mysql.MyError) []byte {
	b := make([]byte, 0, 9+len(e.Message))
	b = append(b, mysql.ERR_HEADER, byte(e.Code), byte(e.Code>>8), '#')
	state := e.State
	if len(state) != 5 {
		state = "HY000"
	}
	b = append(b, state...)
	return append(b, e.Message...)
}
