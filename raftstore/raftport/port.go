package raftport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The first byte a dialer writes on a connection to the Raft address says
// who it is for. Raft's own protocol starts with an RPC type byte too, but
// hashicorp's NetworkTransport owns it: we put ours in front.
const (
	muxRaft    byte = 1 // hashicorp/raft NetworkTransport RPCs
	muxForward byte = 2 // ticketd forwarding (raftstore's forward.go)
	muxProbe   byte = 3 // reachability and TLS checks (reach, Verify): closed at once
)

// Port accepts connections on the Raft address and hands each to Raft or
// to the forwarding server according to its first byte, and dials peers'
// ports for either.
type Port struct {
	ln        net.Listener
	advertise net.Addr
	log       *slog.Logger
	timeout   time.Duration // for the TLS handshake and first byte, and for dials
	tls       *tls.Config   // nil: plain TCP

	raftCh    chan net.Conn
	forward   func(net.Conn) // runs the forwarding protocol; returns when done
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{} // forwarding connections, closed on Close
}

// New is the port on ln, which peers dial at advertise (kept as given, a
// host name is not resolved). timeout bounds each dial and each accepted
// connection's TLS handshake and first byte; tlsCfg nil is plain TCP.
// Start begins accepting.
func New(ln net.Listener, advertise string, timeout time.Duration, tlsCfg *tls.Config, log *slog.Logger) *Port {
	return &Port{
		ln:        ln,
		tls:       tlsCfg,
		advertise: tcpAddr(advertise),
		log:       log,
		timeout:   timeout,
		raftCh:    make(chan net.Conn),
		closing:   make(chan struct{}),
		conns:     make(map[net.Conn]struct{}),
	}
}

// Start begins accepting; forward serves a forwarding connection until
// it is done with it (the port closes it then).
func (p *Port) Start(forward func(net.Conn)) {
	p.forward = forward
	p.wg.Add(1)
	go p.serve()
}

func (p *Port) serve() {
	defer p.wg.Done()
	var backoff time.Duration
	for {
		c, err := p.ln.Accept()
		if err != nil {
			select {
			case <-p.closing:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: keep serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.log.Warn("raft listener accept", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-p.closing:
				return
			}
			continue
		}
		backoff = 0
		p.wg.Add(1)
		go p.route(c)
	}
}

// route reads a connection's first byte in its own goroutine, so that a
// peer that connects and says nothing cannot hold up the accept loop.
func (p *Port) route(c net.Conn) {
	defer p.wg.Done()
	// One deadline for the handshake and the first byte.
	c.SetDeadline(time.Now().Add(p.timeout))
	c, ok := p.serverHandshake(c)
	if !ok {
		return
	}
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	switch b[0] {
	case muxRaft:
		select {
		case p.raftCh <- c:
		case <-p.closing:
			c.Close()
		}
	case muxForward:
		p.mu.Lock()
		select {
		case <-p.closing:
			p.mu.Unlock()
			c.Close()
			return
		default:
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.forward(c)
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	case muxProbe:
		c.Close()
	default:
		p.log.Warn("raft listener: unknown connection type", "type", b[0], "remote", c.RemoteAddr())
		c.Close()
	}
}

// Close stops accepting, closes forwarding connections and waits for the
// goroutines. Raft's connections belong to its transport, closed by it.
func (p *Port) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.mu.Lock()
		close(p.closing)
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		err = p.ln.Close()
		p.wg.Wait()
	})
	return err
}

// DialForward connects to the forwarding server on a peer's Raft address
// (timeout 0: the port's).
func (p *Port) DialForward(addr string, timeout time.Duration) (net.Conn, error) {
	return p.dial(addr, muxForward, timeout)
}

// reach checks that a peer's Raft address accepts a connection (and, with
// TLS, completes the handshake).
func (p *Port) reach(addr string, timeout time.Duration) error {
	c, err := p.dial(addr, muxProbe, timeout)
	if err != nil {
		return err
	}
	return c.Close()
}

// dial connects to a peer's Raft address for the given protocol.
func (p *Port) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = p.timeout
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreachable, err)
	}
	c.SetDeadline(time.Now().Add(timeout))
	if c, err = p.clientHandshake(c, addr, timeout); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte{kind}); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// raftLayer is the raft.StreamLayer over the port.
type raftLayer struct {
	p         *Port
	closed    chan struct{}
	closeOnce sync.Once
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func (p *Port) raftLayer() *raftLayer {
	return &raftLayer{p: p, closed: make(chan struct{})}
}

func (l *raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.p.raftCh:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.p.closing:
		return nil, net.ErrClosed
	}
}

// Close stops Raft's accept loop; the listener itself is the port's.
func (l *raftLayer) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *raftLayer) Addr() net.Addr { return l.p.advertise }

func (l *raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.p.dial(string(addr), muxRaft, timeout)
}

// tcpAddr is an advertised address as given (a host name is kept, not
// resolved).
type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }
