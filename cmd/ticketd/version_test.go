package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/raftstore"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/ticketd/ticketd", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	got := versionText(bi)
	for _, want := range []string{
		"ticketd v1.2.3\n",
		"revision: 0123456789abcdef0123456789abcdef01234567\n",
		"commit time: 2026-01-02T03:04:05Z\n",
		"modified: true\n",
		"go: go1.99.1 ",
		fmt.Sprintf("command version: %d\n", raftstore.CommandVersion),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("versionText lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, "ticketd v1.2.3\n") {
		t.Errorf("first line is not the module version:\n%s", got)
	}

	// No build information at all (or none from VCS): still one answer
	// per line, saying what is missing.
	got = versionText(nil)
	if !strings.Contains(got, "ticketd (unknown)\n") || !strings.Contains(got, "revision: unknown") ||
		!strings.Contains(got, "go: go") || strings.Contains(got, "modified:") {
		t.Errorf("versionText(nil):\n%s", got)
	}
}

func TestVersionOption(t *testing.T) {
	none := func(string) string { return "" }
	o, err := parseOptions([]string{"--version"}, none, io.Discard)
	if err != nil || !o.version {
		t.Fatalf("--version: %+v %v", o, err)
	}
	// A deployment's own TICKETD_VERSION label must neither be refused as
	// a bad boolean nor turn a node start into a version print.
	env := map[string]string{"TICKETD_VERSION": "2024.06-blue"}
	o, err = parseOptions(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || o.version {
		t.Fatalf("TICKETD_VERSION in the environment: %+v %v", o, err)
	}
}

func TestVersionCommand(t *testing.T) {
	if lookupCommand("version") == nil {
		t.Fatal(`"version" is not a registered subcommand`)
	}
	var out bytes.Buffer
	if err := lookupCommand("version")(context.Background(), nil, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "ticketd ") || !strings.Contains(out.String(), "\ngo: go") {
		t.Errorf("ticketd version printed:\n%s", out.String())
	}
	if err := lookupCommand("version")(context.Background(), []string{"--json"}, nil, &out, io.Discard); err == nil {
		t.Error("ticketd version --json: no error for an unknown argument")
	}
}
