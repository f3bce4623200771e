package raftstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/raftstore/raftport"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/ticket/model"
)

// Forwarding protocol, on the Raft port's forwarding connections (raftport).
// Frames in both directions are length-prefixed and carry a request id, so
// one connection carries many requests at once and answers may come back
// in any order:
//
//	request:  u32 length | u8 kind   | u64 id | u32 timeout ms | payload
//	response: u32 length | u8 status | u64 id | payload
//
// length counts the bytes after itself. Propose's payload is an
// EncodeBatch batch, answered by the entry's u64 log index and then
// EncodeResults; ProposeAs's is a u64 session (alloc.CASOwner) and then
// Propose's; Join's is two strings (id, address), Remove's one; a
// non-OK status carries an error message.
const (
	fwdPropose byte = 1
	fwdJoin    byte = 2
	fwdRemove  byte = 3
	// fwdCommit asks the leader for its read index, a commit index
	// confirmed by a quorum (no payload; the answer is 8 bytes): a
	// follower is ready only once it has applied what the leader had
	// committed, and its reads wait for it (readindex.go).
	fwdCommit byte = 4
	// fwdNudge asks the leader to append a barrier entry (no payload):
	// the entry carries its commit index to the followers at once. Raft
	// tells an idle follower the commit index only every CommitTimeout,
	// and heartbeats do not carry it; a session that wrote through a
	// follower and reads next waits for it (WaitApplied).
	fwdNudge byte = 5
	// fwdStatus asks any member, leader or not, for its status document
	// (Config.Describe; no payload). A build from before it answers
	// stNotLeader or stRejected. 9 leaves room for the kinds other
	// branches add meanwhile.
	fwdStatus byte = 9
	// fwdTransfer asks the leader to hand leadership over (payload: the
	// target's id, empty for the most up-to-date voter; the answer is the
	// new leader's id).
	fwdTransfer byte = 6
	// fwdVersion asks any node, leader or not, for the command version of
	// its build (no payload; the answer is a u32). A build from before
	// versions answers stNotLeader or stRejected (version.go).
	fwdVersion byte = 7
	// fwdProposeAs is fwdPropose naming the session of a compare-and-set
	// (ticket/alloc/casgate.go). A build from before it answers stRejected.
	fwdProposeAs byte = 12

	stOK        byte = 0
	stNotLeader byte = 1 // not the leader: nothing was done
	stNoQuorum  byte = 2 // not committed
	stUncertain byte = 3 // may have been committed
	stRejected  byte = 4 // refused before anything was proposed
	// Membership changes refused by the leader: nothing was changed.
	stUnknownMember  byte = 5
	stMemberConflict byte = 6
	// A leadership transfer with no voter to go to: nothing was done.
	stNoTarget      byte = 7
	stMemberVersion byte = 8 // the joining node's build is too old

	reqHeader  = 1 + 8 + 4
	respHeader = 1 + 8
	maxFrame   = 64 << 20

	// forwardGrace is how much longer than its deadline a follower waits
	// for the leader's answer: the leader queues the entry within the
	// deadline but may need a little longer to learn its fate, and a
	// definite answer is worth more than an early ErrUncertain.
	forwardGrace = 2 * time.Second

	// changedGrace and handedOverGrace are how long a follower still
	// waits for a forwarded request's answer once its leader has
	// changed: to nobody known, and to a known new leader (see
	// fconn.call). A handover's target stands for election before it
	// is known as the leader; under load (a rolling restart with two
	// CPU burners on this 2-core machine) that took over 100 ms, the
	// grace this had, and statements in flight were answered "outcome
	// unknown" although the old leader would have relayed them.
	changedGrace    = 500 * time.Millisecond
	handedOverGrace = 2 * time.Second
)

// leaderWatch tells a forwarded request's wait that the leader it was
// sent to is no longer the one this node follows (changed is closed), and
// whether another one is known now (handedOver).
type leaderWatch struct {
	changed    <-chan struct{}
	handedOver func() bool
}

// errNotSent marks a forwarded request that certainly never reached the
// leader whole (no connection, a failed or partial write, or the deadline
// passed before sending): it may be retried.
var errNotSent = errors.New("raftstore: request not sent")

