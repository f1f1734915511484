package memory

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

// TestAuditOfPostingsThatWrap: postings written past the ledger's checks
// (the store itself refuses them), whose sums pass int64 and whose cached
// balances wrapped exactly as an int64 sum of them would, are not a sound
// ledger: the audit adds the postings exactly.
func TestAuditOfPostingsThatWrap(t *testing.T) {
	s := New()
	now := time.Now()
	from, to := s.acct(account.Treasury), s.acct(account.External)
	for range 2 {
		p := account.Posting{From: account.Treasury, To: account.External, Amount: math.MaxInt64, Reason: "test", At: now}
		from.balance -= p.Amount // wraps, as the store did before its sums were checked
		to.balance += p.Amount
		s.ledger.add(p, from.ref, to.ref)
	}
	accts, n, err := s.LedgerState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := account.Check(accts, n, now); r.OK {
		t.Fatalf("the audit says ok: treasury %d, external %d, report %+v", from.balance, to.balance, r)
	}
}
