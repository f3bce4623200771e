// Package raftport owns a node's Raft port: the one TCP address its peers
// dial, for hashicorp/raft's RPCs and for ticketd's forwarding protocol
// alike.
//
// A Port accepts connections on the listener, runs the mutual TLS
// handshake when the cluster has certificates (NodeTLS, MutualTLS), and
// routes each connection by its first byte to Raft's stream layer or to
// the forwarding server it was started with; it dials peers the same way
// (DialForward; Verify checks that a peer completes the TLS handshake).
// Transport is Raft's network transport over the port, whose
// AppendEntries to a peer that cannot be connected to waits for it to be
// back rather than letting Raft's retry backoff grow (transport.go).
// FrameWriter combines the frames many goroutines answer on one
// connection into few writes.
//
// It must not know what travels on a connection beyond its first byte:
// the forwarding protocol's requests and answers, the commands in them,
// the state machine and Raft's state are raftstore's (it is told whether
// the node leads through a function). raftstore imports it; it imports
// nothing of the project.
package raftport
