package market

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
)

// TestDecideBuyChecksTheMoneyFirst: a payer who cannot pay a buy's amount
// is told so (insufficient funds), even when the market maker would also
// refuse the amount for the price bound; a payer who can pay still hears
// about the price bound. testState's market has b = 10,000, so 10^9
// kopecks is far past the price bound.
func TestDecideBuyChecksTheMoneyFirst(t *testing.T) {
	const huge = 1_000_000_000
	user, bonus, float := account.UserAccount(1), account.BonusAccount(1), account.FloatAccount(9)
	partnerOrder := &PartnerOrder{Key: Key{PartnerID: 9, ClientBetID: "b"}, TopUp: true}
	cases := []struct {
		name     string
		balances map[account.Ref]int64
		req      Request
		want     error
	}{
		{"a buy of 10^9 by a user holding 10^5 is insufficient funds",
			map[account.Ref]int64{user: 100_000}, Request{Amount: huge}, account.ErrInsufficientFunds},
		{"a buy of 10^9 by a user holding 2 × 10^9 passes the price bound and is refused as a trade",
			map[account.Ref]int64{user: 2 * huge}, Request{Amount: huge}, ErrTradeRefused},
		{"a bonus buy beyond the bonus balance is insufficient funds, however large the balance",
			map[account.Ref]int64{user: 2 * huge, bonus: 100_000}, Request{Amount: huge, UseBonus: true}, account.ErrInsufficientFunds},
		{"a bonus buy the bonus balance can pay passes the price bound and is refused as a trade",
			map[account.Ref]int64{bonus: 2 * huge}, Request{Amount: huge, UseBonus: true}, ErrTradeRefused},
		{"a partner's bet that the sub-account and the float together cannot pay is insufficient funds",
			map[account.Ref]int64{user: 100_000, float: 100_000}, Request{Amount: huge, Partner: partnerOrder}, account.ErrInsufficientFunds},
		{"a partner's bet the float can pay passes the price bound and is refused as a trade",
			map[account.Ref]int64{user: 100_000, float: huge}, Request{Amount: huge, Partner: partnerOrder}, ErrTradeRefused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := testState(t, 0.03, c.balances)
			r := c.req
			r.UserID, r.Side, r.Action = 1, Yes, ActionBuy
			eff, err := DecideTrades(st, []Request{r})
			if err != nil {
				t.Fatal(err)
			}
			if got := eff.Results[0].Err; !errors.Is(got, c.want) {
				t.Fatalf("err = %v, want %v", got, c.want)
			}
			if len(eff.Trades) != 0 || eff.Market != nil {
				t.Fatalf("a refused buy left effects: %+v", eff)
			}
		})
	}
}

// TestDecideBuyNeedsTheChargeNotTheAmount: the payer needs the charge,
// which may be less than the amount; a buy the payer can pay the charge
// of is accepted as before.
func TestDecideBuyNeedsTheChargeNotTheAmount(t *testing.T) {
	st := testState(t, 0.03, nil)
	var amount, charge int64
	for a := int64(2); a < 10_000; a++ {
		q, err := lmsr.BuyForSpend(st.Market.Pricer(), Yes, a, 0.03)
		if err == nil && q.Charge < a {
			amount, charge = a, q.Charge
			break
		}
	}
	if amount == 0 {
		t.Fatal("no amount below 10,000 whose charge is less than it")
	}
	t.Run("a user holding the charge but less than the amount buys", func(t *testing.T) {
		st := testState(t, 0.03, map[account.Ref]int64{account.UserAccount(1): charge})
		eff, _ := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionBuy, Amount: amount}})
		if r := eff.Results[0]; r.Err != nil || r.Trade.Amount != charge || r.Balances.Balance != 0 {
			t.Fatalf("amount %d, charge %d: %+v", amount, charge, r)
		}
	})
	t.Run("a user holding a kopeck less than the charge is insufficient funds", func(t *testing.T) {
		st := testState(t, 0.03, map[account.Ref]int64{account.UserAccount(1): charge - 1})
		eff, _ := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionBuy, Amount: amount}})
		if err := eff.Results[0].Err; !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("err = %v", err)
		}
	})
}
