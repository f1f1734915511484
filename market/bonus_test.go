package market

import (
	"math/rand/v2"
	"testing"

	"github.com/predictkit/predictkit/account"
)

// moved sums the postings of eff's trades (or its settlement) into each of
// user 1's accounts.
func moved(eff *Effects) (toUser, toBonus int64) {
	ps := eff.Postings
	for _, te := range eff.Trades {
		ps = append(ps, te.Postings...)
	}
	for _, p := range ps {
		switch p.To {
		case account.UserAccount(1):
			toUser += p.Amount
		case account.BonusAccount(1):
			toBonus += p.Amount
		}
	}
	return toUser, toBonus
}

func TestSaleProceedsOfBonusSharesStayBonus(t *testing.T) {
	for _, c := range []struct {
		name               string
		bonusBuy, realBuy  int64
		sell               func(shares int64) []int64 // the shares of each sale, of a position of shares
		wantUser, wantBoth bool
	}{
		{"shares bought with bonus sell back into the bonus balance", 3000, 0, func(n int64) []int64 { return []int64{n} }, false, false},
		{"shares bought with money sell back into the balance", 0, 3000, func(n int64) []int64 { return []int64{n} }, true, false},
		{"a mixed position sold whole splits its proceeds", 3000, 1000, func(n int64) []int64 { return []int64{n} }, true, true},
		{"a mixed position sold in uneven parts splits every sale", 1000, 2500, func(n int64) []int64 { return []int64{1, 7, n / 3, n - 8 - n/3} }, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := testState(t, 0.03, map[account.Ref]int64{account.UserAccount(1): c.realBuy, account.BonusAccount(1): c.bonusBuy})
			var reqs []Request
			if c.bonusBuy > 0 {
				reqs = append(reqs, Request{UserID: 1, Side: Yes, Action: ActionBuy, Amount: c.bonusBuy, UseBonus: true})
			}
			if c.realBuy > 0 {
				reqs = append(reqs, Request{UserID: 1, Side: Yes, Action: ActionBuy, Amount: c.realBuy})
			}
			buys, err := DecideTrades(st, reqs)
			if err != nil {
				t.Fatal(err)
			}
			var bonusShares, shares, bonusCost int64
			for _, r := range buys.Results {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				shares += r.Trade.Shares
				if r.Trade.UseBonus {
					bonusShares += r.Trade.Shares
					bonusCost += r.Trade.Amount
				}
			}
			pos := buys.Positions[0]
			if pos.BonusShares != bonusShares || pos.Shares != shares || pos.BonusNet != bonusCost {
				t.Fatalf("after the buys the position is %+v, want %d of %d shares bonus", pos, bonusShares, shares)
			}
			next := &State{Market: buys.Market, Balances: map[account.Ref]int64{account.EscrowAccount(7): st.Balances[account.EscrowAccount(7)] + c.bonusBuy + c.realBuy}, Positions: []*Position{pos}, Now: st.Now}
			var sells []Request
			for _, n := range c.sell(shares) {
				sells = append(sells, Request{UserID: 1, Side: Yes, Action: ActionSell, Shares: n})
			}
			eff, err := DecideTrades(next, sells)
			if err != nil {
				t.Fatal(err)
			}
			held, heldBonus := shares, bonusShares
			for i, r := range eff.Results {
				if r.Err != nil {
					t.Fatalf("sale %d: %v", i, r.Err)
				}
				var toUser, toBonus int64
				for _, p := range eff.Trades[i].Postings {
					switch p.To {
					case account.UserAccount(1):
						toUser += p.Amount
					case account.BonusAccount(1):
						toBonus += p.Amount
					}
				}
				n := r.Trade.Shares
				sold := soldBonusShares(&Position{Shares: held, BonusShares: heldBonus}, n)
				if toUser+toBonus != r.Trade.Amount {
					t.Fatalf("sale %d paid %d + %d, its amount is %d", i, toUser, toBonus, r.Trade.Amount)
				}
				// The bonus part is the payout's share of bonus shares, to half
				// a kopeck: |toBonus·n − payout·sold| ≤ n/2.
				if d := toBonus*n - r.Trade.Amount*sold; 2*d > n || -2*d > n {
					t.Fatalf("sale %d of %d shares (%d bonus) paid %d of %d to the bonus", i, n, sold, toBonus, r.Trade.Amount)
				}
				held, heldBonus = held-n, heldBonus-sold
			}
			toUser, toBonus := moved(eff)
			if (toUser > 0) != c.wantUser || (toBonus > 0 && toUser > 0) != c.wantBoth || (c.bonusBuy > 0) != (toBonus > 0) {
				t.Fatalf("the sales paid %d to the balance and %d to the bonus", toUser, toBonus)
			}
			if p := eff.Positions[0]; p.Open() || p.BonusShares != 0 || heldBonus != 0 {
				t.Fatalf("the position sold out reads %+v", p)
			}
		})
	}
}

