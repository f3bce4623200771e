package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultReadyTimeout bounds WaitReady when Options.ReadyTimeout is zero. A
// single node elects itself within a second or two; a cluster on a loaded
// 2-core machine needs a few election timeouts.
const DefaultReadyTimeout = 30 * time.Second

// stopTimeout bounds how long Stop waits after SIGTERM before it escalates
// to SIGKILL and reports the hang as an error.
const stopTimeout = 15 * time.Second

// Options configures one ticketd node. Empty addresses get free ports; an
// empty DataDir gets a fresh temp dir. The resolved values are kept, so a
// restarted node reuses the same data directory and ports.
type Options struct {
	NodeID    string // --node-id; default "n1"
	DataDir   string // --data-dir
	MySQLAddr string // --mysql-addr
	HTTPAddr  string // --http-addr (admin: /readyz, /healthz, /status)
	RaftAddr  string // --raft-addr
	Peers     string // --peers "n1=H:P,n2=H:P" (Raft addresses); empty: single node
	Join      string // --join H:P (a member's admin address)
	// Redis turns the Redis listener on at RedisAddr (--redis-addr), a
	// free port unless set.
	Redis     bool
	RedisAddr string

	Args []string // extra command-line arguments
	Env  []string // extra environment, KEY=VALUE

	ReadyTimeout time.Duration // for WaitReady; default DefaultReadyTimeout
	NoWait       bool          // Start returns without waiting for /readyz

	// Binary is the ticketd executable to run; default the one the
	// harness builds from this checkout. SetBinary changes it between
	// starts (an upgrade).
	Binary string
}

// Node is one ticketd process (or, after Stop/Kill, its remains: data dir,
// ports and log, ready to be started again).
type Node struct {
	t    testing.TB
	opts Options
	log  string // path of the log file all incarnations append to

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current process has exited
	exit   error         // the current process's exit status, valid after done
	paused bool
	starts int
}

// Start starts a ticketd node and, unless opts.NoWait, waits until it is
// ready. Failures are fatal to the test. The process is killed when the
// test ends; if the test failed, the tail of the node's log is printed.
//
// Free ports are only free until someone binds them, and the machine is
// shared: when the harness chose every port and the data dir itself and
// the node dies with "address already in use", Start retries with new
// ones (a fresh data dir, so no Raft state remembers the old address).
func Start(ctx context.Context, t testing.TB, opts Options) *Node {
	t.Helper()
	retryable := opts.DataDir == "" && opts.MySQLAddr == "" && opts.HTTPAddr == "" &&
		opts.RaftAddr == "" && opts.Peers == "" && !opts.NoWait
	for attempt := 1; ; attempt++ {
		n := NewNode(t, opts)
		err := n.Start(ctx)
		if err == nil && !opts.NoWait {
			err = n.WaitReady(ctx)
		}
		if err == nil {
			return n
		}
		if retryable && attempt < 3 && strings.Contains(n.LogTail(50), "address already in use") {
			n.Kill()
			t.Logf("harness: node %s lost a port race, retrying with new ports", n.ID())
			continue
		}
		t.Fatalf("harness: %v", err)
	}
}

// NewNode resolves opts (free ports, temp data dir) and registers the
// test cleanup, without starting a process. StartCluster uses it to know
// every node's Raft address before starting any of them.
func NewNode(t testing.TB, opts Options) *Node {
	t.Helper()
	if opts.NodeID == "" {
		opts.NodeID = "n1"
	}
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(t.TempDir(), "data-"+opts.NodeID)
	}
	if opts.MySQLAddr == "" {
		opts.MySQLAddr = FreeAddr(t)
	}
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = FreeAddr(t)
	}
	if opts.RaftAddr == "" {
		opts.RaftAddr = FreeAddr(t)
	}
	if opts.Redis && opts.RedisAddr == "" {
		opts.RedisAddr = FreeAddr(t)
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	n := &Node{t: t, opts: opts, log: filepath.Join(logDir(t), "ticketd-"+opts.NodeID+".log")}
	t.Cleanup(n.cleanup)
	return n
}

// ID returns the node id.
func (n *Node) ID() string { return n.opts.NodeID }

