package storagetest

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/market"
)

func testEvents(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a new event stores its pools and markets and escrows their subsidies", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.03, 10000, 0.25, 0.6)
		got, err := e.stores.Markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Final" || got.NameRu != "Финал" || got.CreatorID != c.ID || !got.IsActive || len(got.Pools) != 1 {
			t.Fatalf("event = %+v", got)
		}
		p := got.Pools[0]
		if p.Margin != 0.03 || p.B != 10000 || p.EventID != ev.ID || p.WonSide != nil || len(p.Markets) != 2 || p.Rules != "Official result" {
			t.Fatalf("pool = %+v", p)
		}
		var subsidies int64
		for i, m := range p.Markets {
			if m.OutcomeIndex != i || m.PoolID != p.ID || m.EventID != ev.ID || m.B != 10000 || m.Margin != 0.03 || m.Resolved || m.Paused {
				t.Fatalf("market %d = %+v", i, m)
			}
			if m.QYes != m.Q0Yes || m.QNo != m.Q0No {
				t.Fatalf("market %d opened with q %d/%d but q0 %d/%d", i, m.QYes, m.QNo, m.Q0Yes, m.Q0No)
			}
			want, _ := lmsr.SubsidyKopecks(m.Pricer())
			esc, _ := e.stores.Accounts.Balance(e.ctx, account.EscrowAccount(m.ID))
			if esc != want || want <= 0 {
				t.Fatalf("market %d escrow = %d, want subsidy %d", i, esc, want)
			}
			subsidies += want
		}
		if pr := p.Markets[0].YesProbability(); pr < 0.24 || pr > 0.26 {
			t.Fatalf("market 0 opens at %.4f, want about 0.25", pr)
		}
		tr, _ := e.stores.Accounts.Balance(e.ctx, account.Treasury)
		if tr != -subsidies {
			t.Fatalf("treasury = %d, want %d", tr, -subsidies)
		}
		e.audit()
	})
	t.Run("unknown ids are the matching not-found errors", func(t *testing.T) {
		e := newEnv(t, newStores)
		if _, err := e.stores.Markets.Event(e.ctx, 777); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("Event: %v", err)
		}
		if _, err := e.stores.Markets.Pool(e.ctx, 777); !errors.Is(err, market.ErrPoolNotFound) {
			t.Fatalf("Pool: %v", err)
		}
		if _, err := e.stores.Markets.Market(e.ctx, 777); !errors.Is(err, market.ErrMarketNotFound) {
			t.Fatalf("Market: %v", err)
		}
		if err := e.stores.Markets.SetEventActive(e.ctx, 777, true); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("SetEventActive: %v", err)
		}
		_, err := e.stores.Markets.Exec(e.ctx, market.Lock{MarketID: 777}, func(*market.State) (*market.Effects, error) {
			t.Fatal("decide called for a missing market")
			return nil, nil
		})
		if !errors.Is(err, market.ErrMarketNotFound) {
			t.Fatalf("Exec: %v", err)
		}
	})
	t.Run("the feed lists active events newest first, paged", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		a := e.event(c, 0, 1000, 0.5)
		b := e.event(c, 0, 1000, 0.5)
		hidden := e.event(c, 0, 1000, 0.5)
		if err := e.markets.SetActive(e.ctx, c.ID, hidden.ID, ptr(false)); err != nil {
			t.Fatal(err)
		}
		got, err := e.stores.Markets.ActiveEvents(e.ctx, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
			t.Fatalf("feed = %v, want [%d %d]", ids(got), b.ID, a.ID)
		}
		got, _ = e.stores.Markets.ActiveEvents(e.ctx, 1, 1)
		if len(got) != 1 || got[0].ID != a.ID {
			t.Fatalf("second page = %v", ids(got))
		}
		got, _ = e.stores.Markets.ActiveEvents(e.ctx, 10, 5)
		if len(got) != 0 {
			t.Fatalf("past the end = %v", ids(got))
		}
	})
}

