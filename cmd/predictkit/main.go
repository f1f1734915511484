// Command predictkit runs the predictkit prediction-market server.
//
//	predictkit [serve] [flags]   serve the HTTP API (the default)
//	predictkit migrate [up|status|down|version] [flags]   migrate the PostgreSQL database (up by default)
//	predictkit bench [flags]     load-test a running server and report
//	predictkit admin <command>   operator tasks over the admin API
//	predictkit export [flags]    download a market's trades as CSV or Parquet
//	predictkit health [flags]    exit 0 when a running server is ready (/readyz)
//	predictkit version           print the version, revision and Go version
//
// Every setting is read from its PREDICTKIT_* environment variable, then
// from its flag; `predictkit serve -h` lists them with their defaults.
// With no database URL the server runs on an in-memory store seeded with
// demo data (PREDICTKIT_DEMO=0 turns the demo data off).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/predictkit/predictkit/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: predictkit <command> [flags]

Commands:
  serve     serve the HTTP API (the default when no command is given)
  migrate   up, status, down or version of the PostgreSQL migrations at PREDICTKIT_DATABASE_URL (up by default)
  bench     load-test a running server: throughput, latency, errors, audit
  admin     operator tasks over the admin API: partners, floats, credits,
            roles, P2P ads, escalated chats, the audit
  export    download every trade of a market as CSV or Parquet (no token)
  health    exit 0 when a running server answers /readyz with 200, else 1
            (for a container HEALTHCHECK or an exec probe)
  version   print the version, the VCS revision and the Go version
  help      print this list

Run "predictkit <command> -h" for its flags ("predictkit serve -h" lists
every setting).
`

// run is the program; it returns the exit code. ctx ends the server.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		cmd, args = "help", args[1:]
	} else if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stderr)
	case "migrate":
		return migrateCmd(ctx, args, stdout, stderr)
	case "bench":
		return benchCmd(ctx, args, stdout, stderr)
	case "admin":
		return adminCmd(ctx, args, stdout, stderr)
	case "export":
		return exportCmd(ctx, args, stdout, stderr)
	case "health":
		return healthCmd(ctx, args, stdout, stderr)
	case "version":
		return versionCmd(stdout)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "predictkit: unknown command %q\n\n%s", cmd, usage)
	return 2
}

func serve(ctx context.Context, args []string, stderr io.Writer) int {
	// Every problem of the environment, the flags and their values is
	// reported at once.
	cfg, err := server.LoadConfig(args, os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	for _, w := range server.UnknownVariables(os.Environ()) {
		fmt.Fprintf(stderr, "predictkit serve: warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "predictkit serve: %v\n\nRun \"predictkit serve -h\" for every setting.\n", err)
		return 2
	}
	app := server.New(cfg)
	if err := app.Err(); err != nil {
		fmt.Fprintf(stderr, "predictkit: %s\n", startupProblem(err))
		return 1
	}
	startCtx, cancel := context.WithTimeout(ctx, app.StartTimeout())
	defer cancel()
	if err := app.Start(startCtx); err != nil {
		if ctx.Err() != nil {
			// Asked to stop while starting (an interrupt, or a caller's
			// cancel): not a failure. Undo what started.
			stopCtx, cancelStop := context.WithTimeout(context.Background(), app.StopTimeout())
			defer cancelStop()
			_ = app.Stop(stopCtx)
			return 0
		}
		fmt.Fprintf(stderr, "predictkit: start: %s\n", startupProblem(err))
		return 1
	}
	select {
	case <-ctx.Done():
	case <-app.Wait():
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), app.StopTimeout())
	defer cancelStop()
	if err := app.Stop(stopCtx); err != nil {
		fmt.Fprintf(stderr, "predictkit: stop: %v\n", err)
		return 1
	}
	return 0
}