// RedisAddr returns the node's Redis address ("" without Options.Redis).
func (n *Node) RedisAddr() string { return n.opts.RedisAddr }

// MySQLAddr returns the MySQL protocol address, "127.0.0.1:P".
func (n *Node) MySQLAddr() string { return n.opts.MySQLAddr }

// HTTPAddr returns the admin HTTP address.
func (n *Node) HTTPAddr() string { return n.opts.HTTPAddr }

// RaftAddr returns the Raft address.
func (n *Node) RaftAddr() string { return n.opts.RaftAddr }

// DataDir returns the node's data directory.
func (n *Node) DataDir() string { return n.opts.DataDir }

// LogPath returns the file the node's stdout and stderr go to.
func (n *Node) LogPath() string { return n.log }

// Options returns the node's resolved options.
func (n *Node) Options() Options { return n.opts }

// DSN returns a go-sql-driver/mysql DSN for root on this node. params are
// "key=value" strings; a dial timeout is added so a dead node fails fast.
func (n *Node) DSN(db string, params ...string) string {
	return DSN(n.opts.MySQLAddr, db, params...)
}

// DSN returns a go-sql-driver/mysql DSN for root (no password) at addr.
func DSN(addr, db string, params ...string) string {
	p := append([]string{"timeout=5s"}, params...)
	return fmt.Sprintf("root@tcp(%s)/%s?%s", addr, db, strings.Join(p, "&"))
}

func (n *Node) args() []string {
	a := []string{
		"--data-dir", n.opts.DataDir,
		"--mysql-addr", n.opts.MySQLAddr,
		"--http-addr", n.opts.HTTPAddr,
		"--node-id", n.opts.NodeID,
		"--raft-addr", n.opts.RaftAddr,
	}
	if n.opts.Peers != "" {
		a = append(a, "--peers", n.opts.Peers)
	}
	if n.opts.Join != "" {
		a = append(a, "--join", n.opts.Join)
	}
	if n.opts.RedisAddr != "" {
		a = append(a, "--redis-addr", n.opts.RedisAddr)
	}
	return append(a, n.opts.Args...)
}

// env is the parent's environment minus TICKETD_* (a developer's
// TICKETD_PEERS must not leak into a test node), plus opts.Env.
//
// A stopping node stays up for --drain-time so that load balancers mark
// it down; no test but those with a load balancer needs that, and every
// Stop would take it longer, so it is 0 unless opts.Env or Args say
// otherwise (later entries and flags win).
func (n *Node) env() []string {
	e := []string{"TICKETD_DRAIN_TIME=0s"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TICKETD_") {
			e = append(e, kv)
		}
	}
	return append(e, n.opts.Env...)
}

// Binary is the executable the next Start runs, as SetBinary set it (""
// for the harness's build of this checkout); safe to call while another
// goroutine sets it.
func (n *Node) Binary() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.opts.Binary
}

// SetBinary makes the next Start run the executable at path ("" for the
// harness's build of this checkout).
func (n *Node) SetBinary(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.opts.Binary = path
}

// Start launches the process if it is not running. It does not wait for
// readiness; see WaitReady. ctx is not tied to the process lifetime (a
// node outlives the call that started it).
func (n *Node) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	bin := n.opts.Binary
	if bin == "" {
		var err error
		if bin, err = binary(); err != nil {
			return fmt.Errorf("building ticketd: %w", err)
		}
	}
	if n.cmd != nil && !isClosed(n.done) {
		return fmt.Errorf("node %s: already running (pid %d)", n.opts.NodeID, n.cmd.Process.Pid)
	}
	if err := os.MkdirAll(n.opts.DataDir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	n.starts++
	fmt.Fprintf(f, "=== harness: start #%d of %s at %s: %s %s\n", n.starts, n.opts.NodeID,
		time.Now().Format(time.RFC3339Nano), bin, strings.Join(n.args(), " "))
	cmd := exec.Command(bin, n.args()...)
	cmd.Env = n.env()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a ^C in the terminal goes to `go test`, which
		// then cleans up, instead of racing it to the children.
		Setpgid: true,
		// If the test binary dies without running cleanups (a panic, the
		// -timeout alarm), the kernel kills the node instead of leaving it
		// holding ports.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("node %s: start: %w", n.opts.NodeID, err)
	}
	done := make(chan struct{})
	n.cmd, n.done, n.exit, n.paused = cmd, done, nil, false
	go func() {
		err := cmd.Wait()
		f.Close()
		n.mu.Lock()
		n.exit = err
		n.mu.Unlock()
		close(done)
	}()
	return nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// current returns the running process's command and done channel, or nil.
