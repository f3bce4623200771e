package wire

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Protocol violations found by clientConn while reading. They end the
// connection; serveConn tells the client why in MySQL's words first.
var (
	errPacketTooLarge = errors.New("wire: client packet over max_allowed_packet")
	errEmptyPacket    = errors.New("wire: empty command packet")
)

// maxFrame is the largest payload of one protocol frame; a frame this long
// is continued by the next one.
const maxFrame = 0xffffff

// clientConn is the net.Conn go-mysql's server.Conn reads and writes, over
// the client's TCP or TLS connection. It does three things go-mysql cannot:
//
//   - replay: ticketd runs the connection phase itself (see connect); then
//     go-mysql's own handshake is fed a canned response from memory and
//     its handshake packets are discarded, so go-mysql starts its command
//     phase on an authenticated connection;
//   - it follows the client's packet framing and refuses a packet over
//     max_allowed_packet (joined frames included, and the total of
//     COM_STMT_SEND_LONG_DATA chunks) before go-mysql allocates for it, and
//     an empty command packet, on which go-mysql's dispatch would index
//     out of range;
//   - it completes COM_STMT_EXECUTE packets that leave out the parameter
//     types of a re-execution (see fixExecute);
//   - it drops one reply go-mysql writes after a handler already wrote its
//     own (COM_STATISTICS answers a bare string, not the OK go-mysql
//     writes for every HandleOtherCommand).
//
// It also keeps writes bounded by a deadline, so a client that stops
// reading cannot hold a goroutine forever.
type clientConn struct {
	net.Conn

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

	dropNext bool // discard the next Write (see dropReply)

	// A COM_STMT_EXECUTE refused before go-mysql saw it (fixExecute), and
	// bytes read but not fed yet (after a refused execute, or from an
	// execute pipelined behind other commands on): Read answers the
	// refusal and feeds the rest once go-mysql has answered what it has.
	refuse    bool
	refuseSeq byte
	later     []byte

	// wbuf collects go-mysql's writes of one reply: it writes every
	// packet of a result set with its own Write (five for SELECT
	// LAST_INSERT_ID()), a system call each. The reply goes out in one
	// write when go-mysql next reads, i.e. when the command is done.
	wbuf []byte

	writeTimeout time.Duration
	writeSet     time.Time // when the write deadline was last moved
}

func newClientConn(nc net.Conn, replay []byte, limit int, writeTimeout time.Duration) *clientConn {
	c := &clientConn{Conn: nc, replay: replay, replaying: true, limit: limit, writeTimeout: writeTimeout}
	c.outBuf = make([]byte, 0, 512)
	c.out = c.outBuf
	return c
}

// Close leaves the connection open: go-mysql closes it on any read error,
// before serveConn could tell the client why (farewell). serveConn closes
// the client's connection itself when it returns.
func (c *clientConn) Close() error { return nil }

// endReplay switches from the canned handshake to the client.
func (c *clientConn) endReplay() { c.replaying = false }

