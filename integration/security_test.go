package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/raftstore/tlstest"
)

// writeAdminToken writes the secured-cluster tests' admin token into dir
// (with a newline, as an operator's file would have) and returns it and
// the file's path, for --admin-token-file.
func writeAdminToken(t *testing.T, dir string) (token, file string) {
	t.Helper()
	token = "integration-admin-token-0123456789"
	file = filepath.Join(dir, "admin-token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return token, file
}

// TestSecuredCluster runs three nodes with mutual TLS on the Raft port and
// an admin token (cmd/ticketd/OPERATIONS.md "Securing a cluster"): allocation through a
// follower is forwarded over TLS; /join without the token is refused with
// 401; a node whose certificate comes from another CA cannot join (even
// with the token) nor forward, and the leader logs the attempts.
func TestSecuredCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	token, tokenFile := writeAdminToken(t, dir)
	ca := tlstest.NewCA(t, "ticketd cluster CA")

	ids := []string{"n1", "n2", "n3"}
	raftAddrs := map[string]string{}
	var peers []string
	for _, id := range ids {
		raftAddrs[id] = harness.FreeAddr(t)
		peers = append(peers, id+"="+raftAddrs[id])
	}
	c := &harness.Cluster{Peers: strings.Join(peers, ",")}
	for _, id := range ids {
		f := ca.Issue(t, id).WriteFiles(t, ca, dir, id)
		n := harness.NewNode(t, harness.Options{NodeID: id, RaftAddr: raftAddrs[id], Peers: c.Peers,
			Args: []string{"--node-cert", f.Cert, "--node-key", f.Key, "--node-ca", f.CA, "--admin-token-file", tokenFile}})
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	leader, err := c.Leader(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	// Allocation through a follower: forwarded to the leader over TLS.
	createDB(t, ctx, leader, "sec")
	if err := c.WaitApplied(ctx, leader, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var follower *harness.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
			break
		}
	}
	conn := pinConn(t, ctx, openDB(t, follower.DSN("sec")))
	for i := range 5 {
		r := mustExec(t, ctx, conn, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
		if id, err := r.LastInsertId(); err != nil || id != int64(i+1) {
			t.Fatalf("allocation %d through follower %s: id %d, %v", i, follower.ID(), id, err)
		}
	}

	// /join without the token, or with a wrong one: 401, nothing changed.
	form := url.Values{"id": {"evil"}, "addr": {"127.0.0.1:1"}}.Encode()
	for _, tok := range []string{"", "not-the-token-but-long-enough"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+leader.HTTPAddr()+"/join", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("/join with token %q: %s, WWW-Authenticate %q", tok, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if m := members(t, ctx, leader); len(m) != 3 {
		t.Fatalf("members after refused /join: %v", m)
	}

	// A node with a certificate from another CA, and the token: the
	// leader's handshake with it fails, so /join refuses it and it exits.
	other := tlstest.NewCA(t, "another CA")
	oi := other.Issue(t, "intruder")
	of := oi.WriteFiles(t, other, dir, "intruder")
	intruder := harness.NewNode(t, harness.Options{NodeID: "intruder", Join: leader.HTTPAddr(), NoWait: true,
		Args: []string{"--node-cert", of.Cert, "--node-key", of.Key, "--node-ca", of.CA, "--admin-token-file", tokenFile}})
	if err := intruder.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for intruder.Running() && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	if err := intruder.ExitError(); err == nil || !strings.Contains(intruder.LogTail(20), "403") {
		t.Errorf("intruder's --join: exit %v, log:\n%s", err, intruder.LogTail(20))
	}
	if m := members(t, ctx, leader); len(m) != 3 {
		t.Fatalf("members after the intruder's join: %v", m)
	}

	// The intruder's certificate on the Raft port: no forwarding. The
	// forwarded batch is well-formed; only the handshake stands in the way.
	cert := oi.TLS(t)
	if err := forwardAttempt(leader.RaftAddr(), &tls.Config{Certificates: []tls.Certificate{cert},
		InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}); err == nil {
		t.Error("forwarding with another CA's certificate got an answer")
	}
	if err := forwardAttempt(leader.RaftAddr(), nil); err == nil {
		t.Error("forwarding over plain TCP got an answer")
	}
	log, err := os.ReadFile(leader.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"join refused", "raft listener: TLS handshake failed"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("leader's log lacks %q", want)
		}
	}
	if !bytes.Contains(log, []byte("admin request refused")) {
		t.Error("leader's log lacks the refused /join")
	}
	if bytes.Contains(log, []byte(token)) {
		t.Error("the admin token is in the leader's log")
	}
}

// forwardAttempt connects to a Raft port (with TLS if cfg is set) and sends
// a forwarding request for the leader's commit index; it returns nil only
// if an answer comes back.
func forwardAttempt(addr string, cfg *tls.Config) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if cfg != nil {
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			return err
		}
		c = tc
	}
	// Routing byte 2 (forwarding), then kind 4 (commit index), id 1, 1s.
	req := []byte{2}
	req = binary.BigEndian.AppendUint32(req, 13)
	req = append(req, 4)
	req = binary.BigEndian.AppendUint64(req, 1)
	req = binary.BigEndian.AppendUint32(req, 1000)
	if _, err := c.Write(req); err != nil {
		return err
	}
	var hdr [4]byte
	_, err = io.ReadFull(c, hdr[:])
	return err
}

// members lists the ids in a node's /status.
func members(t *testing.T, ctx context.Context, n *harness.Node) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTPAddr()+"/status", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Members []struct{ ID string } `json:"members"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(fmt.Errorf("/status: %w", err))
	}
	var ids []string
	for _, m := range st.Members {
		ids = append(ids, m.ID)
	}
	return ids
}
