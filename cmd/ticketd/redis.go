package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/resp"
)

// redisFront is the node's Redis listener (--redis-addr) and, once
// serving, its server; the zero value (listener off) does nothing.
type redisFront struct {
	ln  net.Listener
	srv *resp.Server
}

// openRedis checks the Redis flags and opens the listener, before Raft
// starts so that a taken port fails fast.
func openRedis(o *options) (*redisFront, error) {
	if o.redisCache < 0 {
		return nil, errors.New("--redis-cache must not be negative")
	}
	if o.redisAddr == "" {
		return &redisFront{}, nil
	}
	ln, err := net.Listen("tcp", o.redisAddr)
	if err != nil {
		return nil, fmt.Errorf("redis listener: %w", err)
	}
	return &redisFront{ln: ln}, nil
}

// addr is the listener's address, "" when off.
func (r *redisFront) addr() string {
	if r.ln == nil {
		return ""
	}
	return r.ln.Addr().String()
}

// serve starts the Redis front door over the node's Service: the same
// accounts as MySQL (nil: a fresh MySQL's), the same statement timeout,
// the node as its gate and clock. Serve's end goes to errc.
func (r *redisFront) serve(svc *ticket.Service, node *raftstore.Node, users *wire.Users, timeout time.Duration,
	obs resp.Observer, log *slog.Logger, errc chan<- error) {
	if r.ln == nil {
		return
	}
	cfg := resp.Config{
		Service:  svc,
		Gate:     node,
		Clock:    node.Clock,
		Leading:  func() bool { _, l := node.LeaderTerm(); return l },
		Timeout:  timeout,
		Logger:   log.With("protocol", "redis"),
		Observer: obs,
	}
	if users != nil {
		cfg.Users = users
	}
	r.srv = resp.New(cfg)
	go func() { errc <- r.srv.Serve(r.ln) }()
}

// close stops the listener and every Redis connection. A stopping node
// calls it before its MySQL drain: Redis clients have no drain protocol
// and reconnect, to another node behind a balancer; a command in flight
// loses its reply (its number is never handed out).
func (r *redisFront) close() {
	if r.srv != nil {
		r.srv.Close()
	}
	if r.ln != nil {
		r.ln.Close()
	}
}