func (n *Node) current() (*exec.Cmd, chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return nil, nil
	}
	return n.cmd, n.done
}

// Running reports whether the process is alive (possibly paused).
func (n *Node) Running() bool {
	cmd, done := n.current()
	return cmd != nil && !isClosed(done)
}

// PID returns the current process id, or 0.
func (n *Node) PID() int {
	cmd, _ := n.current()
	if cmd == nil {
		return 0
	}
	return cmd.Process.Pid
}

// ExitError returns how the last process exited (nil for status 0), or an
// error saying it is still running.
func (n *Node) ExitError() error {
	cmd, done := n.current()
	if cmd == nil || !isClosed(done) {
		return errors.New("not exited")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.exit
}

// httpClient is shared by every poll; the short timeout keeps a paused node
// from stalling WaitReady beyond its deadline.
var httpClient = &http.Client{Timeout: 2 * time.Second}

// get performs GET http://HTTPAddr/path and returns the status and body.
func (n *Node) get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.opts.HTTPAddr+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// Healthy reports whether GET /healthz answers 200.
func (n *Node) Healthy(ctx context.Context) bool {
	code, _, err := n.get(ctx, "/healthz")
	return err == nil && code == http.StatusOK
}

// Ready reports whether GET /readyz answers 200.
func (n *Node) Ready(ctx context.Context) bool {
	code, _, err := n.get(ctx, "/readyz")
	return err == nil && code == http.StatusOK
}

// WaitReady polls /readyz until it answers 200, the process exits, ctx ends
// or opts.ReadyTimeout passes. Once /readyz is 200 it also checks the
// MySQL port accepts connections, since the two listeners are separate.
func (n *Node) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.ReadyTimeout)
	defer cancel()
	_, done := n.current()
	if done == nil {
		return fmt.Errorf("node %s: not started", n.opts.NodeID)
	}
	var last string
	for {
		if isClosed(done) {
			return fmt.Errorf("node %s exited before ready (%v); log tail:\n%s",
				n.opts.NodeID, n.ExitError(), tail(n.log, 30))
		}
		code, body, err := n.get(ctx, "/readyz")
		if err == nil && code == http.StatusOK {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", n.opts.MySQLAddr)
			if err == nil {
				c.Close()
				return nil
			}
			last = "mysql port: " + err.Error()
		} else if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("/readyz %d %s", code, strings.TrimSpace(string(body)))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready after %v (last: %s); log tail:\n%s",
				n.opts.NodeID, n.opts.ReadyTimeout, last, tail(n.log, 30))
		case <-done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Status is the decoded subset of GET /status that tests rely on. Raw
// holds the whole document.
type Status struct {
	NodeID       string
	State        string // Leader, Follower, Candidate
	LeaderID     string
	Term         uint64
	AppliedIndex uint64
	Raw          map[string]any
}

