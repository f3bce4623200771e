package raftport

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

func TestQuietShutdown(t *testing.T) {
	var buf bytes.Buffer
	l := quietShutdown{hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})}
	l.Error("failed to decode incoming command", "error", raft.ErrTransportShutdown)
	l.Log(hclog.Error, "failed to decode incoming command", "error", fmt.Errorf("wrapped: %w", raft.ErrTransportShutdown))
	if buf.Len() != 0 {
		t.Fatalf("the transport's own shutdown was logged at Info or above:\n%s", buf.String())
	}
	l.Error("failed to decode incoming command", "error", errors.New("unexpected EOF"))
	l.Log(hclog.Error, "failed to appendEntries to", "error", errors.New("connection refused"))
	if got := strings.Count(buf.String(), "[ERROR]"); got != 2 {
		t.Fatalf("other errors: %d logged at Error, want 2:\n%s", got, buf.String())
	}
}
