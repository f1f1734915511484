package market

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/social"
)

func testState(t testing.TB, margin float64, balances map[account.Ref]int64, positions ...*Position) *State {
	t.Helper()
	qy, qn, err := lmsr.InitialQ(10000, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0).UTC()
	m := &Market{ID: 7, PoolID: 3, EventID: 1, B: 10000, QYes: qy, QNo: qn, Q0Yes: qy, Q0No: qn, Margin: margin,
		LiveAt: now.AddDate(0, 0, -1), FinishAt: now.AddDate(0, 1, 0)}
	sub, _ := lmsr.SubsidyKopecks(m.Pricer())
	if balances == nil {
		balances = map[account.Ref]int64{}
	}
	balances[account.EscrowAccount(7)] += sub
	return &State{Market: m, Balances: balances, Positions: positions, Now: now}
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

// TestDecideTradesInsideTheWindow: a pool's markets take trades while
// live_at <= now < finish_at, and refuse them as closed before and from
// then on; a sale as a buy.
func TestDecideTradesInsideTheWindow(t *testing.T) {
	live := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	finish := live.Add(48 * time.Hour)
	for _, c := range []struct {
		name string
		now  time.Time
		open bool
	}{
		{"a trade before live_at is refused", live.Add(-time.Microsecond), false},
		{"a trade long before live_at is refused", live.AddDate(-1, 0, 0), false},
		{"a trade at live_at is taken", live, true},
		{"a trade between the two is taken", live.Add(time.Hour), true},
		{"a trade just before finish_at is taken", finish.Add(-time.Microsecond), true},
		{"a trade at finish_at is refused", finish, false},
		{"a trade after finish_at is refused", finish.Add(time.Hour), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			held := &Position{ID: 1, UserID: 1, MarketID: 7, Side: Yes, Shares: 500, CostBasis: 260, Bought: 500, Spent: 260}
			st := testState(t, 0, map[account.Ref]int64{account.UserAccount(1): 1000}, held)
			st.Market.QYes += 500
			st.Market.LiveAt, st.Market.FinishAt, st.Now = live, finish, c.now
			if got := st.Market.Tradable(c.now); got != c.open {
				t.Fatalf("Tradable = %v, want %v", got, c.open)
			}
			eff, _ := DecideTrades(st, []Request{
				{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 100},
				{UserID: 1, Side: Yes, Action: ActionSell, Shares: 100},
			})
			for i, r := range eff.Results {
				if c.open && r.Err != nil {
					t.Fatalf("request %d refused: %v", i, r.Err)
				}
				if !c.open && (!errors.Is(r.Err, ErrClosed) || r.Trade != nil) {
					t.Fatalf("request %d: trade %v, err %v; want ErrClosed", i, r.Trade, r.Err)
				}
			}
			if !c.open && (eff.Market != nil || len(eff.Trades) != 0 || len(eff.Positions) != 0 || len(eff.Notifications) != 0) {
				t.Fatalf("refused trades left effects: %+v", eff)
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

func TestParseSettlement(t *testing.T) {
	for _, c := range []struct {
		outcome string
		want    Settlement
		ok      bool
	}{
		{"YES", Settlement{Won: Yes, By: ResolvedByOperator}, true},
		{"NO", Settlement{Won: No, By: ResolvedByOperator}, true},
		{"VOID", Settlement{Void: true, By: ResolvedByOperator}, true},
		{"void", Settlement{}, false},
		{"yes", Settlement{}, false},
		{"", Settlement{}, false},
	} {
		t.Run(fmt.Sprintf("%q is accepted: %v", c.outcome, c.ok), func(t *testing.T) {
			got, err := ParseSettlement(c.outcome, ResolvedByOperator)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("got %+v, %v", got, err)
			}
			if err != nil && !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("err %v is not invalid input", err)
			}
		})
	}
}

// voidState is a market whose escrow holds escrow and fee account fees,
// with positions ps.
func voidState(t *testing.T, escrow, fees int64, ps ...*Position) *State {
	st := testState(t, 0.02, nil, ps...)
	st.Balances[account.EscrowAccount(7)] = escrow
	st.Balances[account.FeeAccount(7)] = fees
	st.Balances[account.Treasury] = -1_000_000
	return st
}

func TestVoidSettlement(t *testing.T) {
	// Position 1 paid 3,000 and sold nothing; 2 paid 2,000 and its sales
	// returned 1,500; 3 sold at a profit (its sales returned 900 over the
	// 500 it paid) and keeps 100 of basis; 4 and 5 are one holder's two
	// sides.
	ps := []*Position{
		{ID: 1, UserID: 1, MarketID: 7, Side: Yes, Shares: 5000, CostBasis: 3000, Bought: 5000, Spent: 3000},
		{ID: 2, UserID: 2, MarketID: 7, Side: No, Shares: 700, CostBasis: 600, Bought: 2000, Spent: 2000, Returned: 1500},
		{ID: 3, UserID: 3, MarketID: 7, Side: Yes, Shares: 200, CostBasis: 100, Bought: 1000, Spent: 500, Returned: 900},
		{ID: 4, UserID: 4, MarketID: 7, Side: Yes, Shares: 100, CostBasis: 60, Bought: 100, Spent: 60},
		{ID: 5, UserID: 4, MarketID: 7, Side: No, Shares: 100, CostBasis: 40, Bought: 100, Spent: 40},
	}
	refunds := map[int64]int64{1: 3000, 2: 500, 3: 0, 4: 100} // 3,600 in all
	void := Settlement{Void: true, By: ResolvedByOperator}
	// paidBy sums eff's postings to users by the account they come from,
	// and to each user.
	paidBy := func(t *testing.T, eff *Effects) (map[account.Ref]int64, map[int64]int64) {
		t.Helper()
		from, to := map[account.Ref]int64{}, map[int64]int64{}
		for _, p := range eff.Postings {
			if p.To.Kind != account.KindUser {
				continue
			}
			if p.Reason != "refund" || p.Amount <= 0 {
				t.Fatalf("posting %+v", p)
			}
			from[p.From] += p.Amount
			to[p.To.Owner] += p.Amount
		}
		return from, to
	}
	t.Run("every position gets its net cost back, floored at zero, and realizes what makes its PnL add up", func(t *testing.T) {
		eff, err := DecideSettlement(voidState(t, 10_000, 500, ps...), void)
		if err != nil {
			t.Fatal(err)
		}
		if _, to := paidBy(t, eff); !maps.Equal(to, map[int64]int64{1: 3000, 2: 500, 4: 100}) {
			t.Fatalf("refunds %v, want %v", to, refunds)
		}
		realized := map[int64]int64{}
		for _, e := range eff.PnL {
			realized[e.Position.ID] += e.Delta
		}
		for i, p := range eff.Positions {
			was := ps[i]
			// The sales realized Returned - (Spent - CostBasis) before; the
			// void realizes the rest of the final PnL.
			before := was.Returned - (was.Spent - was.CostBasis)
			if *p.WonSide != WonSideVoid || p.CostBasis != 0 || p.Open() || p.PnL() != max(was.Returned-was.Spent, 0) || before+realized[p.ID] != p.PnL() {
				t.Errorf("position %d: %+v, realized %d", p.ID, p, realized[p.ID])
			}
		}
	})
	t.Run("each holder is told once of its refund", func(t *testing.T) {
		eff, _ := DecideSettlement(voidState(t, 10_000, 500, ps...), void)
		got := map[int64]int64{}
		for _, n := range eff.Notifications {
			if _, dup := got[n.UserID]; dup || n.Data.Won != "VOID" || n.Type != social.TypeMarketResolved {
				t.Fatalf("notification %+v", n)
			}
			got[n.UserID] = n.Data.Amount
		}
		if !maps.Equal(got, refunds) {
			t.Fatalf("notified %v, want %v", got, refunds)
		}
	})
	t.Run("the market records a void by the operator and no side wins", func(t *testing.T) {
		eff, _ := DecideSettlement(voidState(t, 10_000, 500, ps...), void)
		m := eff.Market
		if !m.Resolved || !m.Voided || m.WinningOutcome != nil || m.Outcome() != "VOID" || m.ResolvedBy != ResolvedByOperator || m.ResolvedAt == nil || eff.PoolWonSide != nil {
			t.Fatalf("market %+v, pool won side %v", m, eff.PoolWonSide)
		}
	})
	for _, c := range []struct {
		name                   string
		escrow, fees           int64
		fromEscrow, fromFees   int64
		fromTreasury, leftover int64
	}{
		{"an escrow that covers the refunds pays them all and returns the rest", 10_000, 500, 3600, 0, 0, 6400},
		{"an escrow that falls short is topped up by the fee account", 3300, 500, 3300, 300, 0, 0},
		{"escrow and fees that fall short are topped up by the treasury", 3000, 400, 3000, 400, 200, 0},
		{"an empty escrow and fee account leave it all to the treasury", 0, 0, 0, 0, 3600, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := voidState(t, c.escrow, c.fees, ps...)
			eff, err := DecideSettlement(st, void)
			if err != nil {
				t.Fatal(err)
			}
			from, to := paidBy(t, eff)
			var leftover int64
			for _, p := range eff.Postings {
				if p.To == account.Treasury {
					leftover += p.Amount
				}
			}
			if from[account.EscrowAccount(7)] != c.fromEscrow || from[account.FeeAccount(7)] != c.fromFees || from[account.Treasury] != c.fromTreasury ||
				leftover != c.leftover || !maps.Equal(to, map[int64]int64{1: 3000, 2: 500, 4: 100}) {
				t.Fatalf("from %v, leftover %d, refunds %v", from, leftover, to)
			}
			after := maps.Clone(st.Balances)
			if err := account.Apply(after, eff.Postings); err != nil || after[account.EscrowAccount(7)] != 0 || after[account.FeeAccount(7)] < 0 {
				t.Fatalf("balances after %v, %v", after, err)
			}
		})
	}
	t.Run("in chunks the refunds draw on each account as they do at once", func(t *testing.T) {
		st := voidState(t, 3000, 400, ps...)
		if err := void.Begin(st.Market); err != nil {
			t.Fatal(err)
		}
		balances := maps.Clone(st.Balances)
		var postings []account.Posting
		for _, chunk := range [][]*Position{ps[:1], ps[1:3], ps[3:]} {
			eff, err := void.Chunk(&State{Market: st.Market, Positions: chunk, Balances: maps.Clone(balances), Now: st.Now})
			if err != nil {
				t.Fatal(err)
			}
			if err := account.Apply(balances, eff.Postings); err != nil {
				t.Fatal(err)
			}
			postings = append(postings, eff.Postings...)
		}
		fin, err := void.Finish(&State{Market: st.Market, Balances: balances, Now: st.Now})
		if err != nil {
			t.Fatal(err)
		}
		from, _ := paidBy(t, &Effects{Postings: append(postings, fin.Postings...)})
		if from[account.EscrowAccount(7)] != 3000 || from[account.FeeAccount(7)] != 400 || from[account.Treasury] != 200 {
			t.Fatalf("from %v", from)
		}
	})
	t.Run("a void that would take the treasury past its bound is refused", func(t *testing.T) {
		st := voidState(t, 0, 0, ps...)
		st.Balances[account.Treasury] = -account.MaxExposure + 1000
		if _, err := DecideSettlement(st, void); !errors.Is(err, account.ErrBalanceLimit) {
			t.Fatalf("err = %v, want ErrBalanceLimit", err)
		}
		if _, err := void.Finish(&State{Market: st.Market, Balances: map[account.Ref]int64{account.Treasury: -account.MaxExposure - 1}, Now: st.Now}); !errors.Is(err, account.ErrBalanceLimit) {
			t.Fatalf("Finish: err = %v, want ErrBalanceLimit", err)
		}
	})
	t.Run("a resolution pays only from the escrow and refuses an escrow that cannot pay", func(t *testing.T) {
		st := voidState(t, 4000, 10_000, ps...)
		if _, err := DecideSettlement(st, Settlement{Won: Yes}); err == nil {
			t.Fatal("an escrow of 4,000 paid 5,300 winning shares")
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

func TestSplit(t *testing.T) {
	escrow, fees := account.EscrowAccount(7), account.FeeAccount(7)
	void := []Source{{From: escrow, Cap: 100}, {From: fees, Cap: 50}, {From: account.Treasury, Cap: -1}}
	for _, c := range []struct {
		name           string
		before, amount int64
		sources        []Source
		want           []int64
	}{
		{"a holder within the escrow is paid by the escrow alone", 10, 30, void, []int64{30, 0, 0}},
		{"a holder across the end of the escrow is topped up by the fees", 90, 30, void, []int64{10, 20, 0}},
		{"a holder across the end of the fees is topped up by the treasury", 140, 20, void, []int64{0, 10, 10}},
		{"a holder past every capped account is paid by the treasury", 500, 70, void, []int64{0, 0, 70}},
		{"a holder across all three draws on all three", 0, 200, void, []int64{100, 50, 50}},
		{"a holder owed nothing is paid nothing", 120, 0, void, []int64{0, 0, 0}},
		{"an empty escrow passes it all on", 0, 40, []Source{{From: escrow, Cap: 0}, {From: fees, Cap: 0}, {From: account.Treasury, Cap: -1}}, []int64{0, 0, 40}},
		{"the whole of a resolution within the escrow", 0, 100, void[:1], []int64{100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Split(c.before, c.amount, c.sources)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("Split(%d, %d) = %v, %v; want %v", c.before, c.amount, got, err, c.want)
			}
		})
	}
	t.Run("a resolution the escrow cannot cover is refused", func(t *testing.T) {
		if _, err := Split(90, 20, void[:1]); !errors.Is(err, errShort) {
			t.Fatalf("err = %v, want errShort", err)
		}
	})
	t.Run("holders paid one after another draw on each source as one walk would", func(t *testing.T) {
		owed := []int64{30, 0, 45, 12, 80, 7, 1}
		var before int64
		from := make([]int64, len(void))
		for _, a := range owed {
			parts, err := Split(before, a, void)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for i, p := range parts {
				from[i] += p
				sum += p
			}
			if sum != a {
				t.Fatalf("holder owed %d was paid %v", a, parts)
			}
			before += a
		}
		total, _ := Split(0, before, void)
		if !slices.Equal(from, total) || !slices.Equal(total, []int64{100, 50, 25}) {
			t.Fatalf("one by one %v, at once %v", from, total)
		}
	})
}
