package netproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers every byte it reads with the same byte, until the
// test ends. It stands in for a node's real Raft listener.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// portNames identifies connections by the client's local port, which the
// test registers right after dialing. Identify may run before the dial
// returns to the test, so it waits briefly for the registration.
type portNames struct {
	mu    sync.Mutex
	names map[int]string
}

func (p *portNames) identify(c net.Conn) string {
	port := c.RemoteAddr().(*net.TCPAddr).Port
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		n, ok := p.names[port]
		p.mu.Unlock()
		if ok {
			return n
		}
		time.Sleep(time.Millisecond)
	}
	return ""
}

func (p *portNames) dial(t *testing.T, name, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p.mu.Lock()
	p.names[c.LocalAddr().(*net.TCPAddr).Port] = name
	p.mu.Unlock()
	return c
}

// roundTrip writes msg and reads it back within d; it returns what was
// read and the read error, if any.
func roundTrip(c net.Conn, msg string, d time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, len(msg))
	n, err := io.ReadFull(c, buf)
	return string(buf[:n]), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func newTestProxy(t *testing.T, id Identify) *Proxy {
	t.Helper()
	p := New(id)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestStallHoldsAndHealDelivers: a stalled link keeps the connection open
// but delivers nothing, other links keep working, and after Heal the held
// bytes arrive in order.
func TestStallHoldsAndHealDelivers(t *testing.T) {
	names := &portNames{names: map[int]string{}}
	p := newTestProxy(t, names.identify)
	frontB, err := p.Listen("b", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Listen("a", echoServer(t)); err != nil {
		t.Fatal(err)
	}
	ab := names.dial(t, "a", frontB)
	cb := names.dial(t, "c", frontB)
	if got, err := roundTrip(ab, "hello", 2*time.Second); err != nil || got != "hello" {
		t.Fatalf("before cut: %q, %v", got, err)
	}

	p.Cut("a", "b", Stall)
	if got, err := roundTrip(ab, "held", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("stalled link delivered %q (err %v), want a read timeout", got, err)
	}
	if got, err := roundTrip(cb, "other", 2*time.Second); err != nil || got != "other" {
		t.Errorf("link c-b affected by cut a-b: %q, %v", got, err)
	}
	// A new connection on a stalled link is accepted but silent too.
	ab2 := names.dial(t, "a", frontB)
	if got, err := roundTrip(ab2, "new", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("new connection on stalled link delivered %q (err %v)", got, err)
	}
	if got := p.Cuts(); got != "a-b(stall)" {
		t.Errorf("Cuts() = %q", got)
	}

	p.Heal("a", "b")
	// The echo of "held" was stuck in the proxy; it arrives now.
	ab.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(ab, buf); err != nil || string(buf) != "held" {
		t.Fatalf("after heal: held bytes %q, %v", buf, err)
	}
	if got, err := roundTrip(ab, "again", 2*time.Second); err != nil || got != "again" {
		t.Errorf("after heal: %q, %v", got, err)
	}
	ab2.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf = make([]byte, 3)
	if _, err := io.ReadFull(ab2, buf); err != nil || string(buf) != "new" {
		t.Errorf("after heal, second connection: %q, %v", buf, err)
	}
}

// TestResetClosesAndRefuses: a Reset cut closes the link's open
// connections at once and closes new ones on accept, in both directions,
// and leaves other links alone.
func TestResetClosesAndRefuses(t *testing.T) {
	names := &portNames{names: map[int]string{}}
	p := newTestProxy(t, names.identify)
	frontA, _ := p.Listen("a", echoServer(t))
	frontB, _ := p.Listen("b", echoServer(t))
	ab := names.dial(t, "a", frontB)
	cb := names.dial(t, "c", frontB)
	for _, c := range []net.Conn{ab, cb} {
		if got, err := roundTrip(c, "x", 2*time.Second); err != nil || got != "x" {
			t.Fatalf("before cut: %q, %v", got, err)
		}
	}

	p.Cut("b", "a", Reset)
	if _, err := roundTrip(ab, "y", 2*time.Second); err == nil || isTimeout(err) {
		t.Errorf("existing connection on a reset link: err %v, want it closed", err)
	}
	for _, dir := range []struct{ from, to string }{{"a", frontB}, {"b", frontA}} {
		c := names.dial(t, dir.from, dir.to)
		if _, err := roundTrip(c, "z", 2*time.Second); err == nil || isTimeout(err) {
			t.Errorf("new connection %s -> %s on a reset link: err %v, want it closed", dir.from, dir.to, err)
		}
	}
	if got, err := roundTrip(cb, "w", 2*time.Second); err != nil || got != "w" {
		t.Errorf("link c-b affected by cut a-b: %q, %v", got, err)
	}
	st := p.Stats()
	if st.Reset != 1 || st.Refused != 2 {
		t.Errorf("stats %+v, want Reset 1, Refused 2", st)
	}

	p.HealAll()
	c := names.dial(t, "a", frontB)
	if got, err := roundTrip(c, "ok", 2*time.Second); err != nil || got != "ok" {
		t.Errorf("after heal: %q, %v", got, err)
	}
}

// TestUnknownSourceIsCutWhenDestinationIsCut: a connection the proxy
// cannot attribute must not slip through a partition of its destination,
// and must pass when the destination has no cut link.
func TestUnknownSourceIsCutWhenDestinationIsCut(t *testing.T) {
	p := newTestProxy(t, nil)
	frontB, _ := p.Listen("b", echoServer(t))
	p.Listen("a", echoServer(t))
	dial := func() net.Conn {
		c, err := net.Dial("tcp", frontB)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	if got, err := roundTrip(dial(), "u", 2*time.Second); err != nil || got != "u" {
		t.Fatalf("no cuts: %q, %v", got, err)
	}
	p.Cut("a", "b", Reset)
	if _, err := roundTrip(dial(), "u", 2*time.Second); err == nil || isTimeout(err) {
		t.Errorf("unknown source to a cut destination: err %v, want closed", err)
	}
	if st := p.Stats(); st.Unknown != 2 {
		t.Errorf("Unknown = %d, want 2", st.Unknown)
	}
}

// TestDestinationDown: with the destination's listener gone (a killed
// node), the proxy closes the client's connection rather than holding it.
func TestDestinationDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	p := newTestProxy(t, nil)
	front, _ := p.Listen("b", dead)
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "x", 3*time.Second); err == nil || isTimeout(err) {
		t.Errorf("destination down: err %v, want the connection closed", err)
	}
	if st := p.Stats(); st.DialFailed != 1 {
		t.Errorf("DialFailed = %d, want 1", st.DialFailed)
	}
	// SetTarget redirects new connections (a node restarted elsewhere).
	p.SetTarget("b", echoServer(t))
	c2, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := roundTrip(c2, "y", 2*time.Second); err != nil || got != "y" {
		t.Errorf("after SetTarget: %q, %v", got, err)
	}
}

// TestByProcessNamesThisProcess checks the /proc lookup end to end: a
// connection this test process opens is attributed to this process's pid,
// and to nobody when the candidates do not include it.
func TestByProcessNamesThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Fatalf("ByProcess needs Linux /proc: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sc := <-accepted
	defer sc.Close()

	self := ByProcess(func() map[int]string { return map[int]string{os.Getpid(): "me"} })
	if got := self(sc); got != "me" {
		t.Errorf("ByProcess(self) = %q, want me", got)
	}
	other := ByProcess(func() map[int]string { return map[int]string{1: "init"} })
	if got := other(sc); got != "" {
		t.Errorf("ByProcess(pid 1) = %q, want no match", got)
	}
}

// TestFindSocket parses /proc/net/tcp and tcp6 rows (x86 byte order is
// what the machine running this test prints, so the rows are built with
// parseProcAddr's inverse rather than hard-coded).
func TestFindSocket(t *testing.T) {
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	server := netip.MustParseAddrPort("127.0.0.1:7306")
	table := strings.Join([]string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"   0: " + procAddr4(server) + " 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1077 1 0 100 0 0 10 0",
		"   1: " + procAddr4(client) + " " + procAddr4(server) + " 01 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 20 4 30 10 -1",
		"   2: " + procAddr4(server) + " " + procAddr4(client) + " 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0 20 4 30 10 -1",
	}, "\n")
	inode, ok, err := findSocket(strings.NewReader(table), client, server)
	if err != nil || !ok || inode != 4242 {
		t.Errorf("findSocket = %d, %v, %v; want 4242", inode, ok, err)
	}
	if _, ok, _ := findSocket(strings.NewReader(table), client, netip.MustParseAddrPort("127.0.0.1:1")); ok {
		t.Error("findSocket matched a socket with another remote port")
	}
	// An IPv4-mapped IPv6 row compares equal to the IPv4 address.
	a, err := parseProcAddr(procAddr6Mapped(client))
	if err != nil || a != client {
		t.Errorf("parseProcAddr(mapped) = %v, %v; want %v", a, err, client)
	}
}

// procAddr4 renders an IPv4 address the way the kernel does in
// /proc/net/tcp: the address as a host-order 32-bit integer in hex.
func procAddr4(ap netip.AddrPort) string {
	b := ap.Addr().As4()
	return hexWord(b[:]) + fmt.Sprintf(":%04X", ap.Port())
}

// procAddr6Mapped renders ap as an IPv4-mapped row of /proc/net/tcp6.
func procAddr6Mapped(ap netip.AddrPort) string {
	b := ap.Addr().As16()
	var s strings.Builder
	for i := 0; i < 16; i += 4 {
		s.WriteString(hexWord(b[i : i+4]))
	}
	return s.String() + fmt.Sprintf(":%04X", ap.Port())
}

// hexWord prints 4 bytes, in memory order, as the kernel prints a word:
// the native-order integer in hex.
func hexWord(b []byte) string {
	return fmt.Sprintf("%08X", binary.NativeEndian.Uint32(b))
}
