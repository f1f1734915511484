package market

import (
	"slices"
	"testing"

	"github.com/predictkit/predictkit/account"
)

// partnerBet is a partner's buy for external user ext under key bet.
func partnerBet(ext, bet string, amount, maxCost int64) Request {
	return Request{Side: Yes, Action: ActionBuy, Amount: amount, MaxCost: maxCost, Partner: &PartnerOrder{
		Key: Key{PartnerID: 9, ClientBetID: bet}, Digest: bet + "-digest", ExternalID: ext, TopUp: true}}
}

func TestDecideTradesSaysWhichNewSubAccountsToDrop(t *testing.T) {
	cases := []struct {
		name string
		reqs []Request
		// created are the sub-accounts the store made for the batch: ids
		// 101 ("a") and 102 ("b"); 103 ("c") existed before.
		want []int64
	}{
		{"a new sub-account that traded is kept", []Request{partnerBet("a", "k1", 1000, 0)}, []int64{102}},
		{"a refused first bet drops its sub-account", []Request{partnerBet("a", "k1", 1000, 1)}, []int64{101, 102}},
		{"a refused bet beside an accepted one keeps the sub-account", []Request{partnerBet("a", "k1", 1000, 1), partnerBet("a", "k2", 1000, 0)}, []int64{102}},
		{"a sub-account that existed before is never dropped", []Request{partnerBet("c", "k1", 1000, 1)}, []int64{101, 102}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := testState(t, 0, map[account.Ref]int64{account.FloatAccount(9): 1_000_000})
			st.SubAccounts = map[SubAccount]int64{{9, "a"}: 101, {9, "b"}: 102, {9, "c"}: 103}
			st.NewSubAccounts = map[int64]bool{101: true, 102: true}
			eff, err := DecideTrades(st, c.reqs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(eff.DropSubAccounts, c.want) {
				t.Fatalf("DropSubAccounts = %v, want %v", eff.DropSubAccounts, c.want)
			}
		})
	}
}

func TestDecideMarketsDropsSubAccountsOnceForTheWholeBatch(t *testing.T) {
	balances := map[account.Ref]int64{account.FloatAccount(9): 1_000_000}
	a, b := testState(t, 0, balances), testState(t, 0, balances)
	b.Market.ID = 8
	balances[account.EscrowAccount(8)] = balances[account.EscrowAccount(7)]
	subs := map[SubAccount]int64{{9, "a"}: 101, {9, "b"}: 102}
	created := map[int64]bool{101: true, 102: true}
	for _, st := range []*State{a, b} {
		st.SubAccounts, st.NewSubAccounts = subs, created
	}
	// "a" is refused on market 7 and trades on market 8; "b" is refused
	// on both.
	effs, err := DecideMarkets([]*State{a, b}, [][]Request{
		{partnerBet("a", "k1", 1000, 1), partnerBet("b", "k2", 1000, 1)},
		{partnerBet("a", "k3", 1000, 0), partnerBet("b", "k4", 1000, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(effs[0].DropSubAccounts, []int64{102}) || effs[1].DropSubAccounts != nil {
		t.Fatalf("drops = %v and %v, want [102] on the first market only", effs[0].DropSubAccounts, effs[1].DropSubAccounts)
	}
}

func TestDecideTradesAnswersARecordedKeyAsARepeat(t *testing.T) {
	prev := &Trade{ID: 55, MarketID: 7, UserID: 101, Side: Yes, Action: ActionBuy, Shares: 10, Amount: 9,
		PartnerID: 9, ClientBetID: "k1", RequestHash: "k1-digest"}
	st := testState(t, 0, map[account.Ref]int64{account.FloatAccount(9): 1_000_000})
	st.SubAccounts = map[SubAccount]int64{{9, "a"}: 101}
	st.Existing = map[Key]*Trade{{9, "k1"}: prev}
	other := partnerBet("a", "k1", 5000, 0) // same key, another amount
	other.Partner.Digest = "another digest"
	eff, err := DecideTrades(st, []Request{partnerBet("a", "k1", 1000, 0), other, partnerBet("a", "k2", 1000, 0), partnerBet("a", "k2", 1000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	rs := eff.Results
	t.Run("a key recorded before the batch replays its trade", func(t *testing.T) {
		if rs[0].Err != nil || !rs[0].Replayed || rs[0].Trade != prev {
			t.Fatalf("result = %+v", rs[0])
		}
	})
	t.Run("the same key with other parameters is a conflict", func(t *testing.T) {
		if rs[1].Err != ErrIdempotencyConflict || rs[1].Trade != nil {
			t.Fatalf("result = %+v", rs[1])
		}
	})
	t.Run("a key repeated within the batch runs once", func(t *testing.T) {
		if rs[2].Err != nil || rs[2].Replayed || !rs[3].Replayed || rs[3].Trade != rs[2].Trade || len(eff.Trades) != 1 {
			t.Fatalf("results = %+v, %+v; %d trades", rs[2], rs[3], len(eff.Trades))
		}
	})
}

func TestRequestCheck(t *testing.T) {
	cases := []struct {
		name string
		r    Request
		want string // "" when valid
	}{
		{"a buy within the bounds passes", Request{Side: Yes, Action: ActionBuy, Amount: 1}, ""},
		{"a buy of nothing is refused", Request{Side: Yes, Action: ActionBuy}, "amount_kopecks: must be at least 1"},
		{"a buy over the bound is refused", Request{Side: Yes, Action: ActionBuy, Amount: MaxTradeKopecks + 1}, "amount_kopecks: must be at most 100000000000"},
		{"a negative max cost is refused", Request{Side: Yes, Action: ActionBuy, Amount: 5, MaxCost: -1}, "max_cost_kopecks: must be at least 0"},
		{"negative min shares are refused", Request{Side: Yes, Action: ActionBuy, Amount: 5, MinShares: -1}, "min_shares: must be at least 0"},
		{"a sale of no shares is refused", Request{Side: No, Action: ActionSell}, "shares: must be at least 1"},
		{"a sale over the bound is refused", Request{Side: No, Action: ActionSell, Shares: MaxTradeShares + 1}, "shares: must be at most 100000000000"},
		{"a negative min payout is refused", Request{Side: No, Action: ActionSell, Shares: 1, MinPayout: -3}, "min_payout_kopecks: must be at least 0"},
		{"a sale from the bonus is refused", Request{Side: No, Action: ActionSell, Shares: 1, UseBonus: true}, "use_bonus: applies to buys only"},
		{"an unknown side is refused", Request{Side: 5, Action: ActionBuy, Amount: 5}, "side: must be YES or NO"},
		{"an unknown action is refused", Request{Side: Yes, Action: "hold"}, "action: must be buy or sell"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if err := c.r.Check(); err != nil {
				got = err.Error()
			}
			if c.want != "" {
				c.want = "invalid " + c.want
			}
			if got != c.want {
				t.Fatalf("Check() = %q, want %q", got, c.want)
			}
		})
	}
}
