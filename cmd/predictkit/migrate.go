package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/predictkit/predictkit/storage/postgres"
)

const migrateUsage = `Usage: predictkit migrate [flags] [up|status|down|version] [flags]

Manages the embedded PostgreSQL migrations of the database at
-database-url (env PREDICTKIT_DATABASE_URL). Only up and down change the
database.

Operations:
  up        apply every pending migration and print each one applied
            (the default when no operation is given)
  status    list every migration as applied (with when) or pending
  down      roll back exactly one migration, the last applied, and print it
  version   print the current version (0 when none is applied)

An unknown operation or an extra argument prints this and exits 2 without
touching the database.

Flags:
`

// migrateCmd is `predictkit migrate`: results on stdout, problems on
// stderr; exit 0 when done, 1 when the database failed it, 2 for a usage
// error (nothing is done).
func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The URL's default is not shown in the usage: it may hold a password.
	url := fs.String("database-url", "", "PostgreSQL URL (default: env PREDICTKIT_DATABASE_URL)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), migrateUsage)
		fs.PrintDefaults()
	}
	// parse parses flags; when it says stop, exit with code (0 for -h).
	parse := func(args []string) (code int, stop bool) {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return 0, true
		}
		return 2, err != nil
	}
	if code, stop := parse(args); stop {
		return code
	}
	// The operation may come before or after the flags.
	op := "up"
	if fs.NArg() > 0 {
		op = fs.Arg(0)
		if code, stop := parse(fs.Args()[1:]); stop {
			return code
		}
	}
	switch op {
	case "up", "status", "down", "version":
	default:
		fmt.Fprintf(stderr, "predictkit migrate: unknown operation %q\n\n", op)
		fs.Usage()
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "predictkit migrate %s: unexpected arguments %q\n\n", op, fs.Args())
		fs.Usage()
		return 2
	}
	if *url == "" {
		*url = os.Getenv("PREDICTKIT_DATABASE_URL")
	}
	if *url == "" {
		fmt.Fprintln(stderr, "predictkit migrate: no database URL: set PREDICTKIT_DATABASE_URL or -database-url")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	s, err := postgres.New(ctx, *url)
	if err != nil {
		fmt.Fprintf(stderr, "predictkit migrate %s: %v\n", op, err)
		return 1
	}
	defer s.Close()
	if err := migrateOp(ctx, s, op, stdout); err != nil {
		fmt.Fprintf(stderr, "predictkit migrate %s: %v\n", op, err)
		return 1
	}
	return 0
}

func migrateOp(ctx context.Context, s *postgres.Store, op string, stdout io.Writer) error {
	switch op {
	case "up":
		applied, err := s.MigrateUp(ctx)
		for _, r := range applied {
			fmt.Fprintf(stdout, "applied %s (version %d, %s)\n", r.Name, r.Version, r.Duration.Round(time.Millisecond))
		}
		if err != nil {
			return err
		}
		v, err := s.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			fmt.Fprintf(stdout, "no migrations to apply; at version %d\n", v)
		} else {
			plural := "s"
			if len(applied) == 1 {
				plural = ""
			}
			fmt.Fprintf(stdout, "applied %d migration%s; at version %d\n", len(applied), plural, v)
		}
	case "down":
		r, err := s.MigrateDown(ctx)
		if errors.Is(err, postgres.ErrNothingToRollBack) {
			return errors.New("no migration to roll back; at version 0")
		}
		if err != nil {
			return err
		}
		v, err := s.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rolled back %s (version %d, %s); at version %d\n", r.Name, r.Version, r.Duration.Round(time.Millisecond), v)
	case "status":
		st, err := s.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "VERSION\tSTATE\tAPPLIED AT\tMIGRATION")
		for _, m := range st {
			state, at := "pending", "-"
			if m.Applied {
				state, at = "applied", m.AppliedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.Version, state, at, m.Name)
		}
		return tw.Flush()
	case "version":
		v, err := s.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, v)
	}
	return nil
}