func TestRandomTradesKeepBonusMoneyBonus(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 39))
	for round := range 40 {
		st := testState(t, 0.02, map[account.Ref]int64{account.UserAccount(1): 50_000, account.BonusAccount(1): 50_000})
		total := func(b map[account.Ref]int64) int64 {
			var s int64
			for _, v := range b {
				s += v
			}
			return s
		}
		start := total(st.Balances)
		var positions []*Position
		var realIn, realOut, bonusIn, bonusOut int64
		for range 30 {
			var r Request
			if len(positions) > 0 && positions[0].Shares > 0 && rng.IntN(2) == 0 {
				r = Request{UserID: 1, Side: Yes, Action: ActionSell, Shares: 1 + rng.Int64N(positions[0].Shares)}
			} else {
				r = Request{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 100 + rng.Int64N(3000), UseBonus: rng.IntN(2) == 0}
			}
			eff, err := DecideTrades(&State{Market: st.Market, Balances: st.Balances, Positions: positions, Now: st.Now}, []Request{r})
			if err != nil {
				t.Fatal(err)
			}
			if eff.Results[0].Err != nil {
				continue
			}
			for _, p := range eff.Trades[0].Postings {
				switch {
				case p.From == account.UserAccount(1):
					realIn += p.Amount
				case p.From == account.BonusAccount(1):
					bonusIn += p.Amount
				case p.To == account.UserAccount(1):
					realOut += p.Amount
				case p.To == account.BonusAccount(1):
					bonusOut += p.Amount
				}
			}
			if err := account.Apply(st.Balances, eff.Trades[0].Postings); err != nil {
				t.Fatal(err)
			}
			st.Market = eff.Market
			p := eff.Positions[0]
			if p.BonusShares < 0 || p.BonusShares > p.Shares {
				t.Fatalf("round %d: the position holds %d bonus shares of %d", round, p.BonusShares, p.Shares)
			}
			positions = nil
			if p.Open() {
				positions = []*Position{p}
			}
			if total(st.Balances) != start {
				t.Fatalf("round %d: money went from %d to %d", round, start, total(st.Balances))
			}
		}
		// Sell what is left: every share's money is back, and the bonus's
		// money went to the bonus except for rounding.
		if len(positions) > 0 {
			p := positions[0]
			eff, err := DecideTrades(&State{Market: st.Market, Balances: st.Balances, Positions: positions, Now: st.Now},
				[]Request{{UserID: 1, Side: Yes, Action: ActionSell, Shares: p.Shares}})
			if err != nil || eff.Results[0].Err != nil {
				t.Fatal(err, eff.Results[0].Err)
			}
			toUser, toBonus := moved(eff)
			realOut, bonusOut = realOut+toUser, bonusOut+toBonus
		}
		if realIn == 0 && realOut != 0 || bonusIn == 0 && bonusOut != 0 {
			t.Fatalf("round %d: money in %d, bonus in %d; out %d, bonus out %d", round, realIn, bonusIn, realOut, bonusOut)
		}
	}
}