// serveForward answers forwarded requests on one connection until it
// closes. Requests run concurrently (each waits for its Raft entry, and
// none waits for another), and the answers are written as they
// complete, those completing together in one write.
//
// The requests run on the connection's handler goroutines: an idle one
// takes the next request, and a new one starts only when all are busy,
// so there are as many as the connection ever had requests at once (a
// follower keeps a few in flight) and they end with it. A goroutine per
// request, as before, was created, grew its stack to the depth of the
// leader's Service (runtime.newstack and copystack, 3% of a leader's
// CPU at 64 connections) and was dropped, for every forwarded batch.
func (n *Node) serveForward(c net.Conn) {
	out := raftport.NewFrameWriter(c, n.cfg.TransportTimeout)
	handle := func(r forwardedRequest) {
		status, payload := n.handleForward(r.kind, r.timeout, r.payload)
		out.Send(func(b []byte) []byte {
			b = binary.BigEndian.AppendUint32(b, uint32(respHeader+len(payload)))
			b = append(b, status)
			b = binary.BigEndian.AppendUint64(b, r.id)
			return append(b, payload...)
		})
	}
	idle := make(chan forwardedRequest) // unbuffered: taken only by a handler waiting for it
	var wg sync.WaitGroup
	defer func() {
		close(idle)
		wg.Wait()
	}()
	br := bufio.NewReaderSize(c, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size < reqHeader || size > maxFrame {
			n.log.Warn("forward: bad frame", "size", size, "remote", c.RemoteAddr())
			return
		}
		body, err := readBody(br, size)
		if err != nil {
			return
		}
		r := forwardedRequest{
			kind:    body[0],
			id:      binary.BigEndian.Uint64(body[1:9]),
			timeout: time.Duration(binary.BigEndian.Uint32(body[9:13])) * time.Millisecond,
			payload: body[reqHeader:],
		}
		select {
		case idle <- r:
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(r)
				for r := range idle {
					handle(r)
				}
			}()
		}
	}
}

// forwardedRequest is one request frame read by serveForward.
type forwardedRequest struct {
	kind    byte
	id      uint64
	timeout time.Duration
	payload []byte
}

