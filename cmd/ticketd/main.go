// Command ticketd is a MySQL-protocol ticket server (Flickr's Tickets64)
// whose counters are replicated with Raft. See README.md and OPERATIONS.md.
//
// Without a subcommand it runs a node; the operator's tools (backup,
// restore, import, status, leader-transfer, version) are subcommands of the
// same binary, so that a deployment has one file to install.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: it gets the arguments after its name.
type command func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// subcommand is one entry of the subcommand table.
type subcommand struct {
	name    string
	summary string // one line for --help
	run     command
}

// subcommands is the one table of subcommands: main dispatches through
// it and --help lists it, so a new one shows up in both. A first argument
// that is not one of them (a flag, or nothing) runs a node. (A function,
// not a variable: the commands themselves print the usage.)
func subcommands() []subcommand {
	return []subcommand{
		{"backup", "write a consistent backup of a running node's state to a file, through its admin address", backupCmd},
		{"restore", "load a backup into a running cluster through a member's admin address", restoreCmd},
		{"import", "take over the counters of MySQL/MariaDB ticket servers (dry run unless --apply)", importCmd},
		{"status", "print every member's role, term, indexes, lag and readiness", statusCmd},
		// Planned operations: move leadership off a node before maintenance.
		{"leader-transfer", "move leadership off a node before its maintenance", leaderTransferCmd},
		{"version", "print the version, VCS revision and Go version", versionCommand},
	}
}

// lookupCommand returns the subcommand called name, or nil.
func lookupCommand(name string) command {
	for _, c := range subcommands() {
		if c.name == name {
			return c.run
		}
	}
	return nil
}

// firstCommand is the subcommand args start with, or nil.
func firstCommand(args []string) command {
	if len(args) == 0 {
		return nil
	}
	return lookupCommand(args[0])
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	startGCTuning(ctx, os.Getenv)
	args := os.Args[1:]
	var err error
	if cmd := firstCommand(args); cmd != nil {
		err = cmd(ctx, args[1:], os.Getenv, os.Stdout, os.Stderr)
	} else {
		err = run(ctx, args, os.Getenv, os.Stderr)
	}
	if err != nil {
		if !errors.Is(err, errLogged) {
			fmt.Fprintln(os.Stderr, "ticketd:", err)
		}
		os.Exit(1)
	}
}