func TestVoidRefundsBonusMoneyToTheBonusBalance(t *testing.T) {
	for _, c := range []struct {
		name                string
		pos                 Position
		wantBonus, wantUser int64
	}{
		{"a position bought with bonus gets its refund in bonus",
			Position{Shares: 500, CostBasis: 300, Bought: 500, Spent: 300, BonusShares: 500, BonusNet: 300}, 300, 0},
		{"a position bought with money gets its refund in money",
			Position{Shares: 500, CostBasis: 300, Bought: 500, Spent: 300}, 0, 300},
		{"a mixed position gets each its own net cost back",
			Position{Shares: 900, CostBasis: 700, Bought: 900, Spent: 700, BonusShares: 400, BonusNet: 250}, 250, 450},
		{"bonus shares sold at a loss are refunded in bonus, not money",
			Position{Shares: 100, CostBasis: 60, Bought: 1000, Spent: 1600, Returned: 500, BonusShares: 10, BonusNet: 540}, 540, 560},
		{"bonus shares sold at a profit leave the money its own net cost less that profit",
			Position{Shares: 100, CostBasis: 80, Bought: 300, Spent: 600, Returned: 400, BonusShares: 0, BonusNet: -100}, 0, 200},
		{"a bonus net cost above the refund takes the whole refund",
			Position{Shares: 100, CostBasis: 80, Bought: 300, Spent: 600, Returned: 400, BonusShares: 50, BonusNet: 350}, 200, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.pos
			p.ID, p.UserID, p.MarketID, p.Side = 1, 1, 7, Yes
			// The escrow pays part and the fee account the rest: the bonus
			// part comes first from the same sources in the same order.
			st := voidState(t, 150, 10_000, &p)
			eff, err := DecideSettlement(st, Settlement{Void: true})
			if err != nil {
				t.Fatal(err)
			}
			toUser, toBonus := moved(eff)
			if toBonus != c.wantBonus || toUser != c.wantUser {
				t.Fatalf("refunded %d to the bonus and %d to the balance, want %d and %d", toBonus, toUser, c.wantBonus, c.wantUser)
			}
			var fromEscrow int64
			for _, ps := range eff.Postings {
				if ps.From == account.EscrowAccount(7) && ps.Reason == "refund" {
					fromEscrow += ps.Amount
				}
			}
			if fromEscrow != min(150, c.wantBonus+c.wantUser) {
				t.Fatalf("the escrow paid %d", fromEscrow)
			}
		})
	}
}

func TestWinningsOfBonusSharesArePaidToTheBalance(t *testing.T) {
	p := &Position{ID: 1, UserID: 1, MarketID: 7, Side: Yes, Shares: 500, CostBasis: 260, Bought: 500, Spent: 260, UseBonus: true, BonusShares: 500, BonusNet: 260}
	st := testState(t, 0, nil, p)
	st.Market.QYes += 500
	st.Balances[account.EscrowAccount(7)] += 260
	eff, err := DecideSettlement(st, Settlement{Won: Yes})
	if err != nil {
		t.Fatal(err)
	}
	if toUser, toBonus := moved(eff); toUser != 500 || toBonus != 0 {
		t.Fatalf("the winnings went %d to the balance and %d to the bonus, want all 500 to the balance", toUser, toBonus)
	}
}

func TestAnAnswerAddedLaterSplitsTheBonusShareExactly(t *testing.T) {
	st := examplePool()
	st.Positions[1].BonusShares, st.Positions[1].BonusNet, st.Positions[1].UseBonus = 4960, 1000, true // all bonus
	st.Positions[2].BonusShares, st.Positions[2].BonusNet, st.Positions[2].UseBonus = 1000, 777, true  // part bonus
	eff, err := DecideAnswer(st, NewAnswer{Name: "Cid", Probability: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	net := map[int64]int64{}
	for _, p := range eff.Positions {
		want := map[int64]int64{10: 4960, 11: 1000}[p.UserID]
		if p.BonusShares != want || p.BonusShares > p.Shares || !p.UseBonus {
			t.Fatalf("position %+v holds %d bonus shares, want %d", p, p.BonusShares, want)
		}
		net[p.UserID] += p.BonusNet
	}
	if net[10] != 1000 || net[11] != 777 {
		t.Fatalf("the bonus net costs sum to %v, want 1,000 and 777 as before the split", net)
	}
}
