package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
)

// ledgerOf is a market's escrow and fee account and the treasury.
type ledgerOf struct{ escrow, fees, treasury int64 }

func (e *env) ledgerOf(m *market.Market) ledgerOf {
	e.t.Helper()
	var l ledgerOf
	for r, v := range map[account.Ref]*int64{account.EscrowAccount(m.ID): &l.escrow, account.FeeAccount(m.ID): &l.fees, account.Treasury: &l.treasury} {
		b, err := e.stores.Accounts.Balance(e.ctx, r)
		if err != nil {
			e.t.Fatal(err)
		}
		*v = b
	}
	return l
}

// refundsDue is what voiding m now refunds each holder: every open
// position's net cost, floored at 0.
func (e *env) refundsDue(m *market.Market, users ...*account.User) map[int64]int64 {
	e.t.Helper()
	due := map[int64]int64{}
	for _, u := range users {
		ps, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range ps {
			if p.MarketID == m.ID {
				due[u.ID] += max(p.Spent-p.Returned, 0)
			}
		}
	}
	return due
}

// resolvedNotes are u's market_resolved notifications.
func (e *env) resolvedNotes(u *account.User) []*social.Notification {
	e.t.Helper()
	ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, false, -1, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*social.Notification
	for _, n := range ns {
		if n.Type == social.TypeMarketResolved {
			out = append(out, n)
		}
	}
	return out
}