// readBody reads a frame body of size bytes. Memory grows with the bytes
// that actually arrive, not with the size a peer announces: a header
// claiming 64 MiB followed by nothing costs a buffer of small frames.
func readBody(r io.Reader, size uint32) ([]byte, error) {
	const small = 64 << 10
	if size <= small {
		b := make([]byte, size)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	buf.Grow(small)
	if _, err := io.CopyN(&buf, r, int64(size)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (n *Node) handleForward(kind byte, timeout time.Duration, payload []byte) (status byte, out []byte) {
	if timeout <= 0 || timeout > n.cfg.ApplyTimeout {
		timeout = n.cfg.ApplyTimeout
	}
	deadline := time.Now().Add(timeout)
	if kind == fwdStatus {
		return stOK, n.Describe()
	}
	if kind == fwdVersion {
		return stOK, n.versionAnswer()
	}
	if kind == fwdPeers {
		return stOK, n.peersAnswer()
	}
	if kind == fwdRemoved {
		return n.heardRemoved(payload)
	}
	if n.raft.State() != raft.Leader {
		return stNotLeader, []byte("not the leader")
	}
	var owner uint64
	if kind == fwdProposeAs {
		if len(payload) < 8 {
			return stRejected, []byte("bad batch")
		}
		kind, owner, payload = fwdPropose, binary.BigEndian.Uint64(payload), payload[8:]
	}
	switch kind {
	case fwdPropose:
		if len(payload) == 0 || payload[0] != logformat.BatchVersion {
			return stRejected, []byte("bad batch")
		}
		var (
			res   []model.Result
			index uint64
			err   error
		)
		if n.handler != nil {
			// The leader's Service decides how the commands are carried
			// out (from a reserved range, or in entries of its own).
			res, index, err = n.handleBatch(n.handler, deadline, payload, owner)
		} else if _, derr := logformat.DecodeBatch(payload); derr != nil {
			// Only what every replica decodes goes into the log: an
			// undecodable entry stops the state machines that meet it.
			return stRejected, []byte(derr.Error())
		} else {
			// The batch goes into the log as the follower encoded it.
			res, index, err = n.proposeLocal(context.Background(), deadline, payload)
		}
		if err != nil {
			return errStatus(err), []byte(err.Error())
		}
		// The entry's index lets the follower wait for its own state to
		// include it (read-your-writes for schema changes).
		out := binary.BigEndian.AppendUint64(make([]byte, 0, 8+16*len(res)), index)
		// Row images in the encoding every member reads: the follower
		// may run an older build while the cluster runs below version 7.
		return stOK, logformat.AppendResults(out, res, logformat.FormatAt(n.fsm.ClusterVersion()))
	case fwdCommit:
		// The read index (readindex.go), confirmed by a quorum and shared
		// with the other readers of the moment: a follower that asks must
		// not be told the commit index of a leader that was deposed.
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		idx, err := n.reads.do(ctx, n.readIndexRound)
		if err != nil {
			return errStatus(err), []byte(err.Error())
		}
		return stOK, binary.BigEndian.AppendUint64(nil, idx)
	case fwdNudge:
		// await, not Error(): a barrier enqueued just before Raft shuts
		// down is never answered (hashicorp/raft#498), and Close waits
		// for this handler (a -race run of TestForwardReusesHandlers hung
		// in its cleanup there).
		if err := n.await(context.Background(), n.raft.Barrier(time.Until(deadline)), deadline); err != nil {
			return errStatus(applyError(err)), []byte(err.Error())
		}
		return stOK, nil
	case fwdTransfer:
		d := logformat.NewReader(payload)
		to := d.String()
		if err := d.Done(); err != nil {
			return stRejected, []byte(err.Error())
		}
		leader, err := n.transferLocal(context.Background(), to, deadline)
		if err != nil {
			return errStatus(err), []byte(err.Error())
		}
		return stOK, []byte(leader)
	case fwdJoin, fwdRemove:
		d := logformat.NewReader(payload)
		id := d.String()
		addr := ""
		if kind == fwdJoin {
			addr = d.String()
		}
		if err := d.Done(); err != nil {
			return stRejected, []byte(err.Error())
		}
		if err := n.membershipLocal(kind, id, addr, deadline); err != nil {
			return errStatus(err), []byte(err.Error())
		}
		return stOK, nil
	default:
		return stRejected, []byte(fmt.Sprintf("unknown request kind %d", kind))
	}
}

// ForwardHandler runs a batch forwarded by a follower on the leader
// (Config.Forward). It typically proposes through this node again.
type ForwardHandler func(ctx context.Context, cmds []model.Command) ([]model.Result, error)

// handleBatch runs a forwarded batch through the handler. The index
// returned is the leader's applied index afterwards, which covers every
// entry the batch produced.
func (n *Node) handleBatch(h ForwardHandler, deadline time.Time, payload []byte, owner uint64) ([]model.Result, uint64, error) {
	cmds, err := logformat.DecodeBatch(payload)
	if err != nil {
		return nil, 0, fmt.Errorf("raftstore: forwarded batch: %w: %w", ticket.ErrNoQuorum, err)
	}
	ctx, cancel := context.WithDeadline(alloc.WithCASOwner(context.Background(), owner), deadline)
	defer cancel()
	res, err := h(ctx, cmds)
	if err != nil {
		return nil, 0, err
	}
	if len(res) != len(cmds) {
		return nil, 0, fmt.Errorf("raftstore: %w: %d results for %d commands", ticket.ErrUncertain, len(res), len(cmds))
	}
	return res, n.fsm.AppliedIndex(), nil
}

func errStatus(err error) byte {
	switch {
	case errors.Is(err, ErrUnknownMember):
		return stUnknownMember
	case errors.Is(err, ErrMemberConflict):
		return stMemberConflict
	case errors.Is(err, ErrNoTransferTarget):
		return stNoTarget
	case errors.Is(err, ErrMemberVersion):
		return stMemberVersion
	case errors.Is(err, errNotLeader):
		return stNotLeader
	case errors.Is(err, ticket.ErrNoQuorum):
		return stNoQuorum
	default:
		return stUncertain
	}
}

// forwarder is a follower's client for the leader: a few persistent
// connections per leader address, each pipelining many requests.
type forwarder struct {
	port    forwardDialer
	size    int
	timeout time.Duration
	log     *slog.Logger

	mu     sync.Mutex
	pools  map[string]*fpool
	closed bool
}

type fpool struct {
	conns   []*fconn
	next    int
	dialing chan struct{} // closed when the dial under way ends
}

// forwardDialer connects to the forwarding server on a peer's Raft port
// (raftport.Port).
type forwardDialer interface {
	DialForward(addr string, timeout time.Duration) (net.Conn, error)
}

func newForwarder(port forwardDialer, size int, timeout time.Duration, log *slog.Logger) *forwarder {
	return &forwarder{port: port, size: size, timeout: timeout, log: log, pools: make(map[string]*fpool)}
}

// conn returns a live connection to addr, dialing one (at most one dial at
// a time per address) while the pool is not full.
func (f *forwarder) conn(addr string) (*fconn, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		p := f.pools[addr]
		if p == nil {
			p = &fpool{}
			f.pools[addr] = p
		}
		live := p.conns[:0]
		for _, c := range p.conns {
			if !c.isDead() {
				live = append(live, c)
			}
		}
		clear(p.conns[len(live):])
		p.conns = live
		if len(p.conns) >= f.size || (len(p.conns) > 0 && p.dialing != nil) {
			p.next++
			c := p.conns[p.next%len(p.conns)]
			f.mu.Unlock()
			return c, nil
		}
		if wait := p.dialing; wait != nil {
			f.mu.Unlock()
			<-wait
			continue
		}
		done := make(chan struct{})
		p.dialing = done
		f.mu.Unlock()

		// Dial outside the lock: a dead leader can take the whole timeout.
		nc, err := f.port.DialForward(addr, f.timeout)
		var c *fconn
		if err == nil {
			c = &fconn{c: nc, pending: make(map[uint64]chan fwdResp), done: make(chan struct{})}
			go c.readLoop()
		}
		f.mu.Lock()
		p.dialing = nil
		close(done)
		switch {
		case f.closed:
			f.mu.Unlock()
			if c != nil {
				c.fail(ErrClosed)
			}
			return nil, ErrClosed
		case err != nil:
			defer f.mu.Unlock()
			if len(p.conns) > 0 {
				return p.conns[0], nil
			}
			return nil, err
		}
		p.conns = append(p.conns, c)
		f.mu.Unlock()
		return c, nil
	}
}

func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	pools := f.pools
	f.pools = nil
	f.mu.Unlock()
	for _, p := range pools {
		for _, c := range p.conns {
			c.fail(ErrClosed)
		}
	}
}

// call sends one request to the leader at addr and waits for the answer.
// The error wraps errNotSent when the leader certainly did not get it.
// A nil changed never fires.
func (f *forwarder) call(ctx context.Context, addr string, deadline time.Time, kind byte, payload []byte, changed *leaderWatch) (byte, []byte, error) {
	c, err := f.conn(addr)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", errNotSent, err)
	}
	return c.call(ctx, deadline, kind, payload, f.timeout, changed)
}

