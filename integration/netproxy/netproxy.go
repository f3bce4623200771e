// Package netproxy cuts and heals network links between local processes,
// for ticketd's fault tests.
//
// Every node gets one front address (Listen) that forwards to its real
// Raft address, and every node's --peers list names the fronts, so all
// Raft traffic and all follower-to-leader forwarding pass through the
// proxy. Because the fronts are the addresses in the Raft configuration,
// one --peers list serves every node, as in production, and membership
// changes keep working.
//
// A link is a pair of nodes. Plain TCP on one loopback address does not
// say which node opened a connection, so the proxy asks an Identify
// function: ByProcess finds the process that owns the client end of the
// socket (Linux /proc), which names the source node. A cut link then
// affects exactly the connections between its two nodes, both ways:
//
//   - Stall: bytes stop flowing but connections stay open and new ones
//     are accepted, like a partition that drops packets. Each side only
//     learns of it through its own timeouts. Held bytes flow again on
//     Heal, as TCP would retransmit them after a short partition.
//   - Reset: existing connections are closed and new ones are closed as
//     soon as they are accepted, like a network that answers with RST.
//
// A connection whose source cannot be identified (its process died before
// the proxy looked) is treated as cut whenever its destination has any
// cut link: a partition must never leak through an unknown connection.
package netproxy

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mode is how a cut link behaves.
type Mode int

const (
	// Stall holds bytes and keeps connections open (a black hole).
	Stall Mode = iota + 1
	// Reset closes connections and refuses new ones.
	Reset
)

func (m Mode) String() string {
	switch m {
	case Stall:
		return "stall"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Identify names the node that opened c, an accepted connection (its
// RemoteAddr is the client's end), or returns "" if it cannot tell.
type Identify func(c net.Conn) string

// Stats counts what the proxy has done, for test reports.
type Stats struct {
	Accepted   int // connections accepted on all fronts
	Refused    int // closed at accept because their link was cut (Reset)
	Reset      int // open connections closed by a Reset cut
	Unknown    int // connections whose source could not be identified
	DialFailed int // the destination's real address refused (node down)
}

// dialTimeout bounds the proxy's own dial of a destination: on loopback a
// live listener answers at once, so a slow dial means a stopped process.
const dialTimeout = 2 * time.Second

// Proxy holds the fronts, the set of cut links and the open connections.
type Proxy struct {
	identify Identify

	mu      sync.Mutex
	fronts  map[string]*front
	cuts    map[link]Mode
	conns   map[*pconn]struct{}
	changed chan struct{} // closed and replaced whenever cuts change
	stats   Stats
	closed  bool
	wg      sync.WaitGroup
}

// link is an unordered pair of node names, a < b.
type link struct{ a, b string }

func mkLink(x, y string) link {
	if x > y {
		x, y = y, x
	}
	return link{x, y}
}

type front struct {
	node   string
	ln     net.Listener
	target string
}

// pconn is one proxied connection from node src to node dst.
type pconn struct {
	src, dst string
	client   net.Conn
	done     chan struct{} // closed by close

	mu       sync.Mutex
	upstream net.Conn // nil until dialed
	isClosed bool
}

// setUpstream attaches the dialed destination; false (and up closed) if
// the connection was closed meanwhile by a Reset cut or Close.
func (c *pconn) setUpstream(up net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		up.Close()
		return false
	}
	c.upstream = up
	return true
}

func (c *pconn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		return
	}
	c.isClosed = true
	close(c.done)
	c.client.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
}

// New returns a proxy without fronts. identify names the source of each
// accepted connection; nil treats every source as unknown.
func New(identify Identify) *Proxy {
	if identify == nil {
		identify = func(net.Conn) string { return "" }
	}
	return &Proxy{
		identify: identify,
		fronts:   map[string]*front{},
		cuts:     map[link]Mode{},
		conns:    map[*pconn]struct{}{},
		changed:  make(chan struct{}),
	}
}

// Listen opens node's front on a fresh 127.0.0.1 port, forwarding to
// target (the node's real address), and returns the front's address.
// Listening on port 0 rather than a pre-chosen free port leaves no race
// with other processes for the address.
func (p *Proxy) Listen(node, target string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		ln.Close()
		return "", errors.New("netproxy: closed")
	}
	if _, dup := p.fronts[node]; dup {
		ln.Close()
		return "", fmt.Errorf("netproxy: node %q already has a front", node)
	}
	f := &front{node: node, ln: ln, target: target}
	p.fronts[node] = f
	p.wg.Add(1)
	go p.serve(f)
	return ln.Addr().String(), nil
}

// SetTarget changes the real address node's front forwards new
// connections to (a node restarted on another port).
func (p *Proxy) SetTarget(node, target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fronts[node]; f != nil {
		f.target = target
	}
}

