package storagetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

func (e *env) partner(name string, float int64) *partner.Partner {
	e.t.Helper()
	p, key, err := e.partners.CreatePartner(e.ctx, name)
	if err != nil {
		e.t.Fatal(err)
	}
	if got, err := e.partners.Authenticate(e.ctx, key); err != nil || got.ID != p.ID {
		e.t.Fatalf("the new key does not authenticate: %v", err)
	}
	if float > 0 {
		if _, err := e.partners.FundFloat(e.ctx, p.ID, float); err != nil {
			e.t.Fatal(err)
		}
	}
	return p
}

func testPartners(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Partners == nil {
		t.Skip("this store has no partner store")
	}
	t.Run("keys authenticate their partner until it is disabled", func(t *testing.T) {
		e := newEnv(t, newStores)
		p, key, err := e.partners.CreatePartner(e.ctx, "Bookie")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.partners.Authenticate(e.ctx, "pk_wrong"); !errors.Is(err, partner.ErrUnauthorized) {
			t.Fatalf("wrong key: %v", err)
		}
		if err := e.partners.SetDisabled(e.ctx, p.ID, true); err != nil {
			t.Fatal(err)
		}
		if _, err := e.partners.Authenticate(e.ctx, key); !errors.Is(err, partner.ErrDisabled) {
			t.Fatalf("disabled partner: %v", err)
		}
		if _, err := e.partners.FundFloat(e.ctx, 9999, 100); !errors.Is(err, partner.ErrNotFound) {
			t.Fatalf("funding nobody: %v", err)
		}
	})
	t.Run("a first bet creates the sub-account and draws on the float", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		p := e.partner("Bookie", 50000)
		st, err := e.partners.State(e.ctx, p, "user-1")
		if err != nil || st.Exists || st.UserID != 0 || len(st.Positions) != 0 {
			t.Fatalf("state before = %+v, %v", st, err)
		}
		rc, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "user-1", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1000, ClientBetID: "b1"})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Direction != "buy_yes" || rc.CostKopecks <= 0 || rc.CostKopecks > 1000 || rc.SharesDelta <= 0 || rc.UserID == 0 || rc.Replayed {
			t.Fatalf("receipt = %+v", rc)
		}
		float, _ := e.partners.Float(e.ctx, p.ID)
		if float != 50000-rc.CostKopecks {
			t.Fatalf("float = %d, want %d", float, 50000-rc.CostKopecks)
		}
		st, _ = e.partners.State(e.ctx, p, "user-1")
		if !st.Exists || st.UserID != rc.UserID || st.BalanceKopecks != 0 || len(st.Positions) != 1 || st.Positions[0].Shares != rc.SharesDelta || st.Positions[0].ValueKopecks != st.OpenPositionsKopecks {
			t.Fatalf("state after = %+v", st)
		}
		sr, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "user-1", MarketID: m.ID, Side: market.Yes, Shares: rc.SharesDelta / 2, ClientBetID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if sr.Direction != "sell_yes" || sr.SharesDelta != -(rc.SharesDelta/2) || sr.PayoutKopecks <= 0 {
			t.Fatalf("sell receipt = %+v", sr)
		}
		st, _ = e.partners.State(e.ctx, p, "user-1")
		if st.BalanceKopecks != sr.PayoutKopecks || st.Positions[0].Shares != rc.SharesDelta-rc.SharesDelta/2 {
			t.Fatalf("state after sell = %+v", st)
		}
		// The next bet spends the sub-account's balance before the float.
		before, _ := e.partners.Float(e.ctx, p.ID)
		rc2, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "user-1", MarketID: m.ID, Side: market.No, AmountKopecks: 5000, ClientBetID: "b2"})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := e.partners.Float(e.ctx, p.ID)
		if before-after != rc2.CostKopecks-sr.PayoutKopecks {
			t.Fatalf("float paid %d of a %d bet with %d on the sub-account", before-after, rc2.CostKopecks, sr.PayoutKopecks)
		}
		e.audit()
	})
	t.Run("a repeat replays the original receipt and runs nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0, 10000, 0.5).Pools[0].Markets[0]
		p := e.partner("Bookie", 50000)
		bet := partner.Bet{ExternalUserID: "u", MarketID: m.ID, Side: market.No, AmountKopecks: 700, ClientBetID: "same"}
		first, err := e.partners.Bet(e.ctx, p, bet)
		if err != nil {
			t.Fatal(err)
		}
		again, err := e.partners.Bet(e.ctx, p, bet)
		if err != nil {
			t.Fatal(err)
		}
		again.Replayed = false
		if *again != *first {
			t.Fatalf("replay %+v differs from %+v", again, first)
		}
		other := bet
		other.AmountKopecks = 800
		if _, err := e.partners.Bet(e.ctx, p, other); !errors.Is(err, partner.ErrIdempotencyConflict) {
			t.Fatalf("same key, other amount: %v", err)
		}
		asSell := partner.Sell{ExternalUserID: "u", MarketID: m.ID, Side: market.No, Shares: 1, ClientBetID: "same"}
		if _, err := e.partners.Sell(e.ctx, p, asSell); !errors.Is(err, partner.ErrIdempotencyConflict) {
			t.Fatalf("same key as a sell: %v", err)
		}
		if trades, _ := e.stores.Markets.Trades(e.ctx, m.ID); len(trades) != 1 {
			t.Fatalf("%d trades, want 1", len(trades))
		}
		e.audit()
	})
	t.Run("a refused request records nothing and may be retried", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		p := e.partner("Bookie", 0)
		bet := partner.Bet{ExternalUserID: "late", MarketID: m.ID, Side: market.Yes, AmountKopecks: 500, ClientBetID: "k1"}
		if _, err := e.partners.Bet(e.ctx, p, bet); !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("bet on an empty float: %v", err)
		}
		if st, _ := e.partners.State(e.ctx, p, "late"); st.Exists {
			t.Fatalf("a refused first bet left a sub-account: %+v", st)
		}
		if _, err := e.partners.FundFloat(e.ctx, p.ID, 1000); err != nil {
			t.Fatal(err)
		}
		rc, err := e.partners.Bet(e.ctx, p, bet)
		if err != nil || rc.Replayed {
			t.Fatalf("retry after funding: %+v, %v", rc, err)
		}
		if _, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "late", MarketID: m.ID, Side: market.No, Shares: 5, ClientBetID: "k2"}); !errors.Is(err, partner.ErrNoAccount) {
			t.Fatalf("selling a side not held: %v", err)
		}
		if _, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "late", MarketID: m.ID, Side: market.Yes, Shares: rc.SharesDelta + 1, ClientBetID: "k2"}); !errors.Is(err, market.ErrInsufficientShares) {
			t.Fatalf("overselling: %v", err)
		}
		if _, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "nobody", MarketID: m.ID, Side: market.Yes, Shares: 1, ClientBetID: "k3"}); !errors.Is(err, partner.ErrNoAccount) {
			t.Fatalf("selling for an unknown user: %v", err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "late", MarketID: m.ID, Side: market.Yes, Shares: 1, ClientBetID: "k4"}); !errors.Is(err, partner.ErrNoAccount) && !errors.Is(err, market.ErrClosed) {
			t.Fatalf("selling after resolution: %v", err)
		}
		e.audit()
	})
	t.Run("fifty concurrent identical bets execute once", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.01, 10000, 0.5).Pools[0].Markets[0]
		p := e.partner("Bookie", 100000)
		bet := partner.Bet{ExternalUserID: "dup", MarketID: m.ID, Side: market.Yes, AmountKopecks: 2500, ClientBetID: "retry-me"}
		receipts := concurrently(t, 50, func() (*partner.Receipt, error) { return e.partners.Bet(e.ctx, p, bet) })
		sell := partner.Sell{ExternalUserID: "dup", MarketID: m.ID, Side: market.Yes, Shares: receipts[0].SharesDelta / 3, ClientBetID: "sell-once"}
		concurrently(t, 50, func() (*partner.Receipt, error) { return e.partners.Sell(e.ctx, p, sell) })
		if trades, _ := e.stores.Markets.Trades(e.ctx, m.ID); len(trades) != 2 {
			t.Fatalf("%d trades, want one bet and one sell", len(trades))
		}
		float, _ := e.partners.Float(e.ctx, p.ID)
		if float != 100000-receipts[0].CostKopecks {
			t.Fatalf("float = %d: moved more than once", float)
		}
		e.audit()
	})
	t.Run("one partner cannot reach another's users", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0, 10000, 0.5).Pools[0].Markets[0]
		a, b := e.partner("A", 10000), e.partner("B", 10000)
		ra, err := e.partners.Bet(e.ctx, a, partner.Bet{ExternalUserID: "shared-id", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1000, ClientBetID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := e.partners.State(e.ctx, b, "shared-id"); st.Exists {
			t.Fatalf("B sees A's user: %+v", st)
		}
		if _, err := e.partners.Sell(e.ctx, b, partner.Sell{ExternalUserID: "shared-id", MarketID: m.ID, Side: market.Yes, Shares: 1, ClientBetID: "y"}); !errors.Is(err, partner.ErrNoAccount) {
			t.Fatalf("B sells A's shares: %v", err)
		}
		rb, err := e.partners.Bet(e.ctx, b, partner.Bet{ExternalUserID: "shared-id", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1000, ClientBetID: "x"})
		if err != nil || rb.Replayed || rb.UserID == ra.UserID {
			t.Fatalf("B's bet with A's key and user: %+v, %v", rb, err)
		}
		e.audit()
	})
	t.Run("floats, sub-accounts, escrow and fees reconcile after random trading and settlement", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.03, 5000, 0.3, 0.6)
		ps := []*partner.Partner{e.partner("A", 40000), e.partner("B", 40000), e.partner("C", 400)}
		rng := rand.New(rand.NewPCG(42, 1))
		held := map[string]int64{}
		for i := range 120 {
			p := ps[rng.IntN(len(ps))]
			m := ev.Pools[0].Markets[rng.IntN(2)]
			side := market.Side(rng.IntN(2))
			user := fmt.Sprintf("u%d", rng.IntN(4))
			k := fmt.Sprintf("%d/%s/%d/%d", p.ID, user, m.ID, side)
			id := fmt.Sprintf("op-%d", i)
			var err error
			if held[k] > 0 && rng.IntN(2) == 0 {
				var rc *partner.Receipt
				rc, err = e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: user, MarketID: m.ID, Side: side, Shares: 1 + rng.Int64N(held[k]), ClientBetID: id})
				if err == nil {
					held[k] += rc.SharesDelta
				}
			} else {
				var rc *partner.Receipt
				rc, err = e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: user, MarketID: m.ID, Side: side, AmountKopecks: 100 + rng.Int64N(3000), ClientBetID: id})
				if err == nil {
					held[k] += rc.SharesDelta
				}
			}
			if err != nil && !errors.Is(err, account.ErrInsufficientFunds) && !errors.Is(err, market.ErrTradeRefused) {
				t.Fatalf("operation %d: %v", i, err)
			}
		}
		m := ev.Pools[0].Markets[0]
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		e.audit()
		var total int64
		for _, p := range ps {
			f, _ := e.partners.Float(e.ctx, p.ID)
			total += f
			for u := range 4 {
				st, _ := e.partners.State(e.ctx, p, fmt.Sprintf("u%d", u))
				total += st.BalanceKopecks
			}
		}
		for _, mk := range ev.Pools[0].Markets {
			esc, _ := e.stores.Accounts.Balance(e.ctx, account.EscrowAccount(mk.ID))
			total += esc
		}
		fees := e.feeIncome()
		treasury, _ := e.stores.Accounts.Balance(e.ctx, account.Treasury)
		if total+fees+treasury != 80400 {
			t.Fatalf("floats+sub-accounts+escrow+fees+treasury = %d, want the 80400 funded", total+fees+treasury)
		}
	})
}

// concurrently runs f n times at once, requires every call to succeed with
// the same receipt, exactly one of them not a replay, and returns them.
func concurrently(t *testing.T, n int, f func() (*partner.Receipt, error)) []*partner.Receipt {
	t.Helper()
	out := make([]*partner.Receipt, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = f()
		}()
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !out[i].Replayed {
			fresh++
		}
		a, b := *out[i], *out[0]
		a.Replayed, b.Replayed = false, false
		if a != b {
			t.Fatalf("call %d got %+v, call 0 got %+v", i, a, b)
		}
	}
	if fresh != 1 {
		t.Fatalf("%d calls executed, want 1", fresh)
	}
	return out
}
