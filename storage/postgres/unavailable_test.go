package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage"
	"github.com/predictkit/predictkit/storage/postgres"
)

// safeToRetry is a driver error raised before anything was sent.
type safeToRetry struct{}

func (safeToRetry) Error() string     { return "conn busy" }
func (safeToRetry) SafeToRetry() bool { return true }

// refused is a real connection error: nothing listens on port 1.
func refused(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err == nil {
		conn.Close(ctx)
		t.Skip("something listens on 127.0.0.1:1")
	}
	return err
}

func TestConnectionErrorsAreUnavailable(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a refused connection", refused(t), true},
		{"a backend terminated by the operator (57P01)", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{"a server shutting down (57P02)", &pgconn.PgError{Severity: "FATAL", Code: "57P02"}, true},
		{"a server starting up (57P03)", &pgconn.PgError{Severity: "FATAL", Code: "57P03"}, true},
		{"a connection failure (08006)", &pgconn.PgError{Severity: "ERROR", Code: "08006"}, true},
		{"too many connections (53300)", &pgconn.PgError{Severity: "FATAL", Code: "53300"}, true},
		{"any other FATAL", &pgconn.PgError{Severity: "FATAL", Code: "XX000"}, true},
		{"a connection reset", fmt.Errorf("receive message: %w", reset), true},
		{"an unexpected end of the stream", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"a closed connection", fmt.Errorf("acquire: %w", pgconn.ErrConnClosed), true},
		{"a statement's error", &pgconn.PgError{Severity: "ERROR", Code: "42P01"}, false},
		{"a unique violation", &pgconn.PgError{Severity: "ERROR", Code: "23505"}, false},
		{"a domain error", market.ErrClosed, false},
		{"no error", nil, false},
	}
	for _, c := range cases {
		verdict := " means the database is unavailable"
		if !c.want {
			verdict = " is no availability problem"
		}
		t.Run(c.name+verdict, func(t *testing.T) {
			if got := postgres.ConnectionLost(c.err); got != c.want {
				t.Fatalf("ConnectionLost(%v) = %v", c.err, got)
			}
			if c.err == nil {
				return
			}
			got := postgres.Translate(c.err, nil)
			if errors.Is(got, storage.ErrUnavailable) != c.want {
				t.Fatalf("Translate(%v) = %v", c.err, got)
			}
			if errors.Is(got, storage.ErrOutcomeUnknown) {
				t.Fatalf("Translate(%v) = %v: no COMMIT was in flight", c.err, got)
			}
			if c.want && !errors.Is(got, c.err) {
				t.Fatalf("Translate(%v) = %v lost the driver's error", c.err, got)
			}
		})
	}
	t.Run("a deadline passed waiting for the database is unavailable and still a deadline", func(t *testing.T) {
		got := postgres.Translate(fmt.Errorf("acquire: %w", context.DeadlineExceeded), nil)
		if !errors.Is(got, storage.ErrUnavailable) || !errors.Is(got, context.DeadlineExceeded) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("a cancelled request is neither", func(t *testing.T) {
		got := postgres.Translate(context.Canceled, nil)
		if errors.Is(got, storage.ErrUnavailable) || errors.Is(got, storage.ErrOutcomeUnknown) {
			t.Fatalf("got %v", got)
		}
	})
}

func TestErrorsDuringCommit(t *testing.T) {
	deadlock := &pgconn.PgError{Severity: "ERROR", Code: "40P01"}
	cases := []struct {
		name      string
		err       error
		ambiguous bool
	}{
		{"a statement refused with an ERROR rolled the transaction back", &pgconn.PgError{Severity: "ERROR", Code: "23514"}, false},
		{"a deadlock reported by the server rolled it back", deadlock, false},
		{"a 'conn closed' the driver calls safe to retry may have committed (pgx says so of a failed read of COMMIT's answer)", safeToRetry{}, true},
		{"a backend terminated while committing may have committed", &pgconn.PgError{Severity: "FATAL", Code: "57P01"}, true},
		{"a backend terminated in place of COMMIT's answer may have committed", postgres.StmtError(4, 4, &pgconn.PgError{Severity: "FATAL", Code: "57P01"}), true},
		{"a backend terminated in place of an earlier statement's answer never ran COMMIT", postgres.StmtError(2, 4, &pgconn.PgError{Severity: "FATAL", Code: "57P01"}), false},
		{"a stream cut while reading an earlier statement's answer may have committed", postgres.StmtError(2, 4, io.ErrUnexpectedEOF), true},
		{"a connection reset while committing may have committed", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"a stream cut while committing may have committed", io.ErrUnexpectedEOF, true},
		{"a deadline passed while committing may have committed", context.DeadlineExceeded, true},
		{"a confirmation that cannot be read may have committed", errors.New("wrote 1 trades but got 0 ids back"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			classified := postgres.CommitFailed(c.err)
			got := postgres.Translate(classified, nil)
			if errors.Is(got, storage.ErrOutcomeUnknown) != c.ambiguous {
				t.Fatalf("Translate(CommitFailed(%v)) = %v", c.err, got)
			}
			if c.ambiguous {
				if postgres.Retryable(classified) {
					t.Fatal("an ambiguous commit would be run again")
				}
				if errors.Is(got, storage.ErrUnavailable) {
					t.Fatalf("got %v: outcome unknown is not 'nothing happened'", got)
				}
				if !errors.Is(got, c.err) {
					t.Fatalf("got %v: the driver's error is lost", got)
				}
			}
		})
	}
	t.Run("no error stays no error", func(t *testing.T) {
		if err := postgres.CommitFailed(nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a backend terminated before it ran COMMIT is retried", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(context.Background(), 5, func() error {
			calls++
			if calls == 1 {
				return postgres.CommitFailed(postgres.StmtError(1, 3, &pgconn.PgError{Severity: "FATAL", Code: "57P01"}))
			}
			return nil
		})
		if err != nil || calls != 2 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a lost connection before COMMIT is retried", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(context.Background(), 5, func() error {
			calls++
			if calls == 1 {
				return &pgconn.PgError{Severity: "FATAL", Code: "57P01"}
			}
			return nil
		})
		if err != nil || calls != 2 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a lost connection during COMMIT is run once", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(context.Background(), 5, func() error {
			calls++
			return postgres.CommitFailed(io.ErrUnexpectedEOF)
		})
		if err == nil || calls != 1 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
}