func (c *clientConn) Read(p []byte) (int, error) {
	if c.replaying {
		if len(c.replay) == 0 {
			return 0, io.EOF
		}
		n := copy(p, c.replay)
		c.replay = c.replay[n:]
		return n, nil
	}
	if err := c.flush(); err != nil {
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
			c.wbuf = appendPacket(c.wbuf, c.refuseSeq, errPayload(e))
			if err := c.flush(); err != nil {
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
func (c *clientConn) feed(b []byte) {
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
			if start && !c.cont && n > 0 {
				c.hold = append(c.hold[:0], c.hdr[:]...)
				c.holding = true
			} else {
				c.out = append(c.out, c.hdr[:]...)
			}
			if n == 0 {
				c.size = 0
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
			if b[i] != mysql.COM_STMT_EXECUTE {
				c.out = append(c.out, c.hold...)
				c.holding = false
			}
		}
		if c.holding {
			c.hold = append(c.hold, b[i:i+k]...)
		} else {
			c.out = append(c.out, b[i:i+k]...)
		}
		i += k
		c.remain -= k
		if c.remain == 0 && !c.cont {
			c.size = 0
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

// prepared records a prepared statement's parameter count: fixExecute
// needs it to find the parameter types in an execute packet. go-mysql
// numbers statements 1, 2, ... per connection, one per COM_STMT_PREPARE.
func (c *clientConn) prepared(id uint32, params int) {
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
func (c *clientConn) fixExecute(pkt []byte) (_ []byte, ok bool) {
	pkt = c.withTypes(pkt)
	if p := pkt[4:]; len(p) >= 10 && !valuesComplete(p, c.params[binary.LittleEndian.Uint32(p[1:])]) {
		return nil, false
	}
	return pkt, true
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
	fixed := func(size int) bool { _, ok := r.bytes(size); return ok }
	for i := range n {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		ok := true
		switch types[2*i] {
		case mysql.MYSQL_TYPE_NULL:
		case mysql.MYSQL_TYPE_TINY:
			ok = fixed(1)
		case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
			ok = fixed(2)
		case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_FLOAT:
			ok = fixed(4)
		case mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_DOUBLE:
			ok = fixed(8)
		case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_BIT,
			mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB,
			mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
			mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_VECTOR, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE,
			mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIME:
			var c byte
			if c, ok = r.byte(); !ok {
				break
			}
			switch c {
			case 0xfb: // NULL
			case 0xff: // not a length prefix; go-mysql reads it as 255
				ok = fixed(255)
			default:
				r.pos--
				_, ok = r.lenencBytes()
			}
		default:
			return true // go-mysql refuses the type itself
		}
		if !ok {
			return false
		}
	}
	return true
}

// withTypes completes an execute packet's parameter types. A client
// executing a statement again with the same parameter types may leave
// them out (new-params-bound flag 0: mysqlnd, libmysqlclient, DBD::mysql
// do); go-mysql v1.16.0 then ignores the parameter values and passes
// every parameter as NULL. The types of the last execute that had them
// are put back in.
func (c *clientConn) withTypes(pkt []byte) []byte {
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
func (c *clientConn) command(cmd byte) error {
	switch cmd {
	case mysql.COM_STMT_SEND_LONG_DATA:
		// go-mysql appends every chunk to the parameter without bound;
		// MySQL bounds a parameter's long data by max_allowed_packet.
		c.longData += c.size
		if c.longData > c.limit {
			return errPacketTooLarge
		}
	case mysql.COM_STMT_EXECUTE, mysql.COM_STMT_RESET, mysql.COM_STMT_CLOSE, mysql.COM_RESET_CONNECTION:
		c.longData = 0
	}
	return nil
}

// betweenPackets reports whether the client is not in the middle of
// sending a packet (for telling an idle timeout from a stalled upload).
func (c *clientConn) betweenPackets() bool {
	return c.hdrN == 0 && c.remain == 0 && !c.cont
}

// dropReply discards the next packet go-mysql writes: a handler that wrote
// its command's reply itself calls it before returning. go-mysql writes
// the OK it then sends in one Write call (writeOK builds one small packet).
func (c *clientConn) dropReply() { c.dropNext = true }

func (c *clientConn) Write(p []byte) (int, error) {
	if c.replaying {
		return len(p), nil
	}
	if c.dropNext {
		c.dropNext = false
		return len(p), nil
	}
	c.wbuf = append(c.wbuf, p...)
	if len(c.wbuf) >= maxBuffered {
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// maxBuffered bounds the reply bytes held before writing (large result
// sets go out in pieces of about this size).
const maxBuffered = 64 << 10

// flush writes the buffered reply.
func (c *clientConn) flush() error {
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
func (c *clientConn) writeRaw(seq byte, payload []byte) error {
	_ = c.flush()
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
