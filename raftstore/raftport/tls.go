package raftport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Mutual TLS on the Raft port (New's tlsCfg). Both Raft and forwarding
// run over the port, which wraps every connection it accepts or dials
// before the first byte that routes it, so a peer without a certificate
// from the cluster's CA reaches neither: it cannot vote, replicate,
// forward a batch or pass Verify.
//
// The errors keep the "raftstore:" prefix they had before this package
// was cut out of raftstore: operators see them as they were.

// NodeTLS is the mutual TLS configuration of a node whose certificate and
// key are in PEM files, and whose peers' certificates must be signed by a
// CA in caFile.
func NodeTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("raftstore: node certificate: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("raftstore: node CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("raftstore: node CA %s: no PEM certificate in it", caFile)
	}
	return MutualTLS(cert, pool), nil
}

// MutualTLS is the configuration used on both ends of every connection on
// the Raft port: each side presents cert and accepts the other's only if
// it chains to a CA in roots. Host names are not checked: any certificate
// the CA signed is a member, so the CA must be the cluster's own (peers
// are often dialled by IP address, and a member's address changes without
// a new certificate).
func MutualTLS(cert tls.Certificate, roots *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAnyClientCert,
		// Go's own verification checks the server's host name, which is
		// not what identifies a member here; VerifyConnection checks the
		// chain instead, on both sides.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyPeer(cs, roots)
		},
	}
}

func verifyPeer(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("raftstore: peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		// One certificate per node serves as client and server.
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return fmt.Errorf("raftstore: peer certificate %q: %w", cs.PeerCertificates[0].Subject, err)
	}
	return nil
}

// serverHandshake runs the accepting side's handshake within timeout; a
// failure is logged with the remote address and costs only the
// connection.
func (p *Port) serverHandshake(c net.Conn) (net.Conn, bool) {
	if p.tls == nil {
		return c, true
	}
	tc := tls.Server(c, p.tls)
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		p.log.Warn("raft listener: TLS handshake failed", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return nil, false
	}
	return tc, true
}

// clientHandshake runs the dialing side's handshake within timeout.
func (p *Port) clientHandshake(c net.Conn, addr string, timeout time.Duration) (net.Conn, error) {
	if p.tls == nil {
		return c, nil
	}
	tc := tls.Client(c, p.tls)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		p.log.Warn("raft dial: TLS handshake failed", "remote", addr, "err", err)
		return nil, fmt.Errorf("raftstore: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// Verify checks that addr completes the mutual TLS handshake (the check
// raftstore's Join makes of a new member). Without TLS it checks nothing:
// the address may well not be listening yet.
func (p *Port) Verify(addr string, timeout time.Duration) error {
	if p.tls == nil {
		return nil
	}
	return p.reach(addr, timeout)
}
