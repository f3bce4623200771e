package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"

	"github.com/ticketd/ticketd/raftstore/raftport"
)

// nodeTLSFlags secure the Raft port (Raft and forwarding) with mutual TLS:
// see raftport.NodeTLS and OPERATIONS.md "Securing a cluster".
type nodeTLSFlags struct {
	cert, key, ca string
	insecure      bool
}

func (f *nodeTLSFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "node-cert", "", "PEM certificate this node presents to its peers on the Raft port (with --node-key and --node-ca: mutual TLS)")
	fs.StringVar(&f.key, "node-key", "", "PEM private key of --node-cert")
	fs.StringVar(&f.ca, "node-ca", "", "PEM CA bundle: peers on the Raft port must present a certificate it signed")
	fs.BoolVar(&f.insecure, "insecure-raft", false, "allow a --raft-addr other than loopback without --node-cert: anyone who reaches the port can then vote, replicate and forward")
}

// errInsecureRaft refuses to start a node whose Raft port others can reach
// without TLS, unless the operator says so.
var errInsecureRaft = errors.New("--raft-addr is not a loopback address and the Raft port has no TLS: " +
	"anyone who reaches it can join the cluster's votes and write to it. " +
	"Set --node-cert, --node-key and --node-ca (cmd/ticketd/OPERATIONS.md \"Securing a cluster\"), " +
	"or pass --insecure-raft on a network only the members reach")

// load returns the Raft port's TLS configuration, nil for plain TCP.
func (f *nodeTLSFlags) load(raftAddr string) (*tls.Config, error) {
	set := 0
	for _, v := range []string{f.cert, f.key, f.ca} {
		if v != "" {
			set++
		}
	}
	switch set {
	case 0:
		if !f.insecure && !isLoopback(raftAddr) {
			return nil, fmt.Errorf("%s: %w", raftAddr, errInsecureRaft)
		}
		return nil, nil
	case 3:
		return raftport.NodeTLS(f.cert, f.key, f.ca)
	}
	return nil, errors.New("--node-cert, --node-key and --node-ca go together")
}
