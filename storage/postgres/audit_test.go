package postgres_test

import (
	"testing"
)

// TestAuditOfPostingsPastInt64: a ledger whose postings into one account
// sum past int64 (written by hand here; the store itself refuses them) is
// reported by the audit, which must not fail with "bigint out of range".
func TestAuditOfPostingsPastInt64(t *testing.T) {
	e := newEnv(t)
	u := e.user("whale", 100)
	// Two more postings of MaxInt64 from the outside world to the user,
	// and none of the balances they would make.
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO postings (from_account, to_account, amount, reason, created_at)
		SELECT x.id, a.id, 9223372036854775807, 'test', now()
		FROM ledger_accounts x, ledger_accounts a, generate_series(1, 2)
		WHERE x.kind = 'external' AND a.kind = 'user' AND a.owner = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	r, err := e.accounts.Audit(e.ctx)
	if err != nil {
		t.Fatalf("the audit failed: %v", err)
	}
	if r.OK || len(r.Problems) != 2 {
		t.Fatalf("report = %+v, want the user's and the outside world's postings reported", r)
	}
	t.Logf("problems: %q", r.Problems)
}
