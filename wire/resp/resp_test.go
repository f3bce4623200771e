package resp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// memRepl applies proposals to a MemStore at the local time, as a
// one-node cluster would; fail makes every proposal fail.
type memRepl struct {
	mu   sync.Mutex
	st   *ticket.MemStore
	fail error
	n    int // proposals
}

func (m *memRepl) Propose(_ context.Context, cmds []model.Command) ([]model.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	m.n++
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		c := cmds[i]
		c.Now = time.Now()
		r, err := ticket.Apply(m.st, &c)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (m *memRepl) View(fn func(ticket.Store) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(m.st)
}

func startTest(t *testing.T, users Accounts) (string, *memRepl) {
	t.Helper()
	repl := &memRepl{st: ticket.NewMemStore()}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := alloc.NewService(repl, repl, alloc.Config{}, log)
	srv := New(Config{Service: svc, Users: users, Logger: log, Leading: func() bool { return true }, SweepInterval: 10 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); svc.Close() })
	return ln.Addr().String(), repl
}

func client3(addr string, proto int, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	return redis.NewClient(o)
}

func TestIncrAndErrors(t *testing.T) {
	addr, _ := startTest(t, nil)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := client3(addr, proto)
		defer c.Close()
		key := "order:" + string(rune('0'+proto))
		for want := int64(1); want <= 3; want++ {
			if v, err := c.Incr(ctx, key).Result(); err != nil || v != want {
				t.Fatalf("RESP%d INCR: %d %v", proto, v, err)
			}
		}
		if v, err := c.IncrBy(ctx, key, 100).Result(); err != nil || v != 103 {
			t.Fatalf("INCRBY: %d %v", v, err)
		}
		if _, err := c.Get(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP%d GET missing: %v", proto, err)
		}
		c.Set(ctx, "s", "x", 0)
		if err := c.Incr(ctx, "s").Err(); err == nil || err.Error() != ticket.ErrNotInteger {
			t.Fatalf("INCR of a string: %v", err)
		}
		if err := c.Do(ctx, "LPUSH", "l", "x").Err(); err == nil || !strings.Contains(err.Error(), "'LPUSH' is not supported") {
			t.Fatalf("LPUSH: %v", err)
		}
		if err := c.Do(ctx, "INCR").Err(); err == nil || err.Error() != "ERR wrong number of arguments for 'incr' command" {
			t.Fatalf("arity: %v", err)
		}
		// The connection stays usable after errors.
		if v, err := c.Incr(ctx, key).Result(); err != nil || v != 104 {
			t.Fatalf("after errors: %d %v", v, err)
		}
	}
}

// TestPipelineInOrder: pipelined commands are answered in order, each
// after its own write.
func TestPipelineInOrder(t *testing.T) {
	addr, _ := startTest(t, nil)
	ctx := context.Background()
	c := client3(addr, 2)
	defer c.Close()
	p := c.Pipeline()
	var incrs []*redis.IntCmd
	set := p.Set(ctx, "p", "10", 0)
	for range 50 {
		incrs = append(incrs, p.Incr(ctx, "p"))
	}
	get := p.Get(ctx, "p")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if set.Val() != "OK" {
		t.Fatalf("SET %q", set.Val())
	}
	for i, r := range incrs {
		if r.Val() != int64(11+i) {
			t.Fatalf("INCR %d answered %d", i, r.Val())
		}
	}
	if get.Val() != "60" {
		t.Fatalf("GET %q", get.Val())
	}
}

func TestAuthAndRoles(t *testing.T) {
	users := mysqlconn.NewUsers()
	must(t, users.Add("default", "s3cret"))
	must(t, users.AddRole("app", "pw", mysqlconn.RoleAlloc))
	addr, _ := startTest(t, users)
	ctx := context.Background()
	anon := client3(addr, 2)
	defer anon.Close()
	if err := anon.Incr(ctx, "a").Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("without AUTH: %v", err)
	}
	if err := anon.Do(ctx, "AUTH", "wrong").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	admin := client3(addr, 3, func(o *redis.Options) { o.Password = "s3cret" })
	defer admin.Close()
	if err := admin.Set(ctx, "a", "5", 0).Err(); err != nil {
		t.Fatalf("default user with requirepass: %v", err)
	}
	app := client3(addr, 2, func(o *redis.Options) { o.Username, o.Password = "app", "pw" })
	defer app.Close()
	if v, err := app.Incr(ctx, "a").Result(); err != nil || v != 6 {
		t.Fatalf("alloc INCR: %d %v", v, err)
	}
	for _, args := range [][]any{{"DEL", "a"}, {"SET", "a", "1"}, {"DECR", "a"}, {"INCRBY", "a", "-1"}, {"EXPIRE", "a", "1"}} {
		if err := app.Do(ctx, args...).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM User app has no permissions") {
			t.Fatalf("alloc %v: %v", args, err)
		}
	}
	if v, err := app.Get(ctx, "a").Result(); err != nil || v != "6" {
		t.Fatalf("alloc GET: %q %v", v, err)
	}
}

