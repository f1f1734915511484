package server_test

import (
	"testing"
)

// TestBonusMoneyStaysBonus: money credited as bonus cannot reach the
// withdrawable balance by a round trip through a market (a buy with
// use_bonus, then a sale or a void); only winnings are paid to the
// balance.
func TestBonusMoneyStaysBonus(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		withBonus := map[string]any{"use_bonus": true}
		bonusOnly := func(name string) apiUser {
			u := h.register(t, name)
			h.credit(t, u.id, 100_000, true)
			return u
		}
		t.Run("a user with only bonus who buys with use_bonus and sells gets the proceeds as bonus and a balance of 0", func(t *testing.T) {
			u := bonusOnly("seller")
			buy := h.buy(t, u.token, w.a1.ID, "YES", 50_000, withBonus)
			sale := h.sell(t, u.token, w.a1.ID, "YES", buy.Shares)
			if sale.PayoutKopecks <= 0 {
				t.Fatalf("the sale paid %d", sale.PayoutKopecks)
			}
			want := 100_000 - buy.CostKopecks + sale.PayoutKopecks
			if sale.Balance != 0 || sale.BonusBalance != want {
				t.Fatalf("the sale answered balances %d/%d, want 0/%d", sale.Balance, sale.BonusBalance, want)
			}
			if me := h.me(t, u.token); me.Balance != 0 || me.BonusBalance != want || me.TotalBalance != want {
				t.Fatalf("after the sale the user has %d/%d, want 0/%d", me.Balance, me.BonusBalance, want)
			}
		})
		t.Run("a mixed position's sale pays the bonus shares' part to the bonus and the rest to the balance", func(t *testing.T) {
			u := bonusOnly("mixed")
			h.credit(t, u.id, 40_000, false)
			bonusBuy := h.buy(t, u.token, w.a1.ID, "NO", 60_000, withBonus)
			moneyBuy := h.buy(t, u.token, w.a1.ID, "NO", 40_000)
			sale := h.sell(t, u.token, w.a1.ID, "NO", bonusBuy.Shares+moneyBuy.Shares)
			gotBonus := sale.BonusBalance - (100_000 - bonusBuy.CostKopecks)
			gotMoney := sale.Balance - (40_000 - moneyBuy.CostKopecks)
			if gotMoney+gotBonus != sale.PayoutKopecks || gotBonus <= gotMoney || gotMoney <= 0 {
				t.Fatalf("a sale of %d paid %d to the bonus and %d to the balance, with %d of %d shares bonus", sale.PayoutKopecks, gotBonus, gotMoney, bonusBuy.Shares, bonusBuy.Shares+moneyBuy.Shares)
			}
		})
		t.Run("a void refunds a bonus buy to the bonus balance", func(t *testing.T) {
			u := bonusOnly("voided")
			h.buy(t, u.token, w.b1.ID, "YES", 30_000, withBonus)
			h.resolve(t, w.b1.ID, "VOID")
			if me := h.me(t, u.token); me.Balance != 0 || me.BonusBalance != 100_000 {
				t.Fatalf("after the void the user has %d/%d, want 0/100000", me.Balance, me.BonusBalance)
			}
		})
		t.Run("winnings of a bonus buy are paid to the balance", func(t *testing.T) {
			u := bonusOnly("winner")
			buy := h.buy(t, u.token, w.a2.ID, "YES", 20_000, withBonus)
			h.resolve(t, w.a2.ID, "YES")
			if me := h.me(t, u.token); me.Balance != buy.Shares || me.BonusBalance != 100_000-buy.CostKopecks {
				t.Fatalf("after winning %d shares the user has %d/%d, want %d/%d", buy.Shares, me.Balance, me.BonusBalance, buy.Shares, 100_000-buy.CostKopecks)
			}
		})
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("the ledger is not sound: %v", problems)
		}
	})
}
