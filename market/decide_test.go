package market

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
)

func testState(t *testing.T, margin float64, balances map[account.Ref]int64, positions ...*Position) *State {
	t.Helper()
	qy, qn, err := lmsr.InitialQ(10000, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	m := &Market{ID: 7, PoolID: 3, EventID: 1, B: 10000, QYes: qy, QNo: qn, Q0Yes: qy, Q0No: qn, Margin: margin}
	sub, _ := lmsr.SubsidyKopecks(m.Pricer())
	if balances == nil {
		balances = map[account.Ref]int64{}
	}
	balances[account.EscrowAccount(7)] += sub
	return &State{Market: m, Balances: balances, Positions: positions, Now: time.Unix(1700000000, 0).UTC()}
}

func TestDecideTradesBuy(t *testing.T) {
	st := testState(t, 0.03, map[account.Ref]int64{account.UserAccount(1): 1000})
	eff, err := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	r := eff.Results[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	tr := r.Trade
	t.Run("the charge never exceeds the budget and is cost plus fee", func(t *testing.T) {
		if tr.Amount > 1000 || tr.Amount != tr.Cost+tr.Fee || tr.Fee <= 0 {
			t.Fatalf("trade %+v", tr)
		}
	})
	t.Run("the fee is the margin on the cost, rounded up", func(t *testing.T) {
		// ceil(cost*1.03) - cost, computed in integers: ceil(cost*103/100).
		if want := (tr.Cost*103+99)/100 - tr.Cost; tr.Fee != want {
			t.Fatalf("fee %d, want %d", tr.Fee, want)
		}
	})
	t.Run("the postings move exactly the charge out of the user", func(t *testing.T) {
		var out int64
		for _, p := range eff.Trades[0].Postings {
			if p.From != account.UserAccount(1) {
				t.Fatalf("posting from %v", p.From)
			}
			out += p.Amount
		}
		if out != tr.Amount || r.Balances.Balance != 1000-tr.Amount {
			t.Fatalf("moved %d, balance %d, charge %d", out, r.Balances.Balance, tr.Amount)
		}
	})
	t.Run("the input state is not modified", func(t *testing.T) {
		if st.Balances[account.UserAccount(1)] != 1000 || st.Market.QYes != st.Market.Q0Yes {
			t.Fatalf("state changed: %+v %+v", st.Balances, st.Market)
		}
	})
	t.Run("the price moves towards the side bought", func(t *testing.T) {
		if !(tr.PriceAfter > tr.PriceBefore) || eff.Market.QYes != st.Market.QYes+tr.Shares {
			t.Fatalf("price %v -> %v", tr.PriceBefore, tr.PriceAfter)
		}
	})
}

func TestDecideTradesTopUp(t *testing.T) {
	float := account.FloatAccount(9)
	cases := []struct {
		name      string
		user, flt int64
		want      error
		topUp     bool
	}{
		{"a sub-account with enough money pays alone", 5000, 0, nil, false},
		{"what the sub-account lacks comes from the float", 100, 5000, nil, true},
		{"an empty float refuses the bet", 100, 0, account.ErrInsufficientFunds, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := testState(t, 0, map[account.Ref]int64{account.UserAccount(1): c.user, float: c.flt})
			eff, _ := DecideTrades(st, []Request{{UserID: 1, Side: No, Action: ActionBuy, Amount: 2000, Partner: &PartnerOrder{Key: Key{PartnerID: 9, ClientBetID: "b"}, TopUp: true}}})
			r := eff.Results[0]
			if !errors.Is(r.Err, c.want) {
				t.Fatalf("err = %v, want %v", r.Err, c.want)
			}
			if r.Err != nil {
				return
			}
			gotTopUp := eff.Trades[0].Postings[0].From == float
			if gotTopUp != c.topUp {
				t.Fatalf("top-up = %v, want %v (%+v)", gotTopUp, c.topUp, eff.Trades[0].Postings)
			}
			if c.topUp && (r.Balances.Balance != 0 || eff.Trades[0].Postings[0].Amount != r.Trade.Amount-c.user) {
				t.Fatalf("after top-up balance %d, posting %+v", r.Balances.Balance, eff.Trades[0].Postings[0])
			}
		})
	}
}

func TestDecideTradesSellCostBasis(t *testing.T) {
	pos := &Position{ID: 11, UserID: 1, MarketID: 7, Side: Yes, Shares: 3, CostBasis: 100, Bought: 3, Spent: 100}
	st := testState(t, 0, nil, pos)
	st.Market.QYes += 3
	eff, _ := DecideTrades(st, []Request{
		{UserID: 1, Side: Yes, Action: ActionSell, Shares: 1},
		{UserID: 1, Side: Yes, Action: ActionSell, Shares: 1},
		{UserID: 1, Side: Yes, Action: ActionSell, Shares: 1},
	})
	var removed int64
	for i, r := range eff.Results {
		if r.Err != nil {
			t.Fatalf("sale %d: %v", i, r.Err)
		}
	}
	for _, e := range eff.PnL {
		removed += -e.Delta
	}
	var paid int64
	for _, r := range eff.Results {
		paid += r.Trade.Amount
	}
	t.Run("the cost basis leaves in full over the sales, not a kopeck stranded", func(t *testing.T) {
		if removed+paid != 100 {
			t.Fatalf("basis removed %d (payouts %d)", removed+paid, paid)
		}
	})
	t.Run("the last sale closes the position as sold", func(t *testing.T) {
		p := eff.Positions[0]
		if p.Open() || *p.WonSide != -1 || p.Shares != 0 || p.CostBasis != 0 || p.PnL() != paid-100 {
			t.Fatalf("position %+v", p)
		}
	})
	t.Run("a fourth sale would find no position", func(t *testing.T) {
		eff, _ := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionSell, Shares: 4}})
		if !errors.Is(eff.Results[0].Err, ErrInsufficientShares) {
			t.Fatalf("err = %v", eff.Results[0].Err)
		}
	})
}

