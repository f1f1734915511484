package storagetest

import (
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/market"
)

// testLimits: money that would take a balance past int64 (or past the
// ledger's bounds, which keep every balance far inside it) is refused
// before anything is written, the ledger stays sound, and the platform
// keeps working for amounts that fit.
//
// The tests fill the platform's accounts by calling the store directly
// with large amounts, halving them when refused, so that they run fast
// and do not depend on where the bounds are.
func testLimits(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("subsidies that would take the treasury past int64 are refused and the ledger stays sound", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		accepted := 0
		var refusal error
		for range 4 { // 4 × 2^62 = 2^64: the treasury passes int64 on the third
			err := e.stores.Markets.CreateEvent(e.ctx, rawEvent(c.ID), []int64{1 << 62})
			if err != nil {
				refusal = err
				break
			}
			accepted++
		}
		if refusal == nil {
			e.failWithAudit("four subsidies of 2^62 kopecks were all accepted")
		}
		if !boundRefusal(refusal) {
			t.Fatalf("refused with %v, want account.ErrBalanceLimit", refusal)
		}
		if tr := e.accountBalance(account.Treasury); tr != -int64(accepted)<<62 {
			t.Fatalf("treasury = %d after %d subsidies of 2^62", tr, accepted)
		}
		if n := len(e.escrows()); n != accepted {
			t.Fatalf("%d markets after %d accepted events: the refused event left markets behind", n, accepted)
		}
		e.audit()
	})

	t.Run("a creator creating events until the treasury is full is refused as invalid input, and normal events still open", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.fill("the treasury", func(amount int64) error {
			return e.stores.Markets.CreateEvent(e.ctx, rawEvent(c.ID), []int64{amount})
		})
		// The largest market a pool may hold, at the opening price that
		// costs the most: about 4.6 × 10^12 kopecks of subsidy each.
		huge := market.NewEvent{Name: "Huge", Pools: []market.NewPool{{Name: "P", B: market.MaxLiquidity,
			Markets: []market.NewMarket{{Name: "M", Probability: market.MinProbability}}}}}
		var refusal error
		for i := 0; refusal == nil; i++ {
			if i == 100 {
				e.failWithAudit("100 events of b = 10^12 were accepted after the treasury was full")
			}
			_, refusal = e.markets.CreateEvent(e.ctx, c, huge)
		}
		var ie *input.Error
		if !errors.As(refusal, &ie) {
			t.Fatalf("refused with %v, want *input.Error", refusal)
		}
		t.Logf("refused: %v", refusal)
		treasury, markets := e.accountBalance(account.Treasury), len(e.escrows())
		if _, err := e.markets.CreateEvent(e.ctx, c, huge); !errors.As(err, &ie) {
			t.Fatalf("again: %v", err)
		}
		if tr, n := e.accountBalance(account.Treasury), len(e.escrows()); tr != treasury || n != markets {
			t.Fatalf("the refused event changed the treasury from %d to %d and the markets from %d to %d", treasury, tr, markets, n)
		}
		normal := e.event(c, 0.02, 10000, 0.5)
		want, _ := lmsr.SubsidyKopecks(normal.Pools[0].Markets[0].Pricer())
		if tr := e.accountBalance(account.Treasury); tr != treasury-want {
			t.Fatalf("treasury = %d after a normal event, want %d", tr, treasury-want)
		}
		e.audit()
	})

	t.Run("deposits that would take the outside world past int64 are refused as invalid input", func(t *testing.T) {
		e := newEnv(t, newStores)
		whale, u := e.user("whale", 0, 0), e.user("saver", 0, 0)
		e.fill("the outside world", func(amount int64) error {
			return e.stores.Accounts.Transfer(e.ctx, []account.Posting{{From: account.External, To: account.UserAccount(whale.ID), Amount: amount, Reason: "deposit", At: time.Now()}})
		})
		var refusal error
		for i := 0; refusal == nil; i++ {
			if i == 100 {
				e.failWithAudit("100 credits of 10^13 were accepted after the outside world was full")
			}
			_, refusal = e.accounts.Credit(e.ctx, u.ID, account.MaxCredit, false)
		}
		var ie *input.Error
		if !errors.As(refusal, &ie) {
			t.Fatalf("refused with %v, want *input.Error", refusal)
		}
		t.Logf("refused: %v", refusal)
		before := e.balances(u)
		if _, err := e.accounts.Credit(e.ctx, u.ID, account.MaxCredit, true); !errors.As(err, &ie) {
			t.Fatalf("a bonus credit: %v", err)
		}
		if e.partners != nil {
			p := e.partner("Bookie", 0)
			if _, err := e.partners.FundFloat(e.ctx, p.ID, account.MaxCredit); !errors.As(err, &ie) {
				t.Fatalf("a float funding: %v", err)
			}
			if f := e.accountBalance(account.FloatAccount(p.ID)); f != 0 {
				t.Fatalf("the refused funding left a float of %d", f)
			}
		}
		if b := e.balances(u); b != before {
			t.Fatalf("the refused credits changed the balances from %+v to %+v", before, b)
		}
		e.audit()
	})
}

// boundRefusal reports whether err is the ledger's refusal of a posting
// that would take a balance past its bound.
func boundRefusal(err error) bool { return errors.Is(err, account.ErrBalanceLimit) }

// fill posts amounts into what of the ledger until it is refused,
// halving the amount on each refusal down to 10^14 kopecks: afterwards
// what has less than 2 × 10^14 kopecks of room. It fails the test if the
// amounts it got accepted pass int64.
func (e *env) fill(what string, post func(amount int64) error) {
	e.t.Helper()
	total := new(big.Int)
	for amount := int64(1 << 61); amount >= 1e14; {
		err := post(amount)
		if err == nil {
			total.Add(total, big.NewInt(amount))
			if !total.IsInt64() {
				e.failWithAudit(fmt.Sprintf("%s took %s kopecks, past int64, without a refusal", what, total))
			}
			continue
		}
		if !boundRefusal(err) {
			e.t.Fatalf("%s refused %d kopecks with %v, want account.ErrBalanceLimit", what, amount, err)
		}
		amount /= 2
	}
}

// failWithAudit fails the test with msg and what the audit says now.
func (e *env) failWithAudit(msg string) {
	e.t.Helper()
	r, err := e.accounts.Audit(e.ctx)
	e.t.Fatalf("%s; the audit then says ok = %v, sum %d, problems %q (err %v)", msg, r.OK, r.Sum, r.Problems, err)
}

// rawEvent is an event of one market as the service would build it, for
// calling the store directly.
func rawEvent(creatorID int64) *market.Event {
	now := time.Now().UTC().Truncate(time.Microsecond)
	qy, qn, _ := lmsr.InitialQ(10000, 0.5)
	m := &market.Market{Name: "M", YesName: "Yes", NoName: "No", B: 10000, QYes: qy, QNo: qn, Q0Yes: qy, Q0No: qn, CreatedAt: now}
	p := &market.Pool{Name: "P", B: 10000, LiveAt: now, FinishAt: now.AddDate(0, 1, 0), Markets: []*market.Market{m}}
	return &market.Event{Name: "Raw", CreatorID: creatorID, CreatedAt: now, Pools: []*market.Pool{p}}
}

func (e *env) accountBalance(ref account.Ref) int64 {
	e.t.Helper()
	b, err := e.stores.Accounts.Balance(e.ctx, ref)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) escrows() []market.EscrowState {
	e.t.Helper()
	es, err := e.stores.Markets.Escrows(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return es
}
