package storagetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/stats"
	"github.com/predictkit/predictkit/wallet"
)

// Stats is a store's statistics: aggregates kept as their changes commit
// (storage/memory), or applied from the change log by a consumer
// (storage/postgres).
type Stats interface {
	stats.Store
	stats.Applier
	// StatsCursor is the last change-log entry the aggregates count.
	StatsCursor(ctx context.Context) (int64, error)
}

// StatsRebuilder is a Stats whose aggregates can be rebuilt from its
// tables: after RebuildStats the next ApplyStats fills them again.
type StatsRebuilder interface {
	RebuildStats(ctx context.Context) error
}

// statsCaughtUp applies the change log to the statistics until nothing is
// left, one transaction at a time, and checks the cursor reached the
// log's last entry.
func (e *env) statsCaughtUp() Stats {
	e.t.Helper()
	s := e.stores.Stats
	for {
		n, err := s.ApplyStats(e.ctx, 1)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if e.stores.Changes != nil {
		c, err := s.StatsCursor(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if last := e.last(); c != last {
			e.t.Fatalf("the statistics' cursor is at %d, the log at %d", c, last)
		}
	}
	return s
}

// statsToday is today's figures and the totals once the consumer caught up.
func (e *env) statsToday() (stats.Day, stats.Totals) {
	e.t.Helper()
	e.statsCaughtUp()
	svc := stats.NewService(e.stores.Stats)
	o, err := svc.Overview(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.Today, o.Totals
}

// tradeFigures are the statistics' figures of the trades of ms, from the
// store's own records: volume, fees, trades, distinct traders and open
// interest (the markets still open).
func (e *env) tradeFigures(ms ...*market.Market) (want stats.Day) {
	e.t.Helper()
	traders := map[int64]bool{}
	for _, m := range ms {
		ts, err := e.stores.Markets.Trades(e.ctx, m.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		open := !e.market(m.ID).Resolved
		for _, t := range ts {
			want.Volume += t.Cost
			want.Fees += t.Fee
			want.Trades++
			traders[t.UserID] = true
			if open && t.Action == market.ActionBuy {
				want.OpenInterest += t.Cost
			} else if open {
				want.OpenInterest -= t.Amount
			}
		}
	}
	want.ActiveTraders = int64(len(traders))
	return want
}

func testStats(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Stats == nil {
		t.Skip("this store keeps no statistics")
	}
	setup := func(t *testing.T) *env {
		e := newEnv(t, newStores)
		return e
	}

	t.Run("trades, fees, distinct traders, new users, a credited deposit and a paid withdrawal count on their day", func(t *testing.T) {
		we := newWdEnv(t, newStores)
		e := we.env
		if e.stores.Deposits == nil {
			t.Skip("no deposits store")
		}
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		m, other := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		ba := e.must(e.buy(a, m, market.Yes, 50_000))
		e.must(e.buy(b, m, market.No, 30_000))
		e.must(e.buy(a, other, market.Yes, 20_000))
		e.must(e.sell(a, m, market.Yes, ba.Trade.Shares/3))

		now := time.Now().UTC().Truncate(time.Microsecond)
		d := deposit.Deposit{UserID: b.ID, Chain: wallet.BSC, TxHash: "0xstats", LogIndex: 1, BlockNumber: 5,
			BlockHash: fmt.Sprintf("0x%064x", 5), Address: "0x0000000000000000000000000000000000000001",
			Units: "12500000000000000000", Decimals: 18, AmountKopecks: 1250, ConfirmationsRequired: 1,
			Status: deposit.StatusPending, CreatedAt: now}
		news, err := e.stores.Deposits.RecordScan(e.ctx, wallet.BSC, deposit.Scan{From: 5, To: 5, Head: 5,
			Blocks: map[int64]string{5: d.BlockHash}, Keep: 3, Deposits: []deposit.Deposit{d}})
		if err != nil || len(news) != 1 {
			t.Fatalf("record the deposit: %+v, %v", news, err)
		}
		if _, ok, err := e.stores.Deposits.CreditDeposit(e.ctx, news[0].ID, now); !ok || err != nil {
			t.Fatalf("credit: %v, %v", ok, err)
		}
		// A pending deposit counts nothing.
		d.TxHash, d.AmountKopecks = "0xpending", 9999
		if _, err := e.stores.Deposits.RecordScan(e.ctx, wallet.BSC, deposit.Scan{From: 6, To: 6, Head: 6,
			Blocks: map[int64]string{6: fmt.Sprintf("0x%064x", 6)}, Keep: 4, Deposits: []deposit.Deposit{d}}); err != nil {
			t.Fatal(err)
		}
		w := we.mustRequest(a, 20_000)
		if _, err := we.wd.Approve(e.ctx, w.ID, payoutHash(w.ID)); err != nil {
			t.Fatal(err)
		}
		// A cancelled one counts nothing.
		if _, err := we.wd.Cancel(e.ctx, a.ID, we.mustRequest(a, 5_000).ID); err != nil {
			t.Fatal(err)
		}

		today, totals := e.statsToday()
		want := e.tradeFigures(m, other)
		want.Date, want.NewUsers, want.Deposits, want.Withdrawals = stats.DayOf(now), 3, 1250, 20_000
		if today != want {
			t.Fatalf("today is %+v, want %+v", today, want)
		}
		wantTotals := stats.Totals{Volume: want.Volume, Fees: want.Fees, Trades: want.Trades, Traders: 2, Users: 3,
			Deposits: 1250, Withdrawals: 20_000, OpenInterest: want.OpenInterest}
		if totals != wantTotals {
			t.Fatalf("totals are %+v, want %+v", totals, wantTotals)
		}
		if want.Trades != 4 || want.Fees == 0 || want.OpenInterest <= 0 {
			t.Fatalf("the trades' own figures are implausible: %+v", want)
		}
	})

	t.Run("open interest rises with buys, falls with sells, and leaves at a resolution and at a void", func(t *testing.T) {
		e := setup(t)
		c := e.creator()
		ev1, ev2 := e.event(c, 0.02, 20000, 0.5), e.event(c, 0.02, 20000, 0.5)
		m1, m2 := ev1.Pools[0].Markets[0], ev2.Pools[0].Markets[0]
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		oi := func() int64 {
			t.Helper()
			today, totals := e.statsToday()
			if today.OpenInterest != totals.OpenInterest {
				t.Fatalf("today's open interest %d is not the current one %d", today.OpenInterest, totals.OpenInterest)
			}
			return today.OpenInterest
		}
		if got := oi(); got != 0 {
			t.Fatalf("open interest before any trade: %d", got)
		}
		ba := e.must(e.buy(a, m1, market.Yes, 40_000))
		if got := oi(); got != ba.Trade.Cost || got != ba.Trade.Amount-ba.Trade.Fee {
			t.Fatalf("after a buy of cost %d (charge %d, fee %d): %d", ba.Trade.Cost, ba.Trade.Amount, ba.Trade.Fee, got)
		}
		bb := e.must(e.buy(b, m2, market.No, 30_000))
		if got := oi(); got != ba.Trade.Cost+bb.Trade.Cost {
			t.Fatalf("after a second buy: %d", got)
		}
		s := e.must(e.sell(a, m1, market.Yes, ba.Trade.Shares/2))
		after := ba.Trade.Cost + bb.Trade.Cost - s.Trade.Amount
		if got := oi(); got != after || got != e.tradeFigures(m1, m2).OpenInterest {
			t.Fatalf("after a sale paying %d: %d, want %d", s.Trade.Amount, got, after)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev1.ID, m1.PoolID, m1.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if got := oi(); got != bb.Trade.Cost {
			t.Fatalf("after m1 resolved: %d, want m2's %d", got, bb.Trade.Cost)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev2.ID, m2.PoolID, m2.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		if got := oi(); got != 0 {
			t.Fatalf("after m2 voided: %d, want 0", got)
		}
		days, err := stats.NewService(e.statsCaughtUp()).Daily(e.ctx, "", "")
		if err != nil || len(days) != stats.DefaultDays || days[len(days)-1].Trades != 3 || days[0].OpenInterest != 0 {
			t.Fatalf("the last 30 days: %v, %+v", err, days)
		}
	})

	t.Run("an exclusive pool's resolution takes every market's open interest out", func(t *testing.T) {
		e := setup(t)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.02, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		a, b := e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0)
		e.must(e.buy(a, ms[0], market.Yes, 20_000))
		e.must(e.buy(b, ms[1], market.Yes, 20_000))
		e.must(e.buy(b, ms[2], market.No, 10_000))
		if today, _ := e.statsToday(); today.OpenInterest != e.tradeFigures(ms...).OpenInterest || today.OpenInterest <= 0 {
			t.Fatalf("open interest %d, the trades say %d", today.OpenInterest, e.tradeFigures(ms...).OpenInterest)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[0].PoolID, ms[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if today, totals := e.statsToday(); today.OpenInterest != 0 || totals.OpenInterest != 0 || today.Trades != 3 {
			t.Fatalf("after the pool resolved: today %+v, totals %+v", today, totals)
		}
	})

	t.Run("the top markets are today's by volume, named, and a partner's sub-account is no new user", func(t *testing.T) {
		e := setup(t)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5, 0.5)
		ms := ev.Pools[0].Markets
		a := e.user("Ann", 1_000_000, 0)
		e.must(e.buy(a, ms[1], market.Yes, 30_000))
		e.must(e.buy(a, ms[0], market.Yes, 10_000))
		traders := int64(1)
		if e.partners != nil {
			p := e.partner("Bookie", 1_000_000)
			if _, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "x-1", MarketID: ms[0].ID, Side: market.No, AmountKopecks: 5_000, ClientBetID: "b1"}); err != nil {
				t.Fatal(err)
			}
			traders++
		}
		e.statsCaughtUp()
		o, err := stats.NewService(e.stores.Stats).Overview(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if o.Totals.Users != 2 || o.Today.NewUsers != 2 || o.Totals.Traders != traders || o.Today.ActiveTraders != traders {
			t.Fatalf("users %d (today %d), traders %d (today %d); want 2 users and %d traders", o.Totals.Users, o.Today.NewUsers,
				o.Totals.Traders, o.Today.ActiveTraders, traders)
		}
		if len(o.TopMarkets) != 2 || o.TopMarkets[0].MarketID != ms[1].ID || o.TopMarkets[1].MarketID != ms[0].ID {
			t.Fatalf("top markets %+v; want %d then %d", o.TopMarkets, ms[1].ID, ms[0].ID)
		}
		top := o.TopMarkets[0]
		if top.EventID != ev.ID || top.EventName != ev.Name || top.MarketName != ms[1].Name || top.Trades != 1 ||
			top.Volume != e.tradeFigures(ms[1]).Volume {
			t.Fatalf("top market %+v", top)
		}
	})

	t.Run("appliers racing count every entry once, and a rebuild from the tables equals the applied figures", func(t *testing.T) {
		e := setup(t)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		ms := ev.Pools[0].Markets
		users := []*account.User{e.user("Ann", 1_000_000, 0), e.user("Bob", 1_000_000, 0), e.user("Cid", 1_000_000, 0)}
		// No apply yet: the appliers race for the first fill too.
		var wg sync.WaitGroup
		stop := make(chan struct{})
		errs := make(chan error, 8)
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := e.stores.Stats.ApplyStats(e.ctx, 3); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		e.must(e.buy(users[0], ms[1], market.No, 2_000))
		for i := range 30 {
			u, m := users[i%3], ms[i%2]
			r := e.must(e.buy(u, m, market.Yes, int64(1_000+i*100)))
			if i%4 == 0 {
				e.must(e.sell(u, m, market.Yes, r.Trade.Shares/2))
			}
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[0].PoolID, ms[0].ID, "NO"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		today, totals := e.statsToday()
		want := e.tradeFigures(ms...)
		want.Date, want.NewUsers = today.Date, 4
		if today != want {
			t.Fatalf("today is %+v, want %+v", today, want)
		}
		rb, ok := e.stores.Stats.(StatsRebuilder)
		if !ok {
			return
		}
		svc := stats.NewService(e.stores.Stats)
		daysBefore, err := svc.Daily(e.ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		topBefore, err := e.stores.Stats.StatsTopMarkets(e.ctx, today.Date, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := rb.RebuildStats(e.ctx); err != nil {
			t.Fatal(err)
		}
		today2, totals2 := e.statsToday()
		if today2 != today || totals2 != totals {
			t.Fatalf("rebuilt: today %+v, totals %+v; applied: %+v, %+v", today2, totals2, today, totals)
		}
		daysAfter, err := svc.Daily(e.ctx, "", "")
		if err != nil || fmt.Sprint(daysAfter) != fmt.Sprint(daysBefore) {
			t.Fatalf("rebuilt days %+v (%v), applied %+v", daysAfter, err, daysBefore)
		}
		topAfter, err := e.stores.Stats.StatsTopMarkets(e.ctx, today.Date, 10)
		if err != nil || fmt.Sprint(topAfter) != fmt.Sprint(topBefore) {
			t.Fatalf("rebuilt top markets %+v (%v), applied %+v", topAfter, err, topBefore)
		}
	})
}
