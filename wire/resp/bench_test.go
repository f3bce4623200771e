package resp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/tidwall/redcon"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// countingService answers every key command at once with the next
// integer: the front door's own cost per command, without replication.
type countingService struct{ n int64 }

func (s *countingService) ExecFor(_ context.Context, _ *ticket.Session, c *model.Command) (model.Result, error) {
	s.n++
	return model.Result{Key: &model.KeyReply{Kind: model.ReplyInt, Int: s.n}}, nil
}

func (s *countingService) ExecKeysOrdered(_ context.Context, cmds []*model.Command) ([]model.Result, []error) {
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		out[i], _ = s.ExecFor(context.Background(), nil, cmds[i])
	}
	return out, make([]error, len(cmds))
}

func (s *countingService) View(func(ticket.Store) error) error { return nil }

// benchConn is a connection that keeps only the last integer reply: the
// redcon.Conn methods the front door calls for INCR.
type benchConn struct {
	redcon.Conn
	ctx  any
	last int64
}

func (c *benchConn) Context() any                   { return c.ctx }
func (c *benchConn) SetContext(v any)               { c.ctx = v }
func (c *benchConn) RemoteAddr() string             { return "127.0.0.1:1" }
func (c *benchConn) NetConn() net.Conn              { return nil }
func (c *benchConn) PeekPipeline() []redcon.Command { return nil }
func (c *benchConn) WriteInt64(n int64)             { c.last = n }
func (c *benchConn) WriteError(msg string)          { panic(msg) }

// BenchmarkIncr is one INCR through the front door (parsing excepted):
// dispatch, the key command, the reply, the observer.
func BenchmarkIncr(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := New(Config{Service: &countingService{}, Logger: log})
	defer srv.Close()
	rc := &benchConn{}
	srv.accept(rc)
	rc.ctx.(*client).user = "root" // no loopback address: log in by hand
	cmd := redcon.Command{Args: [][]byte{[]byte("INCR"), []byte("counter:20261128")}}
	b.ReportAllocs()
	for b.Loop() {
		srv.handle(rc, cmd)
	}
	if rc.last == 0 {
		b.Fatal("no reply")
	}
}
