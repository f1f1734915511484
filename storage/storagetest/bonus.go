package storagetest

import (
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// openPosition is u's one open position on market m.
func (e *env) openPosition(u *account.User, m int64) *market.PositionDetail {
	e.t.Helper()
	ps, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range ps {
		if p.MarketID == m {
			return p
		}
	}
	e.t.Fatalf("user %d holds no open position on market %d: %+v", u.ID, m, ps)
	return nil
}

// mustTrade executes req on market m and returns the trade.
func (e *env) mustTrade(m int64, req market.Request) *market.Trade {
	e.t.Helper()
	res, err := e.markets.Execute(e.ctx, m, req)
	if err != nil {
		e.t.Fatalf("%+v: %v", req, err)
	}
	return res.Trade
}

func testBonus(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Run("a position keeps its bonus shares and bonus money, and a sale returns their part to the bonus", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		u := e.user("mixed", 2000, 3000)
		bonusBuy := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 3000, UseBonus: true})
		realBuy := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000})
		p := e.openPosition(u, m.ID)
		if p.Shares != bonusBuy.Shares+realBuy.Shares || p.BonusShares != bonusBuy.Shares || p.BonusNet != bonusBuy.Amount || !p.UseBonus {
			t.Fatalf("the position reads %+v, want %d bonus shares of %d bought for %d bonus", p.Position, bonusBuy.Shares, bonusBuy.Shares+realBuy.Shares, bonusBuy.Amount)
		}
		before := e.balances(u)
		sale := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionSell, Shares: p.Shares / 3})
		after := e.balances(u)
		q := e.openPosition(u, m.ID)
		sold := p.BonusShares - q.BonusShares
		toBonus, toUser := after.Bonus-before.Bonus, after.Balance-before.Balance
		if toBonus+toUser != sale.Amount || toBonus <= 0 || toUser <= 0 {
			t.Fatalf("the sale of %d paid %d to the bonus and %d to the balance", sale.Amount, toBonus, toUser)
		}
		if d := toBonus*sale.Shares - sale.Amount*sold; 2*d > sale.Shares || -2*d > sale.Shares {
			t.Fatalf("the sale of %d shares (%d bonus) paid %d of %d to the bonus", sale.Shares, sold, toBonus, sale.Amount)
		}
		if q.BonusNet != p.BonusNet-toBonus || q.BonusShares > q.Shares {
			t.Fatalf("after the sale the position reads %+v", q.Position)
		}
		e.audit()
	})
	t.Run("shares bought with bonus alone sell back into the bonus balance", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		u := e.user("bonus-only", 0, 5000)
		buy := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 4000, UseBonus: true})
		sale := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.No, Action: market.ActionSell, Shares: buy.Shares})
		if b := e.balances(u); b.Balance != 0 || b.Bonus != 5000-buy.Amount+sale.Amount {
			t.Fatalf("balances %+v after a bonus buy of %d and a sale for %d", b, buy.Amount, sale.Amount)
		}
		e.audit()
	})
	for _, exclusive := range []bool{false, true} {
		t.Run(map[bool]string{false: "a void refunds bonus money to the bonus balance", true: "a void of an exclusive pool refunds bonus money to the bonus balance"}[exclusive], func(t *testing.T) {
			e := newEnv(t, newStores)
			var m *market.Market
			if exclusive {
				m = e.exclusiveEvent(e.creator(), 0.03, 10000, 0.5, 0.3, 0.2).Pools[0].Markets[1]
			} else {
				m = e.event(e.creator(), 0.03, 10000, 0.5).Pools[0].Markets[0]
			}
			bonusOnly, mixed, money := e.user("bonus", 0, 5000), e.user("mixed", 3000, 3000), e.user("money", 3000, 0)
			e.mustTrade(m.ID, market.Request{UserID: bonusOnly.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 4000, UseBonus: true})
			e.mustTrade(m.ID, market.Request{UserID: mixed.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 2000, UseBonus: true})
			e.mustTrade(m.ID, market.Request{UserID: mixed.ID, Side: market.No, Action: market.ActionBuy, Amount: 1500})
			e.mustTrade(m.ID, market.Request{UserID: mixed.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000})
			e.mustTrade(m.ID, market.Request{UserID: mixed.ID, Side: market.Yes, Action: market.ActionSell, Shares: 700})
			e.mustTrade(m.ID, market.Request{UserID: money.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 2500})
			void := market.Settlement{Void: true}
			want := map[int64]account.Balances{}
			for _, u := range []*account.User{bonusOnly, mixed, money} {
				b := e.balances(u)
				ps, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					b.Bonus += void.BonusPayout(&p.Position)
					b.Balance += void.Payout(&p.Position) - void.BonusPayout(&p.Position)
				}
				want[u.ID] = b
			}
			if want[bonusOnly.ID].Balance != 0 || want[mixed.ID].Bonus == e.balances(mixed).Bonus {
				t.Fatalf("the case is not what it means to test: %+v", want)
			}
			if err := e.markets.Resolve(e.ctx, m.ID, "VOID"); err != nil {
				t.Fatal(err)
			}
			for _, u := range []*account.User{bonusOnly, mixed, money} {
				if got := e.balances(u); got != want[u.ID] {
					t.Fatalf("user %s: balances %+v after the void, want %+v", u.Name, got, want[u.ID])
				}
			}
			e.audit()
		})
	}
	t.Run("winnings of shares bought with bonus are paid to the balance", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.02, 10000, 0.5).Pools[0].Markets[0]
		u := e.user("winner", 0, 5000)
		buy := e.mustTrade(m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 4000, UseBonus: true})
		if err := e.markets.Resolve(e.ctx, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if b := e.balances(u); b.Balance != buy.Shares || b.Bonus != 5000-buy.Amount {
			t.Fatalf("balances %+v after winning %d shares bought for %d bonus", b, buy.Shares, buy.Amount)
		}
		e.audit()
	})
}
