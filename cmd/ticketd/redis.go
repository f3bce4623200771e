package main

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/wire"
	"github.com/ticketd/ticketd/wire/resp"
)

// listenRedis opens the Redis listener of --redis-addr, before Raft
// starts so that a taken port fails fast; nil when it is off.
func listenRedis(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("redis listener: %w", err)
	}
	return ln, nil
}

// newRedisServer is the Redis front door over the node's Service: the
// same accounts as MySQL (nil: a fresh MySQL's), the same statement
// timeout, the node as its gate and clock.
func newRedisServer(svc *alloc.Service, node *raftstore.Node, users *wire.Users, timeout time.Duration, obs resp.Observer, log *slog.Logger) *resp.Server {
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
	return resp.New(cfg)
}

// addrOf is a listener's address, "" for none.
func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}
