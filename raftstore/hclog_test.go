package raftstore

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestHCLogAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := newHCLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 4})), slog.LevelInfo)
	l.Debug("hidden")
	l.Trace("hidden")
	if l.IsDebug() || !l.IsInfo() {
		t.Error("levels")
	}
	l.Named("net").With("peer", "n2").Info("entering follower state", "term", 3)
	for range 5 {
		l.Error("failed to appendEntries to", "peer", "n3")
	}
	l.StandardLogger(nil).Printf("[WARN] raft: from the standard logger")
	out := buf.String()
	for _, want := range []string{"component=net", "peer=n2", "term=3", "level=WARN msg=\"raft: from the standard logger\""} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Errorf("debug passed the Info minimum:\n%s", out)
	}
	if n := strings.Count(out, "failed to appendEntries"); n != 1 {
		t.Errorf("repeated error logged %d times, want 1:\n%s", n, out)
	}
	l.SetLevel(hclog.Off)
	l.Error("silenced")
	if strings.Contains(buf.String(), "silenced") {
		t.Error("Off did not silence")
	}
}
