package wire

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
)

// leaderlessErr stands for raftstore.NoLeaderError, which wire knows
// only by its method.
type leaderlessErr struct{ since time.Time }

func (e leaderlessErr) Error() string            { return "no leader known" }
func (e leaderlessErr) NoLeaderSince() time.Time { return e.since }

// TestNoQuorumSaysSince: a refusal from a node that has known no leader
// for a while says since when, still as 1290; one without that knowledge
// keeps the plain message.
func TestNoQuorumSaysSince(t *testing.T) {
	since := time.Date(2026, 11, 27, 21, 10, 16, 608e6, time.UTC)
	err := myErr(fmt.Errorf("propose: %w: %w", ticket.ErrNoQuorum, leaderlessErr{since}))
	if !strings.Contains(err.Error(), "no leader with a quorum since 21:10:16.608 UTC") {
		t.Fatalf("refusal %v: want it to say since when there is no leader", err)
	}
	if got := packet(noQuorumErr(fmt.Errorf("x: %w", ticket.ErrNoQuorum))); got.Message != errNoQuorum.Message || got.Code != mysqlerr.CodeReadOnly {
		t.Fatalf("plain refusal %+v, want %q", got, errNoQuorum.Message)
	}
	if p := myErr(fmt.Errorf("%w: %w", ticket.ErrNoQuorum, leaderlessErr{since})); !strings.Contains(p.Error(), "1290") {
		t.Fatalf("refusal %v is not 1290", p)
	}
}

// TestCancelledStatementSaysStopping: a statement cut short by the
// server's Close (its context cancelled: a stop past --shutdown-timeout,
// a failed node) is 1105 saying the node is stopping and nothing was
// handed out, not Go's "context canceled" (what 544f168 answered on every
// stop, seen in a rolling upgrade from it). One whose error says nothing
// was proposed stays 1290.
func TestCancelledStatementSaysStopping(t *testing.T) {
	for _, err := range []error{context.Canceled, fmt.Errorf("ticket: reserve: %w", context.Canceled)} {
		got := myErr(err).(*mysql.MyError)
		if got.Code != mysqlerr.CodeUnknown || got.Message != errStopped.Message {
			t.Errorf("myErr(%v) = %d %q, want %d %q", err, got.Code, got.Message, mysqlerr.CodeUnknown, errStopped.Message)
		}
	}
	notRun := fmt.Errorf("raftstore: propose: %w: %w", ticket.ErrNoQuorum, context.Canceled)
	if got := myErr(notRun).(*mysql.MyError); got.Code != mysqlerr.CodeReadOnly {
		t.Errorf("myErr(%v) = %d %q, want 1290", notRun, got.Code, got.Message)
	}
	uncertain := fmt.Errorf("ticket: %w: %w", ticket.ErrUncertain, context.Canceled)
	if got := myErr(uncertain).(*mysql.MyError); got.Message != errUncertain.Message {
		t.Errorf("myErr(%v) = %d %q, want %q", uncertain, got.Code, got.Message, errUncertain.Message)
	}
}
