package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ticketd/ticketd/cmd/ticketd/internal/mysqlimport"
)

// importCmd is `ticketd import`: it moves the ticket tables of live
// MySQL/MariaDB ticket servers into ticketd, setting each counter above
// every id the sources may have handed out. Dry run unless --apply.
func importCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ticketd import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var from []string
	fs.Func("from", "DSN of a source MySQL/MariaDB ticket server, e.g. 'user:pw@tcp(db1:3306)/' (repeat for each server; env TICKETD_IMPORT_FROM, space-separated)", func(v string) error {
		from = append(from, v)
		return nil
	})
	to := fs.String("to", getenv("TICKETD_IMPORT_TO"), "DSN of ticketd's MySQL protocol, e.g. 'root@tcp(127.0.0.1:3306)/' (env TICKETD_IMPORT_TO); required with --apply")
	apply := fs.Bool("apply", false, "create the tables in ticketd and set the counters (default: print the plan only)")
	margin := fs.Uint64("margin", 0, "add this many ids on top of the highest one found, for sources still taking writes")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text (key=value) or json (one object per line)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ticketd import --from DSN [--from DSN ...] [--to DSN] [--apply] [--margin N]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("import: unexpected arguments: %v", fs.Args())
	}
	// DSNs carry passwords: the environment keeps them out of ps.
	if len(from) == 0 {
		from = strings.Fields(getenv("TICKETD_IMPORT_FROM"))
	}
	if len(from) == 0 {
		return errors.New("import: at least one --from DSN is needed")
	}
	if *apply && *to == "" {
		return errors.New("import: --apply needs --to (ticketd's DSN)")
	}
	log, err := newLogger(*logLevel, *logFormat, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// Read everything before writing anything: an unreachable source
	// must leave ticketd untouched.
	var sources []*mysqlimport.Source
	seen := map[string]bool{}
	for i, dsn := range from {
		if seen[dsn] {
			continue
		}
		seen[dsn] = true
		s, err := inspectSource(ctx, dsn, "s"+strconv.Itoa(i+1))
		if err != nil {
			return fmt.Errorf("import: source %d: %w (nothing was changed)", i+1, err)
		}
		log.Debug("read source", "source", s.Label, "addr", s.Addr, "tables", len(s.Tables))
		sources = append(sources, s)
	}
	var keys []mysqlimport.Key
	for _, s := range sources {
		for _, d := range s.Tables {
			keys = append(keys, d.Key)
		}
	}
	var target *mysqlimport.Target
	var tdb *sql.DB
	if *to != "" {
		var addr string
		tdb, addr, err = mysqlimport.Open(*to)
		if err != nil {
			return fmt.Errorf("import: --to: %w", err)
		}
		defer tdb.Close()
		if target, err = mysqlimport.InspectTarget(ctx, tdb, addr, keys); err != nil {
			return fmt.Errorf("import: %w (nothing was changed)", err)
		}
	}
	plan := mysqlimport.Build(sources, target, *margin)
	plan.Write(stdout, *apply)
	for _, s := range plan.NotReadOnly() {
		log.Warn("source is not read-only: it can still hand out ids that ticketd will issue again", "source", s.Label, "addr", s.Addr)
	}
	if err := plan.Err(); err != nil {
		return fmt.Errorf("import: %w (nothing was changed)", err)
	}
	if !*apply {
		return nil
	}
	if err := mysqlimport.Apply(ctx, tdb, plan, log); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	fmt.Fprintf(stdout, "\napplied: %d tables imported into %s\n", len(plan.Tables), target.Addr)
	return nil
}

// inspectSource opens one source, reads it and closes it.
func inspectSource(ctx context.Context, dsn, label string) (*mysqlimport.Source, error) {
	db, addr, err := mysqlimport.Open(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return mysqlimport.InspectSource(ctx, db, label, addr)
}
