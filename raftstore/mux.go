package raftstore

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
	muxForward byte = 2 // ticketd forwarding (forward.go)
	muxProbe   byte = 3 // Join's TLS check (tls.go): closed at once
)

// mux accepts connections on the Raft address and hands each to Raft or to
// the forwarding server according to its first byte.
type mux struct {
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

func newMux(ln net.Listener, advertise net.Addr, timeout time.Duration, tlsCfg *tls.Config, log *slog.Logger) *mux {
	return &mux{
		ln:        ln,
		tls:       tlsCfg,
		advertise: advertise,
		log:       log,
		timeout:   timeout,
		raftCh:    make(chan net.Conn),
		closing:   make(chan struct{}),
		conns:     make(map[net.Conn]struct{}),
	}
}

// start begins accepting; forward serves a forwarding connection.
func (m *mux) start(forward func(net.Conn)) {
	m.forward = forward
	m.wg.Add(1)
	go m.serve()
}

func (m *mux) serve() {
	defer m.wg.Done()
	var backoff time.Duration
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.closing:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: keep serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			m.log.Warn("raft listener accept", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-m.closing:
				return
			}
			continue
		}
		backoff = 0
		m.wg.Add(1)
		go m.route(c)
	}
}

// route reads a connection's first byte in its own goroutine, so that a
// peer that connects and says nothing cannot hold up the accept loop.
func (m *mux) route(c net.Conn) {
	defer m.wg.Done()
	// One deadline for the handshake and the first byte.
	c.SetDeadline(time.Now().Add(m.timeout))
	c, ok := m.serverHandshake(c)
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
		case m.raftCh <- c:
		case <-m.closing:
			c.Close()
		}
	case muxForward:
		m.mu.Lock()
		select {
		case <-m.closing:
			m.mu.Unlock()
			c.Close()
			return
		default:
		}
		m.conns[c] = struct{}{}
		m.mu.Unlock()
		m.forward(c)
		m.mu.Lock()
		delete(m.conns, c)
		m.mu.Unlock()
		c.Close()
	case muxProbe:
		c.Close()
	default:
		m.log.Warn("raft listener: unknown connection type", "type", b[0], "remote", c.RemoteAddr())
		c.Close()
	}
}

// Close stops accepting, closes forwarding connections and waits for the
// goroutines. Raft's connections belong to its transport, closed by it.
func (m *mux) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.mu.Lock()
		close(m.closing)
		for c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
		err = m.ln.Close()
		m.wg.Wait()
	})
	return err
}

// dial connects to a peer's Raft address for the given protocol.
func (m *mux) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = m.timeout
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreachable, err)
	}
	c.SetDeadline(time.Now().Add(timeout))
	if c, err = m.clientHandshake(c, addr, timeout); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte{kind}); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// raftLayer is the raft.StreamLayer over the mux.
type raftLayer struct {
	m         *mux
	closed    chan struct{}
	closeOnce sync.Once
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func (m *mux) raftLayer() *raftLayer {
	return &raftLayer{m: m, closed: make(chan struct{})}
}

func (l *raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.m.raftCh:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.m.closing:
		return nil, net.ErrClosed
	}
}

// Close stops Raft's accept loop; the listener itself is the mux's.
func (l *raftLayer) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *raftLayer) Addr() net.Addr { return l.m.advertise }

func (l *raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.m.dial(string(addr), muxRaft, timeout)
}

// tcpAddr is an advertised address as given (a host name is kept, not
// resolved).
type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }
