package raftport

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/tlstest"
)

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// lockedBuffer collects log output written from the port's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tlsMux is a port with cfg whose forwarding handler counts connections and
// echoes one byte.
type tlsMux struct {
	m      *Port
	served atomic.Int32
	logs   *lockedBuffer
}

func startTLSMux(t *testing.T, cfg *tls.Config) *tlsMux {
	t.Helper()
	ln := listen(t)
	tm := &tlsMux{logs: &lockedBuffer{}}
	tm.m = New(ln, ln.Addr().String(), 2*time.Second, cfg, slog.New(slog.NewTextHandler(tm.logs, nil)))
	tm.m.Start(func(c net.Conn) {
		tm.served.Add(1)
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err == nil {
			c.Write(b[:])
		}
	})
	t.Cleanup(func() { tm.m.Close() })
	return tm
}

func (tm *tlsMux) addr() string { return tm.m.ln.Addr().String() }

// echo dials addr from tm for forwarding and checks the byte comes back.
func (tm *tlsMux) echo(addr string) error {
	c, err := tm.m.DialForward(addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte{42}); err != nil {
		return err
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return err
	}
	if b[0] != 42 {
		return errors.New("wrong echo")
	}
	return nil
}

// TestMutualTLSRefusesStrangers: members of one CA talk; a peer with a
// certificate from another CA, or with none, is refused whichever side
// it is on, and the accepting side logs the attempt with its address.
func TestMutualTLSRefusesStrangers(t *testing.T) {
	ca, other := tlstest.NewCA(t, "cluster CA"), tlstest.NewCA(t, "other CA")
	a := startTLSMux(t, MutualTLS(ca.Issue(t, "a").TLS(t), ca.Pool()))
	b := startTLSMux(t, MutualTLS(ca.Issue(t, "b").TLS(t), ca.Pool()))
	stranger := startTLSMux(t, MutualTLS(other.Issue(t, "s").TLS(t), other.Pool()))
	plain := startTLSMux(t, nil)

	if err := a.echo(b.addr()); err != nil {
		t.Fatalf("member to member: %v", err)
	}
	if got := b.served.Load(); got != 1 {
		t.Fatalf("b served %d connections, want 1", got)
	}

	// Stranger dialing a member (client side wrong).
	if err := stranger.echo(b.addr()); err == nil {
		t.Error("stranger's dial accepted")
	}
	// Member dialing a stranger (server side wrong): the member refuses
	// the stranger's certificate.
	if err := a.echo(stranger.addr()); err == nil {
		t.Error("member accepted the stranger's server certificate")
	}
	// Without TLS, in either direction.
	if err := plain.echo(b.addr()); err == nil {
		t.Error("plain TCP dial accepted")
	}
	if err := a.echo(plain.addr()); err == nil {
		t.Error("member talked to a plain TCP peer")
	}
	// A TLS client that presents no certificate at all.
	raw, err := tls.Dial("tcp", b.addr(), &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	if err == nil {
		raw.SetDeadline(time.Now().Add(5 * time.Second))
		raw.Write([]byte{muxForward, 42})
		var buf [1]byte
		if _, err := raw.Read(buf[:]); err == nil {
			t.Error("client without a certificate got an answer")
		}
		raw.Close()
	}
	if got := b.served.Load(); got != 1 {
		t.Errorf("b served %d connections, want only the member's", got)
	}
	if got := plain.served.Load() + stranger.served.Load(); got != 0 {
		t.Errorf("stranger and plain peer served %d connections from a member", got)
	}
	b.m.Close() // waits for the routing goroutines, so the log is complete
	logs := b.logs.String()
	if n := strings.Count(logs, "TLS handshake failed"); n < 3 {
		t.Errorf("b logged %d failed handshakes, want 3 (stranger, plain, no certificate):\n%s", n, logs)
	}
	if !strings.Contains(logs, "remote=127.0.0.1:") {
		t.Errorf("failed handshake logged without the remote address:\n%s", logs)
	}
}
