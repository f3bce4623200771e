package resp

import (
	"context"
	"errors"
	"time"
)

// cmdContexts gives a connection's commands, one at a time, a context
// that ends Timeout after the command began, as context.WithTimeout
// would, without a new context, timer and done channel per command:
// those were 9% of the leader's CPU at 64 INCR clients (a profile under
// redis-benchmark -c 64 -t incr). One cancelable context and one timer
// serve command after command; the timer is re-armed for each and the
// context replaced only once it has ended (a timeout, the server's
// Close). The zero value is ready; a connection's goroutine is its only
// user.
type cmdContexts struct {
	cur    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

// begin starts a command of at most d under parent. The command must
// call end before the next begin.
func (cc *cmdContexts) begin(parent context.Context, d time.Duration) context.Context {
	if cc.cur == nil || cc.cur.Err() != nil {
		cc.close()
		ctx, cancel := context.WithCancelCause(parent)
		cc.cur, cc.cancel = ctx, cancel
		cc.timer = time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	} else {
		cc.timer.Reset(d)
	}
	return &cmdContext{Context: cc.cur, deadline: time.Now().Add(d)}
}

// end ends the command begun last. A timer that fired (or is firing)
// has ended the context, and the next command gets a new one.
func (cc *cmdContexts) end() {
	if !cc.timer.Stop() {
		cc.close()
	}
}

// close releases the context (the connection's end).
func (cc *cmdContexts) close() {
	if cc.cur == nil {
		return
	}
	cc.timer.Stop()
	cc.cancel(context.Canceled)
	cc.cur, cc.cancel, cc.timer = nil, nil, nil
}

// cmdContext is one command's view of the shared context: its own
// deadline, and DeadlineExceeded once the timer ended it.
// context.WithX(cmdContext) attaches to the shared context itself (it
// is its Done and its cancelCtx Value), so a child costs no goroutine.
type cmdContext struct {
	context.Context
	deadline time.Time
}

func (c *cmdContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *cmdContext) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}