// propose forwards an encoded batch to the leader and returns its results
// and the entry's log index. A batch of one session's compare-and-set
// names the session (owner, not 0), for the leader's queue of the row; a
// build from before fwdProposeAs rejects it, having done nothing, and
// gets the batch again without the name.
// The wait ends early, uncertain, when changed fires: the leader it was
// sent to is no longer the one this node follows.
func (f *forwarder) propose(ctx context.Context, addr string, deadline time.Time, data []byte, changed *leaderWatch, owner uint64) ([]model.Result, uint64, error) {
	kind, payload := fwdPropose, data
	if owner != 0 {
		kind, payload = fwdProposeAs, append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(data)), owner), data...)
	}
	status, out, err := f.call(ctx, addr, deadline, kind, payload, changed)
	if err == nil && status == stRejected && kind == fwdProposeAs {
		status, out, err = f.call(ctx, addr, deadline, fwdPropose, data, changed)
	}
	if err != nil {
		if errors.Is(err, errNotSent) {
			return nil, 0, fmt.Errorf("raftstore: forward to %s: %w", addr, err)
		}
		return nil, 0, fmt.Errorf("raftstore: forward to %s: %w: %w", addr, ticket.ErrUncertain, err)
	}
	switch status {
	case stOK:
		if len(out) < 8 {
			return nil, 0, fmt.Errorf("raftstore: forward to %s: %w: short answer", addr, ticket.ErrUncertain)
		}
		res, err := logformat.DecodeResults(out[8:])
		if err != nil {
			return nil, 0, fmt.Errorf("raftstore: forward to %s: %w: %w", addr, ticket.ErrUncertain, err)
		}
		return res, binary.BigEndian.Uint64(out), nil
	case stNotLeader:
		return nil, 0, fmt.Errorf("raftstore: forward to %s: %w", addr, errNotLeader)
	case stNoQuorum:
		return nil, 0, fmt.Errorf("raftstore: leader %s: %w: %s", addr, ticket.ErrNoQuorum, out)
	case stRejected:
		return nil, 0, fmt.Errorf("raftstore: leader %s rejected the batch: %s", addr, out)
	default:
		return nil, 0, fmt.Errorf("raftstore: leader %s: %w: %s", addr, ticket.ErrUncertain, out)
	}
}

