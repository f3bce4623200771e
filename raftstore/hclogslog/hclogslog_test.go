package hclogslog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestHCLogAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 4})), slog.LevelInfo)
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

// TestHCLogFormats: raft's printf-style values reach the log formatted,
// not as slices ("initial configuration" servers="[%+v [...]]" before).
func TestHCLogFormats(t *testing.T) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewJSONHandler(&buf, nil)), slog.LevelInfo)
	type server struct{ ID, Address string }
	l.With("cfg", hclog.Fmt("%d servers", 1)).Info("initial configuration", "index", 0,
		"servers", hclog.Fmt("%+v", []server{{"n1", "127.0.0.1:7306"}}), "mask", hclog.Hex(255))
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	for k, want := range map[string]any{"servers": "[{ID:n1 Address:127.0.0.1:7306}]", "mask": "0xff", "cfg": "1 servers"} {
		if rec[k] != want {
			t.Errorf("%s = %#v, want %q (line %s)", k, rec[k], want, buf.String())
		}
	}
}
