package raftport

import (
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// quietShutdown is the logger hashicorp's transport gets. An RPC that
// reaches a transport while it shuts down is refused with
// raft.ErrTransportShutdown, and the connection's goroutine, which
// outlives the stop, logs that as an error ("failed to decode incoming
// command"). It is part of every stop that meets a peer's RPC, not a
// fault, so it goes to Debug: a clean stop's last line stays "ticketd
// stopped" (CI at ef0f296: TestStopIsQuickAndSaysSo/member saw this line
// after it) and operators are not shown an error for a stop they asked for.
type quietShutdown struct{ hclog.Logger }

func (l quietShutdown) Error(msg string, args ...any) {
	if shutdownErr(args) {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}

func (l quietShutdown) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Error && shutdownErr(args) {
		level = hclog.Debug
	}
	l.Logger.Log(level, msg, args...)
}

// shutdownErr reports whether a record's values hold an error that is
// the transport's own shutdown.
func shutdownErr(args []any) bool {
	for i := 1; i < len(args); i += 2 {
		if err, ok := args[i].(error); ok && errors.Is(err, raft.ErrTransportShutdown) {
			return true
		}
	}
	return false
}