// chartEnd is the last point of u's PnL chart: the sum of its realizations.
func (e *env) chartEnd(u *account.User) int64 {
	e.t.Helper()
	pts, err := e.markets.PnLChart(e.ctx, u.ID, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return pts[len(pts)-1].PnL
}

func testResolution(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a resolved position reads closed everywhere with its payout, at the resolution's time, among the positions sold out", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		m, other := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		u, v := e.user("u", 100000, 0), e.user("v", 100000, 0)
		must := func(r *market.Result, err error) *market.Result {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		// u: a position on the other market sold out before the
		// resolution, one on m partly sold, one sold out after it.
		o := must(e.buy(u, other, market.No, 900))
		must(e.sell(u, other, market.No, o.Trade.Shares))
		b := must(e.buy(u, m, market.Yes, 5000))
		s := must(e.sell(u, m, market.Yes, b.Trade.Shares/3))
		vb := must(e.buy(v, m, market.No, 3000))
		before, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
		if err != nil || len(before) != 1 {
			t.Fatalf("open before: %v, %v", before, err)
		}
		held := before[0].Position

		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		resolvedAt := *e.market(m.ID).ResolvedAt
		o2 := must(e.buy(u, other, market.Yes, 700))
		must(e.sell(u, other, market.Yes, o2.Trade.Shares))

		if open, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID); len(open) != 0 {
			t.Fatalf("u still holds %+v", open)
		}
		closed, err := e.stores.Markets.ClosedPositions(e.ctx, u.ID, -1, 0)
		if err != nil || len(closed) != 3 {
			t.Fatalf("closed: %+v, %v", closed, err)
		}
		if closed[0].MarketID != other.ID || closed[1].MarketID != m.ID || closed[2].MarketID != other.ID || !closed[0].ClosedAt.After(resolvedAt) || !closed[2].ClosedAt.Before(resolvedAt) {
			t.Fatalf("closed positions out of order: %v, %v, %v", closed[0].Position, closed[1].Position, closed[2].Position)
		}
		p := closed[1].Position
		payout := held.Shares
		if p.ID != held.ID || p.WonSide == nil || *p.WonSide != market.WonSideYes || p.CostBasis != 0 || !p.ClosedAt.Equal(resolvedAt) ||
			!p.UpdatedAt.Equal(resolvedAt) || p.Shares != held.Shares || p.Spent != b.Trade.Amount || p.Returned != s.Trade.Amount+payout ||
			p.PnL() != s.Trade.Amount+payout-b.Trade.Amount || closed[1].Market == nil || !closed[1].Market.Resolved {
			t.Fatalf("the resolved position reads %+v (held %+v)", p, held)
		}
		for i, want := range []int64{closed[1].ID, closed[2].ID} {
			page, err := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 1, i+1)
			if err != nil || len(page) != 1 || page[0].ID != want {
				t.Fatalf("page %d of one: %+v, %v; want position %d", i+2, page, err, want)
			}
		}
		n, best, err := e.stores.Markets.ClosedStats(e.ctx, u.ID)
		var wins int64
		for _, c := range closed {
			wins = max(wins, c.PnL())
		}
		if err != nil || n != 3 || best != wins || best < p.PnL() {
			t.Fatalf("stats %d closed, biggest win %d (%v); want 3, %d", n, best, err, wins)
		}
		evs, err := e.stores.Markets.PnLEvents(e.ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		var atResolution []market.PnLEvent
		var sum int64
		for i, ev := range evs {
			if i > 0 && ev.At.Before(evs[i-1].At) {
				t.Fatalf("realizations out of order: %+v", evs)
			}
			if ev.At.Equal(resolvedAt) {
				atResolution = append(atResolution, ev)
			}
			sum += ev.Delta
		}
		if len(atResolution) != 1 || atResolution[0].PositionID != held.ID || atResolution[0].Delta != payout-held.CostBasis {
			t.Fatalf("realizations at the resolution %+v, want position %d realizing %d", atResolution, held.ID, payout-held.CostBasis)
		}
		var total int64
		for _, c := range closed {
			total += c.PnL()
		}
		if sum != total || e.chartEnd(u) != total {
			t.Fatalf("realizations sum to %d, the chart ends at %d, the closed positions made %d", sum, e.chartEnd(u), total)
		}
		// The loser's position closes too, paid nothing.
		vc, _ := e.stores.Markets.ClosedPositions(e.ctx, v.ID, -1, 0)
		if len(vc) != 1 || *vc[0].WonSide != market.WonSideYes || vc[0].Returned != 0 || vc[0].PnL() != -vb.Trade.Amount {
			t.Fatalf("the loser's position %+v", vc)
		}
		if n, best, _ := e.stores.Markets.ClosedStats(e.ctx, v.ID); n != 1 || best != 0 {
			t.Fatalf("the loser's stats: %d closed, biggest win %d", n, best)
		}
		e.audit()
	})
	t.Run("a void refunds every open position its net cost, floored at zero, and no side wins", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		plain, partial, soldOut, early, big, both := e.user("plain", 100000, 0), e.user("partial", 100000, 0), e.user("sold-out", 100000, 0),
			e.user("early", 100000, 0), e.user("big", 1000000, 0), e.user("both", 100000, 0)
		must := func(r *market.Result, err error) *market.Result {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		pl := must(e.buy(plain, m, market.Yes, 3000))
		p := must(e.buy(partial, m, market.No, 2000))
		must(e.sell(partial, m, market.No, p.Trade.Shares/2))
		s := must(e.buy(soldOut, m, market.Yes, 1000))
		must(e.sell(soldOut, m, market.Yes, s.Trade.Shares))
		// early buys YES cheap, big pushes the price up, and early sells
		// most of its shares for more than all of them cost: its net cost
		// is negative, so it is refunded nothing and keeps its profit.
		ea := must(e.buy(early, m, market.Yes, 1000))
		must(e.buy(big, m, market.Yes, 60000))
		must(e.sell(early, m, market.Yes, ea.Trade.Shares*9/10))
		by := must(e.buy(both, m, market.Yes, 1500))
		bn := must(e.buy(both, m, market.No, 2500))
		holders := []*account.User{plain, partial, early, big, both}
		due := e.refundsDue(m, holders...)
		if due[early.ID] != 0 || due[plain.ID] != pl.Trade.Amount || due[both.ID] != by.Trade.Amount+bn.Trade.Amount {
			t.Fatalf("the scenario went wrong: refunds due %v", due)
		}
		before := map[int64]int64{}
		var total int64
		for _, u := range append(holders, soldOut) {
			before[u.ID] = e.balances(u).Balance
			total += due[u.ID]
		}
		was := e.ledgerOf(m)
		if was.escrow < total {
			t.Fatalf("the escrow (%d) should cover the refunds (%d) here", was.escrow, total)
		}

		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "VOID"); err != nil {
			t.Fatal(err)
		}

		t.Run("each holder gets its refund, the rest of the escrow returns to the treasury and the fees stay", func(t *testing.T) {
			for _, u := range append(holders, soldOut) {
				if got := e.balances(u).Balance; got != before[u.ID]+due[u.ID] {
					t.Errorf("%s: balance %d, want %d + %d", u.Name, got, before[u.ID], due[u.ID])
				}
			}
			if now := e.ledgerOf(m); now.escrow != 0 || now.fees != was.fees || now.treasury != was.treasury+was.escrow-total {
				t.Fatalf("escrow, fees, treasury %+v, were %+v, refunds %d", now, was, total)
			}
		})
		t.Run("the market is resolved VOID by its creator, and no pool side won", func(t *testing.T) {
			got := e.market(m.ID)
			if !got.Resolved || !got.Voided || got.WinningOutcome != nil || got.Outcome() != "VOID" || got.ResolvedAt == nil || got.ResolvedBy != market.ResolvedByCreator {
				t.Fatalf("market %+v", got)
			}
			if pool, _ := e.stores.Markets.Pool(e.ctx, m.PoolID); pool.WonSide != nil {
				t.Fatalf("pool won_side %d", *pool.WonSide)
			}
		})
		t.Run("every open position closed with won_side 2 and its PnL, a position sold out before stays -1", func(t *testing.T) {
			for _, u := range append(holders, soldOut) {
				closed, err := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 10, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range closed {
					want := market.WonSideVoid
					if u == soldOut {
						want = market.WonSideSold
					}
					if p.WonSide == nil || *p.WonSide != want || p.CostBasis != 0 || p.ClosedAt == nil {
						t.Errorf("%s: closed position %+v", u.Name, p.Position)
					}
					// A refunded position ends at 0; early's sales returned
					// more than it cost, and it keeps that profit.
					if u != soldOut && (p.PnL() > 0) != (u == early) || p.PnL() < 0 && u != soldOut {
						t.Errorf("%s: PnL %d (spent %d, returned %d)", u.Name, p.PnL(), p.Spent, p.Returned)
					}
				}
				if open, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID); len(open) != 0 {
					t.Errorf("%s: %d open positions", u.Name, len(open))
				}
			}
		})
		t.Run("a refund is no win: the profile counts voided positions, and only a profit from sales is a win", func(t *testing.T) {
			for _, c := range []struct {
				u   *account.User
				n   int64
				win bool
			}{{plain, 1, false}, {partial, 1, false}, {big, 1, false}, {both, 2, false}, {early, 1, true}} {
				n, best, err := e.stores.Markets.ClosedStats(e.ctx, c.u.ID)
				if err != nil {
					t.Fatal(err)
				}
				if n != c.n || (best > 0) != c.win {
					t.Errorf("%s: %d closed, biggest win %d", c.u.Name, n, best)
				}
			}
		})
		t.Run("the PnL chart ends at each holder's PnL: a refunded holder at 0", func(t *testing.T) {
			for _, u := range append(holders, soldOut) {
				closed, _ := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 10, 0)
				var pnl int64
				for _, p := range closed {
					pnl += p.PnL()
				}
				if got := e.chartEnd(u); got != pnl {
					t.Errorf("%s: chart ends at %d, PnL %d", u.Name, got, pnl)
				}
			}
			if got := e.chartEnd(plain); got != 0 {
				t.Errorf("plain: chart ends at %d, want 0", got)
			}
		})
		t.Run("every holder is told once, with its refund; the seller who left before is not", func(t *testing.T) {
			for _, u := range holders {
				ns := e.resolvedNotes(u)
				if len(ns) != 1 || ns[0].Data.Won != "VOID" || ns[0].Data.Amount != due[u.ID] || ns[0].RelatedID != ev.ID {
					t.Errorf("%s: notifications %+v, want one refunding %d", u.Name, ns, due[u.ID])
				}
			}
			if ns := e.resolvedNotes(soldOut); len(ns) != 0 {
				t.Errorf("the seller who left got %+v", ns)
			}
		})
		t.Run("a voided market takes no trade and no second resolution", func(t *testing.T) {
			if _, err := e.buy(plain, m, market.Yes, 100); !errors.Is(err, market.ErrClosed) {
				t.Fatalf("buy after void: %v", err)
			}
			if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); !errors.Is(err, market.ErrResolved) {
				t.Fatalf("close after void: %v", err)
			}
			if err := e.markets.Resolve(e.ctx, m.ID, "VOID"); !errors.Is(err, market.ErrResolved) {
				t.Fatalf("operator's void after void: %v", err)
			}
		})
		e.audit()
	})

	// Sellers who sold at a profit before a void keep it, and the fees
	// went to the fee account, so the escrow alone need not cover the
	// refunds. Two rounds of one trader buying cheap, another pushing the
	// price up and the first selling out, on a market whose subsidy is 694
	// kopecks, leave the two pushers' refunds thousands of kopecks over
	// the escrow and its fees.
	for _, c := range []struct {
		name   string
		rounds int
		margin float64
	}{
		{"a void the escrow cannot cover takes the rest from the fee account", 1, 0.02},
		{"a void the escrow and the fees cannot cover takes the rest from the treasury", 2, 0.01},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, newStores)
			cr := e.creator()
			ev := e.event(cr, c.margin, 1000, 0.5)
			m := ev.Pools[0].Markets[0]
			var holders []*account.User
			side := market.Yes
			for range c.rounds {
				a, b := e.user("seller", 100000, 0), e.user("pusher", 100000, 0)
				ra, err := e.buy(a, m, side, 2000)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.buy(b, m, side, 5000); err != nil {
					t.Fatal(err)
				}
				if _, err := e.sell(a, m, side, ra.Trade.Shares); err != nil {
					t.Fatal(err)
				}
				holders = append(holders, b)
				side = 1 - side
			}
			due := e.refundsDue(m, holders...)
			var total int64
			before := map[int64]int64{}
			for _, u := range holders {
				total += due[u.ID]
				before[u.ID] = e.balances(u).Balance
			}
			was := e.ledgerOf(m)
			short := total - was.escrow
			if short <= 0 || (c.rounds == 1) != (short <= was.fees) {
				t.Fatalf("the scenario went wrong: refunds %d, escrow %d, fees %d", total, was.escrow, was.fees)
			}
			if err := e.markets.Resolve(e.ctx, m.ID, "VOID"); err != nil {
				t.Fatal(err)
			}
			for _, u := range holders {
				if got := e.balances(u).Balance; got != before[u.ID]+due[u.ID] {
					t.Errorf("%s %d: balance %d, want %d + %d", u.Name, u.ID, got, before[u.ID], due[u.ID])
				}
			}
			fromFees := min(short, was.fees)
			now := e.ledgerOf(m)
			if now.escrow != 0 || now.fees != was.fees-fromFees || now.treasury != was.treasury-(short-fromFees) {
				t.Fatalf("escrow, fees, treasury %+v, were %+v; refunds %d", now, was, total)
			}
			if got := e.market(m.ID); got.ResolvedBy != market.ResolvedByOperator || !got.Voided {
				t.Fatalf("market %+v", got)
			}
			e.audit()
		})
	}

	t.Run("the operator resolves any market, and the market says who resolved it", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5, 0.5)
		byOperator, byCreator := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		u := e.user("holder", 10000, 0)
		b, err := e.buy(u, byOperator, market.No, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Resolve(e.ctx, byOperator.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, byCreator.PoolID, byCreator.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if got := e.market(byOperator.ID); got.ResolvedBy != market.ResolvedByOperator || got.WinningOutcome == nil || *got.WinningOutcome != market.No || got.ResolvedAt == nil {
			t.Fatalf("resolved by the operator: %+v", got)
		}
		if got := e.market(byCreator.ID); got.ResolvedBy != market.ResolvedByCreator {
			t.Fatalf("resolved by the creator: %+v", got)
		}
		if got := e.balances(u).Balance; got != 10000-b.Trade.Amount+b.Trade.Shares {
			t.Fatalf("balance %d, want %d", got, 10000-b.Trade.Amount+b.Trade.Shares)
		}
		if ns := e.resolvedNotes(u); len(ns) != 1 || ns[0].Data.Won != "NO" || ns[0].Data.Amount != b.Trade.Shares {
			t.Fatalf("notifications %+v", ns)
		}
		e.audit()
	})
	t.Run("the operator's resolution checks the outcome, then the market, then that it is unresolved", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			id   int64
			won  string
			want error
		}{
			{"an outcome other than YES, NO or VOID is invalid, even for an unknown market", 987654, "yes", input.ErrInvalid},
			{"an empty outcome is invalid", m.ID, "", input.ErrInvalid},
			{"an unknown market is not found", 987654, "VOID", market.ErrMarketNotFound},
			{"a resolved market is resolved already", m.ID, "NO", market.ErrResolved},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := e.markets.Resolve(e.ctx, tc.id, tc.won); !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
		if got := e.market(m.ID); got.ResolvedBy != market.ResolvedByCreator || *got.WinningOutcome != market.Yes {
			t.Fatalf("a refused resolution changed the market: %+v", got)
		}
	})
	t.Run("the creator's close and the operator's void race: exactly one settles", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("holder", 10000, 0)
		b, err := e.buy(u, m, market.Yes, 2000)
		if err != nil {
			t.Fatal(err)
		}
		const each = 6
		errs := make([]error, 2*each)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					errs[i] = e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES")
				} else {
					errs[i] = e.markets.Resolve(e.ctx, m.ID, "VOID")
				}
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("calls %d and %d both settled", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, market.ErrResolved):
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no call settled")
		}
		got := e.market(m.ID)
		want := 10000 - b.Trade.Amount + b.Trade.Shares // YES won
		if won%2 == 1 {
			want = 10000 // voided: refunded what it paid
			if !got.Voided || got.ResolvedBy != market.ResolvedByOperator {
				t.Fatalf("the operator's void settled, but the market is %+v", got)
			}
		} else if got.Voided || got.ResolvedBy != market.ResolvedByCreator {
			t.Fatalf("the creator's close settled, but the market is %+v", got)
		}
		if bal := e.balances(u).Balance; bal != want {
			t.Fatalf("balance %d, want %d", bal, want)
		}
		if ns := e.resolvedNotes(u); len(ns) != 1 {
			t.Fatalf("%d market_resolved notifications", len(ns))
		}
		e.audit()
	})
	t.Run("a void refunds a partner's user on its sub-account, whose state then holds no position", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("no partner store")
		}
		c := e.creator()
		ev := e.event(c, 0.03, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		p := e.partner("Bookie", 100000)
		rc, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "ext-1", MarketID: m.ID, Side: market.No, AmountKopecks: 4000, ClientBetID: "b1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		st, err := e.partners.State(e.ctx, p, "ext-1")
		if err != nil {
			t.Fatal(err)
		}
		if !st.Exists || st.BalanceKopecks != rc.CostKopecks || len(st.Positions) != 0 || st.OpenPositionsKopecks != 0 {
			t.Fatalf("state %+v, want a balance of the bet's cost %d and no position", st, rc.CostKopecks)
		}
		if float, _ := e.partners.Float(e.ctx, p.ID); float != 100000-rc.CostKopecks {
			t.Fatalf("float %d: a refund goes to the sub-account, not back to the float", float)
		}
		e.audit()
	})
}
