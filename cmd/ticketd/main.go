// Command ticketd is a MySQL-protocol ticket server (Flickr's Tickets64)
// whose counters are replicated with Raft. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ticketd:", err)
		os.Exit(1)
	}
}
