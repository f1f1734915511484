package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

// Board is a store's leaderboard: buckets kept as trades and settlements
// commit (storage/memory), or applied from the change log by a consumer
// (storage/postgres).
type Board interface {
	leaderboard.Store
	leaderboard.Applier
	// LeaderboardCursor is the last change-log entry the board counts.
	LeaderboardCursor(ctx context.Context) (int64, error)
}

// caughtUp applies the change log to the board until nothing is left,
// as the server's consumer does, and checks that the cursor reached the
// log's last entry.
func (e *env) caughtUp() Board {
	e.t.Helper()
	b := e.stores.Board
	for {
		n, err := b.ApplyLeaderboard(e.ctx, 1) // one transaction at a time: the smallest batches
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if e.stores.Changes != nil {
		c, err := b.LeaderboardCursor(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if last := e.last(); c != last {
			e.t.Fatalf("the board's cursor is at %d, the log at %d", c, last)
		}
	}
	return b
}

// board reads a board once the consumer caught up.
func (e *env) board(period leaderboard.Period, by leaderboard.By, limit int, today time.Time) []leaderboard.Row {
	e.t.Helper()
	rows, err := e.caughtUp().Leaderboard(e.ctx, leaderboard.Query{Period: period, By: by, Limit: limit, Today: leaderboard.Day(today)})
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// rowOf is u's row of rows, and whether it has one.
func rowOf(rows []leaderboard.Row, u *account.User) (leaderboard.Row, bool) {
	for _, r := range rows {
		if r.UserID == u.ID {
			return r, true
		}
	}
	return leaderboard.Row{}, false
}

// figures are what the board must say of u, from the store's own
// records: the sum of u's realizations (the PnL chart's end) and of the
// LMSR amounts of u's trades on ms.
func (e *env) figures(u *account.User, ms ...*market.Market) (pnl, volume, trades int64) {
	e.t.Helper()
	evs, err := e.stores.Markets.PnLEvents(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range evs {
		pnl += ev.Delta
	}
	for _, m := range ms {
		ts, err := e.stores.Markets.Trades(e.ctx, m.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, t := range ts {
			if t.UserID == u.ID {
				volume += t.Cost
				trades++
			}
		}
	}
	return pnl, volume, trades
}

// checkFigures checks that every user's all-time row is what the store's
// own records say, and that the board ranks by by.
func (e *env) checkFigures(by leaderboard.By, ms []*market.Market, users ...*account.User) []leaderboard.Row {
	e.t.Helper()
	rows := e.board(leaderboard.AllTime, by, leaderboard.MaxLimit, time.Now())
	for _, u := range users {
		pnl, volume, trades := e.figures(u, ms...)
		r, ok := rowOf(rows, u)
		if !ok {
			e.t.Fatalf("%s (%d) is not on the board %+v", u.Name, u.ID, rows)
		}
		if r.PnL != pnl || r.Volume != volume || r.Trades != trades || r.Name != u.Name {
			e.t.Fatalf("%s's row is %+v, want pnl %d, volume %d, trades %d", u.Name, r, pnl, volume, trades)
		}
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		ka, kb := a.PnL, b.PnL
		if by == leaderboard.ByVolume {
			ka, kb = a.Volume, b.Volume
		}
		if ka < kb || ka == kb && a.UserID > b.UserID {
			e.t.Fatalf("rows %d and %d out of order by %s: %+v", i-1, i, by, rows)
		}
	}
	return rows
}

// must is the result of a trade that must be accepted.
func (e *env) must(r *market.Result, err error) *market.Result {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func testLeaderboard(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Board == nil {
		t.Skip("this store keeps no leaderboard")
	}
	t.Run("buys, sales and a resolution count as the trades and the PnL chart say, ranked by pnl and by volume", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		m, other := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		a, b, d := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0), e.user("Dan", 1_000_000, 0)
		ba := e.must(e.buy(a, m, market.Yes, 50_000))
		e.must(e.buy(b, m, market.No, 30_000))
		e.must(e.buy(d, other, market.Yes, 20_000))
		e.must(e.buy(b, m, market.Yes, 10_000))
		e.must(e.sell(a, m, market.Yes, ba.Trade.Shares/3))
		e.must(e.sell(d, other, market.Yes, 1000))
		ms := []*market.Market{m, other}
		e.checkFigures(leaderboard.ByPnL, ms, a, b, d)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		rows := e.checkFigures(leaderboard.ByPnL, ms, a, b, d)
		for _, u := range []*account.User{a, b, d} {
			if r, _ := rowOf(rows, u); r.PnL != e.chartEnd(u) {
				t.Fatalf("%s: the board says %d, the PnL chart ends at %d", u.Name, r.PnL, e.chartEnd(u))
			}
		}
		if r, _ := rowOf(rows, b); r.PnL == 0 {
			t.Fatalf("Bob's NO lost and his YES won: his realizations cannot be 0: %+v", r)
		}
		byVolume := e.checkFigures(leaderboard.ByVolume, ms, a, b, d)
		if r, ok := rowOf(byVolume, c); ok {
			t.Fatalf("the creator never traded, yet is ranked: %+v", r)
		}
	})

	t.Run("a void realizes nothing but the profit of sales before it, and a buyer who only bought ends at 0", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		e.must(e.buy(b, m, market.No, 30_000))
		ba := e.must(e.buy(a, m, market.Yes, 40_000))
		e.must(e.buy(b, m, market.Yes, 60_000)) // Ann's YES is worth more now
		e.must(e.sell(a, m, market.Yes, ba.Trade.Shares/2))
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		rows := e.checkFigures(leaderboard.ByPnL, []*market.Market{m}, a, b)
		ra, _ := rowOf(rows, a)
		rb, _ := rowOf(rows, b)
		if rb.PnL != 0 || ra.PnL < 0 || ra.PnL != e.chartEnd(a) {
			t.Fatalf("after the void Ann made %d (chart %d), Bob %d; want Bob 0", ra.PnL, e.chartEnd(a), rb.PnL)
		}
	})

	t.Run("an exclusive pool's resolution realizes every market's holders", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.02, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		e.must(e.buy(a, ms[0], market.Yes, 20_000))
		e.must(e.buy(b, ms[1], market.Yes, 20_000))
		e.must(e.buy(b, ms[2], market.No, 10_000))
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[0].PoolID, ms[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		rows := e.checkFigures(leaderboard.ByPnL, ms, a, b)
		if rows[0].UserID != a.ID {
			t.Fatalf("Ann held the winner: %+v", rows)
		}
	})

	t.Run("a period counts the trades and realizations of its UTC days only", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		m := ms[0]
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		today := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
		at := func(daysAgo int, h int) time.Time {
			return today.AddDate(0, 0, -daysAgo).Add(time.Duration(h) * time.Hour)
		}
		// Ann: a buy 40 days ago, a sale 10 days ago, a buy 3 days ago;
		// Bob: a buy and a sale today, a buy 6 days ago (in the week) and
		// one 7 days ago (not).
		buyA := e.tradeAt(m, nil, at(40, 1), buyReq(a, market.Yes, 30_000))[0]
		sellA := e.tradeAt(m, nil, at(10, 2), sellReq(a, market.Yes, buyA.Shares/2))[0]
		buyA2 := e.tradeAt(m, nil, at(3, 3), buyReq(a, market.Yes, 5_000))[0]
		b7 := e.tradeAt(m, nil, at(7, 23), buyReq(b, market.No, 7_000))[0]
		b6 := e.tradeAt(m, nil, at(6, 0), buyReq(b, market.No, 6_000))[0]
		bt := e.tradeAt(m, nil, at(0, 9), buyReq(b, market.No, 20_000))[0]
		bs := e.tradeAt(m, nil, at(0, 10), sellReq(b, market.No, bt.Shares))[0]
		evs, err := e.stores.Markets.PnLEvents(e.ctx, b.ID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("Bob's realizations: %v %v", evs, err)
		}
		bobToday := evs[0].Delta
		evs, err = e.stores.Markets.PnLEvents(e.ctx, a.ID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("Ann's realizations: %v %v", evs, err)
		}
		annSale := evs[0].Delta
		want := map[leaderboard.Period]map[int64]leaderboard.Row{
			leaderboard.AllTime: {
				a.ID: {PnL: annSale, Volume: buyA.Cost + sellA.Cost + buyA2.Cost, Trades: 3},
				b.ID: {PnL: bobToday, Volume: b7.Cost + b6.Cost + bt.Cost + bs.Cost, Trades: 4},
			},
			leaderboard.Month: {
				a.ID: {PnL: annSale, Volume: sellA.Cost + buyA2.Cost, Trades: 2},
				b.ID: {PnL: bobToday, Volume: b7.Cost + b6.Cost + bt.Cost + bs.Cost, Trades: 4},
			},
			leaderboard.Week: {
				a.ID: {PnL: 0, Volume: buyA2.Cost, Trades: 1},
				b.ID: {PnL: bobToday, Volume: b6.Cost + bt.Cost + bs.Cost, Trades: 3},
			},
		}
		for period, users := range want {
			rows := e.board(period, leaderboard.ByVolume, 10, today.Add(20*time.Hour))
			if len(rows) != len(users) {
				t.Fatalf("%s: %d rows, want %d: %+v", period, len(rows), len(users), rows)
			}
			for _, r := range rows {
				w := users[r.UserID]
				if r.PnL != w.PnL || r.Volume != w.Volume || r.Trades != w.Trades {
					t.Fatalf("%s: user %d has %+v, want %+v", period, r.UserID, r, w)
				}
			}
		}
		// Forty-one days on, no day of the week holds anything.
		if rows := e.board(leaderboard.Week, leaderboard.ByPnL, 10, today.AddDate(0, 0, 41)); len(rows) != 0 {
			t.Fatalf("a week with no trades has rows: %+v", rows)
		}
	})

	t.Run("ties go to the lower user id, the limit cuts the board, and a hidden profile is marked hidden", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		m := ms[0]
		var us []*account.User
		for i := range 4 {
			us = append(us, e.user("Twin"+itoa(i), 100_000, 0))
		}
		at := time.Now().UTC().Add(-time.Hour)
		for i, u := range us {
			// The same buy on each side, alternating, costs the same.
			side := market.Yes
			if i%2 == 1 {
				side = market.No
			}
			e.tradeAt(m, nil, at.Add(time.Duration(i)*time.Second), buyReq(u, side, 1_000))
		}
		hidden := true
		if _, err := e.accounts.UpdateProfile(e.ctx, us[1].ID, account.ProfilePatch{ProfileHidden: &hidden}); err != nil {
			t.Fatal(err)
		}
		rows := e.board(leaderboard.AllTime, leaderboard.ByPnL, 3, time.Now())
		if len(rows) != 3 {
			t.Fatalf("limit 3 gave %d rows", len(rows))
		}
		for i, r := range rows {
			if r.UserID != us[i].ID || r.PnL != 0 || r.Trades != 1 || r.Hidden != (i == 1) {
				t.Fatalf("row %d is %+v, want user %d (hidden: %v)", i, r, us[i].ID, i == 1)
			}
		}
		entries, err := leaderboard.NewService(e.caughtUp()).Top(e.ctx, leaderboard.Query{Period: leaderboard.AllTime, By: leaderboard.ByPnL, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if h := entries[1]; h.UserID != 0 || h.Name != "Anonymous" || h.AvatarURL != nil || h.Rank != 2 {
			t.Fatalf("the hidden trader shows as %+v", h)
		}
		if entries[0].Name != us[0].Name || entries[0].UserID != us[0].ID || entries[2].Rank != 3 {
			t.Fatalf("entries %+v", entries)
		}
	})

	t.Run("several sales of one position in one transaction each count once, whatever the consumer's batches", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5, 0.5)
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		at := time.Now().UTC().Add(-time.Minute)
		buy := e.tradeAt(ms[0], nil, at, buyReq(a, market.Yes, 40_000), buyReq(b, market.No, 10_000))
		e.tradeAt(ms[1], nil, at, buyReq(a, market.No, 10_000))
		e.tradeAt(ms[0], nil, at.Add(time.Second), buyReq(b, market.Yes, 30_000))
		// Three sales of Ann's position and one of Bob's, in one
		// transaction at one time, then Ann's other market at the same
		// time in another.
		e.tradeAt(ms[0], nil, at.Add(2*time.Second), sellReq(a, market.Yes, buy[0].Shares/4), sellReq(b, market.No, buy[1].Shares),
			sellReq(a, market.Yes, buy[0].Shares/4), sellReq(a, market.Yes, buy[0].Shares/4))
		e.tradeAt(ms[1], nil, at.Add(2*time.Second), sellReq(a, market.No, 100))
		rows := e.checkFigures(leaderboard.ByPnL, ms, a, b)
		if r, _ := rowOf(rows, a); r.Trades != 6 || r.PnL == 0 {
			t.Fatalf("Ann's row %+v", r)
		}
	})

	t.Run("a partner's sub-accounts are not ranked", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("this store has no partner store")
		}
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		p := e.partner("Bookie", 1_000_000)
		if _, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "x-1", MarketID: m.ID, Side: market.Yes, AmountKopecks: 10_000, ClientBetID: "b1"}); err != nil {
			t.Fatal(err)
		}
		a := e.user("Ann", 100_000, 0)
		e.must(e.buy(a, m, market.No, 5_000))
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		rows := e.board(leaderboard.AllTime, leaderboard.ByVolume, 10, time.Now())
		if len(rows) != 1 || rows[0].UserID != a.ID {
			t.Fatalf("only Ann is ranked: %+v", rows)
		}
	})
}
