package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestVersion runs the real binary's `--version` and `version`: both print
// the same text, exit 0 without starting a node, and, when the build was
// stamped with VCS information, name the commit this checkout is at.
func TestVersion(t *testing.T) {
	bin := harness.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var outs []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		cmd := exec.CommandContext(ctx, bin, args...)
		// Run in an empty directory: a --version that started a node
		// would leave ./ticketd-data behind.
		dir := t.TempDir()
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ticketd %s: %v\n%s", args[0], err, out)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("ticketd %s created %s: it started a node", args[0], entries[0].Name())
		}
		s := string(out)
		if !strings.HasPrefix(s, "ticketd ") || !strings.Contains(s, "\nrevision: ") || !strings.Contains(s, "\ngo: go") {
			t.Errorf("ticketd %s printed:\n%s", args[0], s)
		}
		outs = append(outs, s)
	}
	if outs[0] != outs[1] {
		t.Errorf("--version and version differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	t.Logf("ticketd --version:\n%s", outs[0])

	// go build stamps the revision only from a clone's own .git directory
	// and without GOFLAGS=-buildvcs=false (a linked worktree's .git is a
	// file: golang/go#58218), so an unstamped build is not an error here.
	rev := ""
	for line := range strings.Lines(outs[0]) {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "revision: "); ok {
			rev = r
		}
	}
	if strings.HasPrefix(rev, "unknown") || os.Getenv("TICKETD_BIN") != "" {
		t.Logf("not comparing the revision with git (unstamped or prebuilt binary)")
		return
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Logf("git rev-parse HEAD: %v; not comparing", err)
		return
	}
	if want := strings.TrimSpace(string(head)); rev != want {
		t.Errorf("binary says revision %s, the checkout is at %s", rev, want)
	}
}
