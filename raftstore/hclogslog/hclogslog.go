// Package hclogslog owns one translation: hashicorp's hclog.Logger, the
// interface hashicorp/raft and its log stores log through, onto a
// log/slog.Logger, with hclog's levels mapped onto slog's, its formatted
// values (hclog.Fmt, hclog.Hex and kin) formatted, and a warning or error
// that repeats within a second passed on once with the number dropped.
//
// It must not know Raft, ticketd's nodes or their configuration: what
// it is given is a slog.Logger and a minimum level, and what it logs is
// what it is asked to.
package hclogslog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter sends hashicorp/raft's logging to a slog.Logger. Raft's
// messages are at most per election or snapshot at Info; the per-RPC chatter
// is Debug and Trace, which the minimum level drops before any formatting.
// While a peer is down Raft repeats the same warning or error every few
// milliseconds, so those are passed on at most once per logEvery per
// message, with the number of repeats dropped in between.
type hclogAdapter struct {
	l       *slog.Logger
	name    string
	min     slog.Level
	implied []any
	limit   *logLimiter
}

const logEvery = time.Second

// New returns an hclog.Logger that logs to l the records at min or above.
func New(l *slog.Logger, min slog.Level) hclog.Logger {
	return &hclogAdapter{l: l, min: min, limit: &logLimiter{last: map[string]limitEntry{}}}
}

type logLimiter struct {
	mu   sync.Mutex
	last map[string]limitEntry
}

type limitEntry struct {
	at         time.Time
	suppressed int
}

// allow reports whether msg may be logged now, and how many times it was
// dropped since it last was.
func (l *logLimiter) allow(msg string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.last[msg]
	if ok && now.Sub(e.at) < logEvery {
		e.suppressed++
		l.last[msg] = e
		return false, 0
	}
	l.last[msg] = limitEntry{at: now}
	return true, e.suppressed
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func hcLevel(level slog.Level) hclog.Level {
	switch {
	case level < slog.LevelDebug:
		return hclog.Trace
	case level < slog.LevelInfo:
		return hclog.Debug
	case level < slog.LevelWarn:
		return hclog.Info
	case level < slog.LevelError:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func (a *hclogAdapter) enabled(level slog.Level) bool {
	return level >= a.min && a.l.Enabled(context.Background(), level)
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	sl := slogLevel(level)
	if !a.enabled(sl) {
		return
	}
	if len(a.implied) > 0 {
		args = append(append([]any(nil), a.implied...), args...)
	}
	args = hcValues(args)
	if sl >= slog.LevelWarn {
		ok, dropped := a.limit.allow(msg, time.Now())
		if !ok {
			return
		}
		if dropped > 0 {
			args = append(args, "repeats_dropped", dropped)
		}
	}
	a.l.Log(context.Background(), sl, msg, args...)
}

// hcValues formats the values hclog formats itself and slog would print
// as they are: hclog.Fmt("%+v", servers) is a []any that slog wrote as
// servers="[%+v [...]]", and hclog.Hex and its kin are plain integers to
// slog. It copies args only when one needs formatting.
func hcValues(args []any) []any {
	copied := false
	for i := 1; i < len(args); i += 2 {
		var v any
		switch x := args[i].(type) {
		case hclog.Format:
			if len(x) == 0 {
				v = ""
			} else if f, ok := x[0].(string); ok {
				v = fmt.Sprintf(f, x[1:]...)
			} else {
				v = fmt.Sprint(x...)
			}
		case hclog.Hex:
			v = fmt.Sprintf("0x%x", int(x))
		case hclog.Octal:
			v = fmt.Sprintf("0%o", int(x))
		case hclog.Binary:
			v = fmt.Sprintf("0b%b", int(x))
		default:
			continue
		}
		if !copied {
			args = append([]any(nil), args...)
			copied = true
		}
		args[i] = v
	}
	return args
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) IsTrace() bool { return a.enabled(slogLevel(hclog.Trace)) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(slogLevel(hclog.Debug)) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(slogLevel(hclog.Info)) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(slogLevel(hclog.Warn)) }
func (a *hclogAdapter) IsError() bool { return a.enabled(slogLevel(hclog.Error)) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.implied = append(append([]any(nil), a.implied...), args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	if a.name != "" {
		name = a.name + "." + name
	}
	return a.ResetNamed(name)
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	c.l = a.l.With("component", name)
	return &c
}

// SetLevel changes this logger's minimum; hclog.Off silences it.
func (a *hclogAdapter) SetLevel(level hclog.Level) {
	if level == hclog.Off {
		a.min = slog.LevelError + 1000
		return
	}
	a.min = slogLevel(level)
}

func (a *hclogAdapter) GetLevel() hclog.Level { return hcLevel(a.min) }

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return stdWriter{a}
}

// stdWriter turns lines written through the standard log package into
// records, at Info unless they carry an "[ERR]"-style prefix.
type stdWriter struct{ a *hclogAdapter }

func (w stdWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := hclog.Info
	for prefix, l := range map[string]hclog.Level{
		"[TRACE]": hclog.Trace, "[DEBUG]": hclog.Debug, "[INFO]": hclog.Info,
		"[WARN]": hclog.Warn, "[ERR]": hclog.Error, "[ERROR]": hclog.Error,
	} {
		if strings.HasPrefix(msg, prefix) {
			level = l
			msg = strings.TrimSpace(msg[len(prefix):])
			break
		}
	}
	w.a.Log(level, msg)
	return len(p), nil
}
