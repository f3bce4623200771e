package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/ticketd/ticketd/wire"
)

// listen opens one of the node's listeners. what names it in the error
// ("mysql listener"), flag is the flag that sets its address: a taken
// port, the usual first-day failure (a second node started while `make
// run` holds the default ports), says so in words and names the way out.
func listen(what, flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: %w: another process (another ticketd, or a MySQL server) listens on %s; stop it, or give this node another %s", what, err, addr, flag)
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// nodeInfo is what the MySQL system variables say about this node
// (@@port, @@datadir, @@server_id, ...): its flags, and the port its
// listener got.
func nodeInfo(o *options, mysqlLn net.Listener) wire.NodeInfo {
	port := 0
	if a, ok := mysqlLn.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	return wire.NodeInfo{Listen: o.mysqlAddr, Port: port, DataDir: o.dataDir, NodeID: o.nodeID}
}
