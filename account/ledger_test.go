package account_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

// TestApplyNeverWraps: a posting whose sum would leave int64 is refused,
// and the balances are left as they were.
func TestApplyNeverWraps(t *testing.T) {
	u := account.UserAccount(1)
	cases := []struct {
		name     string
		balances map[account.Ref]int64
		posting  account.Posting
	}{
		{"a deposit that would take the outside world below int64 is refused",
			map[account.Ref]int64{account.External: math.MinInt64 + 5, u: math.MaxInt64 - 5},
			account.Posting{From: account.External, To: account.UserAccount(2), Amount: 10}},
		{"a subsidy that would take the treasury below int64 is refused",
			map[account.Ref]int64{account.Treasury: math.MinInt64 + 5},
			account.Posting{From: account.Treasury, To: account.EscrowAccount(1), Amount: 10}},
		{"a posting that would take a balance above int64 is refused",
			map[account.Ref]int64{account.External: -5, u: math.MaxInt64 - 5},
			account.Posting{From: account.External, To: u, Amount: 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := map[account.Ref]int64{}
			for k, v := range c.balances {
				before[k] = v
			}
			err := account.Apply(c.balances, []account.Posting{c.posting})
			if err == nil {
				t.Fatalf("accepted: balances now %v", c.balances)
			}
			if !errors.Is(err, account.ErrBalanceLimit) {
				t.Fatalf("err = %v, want ErrBalanceLimit", err)
			}
			for k, v := range before {
				if c.balances[k] != v {
					t.Fatalf("%s changed from %d to %d", k, v, c.balances[k])
				}
			}
		})
	}
	t.Run("the treasury may not pass its exposure bound", func(t *testing.T) {
		bal := map[account.Ref]int64{account.Treasury: -account.MaxExposure + 10}
		err := account.Apply(bal, []account.Posting{{From: account.Treasury, To: account.EscrowAccount(1), Amount: 11}})
		if !errors.Is(err, account.ErrBalanceLimit) || bal[account.Treasury] != -account.MaxExposure+10 {
			t.Fatalf("err = %v, treasury %d", err, bal[account.Treasury])
		}
		if err := account.Apply(bal, []account.Posting{{From: account.Treasury, To: account.EscrowAccount(1), Amount: 10}}); err != nil {
			t.Fatalf("a subsidy up to the bound: %v", err)
		}
	})
	t.Run("a posting to itself changes nothing", func(t *testing.T) {
		bal := map[account.Ref]int64{u: 5}
		if err := account.Apply(bal, []account.Posting{{From: u, To: u, Amount: 5}}); err != nil || bal[u] != 5 {
			t.Fatalf("err = %v, balance %d", err, bal[u])
		}
	})
}

// TestCheckSumsWithoutWrapping: the audit adds balances exactly, so a
// ledger whose int64 sum wraps to zero is not reported sound.
func TestCheckSumsWithoutWrapping(t *testing.T) {
	now := time.Now()
	t.Run("balances that sum to 2^64 are not ok", func(t *testing.T) {
		// Two escrows of MaxInt64 and a treasury of 2: the int64 sum wraps
		// to exactly 0.
		accts := []account.AccountState{
			{Ref: account.Treasury, Balance: 2, PostingsSum: 2},
			{Ref: account.EscrowAccount(1), Balance: math.MaxInt64, PostingsSum: math.MaxInt64},
			{Ref: account.EscrowAccount(2), Balance: math.MaxInt64, PostingsSum: math.MaxInt64},
		}
		r := account.Check(accts, 3, now)
		if r.OK || len(r.Problems) == 0 {
			t.Fatalf("report = %+v", r)
		}
		if r.Sum != math.MaxInt64 {
			t.Fatalf("sum = %d, want it clamped to MaxInt64", r.Sum)
		}
	})
	t.Run("balances whose running sum passes int64 but whose total is 0 are ok", func(t *testing.T) {
		accts := []account.AccountState{
			{Ref: account.EscrowAccount(1), Balance: math.MaxInt64, PostingsSum: math.MaxInt64},
			{Ref: account.EscrowAccount(2), Balance: math.MaxInt64, PostingsSum: math.MaxInt64},
			{Ref: account.Treasury, Balance: math.MinInt64, PostingsSum: math.MinInt64},
			{Ref: account.External, Balance: math.MinInt64 + 2, PostingsSum: math.MinInt64 + 2},
		}
		r := account.Check(accts, 4, now)
		if r.Sum != 0 {
			t.Fatalf("sum = %d, want 0", r.Sum)
		}
		// Both platform accounts are past the exposure bound, which is a
		// problem of its own; nothing else is.
		if len(r.Problems) != 2 {
			t.Fatalf("problems = %q", r.Problems)
		}
	})
	t.Run("an account whose postings sum past int64 is reported", func(t *testing.T) {
		accts := []account.AccountState{
			{Ref: account.External, Balance: -100, PostingsSum: -100},
			{Ref: account.UserAccount(1), Balance: 100, PostingsSum: 100, PostingsSumOverflows: true},
		}
		if r := account.Check(accts, 2, now); r.OK || len(r.Problems) != 1 {
			t.Fatalf("report = %+v", r)
		}
	})
	t.Run("a platform account past its exposure bound is reported", func(t *testing.T) {
		accts := []account.AccountState{
			{Ref: account.Treasury, Balance: -account.MaxExposure - 1, PostingsSum: -account.MaxExposure - 1},
			{Ref: account.EscrowAccount(1), Balance: account.MaxExposure + 1, PostingsSum: account.MaxExposure + 1},
		}
		if r := account.Check(accts, 1, now); r.OK || len(r.Problems) != 1 {
			t.Fatalf("report = %+v", r)
		}
	})
}

func TestSum(t *testing.T) {
	var s account.Sum
	for range 4 {
		s.Add(math.MaxInt64)
	}
	if _, ok := s.Int64(); ok {
		t.Fatalf("4 × MaxInt64 fits in int64: %v", s)
	}
	if got, want := s.String(), "36893488147419103228"; got != want {
		t.Fatalf("4 × MaxInt64 = %s, want %s", got, want)
	}
	for range 4 {
		s.Add(math.MinInt64)
	}
	if v, ok := s.Int64(); !ok || v != -4 {
		t.Fatalf("4 × (MaxInt64 + MinInt64) = %d, %v", v, ok)
	}
	if s.Sign() != -1 {
		t.Fatalf("sign of -4 = %d", s.Sign())
	}
}