func TestDecideTradesClosedMarket(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*Market)
	}{
		{"a resolved market refuses trades", func(m *Market) { m.Resolved = true }},
		{"a paused market refuses trades", func(m *Market) { m.Paused = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := testState(t, 0, map[account.Ref]int64{account.UserAccount(1): 1000})
			c.mutate(st.Market)
			eff, _ := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 100}})
			if !errors.Is(eff.Results[0].Err, ErrClosed) || eff.Market != nil || len(eff.Trades) != 0 {
				t.Fatalf("effects %+v, err %v", eff, eff.Results[0].Err)
			}
		})
	}
}

func TestDecideSettlement(t *testing.T) {
	a := &Position{ID: 1, UserID: 1, MarketID: 7, Side: Yes, Shares: 500, CostBasis: 260, Bought: 500, Spent: 260}
	b := &Position{ID: 2, UserID: 2, MarketID: 7, Side: No, Shares: 300, CostBasis: 160, Bought: 300, Spent: 160}
	st := testState(t, 0, nil, a, b)
	st.Market.QYes += 500
	st.Market.QNo += 300
	st.Balances[account.EscrowAccount(7)] += 420
	escrow := st.Balances[account.EscrowAccount(7)]
	eff, err := DecideSettlement(st, Settlement{Won: Yes})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the winner is paid a kopeck a share and the rest returns to the treasury", func(t *testing.T) {
		var toWinner, toTreasury int64
		for _, p := range eff.Postings {
			switch p.To {
			case account.UserAccount(1):
				toWinner += p.Amount
			case account.Treasury:
				toTreasury += p.Amount
			default:
				t.Fatalf("unexpected posting %+v", p)
			}
		}
		if toWinner != 500 || toTreasury != escrow-500 {
			t.Fatalf("winner %d, treasury %d, escrow %d", toWinner, toTreasury, escrow)
		}
	})
	t.Run("every position closes with its P&L", func(t *testing.T) {
		if len(eff.Positions) != 2 || eff.Positions[0].PnL() != 240 || eff.Positions[1].PnL() != -160 || *eff.Positions[1].WonSide != 1 {
			t.Fatalf("positions %+v %+v", eff.Positions[0], eff.Positions[1])
		}
	})
	t.Run("the pool learns which outcome won", func(t *testing.T) {
		if eff.PoolWonSide == nil || *eff.PoolWonSide != st.Market.OutcomeIndex || !eff.Market.Resolved {
			t.Fatalf("pool won side %v", eff.PoolWonSide)
		}
	})
	t.Run("a resolved market cannot settle again", func(t *testing.T) {
		st.Market.Resolved = true
		if _, err := DecideSettlement(st, Settlement{Won: No}); !errors.Is(err, ErrResolved) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestMulDivRound(t *testing.T) {
	cases := []struct{ a, b, c, want int64 }{
		{100, 1, 3, 33},
		{100, 2, 3, 67},
		{1, 1, 2, 1},
		{1 << 62, 1<<40 - 1, 1 << 40, (1 << 62) - (1 << 22)},
		{0, 5, 9, 0},
	}
	for _, c := range cases {
		if got := mulDivRound(c.a, c.b, c.c); got != c.want {
			t.Errorf("mulDivRound(%d, %d, %d) = %d, want %d", c.a, c.b, c.c, got, c.want)
		}
	}
}