// Addr returns node's front address, or "".
func (p *Proxy) Addr(node string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fronts[node]; f != nil {
		return f.ln.Addr().String()
	}
	return ""
}

// Nodes returns the names of the nodes with a front, sorted.
func (p *Proxy) Nodes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ns []string
	for n := range p.fronts {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Cut cuts the link between nodes a and b, both directions, in mode m
// (replacing an earlier cut's mode). It returns once the cut is in force:
// with Reset, every connection on the link is closed; with Stall, no byte
// read after Cut returns crosses the link until Heal.
func (p *Proxy) Cut(a, b string, m Mode) {
	if a == b {
		return
	}
	p.mu.Lock()
	p.cuts[mkLink(a, b)] = m
	p.notifyLocked()
	var victims []*pconn
	if m == Reset {
		for c := range p.conns {
			if p.cutLocked(c.src, c.dst) {
				victims = append(victims, c)
				p.stats.Reset++
			}
		}
	}
	p.mu.Unlock()
	for _, c := range victims {
		c.close()
	}
}

// Isolate cuts node from every other node with a front.
func (p *Proxy) Isolate(node string, m Mode) {
	for _, other := range p.Nodes() {
		p.Cut(node, other, m)
	}
}

// Partition cuts every link between nodes of different groups.
func (p *Proxy) Partition(m Mode, groups ...[]string) {
	for i, g := range groups {
		for _, h := range groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					p.Cut(a, b, m)
				}
			}
		}
	}
}

// Heal restores the link between a and b.
func (p *Proxy) Heal(a, b string) {
	p.mu.Lock()
	delete(p.cuts, mkLink(a, b))
	p.notifyLocked()
	p.mu.Unlock()
}

// HealAll restores every link.
func (p *Proxy) HealAll() {
	p.mu.Lock()
	clear(p.cuts)
	p.notifyLocked()
	p.mu.Unlock()
}

// Cuts describes the cut links, e.g. "n1-n2(stall) n1-n3(stall)".
func (p *Proxy) Cuts() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s []string
	for l, m := range p.cuts {
		s = append(s, fmt.Sprintf("%s-%s(%s)", l.a, l.b, m))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close stops every front and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var conns []*pconn
	for c := range p.conns {
		conns = append(conns, c)
	}
	for _, f := range p.fronts {
		f.ln.Close()
	}
	p.notifyLocked()
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	return nil
}

func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// cutLocked reports whether traffic between src and dst is cut. An
// unknown source ("") counts as cut from any node that has a cut link.
func (p *Proxy) cutLocked(src, dst string) bool {
	_, m := p.modeLocked(src, dst)
	return m
}

func (p *Proxy) modeLocked(src, dst string) (Mode, bool) {
	if src == "" {
		var worst Mode
		for l, m := range p.cuts {
			if l.a == dst || l.b == dst {
				worst = max(worst, m)
			}
		}
		return worst, worst != 0
	}
	m, ok := p.cuts[mkLink(src, dst)]
	return m, ok
}

func (p *Proxy) serve(f *front) {
	defer p.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(f, c)
		}()
	}
}

// handle identifies, admits and pumps one connection.
func (p *Proxy) handle(f *front, c net.Conn) {
	src := p.identify(c)
	p.mu.Lock()
	p.stats.Accepted++
	if src == "" {
		p.stats.Unknown++
	}
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	if m, cut := p.modeLocked(src, f.node); cut && m == Reset {
		p.stats.Refused++
		p.mu.Unlock()
		c.Close()
		return
	}
	pc := &pconn{src: src, dst: f.node, client: c, done: make(chan struct{})}
	p.conns[pc] = struct{}{}
	target := f.target
	p.mu.Unlock()
	defer func() {
		pc.close()
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
	}()

	up, err := net.DialTimeout("tcp", target, dialTimeout)
	if err != nil {
		p.mu.Lock()
		p.stats.DialFailed++
		p.mu.Unlock()
		return
	}
	if !pc.setUpstream(up) {
		return
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(pc, c, up) }()
	go func() { defer wg.Done(); p.pump(pc, up, c) }()
	wg.Wait()
}

// pump copies from one end to the other, waiting at the gate while the
// link is stalled. Either end failing closes the whole connection: the
// protocols carried (Raft RPCs, ticketd forwarding) never half-close.
func (p *Proxy) pump(pc *pconn, from, to net.Conn) {
	defer pc.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if !p.waitOpen(pc) {
				return
			}
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF, a reset by either end, or our own close
		}
	}
}

// waitOpen blocks while pc's link is cut; false once pc is closed.
func (p *Proxy) waitOpen(pc *pconn) bool {
	for {
		p.mu.Lock()
		cut := p.cutLocked(pc.src, pc.dst)
		ch := p.changed
		p.mu.Unlock()
		if !cut {
			return true
		}
		select {
		case <-ch:
		case <-pc.done:
			return false
		}
	}
}