func ids(evs []*market.Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func testTrading(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a buy charges the budget, escrows the cost and books the fee", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.03, 100000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("kim", 10000, 0)
		want, err := lmsr.BuyForSpend(m.Pricer(), market.Yes, 5000, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.buy(u, m, market.Yes, 5000)
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Trade
		if tr.ID == 0 || tr.Shares != want.Shares || tr.Amount != want.Charge || tr.Cost != want.Cost || tr.Fee != want.Fee || tr.Amount > 5000 {
			t.Fatalf("trade = %+v, want %+v", tr, want)
		}
		if res.Balances.Balance != 10000-want.Charge || e.balances(u).Balance != 10000-want.Charge {
			t.Fatalf("balance = %d / %d, want %d", res.Balances.Balance, e.balances(u).Balance, 10000-want.Charge)
		}
		fees, _ := e.stores.Accounts.Balance(e.ctx, account.FeeAccount(m.ID))
		if fees != want.Fee {
			t.Fatalf("fees = %d, want %d", fees, want.Fee)
		}
		after := e.market(m.ID)
		if after.QYes != m.QYes+want.Shares || after.QNo != m.QNo || after.Volume != want.Cost {
			t.Fatalf("market after = %+v", after)
		}
		ps, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID)
		if len(ps) != 1 || ps[0].Shares != want.Shares || ps[0].CostBasis != want.Charge || ps[0].ID == 0 || ps[0].MarketName != m.Name || ps[0].EventName != "Final" || ps[0].Market == nil {
			t.Fatalf("positions = %+v", ps)
		}
		trades, _ := e.stores.Markets.Trades(e.ctx, m.ID)
		if len(trades) != 1 || trades[0].ID != tr.ID {
			t.Fatalf("trade log = %+v", trades)
		}
		e.audit()
	})
	t.Run("a bonus buy is paid from the bonus balance", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("lee", 100, 1000)
		res, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 500, UseBonus: true})
		if err != nil {
			t.Fatal(err)
		}
		if b := e.balances(u); b.Balance != 100 || b.Bonus != 1000-res.Trade.Amount {
			t.Fatalf("balances = %+v after charge %d", b, res.Trade.Amount)
		}
		ps, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID)
		if len(ps) != 1 || !ps[0].UseBonus {
			t.Fatalf("positions = %+v", ps)
		}
		e.audit()
	})
	t.Run("a refused trade changes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("max", 300, 0)
		cases := []struct {
			name string
			req  market.Request
			want error
		}{
			{"a buy beyond the balance", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 301}, account.ErrInsufficientFunds},
			{"a bonus buy with no bonus", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100, UseBonus: true}, account.ErrInsufficientFunds},
			{"a buy over its max cost", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 200, MaxCost: 10}, market.ErrPriceMoved},
			{"a buy under its min shares", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 200, MinShares: 100000}, market.ErrPriceMoved},
			{"a sell with no position", market.Request{UserID: u.ID, Side: market.No, Action: market.ActionSell, Shares: 5}, market.ErrNoPosition},
			{"a zero buy", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 0}, input.ErrInvalid},
			{"a negative sell", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionSell, Shares: -1}, input.ErrInvalid},
			{"a buy of one kopeck", market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1}, market.ErrTradeRefused},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := e.markets.Execute(e.ctx, m.ID, c.req)
				if !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				if b := e.balances(u); b.Balance != 300 || b.Bonus != 0 {
					t.Fatalf("balances changed: %+v", b)
				}
				if got := e.market(m.ID); got.QYes != m.QYes || got.QNo != m.QNo || got.Volume != 0 {
					t.Fatalf("market changed: %+v", got)
				}
			})
		}
		trades, _ := e.stores.Markets.Trades(e.ctx, m.ID)
		if len(trades) != 0 {
			t.Fatalf("trade log holds %d refused trades", len(trades))
		}
		e.audit()
	})
	t.Run("a decision that fails writes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		boom := errors.New("boom")
		_, err := e.stores.Markets.Exec(e.ctx, market.Lock{MarketID: m.ID}, func(st *market.State) (*market.Effects, error) {
			if st.Market.ID != m.ID || st.Balances[account.EscrowAccount(m.ID)] <= 0 {
				t.Errorf("state = %+v", st)
			}
			return nil, boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Exec = %v, want the decision's error", err)
		}
		e.audit()
	})
	t.Run("selling part then all of a position realizes its P&L and closes it", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.01, 50000, 0.4)
		m := ev.Pools[0].Markets[0]
		u := e.user("ned", 20000, 0)
		b, err := e.buy(u, m, market.Yes, 10000)
		if err != nil {
			t.Fatal(err)
		}
		shares := b.Trade.Shares
		half := shares / 2
		s1, err := e.sell(u, m, market.Yes, half)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.sell(u, m, market.Yes, shares); !errors.Is(err, market.ErrInsufficientShares) {
			t.Fatalf("overselling: %v", err)
		}
		s2, err := e.sell(u, m, market.Yes, shares-half)
		if err != nil {
			t.Fatal(err)
		}
		if bal := e.balances(u).Balance; bal != 20000-b.Trade.Amount+s1.Trade.Amount+s2.Trade.Amount {
			t.Fatalf("balance = %d", bal)
		}
		if open, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID); len(open) != 0 {
			t.Fatalf("still open: %+v", open)
		}
		closed, _ := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 10, 0)
		if len(closed) != 1 {
			t.Fatalf("closed = %+v", closed)
		}
		c := closed[0]
		wantPnL := s1.Trade.Amount + s2.Trade.Amount - b.Trade.Amount
		if c.WonSide == nil || *c.WonSide != -1 || c.ClosedAt == nil || c.PnL() != wantPnL || c.Bought != shares || c.Spent != b.Trade.Amount {
			t.Fatalf("closed position = %+v, want pnl %d", c.Position, wantPnL)
		}
		evs, _ := e.stores.Markets.PnLEvents(e.ctx, u.ID)
		var sum int64
		for _, ev := range evs {
			sum += ev.Delta
		}
		if len(evs) != 2 || sum != wantPnL {
			t.Fatalf("pnl events = %+v, sum %d, want 2 summing to %d", evs, sum, wantPnL)
		}
		if n, best, _ := e.stores.Markets.ClosedStats(e.ctx, u.ID); n != 1 || best != max(wantPnL, 0) {
			t.Fatalf("stats = %d, %d", n, best)
		}
		if got := e.market(m.ID); got.QYes != m.QYes {
			t.Fatalf("q_yes = %d, want back to %d", got.QYes, m.QYes)
		}
		e.audit()
	})
	t.Run("a batch decides each request on its own", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		rich, poor := e.user("rich", 5000, 0), e.user("poor", 10, 0)
		reqs := []market.Request{
			{UserID: rich.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000},
			{UserID: poor.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000},
			{UserID: rich.ID, Side: market.No, Action: market.ActionBuy, Amount: 700},
		}
		eff, err := e.stores.Markets.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
			return market.DecideTrades(st, reqs)
		})
		if err != nil {
			t.Fatal(err)
		}
		if eff.Results[0].Err != nil || !errors.Is(eff.Results[1].Err, account.ErrInsufficientFunds) || eff.Results[2].Err != nil {
			t.Fatalf("results = %v / %v / %v", eff.Results[0].Err, eff.Results[1].Err, eff.Results[2].Err)
		}
		if eff.Results[0].Trade.ID == 0 || eff.Results[2].Trade.ID <= eff.Results[0].Trade.ID {
			t.Fatalf("trade ids %d, %d", eff.Results[0].Trade.ID, eff.Results[2].Trade.ID)
		}
		if e.balances(poor).Balance != 10 || e.balances(rich).Balance != 5000-eff.Results[0].Trade.Amount-eff.Results[2].Trade.Amount {
			t.Fatalf("balances rich %+v poor %+v", e.balances(rich), e.balances(poor))
		}
		e.audit()
	})
}