// TestReplicationFailure: a write that does not commit is an error, and
// its connection stays usable.
func TestReplicationFailure(t *testing.T) {
	addr, repl := startTest(t, nil)
	ctx := context.Background()
	c := client3(addr, 2)
	defer c.Close()
	repl.mu.Lock()
	repl.fail = ticket.ErrNoQuorum
	repl.mu.Unlock()
	if err := c.Incr(ctx, "a").Err(); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN ") {
		t.Fatalf("no quorum: %v", err)
	}
	repl.mu.Lock()
	repl.fail = ticket.ErrUncertain
	repl.mu.Unlock()
	if err := c.Incr(ctx, "a").Err(); err == nil || !strings.Contains(err.Error(), "outcome is unknown") {
		t.Fatalf("uncertain: %v", err)
	}
	repl.mu.Lock()
	repl.fail = nil
	repl.mu.Unlock()
	if v, err := c.Incr(ctx, "a").Result(); err != nil || v != 1 {
		t.Fatalf("after: %d %v", v, err)
	}
}

// TestSweepDeletesThroughLog: the leader's sweeper deletes an expired key
// with a command, so that the stored state loses it too.
func TestSweepDeletesThroughLog(t *testing.T) {
	addr, repl := startTest(t, nil)
	ctx := context.Background()
	c := client3(addr, 2)
	defer c.Close()
	must(t, c.Set(ctx, "gone", "1", 30*time.Millisecond).Err())
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ok bool
		must(t, repl.View(func(st ticket.Store) (err error) { _, ok, err = st.Key(0, "gone"); return err }))
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("expired key still stored after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"a*c", "abc", true}, {"a*d", "abc", false},
		{"?b?", "abc", true}, {"order:2026112[0-9]", "order:20261127", true}, {"order:2026112[0-5]", "order:20261127", false},
		{"[^a]x", "bx", true}, {"[^a]x", "ax", false}, {`a\*`, "a*", true}, {`a\*`, "ab", false},
		{"[a-c]", "b", true}, {"[c-a]", "b", true}, {"h[ae]llo", "hello", true}, {"h[ae]llo", "hillo", false},
	} {
		if got := match(c.p, c.s); got != c.ok {
			t.Errorf("match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// countObs records the Observer's commands.
type countObs struct {
	mu   sync.Mutex
	seen map[string]int // "name outcome"
}

func (o *countObs) Command(name, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen[name+" "+outcome]++
}
func (o *countObs) ConnOpened() {}
func (o *countObs) ConnClosed() {}

// TestObserverOutcomes: every command is counted once, by name and
// outcome, pipelined ones too; names not served count as "other".
func TestObserverOutcomes(t *testing.T) {
	repl := &memRepl{st: ticket.NewMemStore()}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := alloc.NewService(repl, repl, alloc.Config{}, log)
	obs := &countObs{seen: map[string]int{}}
	srv := New(Config{Service: svc, Logger: log, Observer: obs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = srv.Serve(ln) }()
	defer func() { srv.Close(); svc.Close() }()
	ctx := context.Background()
	c := client3(ln.Addr().String(), 2, func(o *redis.Options) { o.DisableIdentity = true })
	defer c.Close()
	must(t, c.Incr(ctx, "a").Err())
	must(t, c.Set(ctx, "s", "x", 0).Err())
	_ = c.Incr(ctx, "s").Err()
	_ = c.Do(ctx, "LPUSH", "l", "x").Err()
	_ = c.Do(ctx, "INCR").Err()
	p := c.Pipeline()
	for range 3 {
		p.Incr(ctx, "a")
	}
	p.Do(ctx, "SET", "a", "1", "BAD")
	p.Incr(ctx, "s")
	_, _ = p.Exec(ctx)
	repl.mu.Lock()
	repl.fail = ticket.ErrNoQuorum
	repl.mu.Unlock()
	_ = c.Incr(ctx, "a").Err()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	want := map[string]int{"incr ok": 4, "set ok": 1, "incr error": 2, "other refused": 1, "incr refused": 1, "set error": 1, "incr failed": 1}
	for k, n := range want {
		if obs.seen[k] != n {
			t.Errorf("%q counted %d times, want %d (all: %v)", k, obs.seen[k], n, obs.seen)
		}
	}
}
