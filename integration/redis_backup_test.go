package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestRedisBackupRestore: a backup carries the Redis keys with their
// expiry; restored with --advance into another cluster, a counter goes
// on above every number the source answered after the backup, a string
// and an expiry come back as they were, and a restart keeps them
// (checkpoint).
func TestRedisBackupRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := harness.Start(ctx, t, harness.Options{Redis: true})
	rc := redis.NewClient(&redis.Options{Addr: src.RedisAddr()})
	defer rc.Close()
	for range 10 {
		must(t, rc.Incr(ctx, "order:20261127").Err())
	}
	must(t, rc.Set(ctx, "name", "ticketd", 0).Err())
	must(t, rc.Set(ctx, "day", "7", time.Hour).Err())
	db3 := redis.NewClient(&redis.Options{Addr: src.RedisAddr(), DB: 3})
	defer db3.Close()
	must(t, db3.Set(ctx, "other", "x", 0).Err())
	file := filepath.Join(t.TempDir(), "backup.tkd")
	if out, err := ticketdCmd(t, ctx, "backup", "--from", src.HTTPAddr(), "--out", file); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	// Numbers answered after the backup: the restore must not answer them again.
	var last int64
	for range 5 {
		v, err := rc.Incr(ctx, "order:20261127").Result()
		must(t, err)
		last = v
	}

	dst := harness.Start(ctx, t, harness.Options{Redis: true})
	if out, err := ticketdCmd(t, ctx, "restore", "--in", file, "--to", dst.HTTPAddr(), "--advance", "1000"); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	check := func(when string) {
		t.Helper()
		dc := redis.NewClient(&redis.Options{Addr: dst.RedisAddr()})
		defer dc.Close()
		v, err := dc.Incr(ctx, "order:20261127").Result()
		if err != nil || v <= last {
			t.Fatalf("%s: INCR answered %d (%v), the source answered up to %d", when, v, err, last)
		}
		if s, err := dc.Get(ctx, "name").Result(); err != nil || s != "ticketd" {
			t.Fatalf("%s: GET name %q %v", when, s, err)
		}
		if ttl, err := dc.TTL(ctx, "day").Result(); err != nil || ttl < 50*time.Minute || ttl > time.Hour {
			t.Fatalf("%s: TTL day %v %v", when, ttl, err)
		}
		// Every key holding a non-negative integer moves by the
		// advance, as a counter: "7" too.
		if s, err := dc.Get(ctx, "day").Result(); err != nil || s != "1007" {
			t.Fatalf("%s: GET day %q %v, want 1007", when, s, err)
		}
		d3 := redis.NewClient(&redis.Options{Addr: dst.RedisAddr(), DB: 3})
		defer d3.Close()
		if s, err := d3.Get(ctx, "other").Result(); err != nil || s != "x" {
			t.Fatalf("%s: GET other in database 3: %q %v", when, s, err)
		}
		t.Logf("%s: INCR %d (source's last %d)", when, v, last)
	}
	check("after restore")
	// A second restore over keys, without --force, is refused.
	out, err := ticketdCmd(t, ctx, "restore", "--in", file, "--to", dst.HTTPAddr(), "--advance", "1000")
	if err == nil || !strings.Contains(out, "Redis key database 0") {
		t.Fatalf("restore over keys without --force: %v\n%s", err, out)
	}
	must(t, dst.Stop())
	must(t, dst.Start(ctx))
	must(t, dst.WaitReady(ctx))
	check("after a restart")
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}
