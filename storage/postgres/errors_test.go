package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres"
)

func TestTranslate(t *testing.T) {
	other := errors.New("connection reset")
	cases := []struct {
		name     string
		err      error
		notFound error
		want     error
	}{
		{"no error stays no error", nil, market.ErrMarketNotFound, nil},
		{"no rows is the caller's not-found error", pgx.ErrNoRows, market.ErrPoolNotFound, market.ErrPoolNotFound},
		{"a wrapped no rows is the caller's not-found error too", fmt.Errorf("scan: %w", pgx.ErrNoRows), account.ErrUserNotFound, account.ErrUserNotFound},
		{"a duplicate e-mail is ErrEmailTaken", &pgconn.PgError{Code: "23505", ConstraintName: "users_email_key"}, nil, account.ErrEmailTaken},
		{"a duplicate nickname is ErrNicknameTaken", &pgconn.PgError{Code: "23505", ConstraintName: "users_nickname_key"}, nil, account.ErrNicknameTaken},
		{"a duplicate idempotency key is ErrDuplicateKey", &pgconn.PgError{Code: "23505", ConstraintName: "trades_partner_client_bet_key"}, nil, market.ErrDuplicateKey},
		{"a negative balance is ErrInsufficientFunds", &pgconn.PgError{Code: "23514", ConstraintName: "ledger_accounts_balance_check"}, nil, account.ErrInsufficientFunds},
		{"a token for nobody is ErrUserNotFound", &pgconn.PgError{Code: "23503", ConstraintName: "access_tokens_user_id_fkey"}, nil, account.ErrUserNotFound},
		{"a context cancellation stays itself", context.Canceled, nil, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := postgres.Translate(c.err, c.notFound)
			if c.want == nil {
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
				return
			}
			if !errors.Is(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	t.Run("an unknown constraint is wrapped, not rewritten", func(t *testing.T) {
		pe := &pgconn.PgError{Code: "23505", ConstraintName: "something_else"}
		got := postgres.Translate(pe, nil)
		var back *pgconn.PgError
		if !errors.As(got, &back) || back != pe || errors.Is(got, account.ErrEmailTaken) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("an unknown error keeps its chain", func(t *testing.T) {
		if got := postgres.Translate(other, nil); !errors.Is(got, other) {
			t.Fatalf("got %v", got)
		}
	})
}

func TestRetryable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a serialization failure is retried", &pgconn.PgError{Code: "40001"}, true},
		{"a deadlock is retried", &pgconn.PgError{Code: "40P01"}, true},
		{"a wrapped deadlock is retried", fmt.Errorf("exec: %w", &pgconn.PgError{Code: "40P01"}), true},
		{"a unique violation is not retried", &pgconn.PgError{Code: "23505"}, false},
		{"a domain error is not retried", account.ErrInsufficientFunds, false},
		{"no error is not retried", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := postgres.Retryable(c.err); got != c.want {
				t.Fatalf("Retryable(%v) = %v", c.err, got)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	ctx := context.Background()
	deadlock := &pgconn.PgError{Code: "40P01"}
	t.Run("a transient failure is run again until it succeeds", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(ctx, 5, func() error {
			calls++
			if calls < 3 {
				return deadlock
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a failure that persists is returned after the last try", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(ctx, 4, func() error { calls++; return deadlock })
		if !errors.Is(err, deadlock) || calls != 4 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a permanent failure is returned at once", func(t *testing.T) {
		calls := 0
		err := postgres.Retry(ctx, 5, func() error { calls++; return account.ErrInsufficientFunds })
		if !errors.Is(err, account.ErrInsufficientFunds) || calls != 1 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
	t.Run("a cancelled context stops the retries", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		calls := 0
		err := postgres.Retry(ctx, 5, func() error { calls++; return deadlock })
		if !errors.Is(err, deadlock) || calls != 1 {
			t.Fatalf("err %v after %d calls", err, calls)
		}
	})
}

// TestDriverErrors provokes each translated error in the database itself.
func TestDriverErrors(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx
	t.Run("an e-mail taken in another case is ErrEmailTaken", func(t *testing.T) {
		u := e.user("ann", 0)
		err := e.store.CreateUser(ctx, &account.User{Email: "X" + u.Email, Name: "x"}, "h")
		if err != nil {
			t.Fatalf("a different e-mail: %v", err)
		}
		err = e.store.CreateUser(ctx, &account.User{Email: "x" + u.Email, Name: "x"}, "h")
		if !errors.Is(err, account.ErrEmailTaken) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a nickname taken in another case is ErrNicknameTaken", func(t *testing.T) {
		a, b := e.user("a", 0), e.user("b", 0)
		nick := fmt.Sprintf("Nick%d", a.ID)
		if _, err := e.store.UpdateProfile(ctx, a.ID, account.ProfilePatch{Nickname: &nick}); err != nil {
			t.Fatal(err)
		}
		lower := fmt.Sprintf("nick%d", a.ID)
		if _, err := e.store.UpdateProfile(ctx, b.ID, account.ProfilePatch{Nickname: &lower}); !errors.Is(err, account.ErrNicknameTaken) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("partner sub-accounts without e-mail do not collide", func(t *testing.T) {
		for range 2 {
			if err := e.store.CreateUser(ctx, &account.User{Name: "no e-mail"}, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := e.store.UserByEmail(ctx, ""); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("empty e-mail found a user: %v", err)
		}
	})
	t.Run("a token for an unknown user is ErrUserNotFound", func(t *testing.T) {
		err := e.store.CreateToken(ctx, []byte("hash"), 987654, time.Now().Add(time.Hour))
		if !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a balance driven below zero in SQL is ErrInsufficientFunds", func(t *testing.T) {
		u := e.user("c", 10)
		_, err := e.store.DB().Exec(ctx, `UPDATE ledger_accounts SET balance = balance - 11 WHERE kind = 'user' AND owner = $1`, u.ID)
		if !errors.Is(postgres.Translate(err, nil), account.ErrInsufficientFunds) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the treasury may go below zero in SQL", func(t *testing.T) {
		if err := e.store.Transfer(ctx, []account.Posting{{From: account.Treasury, To: account.FeeAccount(1), Amount: 5, Reason: "test"}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a posting that is not positive is ErrInvalidAmount", func(t *testing.T) {
		err := e.store.Transfer(ctx, []account.Posting{{From: account.External, To: account.FeeAccount(1), Amount: 0, Reason: "test"}})
		if !errors.Is(err, account.ErrInvalidAmount) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unknown partners and sub-accounts are the partner errors", func(t *testing.T) {
		if _, err := e.store.Partner(ctx, 5555); !errors.Is(err, partner.ErrNotFound) {
			t.Fatalf("Partner: %v", err)
		}
		if _, err := e.store.PartnerByKey(ctx, []byte("nope")); !errors.Is(err, partner.ErrUnauthorized) {
			t.Fatalf("PartnerByKey: %v", err)
		}
		if err := e.store.SetPartnerDisabled(ctx, 5555, true); !errors.Is(err, partner.ErrNotFound) {
			t.Fatalf("SetPartnerDisabled: %v", err)
		}
		if _, err := e.store.SubAccount(ctx, 5555, "x"); !errors.Is(err, partner.ErrNoAccount) {
			t.Fatalf("SubAccount: %v", err)
		}
		if tr, err := e.store.TradeByKey(ctx, market.Key{PartnerID: 5555, ClientBetID: "x"}); tr != nil || err != nil {
			t.Fatalf("TradeByKey = %v, %v", tr, err)
		}
	})
	e.audit()
}
