package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/predictkit/predictkit/account"
)

// TestEndToEnd drives the whole flow through HTTP: sign-up, deposit, an
// event, trades, settlement; then checks every figure to the kopeck
// against what the trade answers said.
func TestEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		alice, bob, creator := h.register(t, "alice"), h.register(t, "bob"), h.register(t, "creator")
		h.makeCreator(t, creator.id)
		h.credit(t, alice.id, 1_000_000, false)
		h.credit(t, bob.id, 500_000, false)
		h.credit(t, bob.id, 100_000, true)
		const credited = 1_600_000

		ev := h.createEvent(t, creator.token, twoPoolEvent("Final"))
		if ev.IsActive || ev.CreatorID != creator.id || len(ev.Pools) != 2 {
			t.Fatalf("created event %+v", ev)
		}
		poolA := ev.Pools[0]
		a1, a2, b1 := poolA.Markets[0], poolA.Markets[1], ev.Pools[1].Markets[0]
		feedIDs := func() []int64 {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/events"})
			expect(t, r, 200, "")
			var f struct {
				Events []apiEvent `json:"events"`
			}
			r.decode(t, &f)
			var ids []int64
			for _, e := range f.Events {
				ids = append(ids, e.ID)
			}
			return ids
		}
		if ids := feedIDs(); len(ids) != 0 {
			t.Fatalf("an inactive event is in the feed: %v", ids)
		}
		h.activate(t, creator.token, ev.ID, true)
		if ids := feedIDs(); len(ids) != 1 || ids[0] != ev.ID {
			t.Fatalf("the activated event is not in the feed: %v", ids)
		}

		// Trades, with the balance each answer must carry.
		aliceBal, bobBal, bobBonus := int64(credited-600_000), int64(500_000), int64(100_000)
		var fees int64
		check := func(name string, tr apiTrade, wantBal, wantBonus int64) {
			t.Helper()
			fees += tr.FeeKopecks
			if tr.Balance != wantBal || tr.BonusBalance != wantBonus {
				t.Fatalf("%s: balances %d/%d, want %d/%d", name, tr.Balance, tr.BonusBalance, wantBal, wantBonus)
			}
		}
		t1 := h.buy(t, alice.token, a1.ID, "YES", 100_000)
		if t1.CostKopecks > 100_000 || t1.CostKopecks <= 0 || t1.Shares <= 0 || t1.FeeKopecks <= 0 {
			t.Fatalf("buy %+v", t1)
		}
		if t1.Market.QYes != a1.QYes+t1.Shares || t1.Market.YesProbability <= a1.YesProbability {
			t.Errorf("the market after a YES buy: %+v (was %+v)", t1.Market, a1)
		}
		aliceBal -= t1.CostKopecks
		check("t1", t1, aliceBal, 0)
		t2 := h.buy(t, bob.token, a1.ID, "NO", 50_000)
		bobBal -= t2.CostKopecks
		check("t2", t2, bobBal, bobBonus)
		t3 := h.buy(t, bob.token, b1.ID, "YES", 30_000, map[string]any{"use_bonus": true})
		bobBonus -= t3.CostKopecks
		check("t3", t3, bobBal, bobBonus)
		if t3.FeeKopecks != 0 {
			t.Errorf("a buy in a pool without margin paid a fee of %d", t3.FeeKopecks)
		}
		half := t1.Shares / 2
		t4 := h.sell(t, alice.token, a1.ID, "YES", half)
		aliceBal += t4.PayoutKopecks
		check("t4", t4, aliceBal, 0)
		t5 := h.buy(t, alice.token, a2.ID, "YES", 10_000)
		aliceBal -= t5.CostKopecks
		check("t5", t5, aliceBal, 0)
		t6 := h.sell(t, alice.token, a2.ID, "YES", t5.Shares)
		aliceBal += t6.PayoutKopecks
		check("t6", t6, aliceBal, 0)
		t7 := h.buy(t, alice.token, a2.ID, "NO", 8_000)
		aliceBal -= t7.CostKopecks
		check("t7", t7, aliceBal, 0)
		t8 := h.sell(t, alice.token, a2.ID, "NO", t7.Shares)
		aliceBal += t8.PayoutKopecks
		check("t8", t8, aliceBal, 0)

		// Bob's open position on B1 is worth what selling it now pays.
		r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&shares=%d", b1.ID, t3.Shares)})
		expect(t, r, 200, "")
		var q struct {
			PayoutKopecks int64 `json:"payout_kopecks"`
		}
		r.decode(t, &q)

		// The creator resolves A1: YES won.
		expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, poolA.ID, a1.ID),
			token: creator.token, body: map[string]any{"won_side": "YES"}}), 200, "")
		remaining := t1.Shares - half
		aliceBal += remaining // one kopeck per winning share

		pnlA1 := t4.PayoutKopecks + remaining - t1.CostKopecks
		pnlA2Yes := t6.PayoutKopecks - t5.CostKopecks
		pnlA2No := t8.PayoutKopecks - t7.CostKopecks

		t.Run("alice's profile shows her balance, no open position and three closed ones", func(t *testing.T) {
			p := h.me(t, alice.token)
			if p.Balance != aliceBal || p.BonusBalance != 0 || p.TotalBalance != aliceBal {
				t.Errorf("balance %d/%d/%d, want %d/0/%d", p.Balance, p.BonusBalance, p.TotalBalance, aliceBal, aliceBal)
			}
			if len(p.Positions) != 0 {
				t.Errorf("open positions %+v", p.Positions)
			}
			if p.TotalPredictions != 3 || p.ClosedPositionsHasMore || len(p.ClosedPositions) != 3 {
				t.Fatalf("closed: %d total, has_more %v, %+v", p.TotalPredictions, p.ClosedPositionsHasMore, p.ClosedPositions)
			}
			want := []struct {
				market       int64
				side         string
				amount, pnl  int64
				won          int
				sideRu, name string
			}{
				{a1.ID, "YES", t1.Shares, pnlA1, 1, "ДА", "A1"},
				{a2.ID, "NO", t7.Shares, pnlA2No, -1, "НЕТ", "A2"},
				{a2.ID, "YES", t5.Shares, pnlA2Yes, -1, "ДА", "A2"},
			}
			for i, w := range want {
				c := p.ClosedPositions[i]
				if c.MarketID != w.market || c.TokenType != w.side || c.Side != w.side || c.SideRu != w.sideRu || c.Amount != w.amount ||
					c.PnL != w.pnl || c.WonSide != w.won || c.MarketName != w.name || c.EventID != ev.ID || c.EventName != "Final" ||
					c.PoolID != poolA.ID || c.PoolName != "Pool A" || c.UserID != alice.id || c.ClosedAt == "" {
					t.Errorf("closed position %d: %+v, want %+v", i, c, w)
				}
			}
			best := max(int64(0), pnlA1, pnlA2Yes, pnlA2No)
			if p.BiggestWin != best {
				t.Errorf("biggest_win %d, want %d", p.BiggestWin, best)
			}
		})
		t.Run("bob's profile shows his balances, the bonus position and the lost one (won_side 1: YES won)", func(t *testing.T) {
			p := h.me(t, bob.token)
			if p.Balance != bobBal || p.BonusBalance != bobBonus || p.TotalBalance != bobBal+bobBonus {
				t.Errorf("balance %d/%d, want %d/%d", p.Balance, p.BonusBalance, bobBal, bobBonus)
			}
			if len(p.Positions) != 1 {
				t.Fatalf("open positions %+v", p.Positions)
			}
			o := p.Positions[0]
			if o.MarketID != b1.ID || o.TokenType != "YES" || o.Amount != t3.Shares || !o.UseBonus || o.UnrealizedPnL != q.PayoutKopecks-t3.CostKopecks ||
				o.PoolName != "Pool B" || o.MarketName != "B1" || o.AvgPrice != t3.AvgPriceBps {
				t.Errorf("open position %+v (trade %+v, value %d)", o, t3, q.PayoutKopecks)
			}
			if len(p.ClosedPositions) != 1 || p.TotalPredictions != 1 {
				t.Fatalf("closed %+v", p.ClosedPositions)
			}
			c := p.ClosedPositions[0]
			if c.MarketID != a1.ID || c.TokenType != "NO" || c.PnL != -t2.CostKopecks || c.WonSide != 1 || c.Amount != t2.Shares {
				t.Errorf("closed position %+v", c)
			}
			if p.BiggestWin != 0 {
				t.Errorf("biggest_win %d after a loss only", p.BiggestWin)
			}
		})
		t.Run("closed positions are paged newest first", func(t *testing.T) {
			page := func(q string) ([]apiPosition, bool) {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed" + q, token: alice.token})
				expect(t, r, 200, "")
				var p struct {
					Positions []apiPosition `json:"positions"`
					HasMore   bool          `json:"has_more"`
				}
				r.decode(t, &p)
				return p.Positions, p.HasMore
			}
			first, more := page("?limit=2")
			if len(first) != 2 || !more || first[0].MarketID != a1.ID || first[1].TokenType != "NO" {
				t.Errorf("first page %+v, has_more %v", first, more)
			}
			second, more := page("?limit=2&offset=2")
			if len(second) != 1 || more || second[0].MarketID != a2.ID || second[0].TokenType != "YES" {
				t.Errorf("second page %+v, has_more %v", second, more)
			}
			all, more := page("")
			if len(all) != 3 || more {
				t.Errorf("default page %+v", all)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed?limit=-1", token: alice.token}), 400, "invalid_request")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed"}), 401, "unauthorized")
		})
		t.Run("the PnL charts add up to the closed positions' pnl, in RUB", func(t *testing.T) {
			chart := func(path, token string) apiChart {
				r := h.do(t, req{method: http.MethodGet, path: path, token: token})
				expect(t, r, 200, "")
				var c apiChart
				r.decode(t, &c)
				return c
			}
			c := chart("/api/v1/users/me/pnl/chart", alice.token)
			if len(c.Points) != 5 || c.Points[0].PnL != 0 {
				t.Fatalf("alice's chart %+v", c)
			}
			for i := 1; i < len(c.Points); i++ {
				if c.Points[i].Timestamp < c.Points[i-1].Timestamp {
					t.Errorf("points out of order: %+v", c.Points)
				}
			}
			if got, want := c.Points[4].PnL, float64(pnlA1+pnlA2Yes+pnlA2No)/100; got != want {
				t.Errorf("alice's final pnl %v, want %v", got, want)
			}
			if got, want := c.Points[2].PnL-c.Points[1].PnL, float64(pnlA2Yes)/100; !near(got, want) {
				t.Errorf("the A2 YES round trip moved the chart by %v, want %v", got, want)
			}
			b := chart(fmt.Sprintf("/api/v1/users/%d/pnl/chart", bob.id), "")
			if len(b.Points) != 2 || b.Points[1].PnL != float64(-t2.CostKopecks)/100 {
				t.Errorf("bob's chart %+v, want a last point of %v", b, float64(-t2.CostKopecks)/100)
			}
		})
		t.Run("the latest trades list every trade newest first with what changed hands", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/market/trades/latest"})
			expect(t, r, 200, "")
			var feed []struct {
				Amount int64   `json:"amount"`
				Name   string  `json:"name"`
				Token  string  `json:"token"`
				Event  string  `json:"event"`
				Market string  `json:"market"`
				Avatar *string `json:"avatar"`
			}
			r.decode(t, &feed)
			want := []struct {
				amount       int64
				name, token  string
				marketName   string
				fromResponse apiTrade
			}{
				{t8.PayoutKopecks, "alice", "NO", "A2", t8}, {t7.CostKopecks, "alice", "NO", "A2", t7},
				{t6.PayoutKopecks, "alice", "YES", "A2", t6}, {t5.CostKopecks, "alice", "YES", "A2", t5},
				{t4.PayoutKopecks, "alice", "YES", "A1", t4}, {t3.CostKopecks, "bob", "YES", "B1", t3},
				{t2.CostKopecks, "bob", "NO", "A1", t2}, {t1.CostKopecks, "alice", "YES", "A1", t1},
			}
			if len(feed) != len(want) {
				t.Fatalf("feed has %d trades, want %d: %s", len(feed), len(want), r)
			}
			for i, w := range want {
				f := feed[i]
				if f.Amount != w.amount || f.Name != w.name || f.Token != w.token || f.Market != w.marketName || f.Event != "Final" {
					t.Errorf("feed[%d] = %+v, want %+v", i, f, w)
				}
			}
		})
		t.Run("the pool shows the resolution and the history every trade", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", poolA.ID)})
			expect(t, r, 200, "")
			var p apiPool
			r.decode(t, &p)
			if p.WonSide == nil || *p.WonSide != 0 || !p.Markets[0].Resolved || p.Markets[0].WinningOutcome == nil || *p.Markets[0].WinningOutcome != "YES" {
				t.Errorf("pool after resolution %s", r)
			}
			if p.Markets[1].Resolved || p.Markets[1].WinningOutcome != nil {
				t.Errorf("A2 resolved too: %+v", p.Markets[1])
			}
			if len(p.Metadata.MarketNames) != 2 || p.Metadata.MarketNames[1] != "A2" || p.Metadata.LMSRBKopecks != 1_000_000 ||
				p.Metadata.MarketProbabilities[1] != p.Markets[1].YesProbability || p.Margin != 0.03 {
				t.Errorf("pool metadata %+v", p.Metadata)
			}
			r = h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/history", a1.ID)})
			expect(t, r, 200, "")
			var hist struct {
				MarketID int64 `json:"market_id"`
				Points   []struct {
					YesProbability float64 `json:"yes_probability"`
					QYes           int64   `json:"q_yes"`
					QNo            int64   `json:"q_no"`
				} `json:"points"`
			}
			r.decode(t, &hist)
			if hist.MarketID != a1.ID || len(hist.Points) != 4 || hist.Points[0].QYes != a1.QYes || hist.Points[0].QNo != a1.QNo ||
				hist.Points[3].QYes != t4.Market.QYes || hist.Points[1].YesProbability != t1.Market.YesProbability {
				t.Errorf("history %s", r)
			}
		})
		t.Run("a resolved market takes no trade and no second resolution", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", a1.ID), token: bob.token,
				body: map[string]any{"side": "YES", "amount_kopecks": 1000}}), 409, "market_closed")
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, poolA.ID, a1.ID),
				token: creator.token, body: map[string]any{"won_side": "NO"}}), 409, "market already resolved")
		})
		t.Run("the ledger is sound and every kopeck is where the trades put it", func(t *testing.T) {
			ok, _, problems := h.audit(t)
			if !ok {
				t.Fatalf("audit: %v", problems)
			}
			bal := func(ref account.Ref) int64 {
				v, err := h.store.Balance(ctx, ref)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			if got, _ := feeIncome(ctx, h.store); got != fees {
				t.Errorf("fee account %d, want the trades' fees %d", got, fees)
			}
			if got := bal(account.External); got != -credited {
				t.Errorf("external account %d, want %d", got, -credited)
			}
			if got := bal(account.EscrowAccount(a1.ID)); got != 0 {
				t.Errorf("the resolved market's escrow holds %d", got)
			}
			users := aliceBal + bobBal + bobBonus
			escrows := bal(account.EscrowAccount(a2.ID)) + bal(account.EscrowAccount(b1.ID))
			if got := users + fees + escrows + bal(account.Treasury); got != credited {
				t.Errorf("users %d + fees %d + escrows %d + treasury %d = %d, want the credits %d",
					users, fees, escrows, bal(account.Treasury), got, credited)
			}
		})
	})
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}
