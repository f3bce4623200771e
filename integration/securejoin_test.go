package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/raftstore/tlstest"
)

// httpsAdmin calls nodes' admin APIs over HTTPS, trusting one CA and
// presenting no client certificate (as curl --cacert does).
type httpsAdmin struct {
	client *http.Client
	token  string
}

func (a httpsAdmin) do(ctx context.Context, method, addr, path string, form url.Values) (int, string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+addr+path, body)
	if err != nil {
		return 0, "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), nil
}

// waitReady polls https://addr/readyz until 200.
func (a httpsAdmin) waitReady(ctx context.Context, t *testing.T, n *harness.Node) {
	t.Helper()
	for {
		code, _, err := a.do(ctx, http.MethodGet, n.HTTPAddr(), "/readyz", nil)
		if err == nil && code == http.StatusOK {
			return
		}
		if !n.Running() {
			t.Fatalf("%s exited before it was ready: %v\n%s", n.ID(), n.ExitError(), n.LogTail(20))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never ready over HTTPS (last: %d %v)\n%s", n.ID(), code, err, n.LogTail(20))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// members lists the ids in a node's /status, sorted.
func (a httpsAdmin) members(ctx context.Context, t *testing.T, n *harness.Node) []string {
	t.Helper()
	code, body, err := a.do(ctx, http.MethodGet, n.HTTPAddr(), "/status", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("%s /status: %d %v %s", n.ID(), code, err, body)
	}
	var st struct {
		Members []struct{ ID string } `json:"members"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range st.Members {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestSecuredJoin: in a cluster with TLS everywhere (mutual TLS on the
// Raft port, HTTPS and a token on the admin API, one CA), a node joins
// with --join over HTTPS given only what the members have (no --http-ca,
// which would make its own admin API demand client certificates that
// nobody sends): it verifies the member with its --node-ca. A fourth
// node joins, then n3 is replaced by n5. A join that cannot authenticate
// (the member's certificate from an unknown CA, a wrong token) exits
// within seconds, saying why on the joining node; it used to retry
// silently for 30 s.
func TestSecuredJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	token, tokenFile := writeAdminToken(t, dir)
	ca := tlstest.NewCA(t, "ticketd cluster CA")
	admin := httpsAdmin{token: token, client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}}}
	secured := func(id string, c *tlstest.CA, tokenFile string) []string {
		f := c.Issue(t, id).WriteFiles(t, c, dir, id)
		return []string{"--node-cert", f.Cert, "--node-key", f.Key, "--node-ca", f.CA,
			"--http-cert", f.Cert, "--http-key", f.Key, "--admin-token-file", tokenFile}
	}

	ids := []string{"n1", "n2", "n3"}
	raftAddrs := map[string]string{}
	var peers []string
	for _, id := range ids {
		raftAddrs[id] = harness.FreeAddr(t)
		peers = append(peers, id+"="+raftAddrs[id])
	}
	nodes := map[string]*harness.Node{}
	for _, id := range ids {
		n := harness.NewNode(t, harness.Options{NodeID: id, RaftAddr: raftAddrs[id], Peers: strings.Join(peers, ","),
			NoWait: true, Args: secured(id, ca, tokenFile)})
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		nodes[id] = n
	}
	for _, id := range ids {
		admin.waitReady(ctx, t, nodes[id])
	}
	n1 := nodes["n1"]

	// Joins that cannot authenticate: they exit, quickly, saying why.
	other := tlstest.NewCA(t, "another CA")
	wrongToken := filepath.Join(dir, "wrong-token")
	if err := os.WriteFile(wrongToken, []byte("not-the-cluster-token-0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id string
		args     []string
		want     string
	}{
		{"unknown CA", "x1", secured("x1", other, tokenFile), "not signed by a CA this node trusts"},
		{"wrong token", "x2", secured("x2", ca, wrongToken), "give this node the cluster's admin token"},
	} {
		j := harness.NewNode(t, harness.Options{NodeID: tc.id, Join: n1.HTTPAddr(), NoWait: true, Args: tc.args})
		start := time.Now()
		if err := j.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for j.Running() && time.Since(start) < 30*time.Second {
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(start)
		if j.Running() {
			j.Kill()
			t.Fatalf("%s: the join still runs after %v\n%s", tc.name, took, j.LogTail(10))
		}
		log := j.LogTail(10)
		if j.ExitError() == nil || !strings.Contains(log, tc.want) {
			t.Errorf("%s: exit %v after %v, log:\n%s", tc.name, j.ExitError(), took, log)
		}
		if took > 5*time.Second {
			t.Errorf("%s: the join took %v to fail", tc.name, took)
		}
		t.Logf("%s: failed in %v: %s", tc.name, took.Round(time.Millisecond), lastLine(log))
	}
	if m := admin.members(ctx, t, n1); !slices.Equal(m, ids) {
		t.Fatalf("members after the refused joins: %v", m)
	}

	// A fourth node joins.
	join := func(id string) *harness.Node {
		n := harness.NewNode(t, harness.Options{NodeID: id, Join: n1.HTTPAddr(), NoWait: true, Args: secured(id, ca, tokenFile)})
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		admin.waitReady(ctx, t, n)
		return n
	}
	n4 := join("n4")
	if m := admin.members(ctx, t, n4); !slices.Equal(m, []string{"n1", "n2", "n3", "n4"}) {
		t.Fatalf("members after n4 joined: %v", m)
	}
	// Its admin API asks no client certificate (admin presents none).
	if code, body, err := admin.do(ctx, http.MethodGet, n4.HTTPAddr(), "/backup", nil); err != nil || code != http.StatusOK {
		t.Fatalf("n4 /backup with the token and no client certificate: %d %v %.200s", code, err, body)
	}

	// n3 is replaced by n5: removed, stopped, and a new node joins.
	if code, body, err := admin.do(ctx, http.MethodPost, n1.HTTPAddr(), "/remove", url.Values{"id": {"n3"}}); err != nil || code != http.StatusOK {
		t.Fatalf("/remove n3: %d %v %s", code, err, body)
	}
	if err := nodes["n3"].Stop(); err != nil {
		t.Fatal(err)
	}
	n5 := join("n5")
	if m := admin.members(ctx, t, n5); !slices.Equal(m, []string{"n1", "n2", "n4", "n5"}) {
		t.Fatalf("members after n3 was replaced by n5: %v", m)
	}
	for _, n := range []*harness.Node{n4, n5} {
		// Each creates its own database: a table another node created may
		// not be applied here yet.
		createDB(t, ctx, n, "secj_"+n.ID())
		conn := pinConn(t, ctx, openDB(t, n.DSN("secj_"+n.ID())))
		for range 3 {
			r := mustExec(t, ctx, conn, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
			if id, err := r.LastInsertId(); err != nil || id < 1 {
				t.Fatalf("allocation through %s: %d %v", n.ID(), id, err)
			}
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return fmt.Sprint(s)
}