func testSettlement(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("closing pays winners a kopeck a share and returns the rest to the treasury", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.3)
		m := ev.Pools[0].Markets[1]
		yes, no := e.user("yes", 10000, 0), e.user("no", 10000, 0)
		by, _ := e.buy(yes, m, market.Yes, 4000)
		bn, _ := e.buy(no, m, market.No, 3000)
		if by == nil || bn == nil {
			t.Fatal("buys failed")
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if got := e.balances(yes).Balance; got != 10000-by.Trade.Amount+by.Trade.Shares {
			t.Fatalf("winner balance = %d, want %d", got, 10000-by.Trade.Amount+by.Trade.Shares)
		}
		if got := e.balances(no).Balance; got != 10000-bn.Trade.Amount {
			t.Fatalf("loser balance = %d", got)
		}
		esc, _ := e.stores.Accounts.Balance(e.ctx, account.EscrowAccount(m.ID))
		if esc != 0 {
			t.Fatalf("escrow left = %d", esc)
		}
		got := e.market(m.ID)
		if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != market.Yes || got.ResolvedAt == nil {
			t.Fatalf("market = %+v", got)
		}
		pool, _ := e.stores.Markets.Pool(e.ctx, m.PoolID)
		if pool.WonSide == nil || *pool.WonSide != 1 {
			t.Fatalf("pool won_side = %v, want 1", pool.WonSide)
		}
		cy, _ := e.stores.Markets.ClosedPositions(e.ctx, yes.ID, 10, 0)
		cn, _ := e.stores.Markets.ClosedPositions(e.ctx, no.ID, 10, 0)
		if len(cy) != 1 || *cy[0].WonSide != 1 || cy[0].PnL() != by.Trade.Shares-by.Trade.Amount {
			t.Fatalf("winner's closed position = %+v", cy)
		}
		if len(cn) != 1 || *cn[0].WonSide != 1 || cn[0].PnL() != -bn.Trade.Amount {
			t.Fatalf("loser's closed position = %+v", cn)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "NO"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("second close: %v", err)
		}
		if _, err := e.buy(yes, m, market.Yes, 100); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("trading after close: %v", err)
		}
		e.audit()
	})
	t.Run("close checks run in the documented order", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		other := e.user("other", 0, 0)
		ev := e.event(c, 0, 1000, 0.5)
		ev2 := e.event(c, 0, 1000, 0.5)
		m := ev.Pools[0].Markets[0]
		cases := []struct {
			name                    string
			caller, event, pool, mk int64
			won                     string
			want                    error
		}{
			{"an unknown market is not found", c.ID, ev.ID, m.PoolID, 9999, "YES", market.ErrMarketNotFound},
			{"a market of another event is not found", c.ID, ev2.ID, m.PoolID, m.ID, "YES", market.ErrMarketNotFound},
			{"a market of another pool is not found", c.ID, ev.ID, ev2.Pools[0].ID, m.ID, "YES", market.ErrMarketNotFound},
			{"a stranger is forbidden before the body is read", other.ID, ev.ID, m.PoolID, m.ID, "maybe", market.ErrForbidden},
			{"a bad won_side is invalid", c.ID, ev.ID, m.PoolID, m.ID, "maybe", input.ErrInvalid},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if err := e.markets.Close(e.ctx, tc.caller, tc.event, tc.pool, tc.mk, tc.won); !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
			})
		}
		if e.market(m.ID).Resolved {
			t.Fatal("a refused close resolved the market")
		}
	})
}

