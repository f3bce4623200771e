package wire

import (
	"context"
	"net"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// A planned stop (Shutdown) ends every client connection where the client
// loses nothing: between two statements. MySQL's protocol has no way to
// tell a client to go elsewhere, so:
//
//   - A statement under way finishes and is answered.
//   - A connection that then stays quiet for drainQuiet is closed, after
//     the same refusal as below (1290), sent unasked with sequence 0 as
//     mysqld sends its shutdown notice. A pool finds it closed when it
//     next takes it (go-sql-driver checks every connection it reuses) and
//     opens another, which a load balancer sends to a live node. A client
//     whose statement crossed the notice on the wire reads the notice as
//     its answer: 1290, not run, which failover-aware drivers retry. (It
//     was mysqld's 1053 "Server shutdown in progress"; a rolling restart
//     with two CPU burners met that crossing once in five runs, and 1053
//     is retried by no driver.)
//   - The next statement that arrives instead is not run: it is answered
//     with error 1290 ("nothing was done"), and the connection is closed.
//     Drivers that treat 1290 as a failover (go-sql-driver with
//     rejectReadOnly=true, as for Aurora) retry it on a new connection
//     themselves; others report it, and it can be retried safely.
//
// Closing a connection right after an answer, the obvious alternative,
// races with a busy client: its next statement is often on the wire
// before the close reaches it, and then its outcome is unknown.

// drainQuiet is how long a connection must be quiet during a drain
// before it is closed: a client that sends its next statement sooner
// gets the 1290 answer, which is certain, rather than a close that may
// cross its statement on the wire.
const drainQuiet = 20 * time.Millisecond

// Shutdown stops accepting connections and ends the open ones as
// described above, then returns once all are gone; when ctx ends first it
// closes what is left (statements still waiting stop, as with Close) and
// returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining.Store(true)
	for _, ln := range s.lns {
		ln.Close()
	}
	quietBy := time.Now().Add(s.drainQuiet)
	for nc := range s.conns {
		// A connection blocked reading its next command wakes up at
		// quietBy; one running a statement sets its own deadline when the
		// statement is done (serveConn).
		_ = nc.SetReadDeadline(quietBy)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.Close()
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Draining reports whether Shutdown has begun.
func (s *Server) Draining() bool { return s.draining.Load() }

// drainDeadline moves the read deadline of a connection between commands
// during a drain: the client has drainQuiet to send its next one.
func (s *Server) drainDeadline(nc net.Conn) {
	_ = nc.SetReadDeadline(time.Now().Add(s.drainQuiet))
}

// refuseDraining answers a command that arrives during a drain: not run,
// and the connection ends after this answer.
func (s *session) refuseDraining() error {
	if !s.srv.draining.Load() {
		return nil
	}
	s.quit = true
	return drainRefusal()
}

// drainRefusal is the answer to a statement that arrives during a drain,
// and the notice a quiet connection gets before it is closed.
func drainRefusal() *mysql.MyError {
	return packet(mysqlerr.New(mysqlerr.CodeReadOnly,
		"ticketd is shutting down: the statement was not run; reconnect (another node serves it)"))
}
