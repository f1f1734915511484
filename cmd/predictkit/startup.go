package main

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// startupProblem is a start-up failure in one line an operator can act on:
// the root cause and a hint, never the dependency chain fx reports with
// its functions' source paths. A database that cannot be reached reads
// "cannot connect to PostgreSQL at 127.0.0.1:5439: connection refused
// (is PostgreSQL running there? check PREDICTKIT_DATABASE_URL)".
func startupProblem(err error) string {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return "cannot connect to PostgreSQL at " + pgAddr(ce, err) + ": " + connectCause(err)
	}
	return oneLine(withoutChain(err).Error())
}

// pgAddr is the host:port that refused: the dialled address when the
// cause is a network error, else the first host of the URL.
func pgAddr(ce *pgconn.ConnectError, err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	if ce.Config == nil {
		return "?"
	}
	if strings.HasPrefix(ce.Config.Host, "/") { // a Unix socket directory
		return ce.Config.Host
	}
	return net.JoinHostPort(ce.Config.Host, strconv.Itoa(int(ce.Config.Port)))
}

// connectCause names why a connection failed, with a hint.
func connectCause(err error) string {
	const check = "check PREDICTKIT_DATABASE_URL"
	var pg *pgconn.PgError
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is PostgreSQL running there? " + check + ")"
	case errors.As(err, &dns):
		return "unknown host " + dns.Name + " (" + check + ")"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return "timed out (is the host reachable, and PostgreSQL listening on that port? " + check + ")"
	case errors.As(err, &pg):
		return oneLine(pg.Message) + " (SQLSTATE " + pg.Code + "; " + check + ")"
	}
	return oneLine(innermost(err).Error()) + " (" + check + ")"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// withoutChain drops the wrapping errors that name source files (fx's and
// dig's "could not build arguments for function … (/path/file.go:68)").
func withoutChain(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if !strings.Contains(e.Error(), ".go:") {
			return e
		}
	}
	return innermost(err)
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