// Status fetches and decodes /status. Numbers are accepted as JSON numbers
// or numeric strings, so the harness does not pin the server's encoding.
func (n *Node) Status(ctx context.Context) (Status, error) {
	code, body, err := n.get(ctx, "/status")
	if err != nil {
		return Status{}, err
	}
	if code != http.StatusOK {
		return Status{}, fmt.Errorf("node %s: /status %d: %s", n.opts.NodeID, code, body)
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return Status{}, fmt.Errorf("node %s: /status: %w: %s", n.opts.NodeID, err, body)
	}
	str := func(k string) string {
		if v, ok := raw[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	num := func(k string) uint64 {
		switch v := raw[k].(type) {
		case float64:
			return uint64(v)
		case string:
			u, _ := strconv.ParseUint(v, 10, 64)
			return u
		}
		return 0
	}
	return Status{
		NodeID: str("node_id"), State: str("state"), LeaderID: str("leader_id"),
		Term: num("term"), AppliedIndex: num("applied_index"), Raw: raw,
	}, nil
}

// signal sends sig to the running process.
func (n *Node) signal(sig syscall.Signal) error {
	cmd, done := n.current()
	if cmd == nil || isClosed(done) {
		return fmt.Errorf("node %s: not running", n.opts.NodeID)
	}
	return cmd.Process.Signal(sig)
}

// waitExit waits up to d for the process to exit.
func (n *Node) waitExit(d time.Duration) bool {
	_, done := n.current()
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Stop sends SIGTERM and waits for a clean exit. A node that has not exited
// after 15s is killed and Stop reports the hang; a non-zero exit status is
// reported too, since DESIGN requires a clean shutdown on SIGTERM.
func (n *Node) Stop() error {
	if !n.Running() {
		return nil
	}
	n.resumeIfPaused()
	if err := n.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if !n.waitExit(stopTimeout) {
		n.Kill()
		return fmt.Errorf("node %s: no exit %v after SIGTERM; killed", n.opts.NodeID, stopTimeout)
	}
	if err := n.ExitError(); err != nil {
		return fmt.Errorf("node %s: exit after SIGTERM: %w", n.opts.NodeID, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be reaped. The data dir
// is left as the crash left it.
func (n *Node) Kill() error {
	if !n.Running() {
		return nil
	}
	if err := n.signal(syscall.SIGKILL); err != nil && n.Running() {
		return err
	}
	if !n.waitExit(10 * time.Second) {
		return fmt.Errorf("node %s: not reaped 10s after SIGKILL", n.opts.NodeID)
	}
	n.mu.Lock()
	n.paused = false
	n.mu.Unlock()
	return nil
}

// Pause freezes the process with SIGSTOP: its sockets stay open but it
// answers nothing, like a long GC pause or a hung VM. It returns once
// every thread is stopped: kill(2) returns before a process running on
// another CPU has actually stopped.
func (n *Node) Pause() error {
	if err := n.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	n.mu.Lock()
	n.paused = true
	n.mu.Unlock()
	pid := n.PID()
	if !pollUntil(5*time.Second, time.Millisecond, func() bool { return allStopped(pid) }) {
		return fmt.Errorf("node %s: not stopped 5s after SIGSTOP", n.opts.NodeID)
	}
	return nil
}

// allStopped reports whether every thread of pid is in state T (stopped),
// from /proc/PID/task/*/stat. Without /proc it assumes yes.
func allStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return true
	}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // thread exited
		}
		// "pid (comm) S ...": the state follows the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		if st := b[i+2]; st != 'T' && st != 't' {
			return false
		}
	}
	return true
}

// Resume continues a paused process with SIGCONT.
func (n *Node) Resume() error {
	if err := n.signal(syscall.SIGCONT); err != nil {
		return err
	}
	n.mu.Lock()
	n.paused = false
	n.mu.Unlock()
	return nil
}

func (n *Node) resumeIfPaused() {
	n.mu.Lock()
	p := n.paused
	n.mu.Unlock()
	if p {
		n.Resume()
	}
}

// Restart stops the node with SIGTERM (if running) and starts it again on
// the same data dir and ports, waiting for readiness unless opts.NoWait.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Stop(); err != nil {
		return err
	}
	if err := n.Start(ctx); err != nil {
		return err
	}
	if n.opts.NoWait {
		return nil
	}
	return n.WaitReady(ctx)
}

// LogTail returns the last lines of the node's log.
func (n *Node) LogTail(lines int) string { return tail(n.log, lines) }

// cleanup kills a still-running process (a test that wanted a clean stop
// called Stop itself; at cleanup speed matters more) and prints the log
// tail when the test failed.
func (n *Node) cleanup() {
	if n.Running() {
		n.resumeIfPaused()
		n.Kill()
	}
	if n.t.Failed() {
		n.t.Logf("=== log tail of ticketd node %s (%s):\n%s", n.opts.NodeID, n.log, tail(n.log, 40))
	}
}
