package postgres_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// newEnvWith is newEnv with store options.
func newEnvWith(t testing.TB, opts ...postgres.Option) *env {
	t.Helper()
	s := pgtest.New(t, opts...)
	acc := account.NewService(s)
	acc.BcryptCost = bcrypt.MinCost
	return &env{t: t, ctx: context.Background(), store: s, accounts: acc, markets: market.NewService(s, acc)}
}

// TestSettlementChecksItsPostingsOnce settles the same void (escrow, fee
// account and treasury paying) and the same resolution with the holders'
// postings checked by the settlement and by the foreign keys row by row:
// the money moves the same, the ledger audits, and the connection the
// settlement ran on checks foreign keys again right after it.
func TestSettlementChecksItsPostingsOnce(t *testing.T) {
	// settle runs the scenario on e and returns what each holder (by its
	// place) was credited, per settlement.
	settle := func(e *env) []map[int]int64 {
		var out []map[int]int64
		for _, st := range []market.Settlement{
			{Void: true, By: market.ResolvedByOperator},
			{Won: market.Yes, By: market.ResolvedByOperator},
		} {
			ev, _ := e.event(0.01, 1000, 0.5)
			m := ev.Pools[0].Markets[0]
			hs := seedHoldings(e, m, 9)
			before := make([]int64, len(hs))
			for i, h := range hs {
				b, err := e.accounts.Balances(e.ctx, h.u.ID)
				if err != nil {
					e.t.Fatal(err)
				}
				before[i] = b.Balance
			}
			if err := e.store.Settle(e.ctx, m.ID, st); err != nil {
				e.t.Fatal(err)
			}
			got := map[int]int64{}
			for i, h := range hs {
				b, err := e.accounts.Balances(e.ctx, h.u.ID)
				if err != nil {
					e.t.Fatal(err)
				}
				got[i] = b.Balance - before[i]
			}
			out = append(out, got)
			e.audit()
		}
		return out
	}
	set := newEnvWith(t, postgres.WithMaxConns(1))
	if !set.store.SettlementChecksPostings(set.ctx) {
		t.Skip("the test database's role may not set session_replication_role")
	}
	perRow := newEnvWith(t, postgres.WithMaxConns(1), postgres.WithRowByRowPostingChecks())
	if perRow.store.SettlementChecksPostings(perRow.ctx) {
		t.Fatal("WithRowByRowPostingChecks left the checks to the settlement")
	}
	a, b := settle(set), settle(perRow)
	for i := range a {
		if !maps.Equal(a[i], b[i]) {
			t.Errorf("settlement %d credits differ:\nchecked once %v\n  row by row %v", i, a[i], b[i])
		}
	}
	t.Run("the foreign keys check the next posting on the settlement's connection", func(t *testing.T) {
		_, err := set.store.DB().Exec(set.ctx, `INSERT INTO postings (from_account, to_account, amount, reason, created_at)
			SELECT min(id), 1 << 60, 1, 'test', now() FROM ledger_accounts`)
		if !containsCode(err, "23503") {
			t.Fatalf("a posting to no account: %v, want a foreign key violation", err)
		}
	})
	t.Run("an account a settlement paid cannot be deleted", func(t *testing.T) {
		_, err := set.store.DB().Exec(set.ctx, `DELETE FROM ledger_accounts WHERE id = (
			SELECT to_account FROM postings WHERE reason <> 'deposit' ORDER BY id DESC LIMIT 1)`)
		if !containsCode(err, "23503") {
			t.Fatalf("deleting a paid account: %v, want a foreign key violation", err)
		}
	})
}

// containsCode says err is a PostgreSQL error of SQLSTATE code.
func containsCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// TestPostingsHaveNoOtherTriggers keeps what a settlement's
// session_replication_role skips to the foreign keys it replaces: a
// trigger on postings would not fire for the holders' postings.
func TestPostingsHaveNoOtherTriggers(t *testing.T) {
	e := newEnv(t)
	var triggers, fks int
	if err := e.store.DB().QueryRow(e.ctx, `SELECT
		(SELECT count(*) FROM pg_trigger WHERE tgrelid = 'postings'::regclass AND NOT tgisinternal),
		(SELECT count(*) FROM pg_constraint WHERE conrelid = 'postings'::regclass AND contype = 'f')`).Scan(&triggers, &fks); err != nil {
		t.Fatal(err)
	}
	if triggers != 0 {
		t.Errorf("postings has %d triggers of its own: a settlement's postings would skip them (see settlechecks.go)", triggers)
	}
	if fks != 3 {
		t.Errorf("postings has %d foreign keys, want 3", fks)
	}
}
