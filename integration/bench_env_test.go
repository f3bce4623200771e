//go:build bench

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// The bench tests take their settings from TICKETD_BENCH_* variables, each
// with a default. These read them alike: a value that does not parse, or
// is out of range, fails the run naming the variable rather than being
// ignored.

// benchDuration is the duration in the variable name, def when it is
// unset or empty.
func benchDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// benchCount is the whole number in the variable name, def when it is
// unset or empty; one that is not a number or is below least fails the
// run, with want (if any) saying what is wanted.
func benchCount(t *testing.T, name string, def, least int, want string) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		if want == "" {
			t.Fatalf("%s=%q", name, v)
		}
		t.Fatalf("%s=%q: %s", name, v, want)
	}
	return n
}

// benchScriptDir is the directory of the bench scripts
// (mariadb-ticketdb.sh, ticket.lua): TICKETD_BENCH_DIR, else
// ../shared/bench beside the module.
func benchScriptDir(t *testing.T) string {
	t.Helper()
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if v := os.Getenv("TICKETD_BENCH_DIR"); v != "" {
		return v
	}
	return filepath.Join(root, "..", "shared", "bench")
}