// commitIndex asks the leader at addr for its commit index.
func (f *forwarder) commitIndex(ctx context.Context, addr string, deadline time.Time) (uint64, error) {
	status, out, err := f.call(ctx, addr, deadline, fwdCommit, nil, nil)
	if err != nil {
		return 0, fmt.Errorf("raftstore: ask %s for its commit index: %w", addr, err)
	}
	if status != stOK || len(out) != 8 {
		// The leader's reason travels with the status; without it a
		// refusal says nothing of what the leader met (make test, 02:53:
		// "status 3" alone, a stepped-down leader's election).
		return 0, fmt.Errorf("raftstore: %s did not give its commit index (status %d: %s)", addr, status, out)
	}
	return binary.BigEndian.Uint64(out), nil
}

func (f *forwarder) membership(ctx context.Context, addr string, deadline time.Time, kind byte, id, peerAddr string) error {
	payload := logformat.AppendString(nil, id)
	if kind == fwdJoin {
		payload = logformat.AppendString(payload, peerAddr)
	}
	status, out, err := f.call(ctx, addr, deadline, kind, payload, nil)
	if err != nil {
		return fmt.Errorf("raftstore: forward to %s: %w", addr, err)
	}
	switch status {
	case stOK:
		return nil
	case stNotLeader:
		return fmt.Errorf("raftstore: forward to %s: %w", addr, errNotLeader)
	case stUnknownMember:
		return fmt.Errorf("%w (leader %s: %s)", ErrUnknownMember, addr, out)
	case stMemberConflict:
		return fmt.Errorf("%w (leader %s: %s)", ErrMemberConflict, addr, out)
	case stMemberVersion:
		return fmt.Errorf("%w (leader %s: %s)", ErrMemberVersion, addr, out)
	default:
		return fmt.Errorf("raftstore: leader %s: %s", addr, out)
	}
}

// transfer asks the leader at addr to hand leadership to the voter to
// (empty: the most up-to-date one), and returns the new leader's id.
func (f *forwarder) transfer(ctx context.Context, addr string, deadline time.Time, to string) (string, error) {
	status, out, err := f.call(ctx, addr, deadline, fwdTransfer, logformat.AppendString(nil, to), nil)
	if err != nil {
		if errors.Is(err, errNotSent) {
			return "", fmt.Errorf("raftstore: forward to %s: %w", addr, err)
		}
		return "", fmt.Errorf("raftstore: forward to %s: %w: %w", addr, ticket.ErrUncertain, err)
	}
	switch status {
	case stOK:
		return string(out), nil
	case stNotLeader:
		return "", fmt.Errorf("raftstore: forward to %s: %w", addr, errNotLeader)
	case stUnknownMember:
		return "", fmt.Errorf("%w (leader %s: %s)", ErrUnknownMember, addr, out)
	case stMemberConflict:
		return "", fmt.Errorf("%w (leader %s: %s)", ErrMemberConflict, addr, out)
	case stNoTarget:
		return "", fmt.Errorf("%w (leader %s)", ErrNoTransferTarget, addr)
	case stNoQuorum:
		return "", fmt.Errorf("raftstore: leader %s: %w: %s", addr, ticket.ErrNoQuorum, out)
	case stRejected:
		return "", fmt.Errorf("raftstore: leader %s refused the transfer: %s", addr, out)
	default:
		return "", fmt.Errorf("raftstore: leader %s: %w: %s", addr, ticket.ErrUncertain, out)
	}
}

