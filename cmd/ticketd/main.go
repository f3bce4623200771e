// Command ticketd is a MySQL-protocol ticket server (Flickr's Tickets64)
// whose counters are replicated with Raft. See README.md and OPERATIONS.md.
//
// Without a subcommand it runs a node; the operator's tools (backup,
// restore, import, status, leader-transfer, version) are subcommands of the
// same binary, so that a deployment has one file to install.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// command is one subcommand: it gets the arguments after its name.
type command func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// commands maps subcommand names to their entry points. A first argument
// that is not one of them (a flag, or nothing) runs a node.
var commands = map[string]command{
	"version": versionCommand,
	"import":  importCmd,
	"backup":  backupCmd,
	"restore": restoreCmd,
	"status":  statusCmd,
	// Planned operations: move leadership off a node before maintenance.
	"leader-transfer": leaderTransferCmd,
}

func main() {
	// ticketd's heap is small (tens of MB) and its garbage is per
	// statement: collecting at 4x the live heap instead of 2x gave 5% more
	// tickets/s on three nodes (measured with sysbench, 64 connections).
	// GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	var err error
	if len(args) > 0 && commands[args[0]] != nil {
		err = commands[args[0]](ctx, args[1:], os.Getenv, os.Stdout, os.Stderr)
	} else {
		err = run(ctx, args, os.Getenv, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ticketd:", err)
		os.Exit(1)
	}
}
