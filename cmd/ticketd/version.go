package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ticketd/ticketd/raftstore"
)

// versionCommand is `ticketd version`; `ticketd --version` prints the same.
func versionCommand(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version: unexpected arguments: %v", args)
	}
	bi, _ := debug.ReadBuildInfo()
	_, err := io.WriteString(stdout, versionText(bi))
	return err
}

// versionText renders what an operator needs to tell two builds apart: the
// module version, the commit it was built from (and whether the tree had
// uncommitted changes), and the toolchain. bi is nil when the binary
// carries no build information; the Go version then comes from the
// runtime, which is the same toolchain.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	mod, goVersion := "(unknown)", runtime.Version()
	settings := map[string]string{}
	if bi != nil {
		if bi.Main.Version != "" {
			mod = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	fmt.Fprintf(&b, "ticketd %s\n", mod)
	// A binary built outside a VCS checkout (or with -buildvcs=false)
	// has no revision: say so rather than print an empty line that looks
	// like a parsing bug.
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = "unknown (built without VCS information)"
	}
	fmt.Fprintf(&b, "revision: %s\n", rev)
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "commit time: %s\n", t)
	}
	if m := settings["vcs.modified"]; m != "" {
		fmt.Fprintf(&b, "modified: %s\n", m)
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	// What a rolling upgrade compares: a cluster runs the lowest of its
	// members' command versions (raftstore's version.go).
	fmt.Fprintf(&b, "command version: %d\n", raftstore.CommandVersion)
	return b.String()
}
