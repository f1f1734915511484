package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// SQLSTATE codes the store reacts to.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeCheckViolation       = "23514"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// translate is the one place where driver errors become domain errors.
// notFound is what "no rows" means to the caller (nil when no rows cannot
// happen). Errors it does not know are wrapped, never rewritten, so that
// errors.Is and errors.As still reach the driver's error.
func translate(err error, notFound error) error {
	if err == nil {
		return nil
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
			case "trades_partner_client_bet_key":
				return market.ErrDuplicateKey
			}
		case codeCheckViolation:
			if pe.ConstraintName == "ledger_accounts_balance_check" {
				return account.ErrInsufficientFunds
			}
		case codeForeignKeyViolation:
			switch pe.ConstraintName {
			case "access_tokens_user_id_fkey":
				return account.ErrUserNotFound
			}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("postgres: %w", err)
}

// retryable reports whether a transaction that failed with err may succeed
// when run again from the start: PostgreSQL gave up on it to keep
// concurrent transactions consistent, not because of what it does.
func retryable(err error) bool {
	var de *decideError
	if errors.As(err, &de) {
		return false
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == codeSerializationFailure || pe.Code == codeDeadlockDetected
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
