package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage"
	"github.com/predictkit/predictkit/withdrawal"
)

// SQLSTATE codes the store reacts to.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeCheckViolation       = "23514"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	// Text PostgreSQL cannot hold: a NUL or invalid UTF-8 in a text
	// parameter (character_not_in_repertoire), a \u0000 escape in jsonb
	// (untranslatable_character).
	codeCharacterNotInRepertoire = "22021"
	codeUntranslatableCharacter  = "22P05"
)

// unstorableText is what translate makes of the two codes above: an
// *input.Error (field "text": the database does not say which parameter
// it was) that still wraps the driver's error. The domains refuse such
// text before any store sees it (the text rule, package input), so this
// is a defence in depth: a field a domain does not check, or a caller of
// the store itself, gets invalid input (a 400 from the server) rather
// than a storage failure (a 500, which partners retry).
func unstorableText(err error) error {
	return fmt.Errorf("%w (%w)", input.Invalid("text", "holds a NUL character or invalid UTF-8, which cannot be stored"), err)
}

// commitError marks an error met while a transaction's COMMIT was in
// flight: the transaction may have committed, so it is never retried.
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// stmtError is the error of statement at (0-based) of a pipelined batch
// whose last statement is last.
type stmtError struct {
	at, last int
	err      error
}

func (e *stmtError) Error() string { return e.err.Error() }
func (e *stmtError) Unwrap() error { return e.err }

// commitFailed classifies err, the error of a round trip that ended with
// COMMIT (nil stays nil). The transaction certainly did not commit when
// the server refused a statement with an ERROR (PostgreSQL then skips the
// rest of the pipeline, COMMIT included), or when the server's error — a
// FATAL too, such as a terminated backend — came in place of the answer
// to a statement before COMMIT: the server answers in order, so it never
// ran COMMIT. Anything else — a broken connection, a FATAL in place of
// COMMIT's answer, a timeout or cancellation while waiting, a
// confirmation that cannot be read — leaves the outcome unknown.
//
// pgconn.SafeToRetry is no proof that COMMIT was not sent: when the read
// of COMMIT's answer fails, pgx v5 reports it as the lock error "conn
// closed", which says it is safe to retry (reliability.TestAmbiguousCommit
// cuts a connection there).
func commitFailed(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if severity(pe) == "ERROR" {
			return err
		}
		var se *stmtError
		if errors.As(err, &se) && se.at < se.last {
			return err
		}
	}
	return &commitError{err}
}

func severity(pe *pgconn.PgError) string {
	if pe.SeverityUnlocalized != "" {
		return pe.SeverityUnlocalized
	}
	return pe.Severity
}

// connectionLost reports whether err means that the database could not be
// reached or that the connection broke, rather than that a statement
// failed.
func connectionLost(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection_exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		case pe.Code == "53300": // too_many_connections
			return true
		}
		s := severity(pe)
		return s == "FATAL" || s == "PANIC"
	}
	if errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// translate is the one place where driver errors become domain errors.
// notFound is what "no rows" means to the caller (nil when no rows cannot
// happen). Errors it does not know are wrapped, never rewritten, so that
// errors.Is and errors.As still reach the driver's error. A broken
// connection is storage.ErrUnavailable, or storage.ErrOutcomeUnknown when it broke during
// COMMIT.
func translate(err error, notFound error) error {
	if err == nil {
		return nil
	}
	var ce *commitError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", storage.ErrOutcomeUnknown, ce.err)
	}
	var de *decideError
	if errors.As(err, &de) {
		return de.err
	}
	if errors.Is(err, pgx.ErrNoRows) && notFound != nil {
		return notFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			switch pe.ConstraintName {
			case "users_email_key":
				return account.ErrEmailTaken
			case "users_nickname_key":
				return account.ErrNicknameTaken
			case "users_referral_code_key":
				return account.ErrReferralCodeTaken
			case "trades_partner_client_bet_key":
				return market.ErrDuplicateKey
			case "withdrawals_chain_tx_hash":
				return withdrawal.ErrTxHashUsed
			}
		case codeCheckViolation:
			switch pe.ConstraintName {
			case "ledger_accounts_balance_check":
				return account.ErrInsufficientFunds
			case "users_telegram_notifications_check":
				return account.ErrTelegramNotLinked
			}
		case codeForeignKeyViolation:
			switch pe.ConstraintName {
			case "access_tokens_user_id_fkey", "password_reset_tokens_user_id_fkey", "withdrawals_user_id_fkey":
				return account.ErrUserNotFound
			case "partner_webhooks_partner_id_fkey":
				return partner.ErrNotFound
			}
		case codeCharacterNotInRepertoire, codeUntranslatableCharacter:
			return unstorableText(err)
		}
	}
	if connectionLost(err) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("postgres: %w", err)
}

// retryable reports whether a transaction that failed with err may succeed
// when run again from the start: PostgreSQL gave up on it to keep
// concurrent transactions consistent, not because of what it does, or its
// connection broke before it sent COMMIT (so nothing of it was written).
// An error during COMMIT is never retried: the first run may have
// committed.
func retryable(err error) bool {
	if errors.Is(err, errStaleAccountIDs) {
		return true
	}
	var de *decideError
	if errors.As(err, &de) {
		return false
	}
	var ce *commitError
	if errors.As(err, &ce) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == codeSerializationFailure || pe.Code == codeDeadlockDetected) {
		return true
	}
	return connectionLost(err)
}

// decideError carries an error of the domain (a decision's refusal, a
// posting that would overdraw an account) through the retry loop and
// translate untouched: it is the caller's answer, not a storage failure.
type decideError struct{ err error }

func (e *decideError) Error() string { return e.err.Error() }
func (e *decideError) Unwrap() error { return e.err }

// retry runs attempt up to n times while it fails with a retryable error,
// sleeping a short, growing, jittered while in between so that the
// transactions that collided do not collide again in step.
func retry(ctx context.Context, n int, attempt func() error) error {
	var err error
	for i := range n {
		if err = attempt(); err == nil || !retryable(err) {
			return err
		}
		if i == n-1 {
			break
		}
		backoff := time.Duration(1<<i) * time.Millisecond
		t := time.NewTimer(backoff + rand.N(backoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}