// fconn is one forwarding connection. Writers take wmu for a whole frame;
// readLoop hands each response to the request waiting on its id.
type fconn struct {
	c   net.Conn
	wmu sync.Mutex

	mu      sync.Mutex
	pending map[uint64]chan fwdResp
	nextID  uint64
	err     error
	done    chan struct{}

	// live tells a silent leader from a live one (silence.go).
	live liveness
}

type fwdResp struct {
	status  byte
	payload []byte
}

func (c *fconn) isDead() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// fail closes the connection; requests still waiting learn it from done.
func (c *fconn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
	c.c.Close()
}

func (c *fconn) readLoop() {
	br := bufio.NewReaderSize(c.c, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			c.fail(err)
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size < respHeader || size > maxFrame {
			c.fail(fmt.Errorf("bad response frame size %d", size))
			return
		}
		body, err := readBody(br, size)
		if err != nil {
			c.fail(err)
			return
		}
		c.live.heard()
		id := binary.BigEndian.Uint64(body[1:9])
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- fwdResp{status: body[0], payload: body[respHeader:]}
		}
	}
}

func (c *fconn) call(ctx context.Context, deadline time.Time, kind byte, payload []byte, ioTimeout time.Duration, w *leaderWatch) (byte, []byte, error) {
	var changed <-chan struct{}
	if w != nil {
		changed = w.changed
	}
	ch := make(chan fwdResp, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, nil, fmt.Errorf("%w: %w", errNotSent, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	unregister := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}

	ms := time.Until(deadline).Milliseconds()
	if ms <= 0 {
		unregister()
		return 0, nil, fmt.Errorf("%w: deadline passed", errNotSent)
	}
	frame := requestFrame(kind, id, ms, payload)
	c.wmu.Lock()
	c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	n, err := c.c.Write(frame)
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
		unregister()
		if n < len(frame) {
			// The leader reads whole frames only; a partial one dies
			// with the connection.
			return 0, nil, fmt.Errorf("%w: %w", errNotSent, err)
		}
		return 0, nil, err
	}

	t := time.NewTimer(time.Until(deadline) + forwardGrace)
	defer t.Stop()
	// A forwarded batch that waits probes the leader now and then
	// (silence.go), so that a leader gone silent is known as such by
	// the time this node follows another.
	var probe <-chan time.Time
	if w != nil {
		pt := time.NewTicker(probeEvery)
		defer pt.Stop()
		probe = pt.C
	}
	for {
		select {
		case r := <-ch:
			return r.status, r.payload, nil
		case <-c.done:
			// readLoop may have delivered just before failing.
			select {
			case r := <-ch:
				return r.status, r.payload, nil
			default:
			}
			unregister()
			return 0, nil, fmt.Errorf("connection lost: %w", c.err)
		case <-ctx.Done():
			unregister()
			return 0, nil, ctx.Err()
		case <-probe:
			c.maybeProbe(ioTimeout)
		case <-changed:
			r, err := c.afterLeaderChange(ctx, ch, w, ioTimeout)
			if err != nil {
				unregister()
				return 0, nil, err
			}
			return r.status, r.payload, nil
		case <-t.C:
			unregister()
			return 0, nil, errors.New("no answer from the leader")
		}
	}
}

// requestFrame is one request on a forwarding connection.
func requestFrame(kind byte, id uint64, timeoutMS int64, payload []byte) []byte {
	frame := make([]byte, 4+reqHeader, 4+reqHeader+len(payload))
	binary.BigEndian.PutUint32(frame, uint32(reqHeader+len(payload)))
	frame[4] = kind
	binary.BigEndian.PutUint64(frame[5:], id)
	binary.BigEndian.PutUint32(frame[13:], uint32(min(timeoutMS, 1<<32-1)))
	return append(frame, payload...)
}
