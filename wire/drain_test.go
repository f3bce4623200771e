package wire

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
)

// TestShutdownDrains: Shutdown lets the statement under way finish,
// refuses (1290, not run) the next one a busy client sends and closes its
// connection, tells a quiet connection the same before closing it, accepts no
// new connection, and returns once every connection is gone.
func TestShutdownDrains(t *testing.T) {
	addr, srv := startServerWith(t, Config{})
	busy := flickrSession(t, addr, "")
	quiet := dialRaw(t, addr)
	if b := quiet.login(loginOpts{user: "root", db: "flickr"}); !isOK(b) {
		t.Fatalf("login: %v", replyErr(b))
	}
	mustQuery(t, busy, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	// Long enough for the busy client's statement below to arrive
	// within it on a loaded machine.
	srv.drainQuiet = time.Second
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- srv.Shutdown(context.Background()) }()
	waitDraining(t, srv)

	_, err := busy.query("REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if codeOf(err) != 1290 {
		t.Fatalf("statement during the drain: %v, want error 1290", err)
	}
	busy.expectClosed()

	// The quiet one hears the refusal, unasked (as mysqld sends its
	// shutdown notice), then EOF.
	quiet.seq = 0
	b, err := quiet.read()
	if err != nil || codeOf(replyErr(b)) != 1290 {
		t.Fatalf("quiet connection: %q %v, want error 1290", b, err)
	}
	quiet.expectClosed()
	if took := time.Since(start); took < srv.drainQuiet {
		t.Errorf("quiet connection closed after %v, before drainQuiet %v", took, srv.drainQuiet)
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return once every connection was gone")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("a new connection was accepted after Shutdown")
	}
	// The refused statement was not run: the counter is still after id 1.
	err = srv.svc.View(func(st ticket.Store) error {
		tb, err := st.Table("flickr", "Tickets64")
		if err == nil && tb.AutoInc != 2 {
			t.Errorf("auto_increment %d after the drain, want 2: the refused REPLACE ran", tb.AutoInc)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitDraining(t *testing.T, srv *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !srv.Draining() {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not start draining")
		}
		time.Sleep(time.Millisecond)
	}
}