func testFeeds(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("latest trades are newest first and only from active events", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		pub := e.event(c, 0, 10000, 0.5)
		hid := e.event(c, 0, 10000, 0.5)
		if err := e.markets.SetActive(e.ctx, c.ID, hid.ID, ptr(false)); err != nil {
			t.Fatal(err)
		}
		u := e.user("olga", 10000, 0)
		shy := e.user("shy", 10000, 0)
		if _, err := e.accounts.UpdateProfile(e.ctx, shy.ID, account.ProfilePatch{ProfileHidden: ptr(true), AvatarURL: ptr("https://example.com/s.png")}); err != nil {
			t.Fatal(err)
		}
		t1, _ := e.buy(u, pub.Pools[0].Markets[0], market.Yes, 100)
		e.buy(u, hid.Pools[0].Markets[0], market.Yes, 100)
		t3, _ := e.buy(shy, pub.Pools[0].Markets[0], market.No, 200)
		feed, err := e.stores.Markets.LatestTrades(e.ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(feed) != 2 || feed[0].ID != t3.Trade.ID || feed[1].ID != t1.Trade.ID {
			t.Fatalf("feed = %+v", feed)
		}
		if feed[0].TraderName != "Anonymous" || feed[0].TraderAvatar != nil || feed[1].TraderName != "olga" || feed[1].EventName != "Final" || feed[1].MarketName != "Outcome 0" {
			t.Fatalf("feed items = %+v / %+v", feed[0], feed[1])
		}
		if feed, _ := e.stores.Markets.LatestTrades(e.ctx, 1); len(feed) != 1 {
			t.Fatalf("limit 1 gave %d", len(feed))
		}
	})
	t.Run("price history has a point per trade, oldest first", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("pat", 10000, 0)
		r1, _ := e.buy(u, m, market.Yes, 1000)
		r2, _ := e.buy(u, m, market.No, 300)
		pts, err := e.stores.Markets.PriceHistory(e.ctx, m.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(pts) != 2 || pts[0].TradeID != r1.Trade.ID || pts[1].TradeID != r2.Trade.ID || pts[1].QNo != r2.Trade.QNo || pts[0].YesProbability <= 0.5 {
			t.Fatalf("history = %+v", pts)
		}
		if pts, _ := e.stores.Markets.PriceHistory(e.ctx, m.ID, 1); len(pts) != 1 || pts[0].TradeID != r2.Trade.ID {
			t.Fatalf("last point = %+v", pts)
		}
	})
	t.Run("closed positions page most recent first", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5, 0.5, 0.5)
		u := e.user("quinn", 10000, 0)
		var order []int64
		for _, m := range ev.Pools[0].Markets {
			b, err := e.buy(u, m, market.Yes, 500)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.sell(u, m, market.Yes, b.Trade.Shares); err != nil {
				t.Fatal(err)
			}
			order = append([]int64{m.ID}, order...)
		}
		all, _ := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 10, 0)
		if len(all) != 3 || all[0].MarketID != order[0] || all[2].MarketID != order[2] {
			t.Fatalf("closed order = %v, want markets %v", all, order)
		}
		p2, _ := e.stores.Markets.ClosedPositions(e.ctx, u.ID, 2, 2)
		if len(p2) != 1 || p2[0].MarketID != order[2] {
			t.Fatalf("page 2 = %+v", p2)
		}
	})
}
