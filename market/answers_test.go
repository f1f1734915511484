package market

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
)

func TestDivideKeepsTheSumExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + rng.IntN(6)
		w := make([]int64, n)
		var total int64
		for i := range w {
			w[i] = 1 + rng.Int64N(1e9)
			total += w[i]
		}
		a := rng.Int64N(1 << 53)
		parts := divide(a, w)
		var sum int64
		for i, p := range parts {
			sum += p
			if p < 0 {
				t.Fatalf("divide(%d, %v) gives a negative part %d", a, w, p)
			}
			// Each part but the first is its exact share rounded down.
			share := new(big.Int).Quo(new(big.Int).Mul(big.NewInt(a), big.NewInt(w[i])), big.NewInt(total))
			if i > 0 && share.Int64() != p {
				t.Fatalf("divide(%d, %v)[%d] = %d, more than its share", a, w, i, p)
			}
		}
		if sum != a {
			t.Fatalf("divide(%d, %v) sums to %d", a, w, sum)
		}
	}
}

// examplePool is docs/answer-split.md's worked example after its three
// trades: Ann, Bob and Other (marked Other), b = 10,000.
func examplePool() *AnswerState {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ms := []*Market{
		{ID: 1, PoolID: 1, EventID: 1, Name: "Ann", B: 10000, QYes: 16628, Q0Yes: 9163, Exclusive: true},
		{ID: 2, PoolID: 1, EventID: 1, Name: "Bob", B: 10000, QYes: 7855, Q0Yes: 4055, OutcomeIndex: 1, Exclusive: true},
		{ID: 3, PoolID: 1, EventID: 1, Name: "Other", B: 10000, QYes: 4960, Q0Yes: 0, OutcomeIndex: 2, Exclusive: true, Other: true},
	}
	ps := []*Position{
		{ID: 1, UserID: 10, MarketID: 1, Side: Yes, Shares: 3665, CostBasis: 2000, Bought: 3665, Spent: 2000},
		{ID: 2, UserID: 10, MarketID: 3, Side: Yes, Shares: 4960, CostBasis: 1000, Bought: 4960, Spent: 1000},
		{ID: 3, UserID: 11, MarketID: 3, Side: No, Shares: 3800, CostBasis: 3000, Bought: 3800, Spent: 3000},
	}
	return &AnswerState{Markets: ms, Positions: ps, Escrow: 22095, Treasury: -1_000_000, EventName: "Mayor", MarketID: 4, Now: now}
}

func TestDecideAnswerOnTheWorkedExample(t *testing.T) {
	st := examplePool()
	eff, err := DecideAnswer(st, NewAnswer{Name: "Cid", Probability: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	q := []int64{eff.Markets[0].QYes, eff.Markets[1].QYes, eff.Markets[2].QYes, eff.Market.QYes}
	if !slices.Equal(q, []int64{16628, 7855, 1711, -7863}) {
		t.Fatalf("q after the split = %v, want the docs' (16628, 7855, 1711, -7863)", q)
	}
	if eff.Markets[2].Q0Yes != -3249 || eff.Market.Q0Yes != -12823 || eff.Market.OutcomeIndex != 3 || eff.Market.ID != 4 {
		t.Fatalf("Other's q0 %d, the new market's q0 %d, index %d, id %d", eff.Markets[2].Q0Yes, eff.Market.Q0Yes, eff.Market.OutcomeIndex, eff.Market.ID)
	}
	if eff.TopUp() != 12822 || len(eff.Postings) != 1 || eff.Postings[0].From != account.Treasury || eff.Postings[0].To != account.EscrowAccount(1) || eff.Postings[0].Reason != "subsidy" {
		t.Fatalf("the top-up is %d in %+v, want 12,822 from the treasury to the pool's escrow", eff.TopUp(), eff.Postings)
	}
	type held struct {
		id, user, market int64
		side             Side
		shares, basis    int64
	}
	var got []held
	for _, p := range eff.Positions {
		got = append(got, held{p.ID, p.UserID, p.MarketID, p.Side, p.Shares, p.CostBasis})
	}
	want := []held{
		{2, 10, 3, Yes, 4960, 723},  // Alice's YES on Other keeps its row
		{0, 10, 4, Yes, 4960, 277},  // and gets a YES on Cid
		{3, 11, 1, Yes, 3800, 2119}, // Bob's NO on Other moves to a YES on Ann
		{0, 11, 2, Yes, 3800, 881},  // and a YES on Bob
	}
	if !slices.Equal(got, want) {
		t.Fatalf("positions after the split:\n%+v\nwant\n%+v", got, want)
	}
	if len(eff.Notifications) != 2 || eff.Notifications[0].UserID != 10 || eff.Notifications[1].UserID != 11 || eff.Notifications[0].Data.Other != "Other" {
		t.Fatalf("notifications %+v, want one answer_added for each holder", eff.Notifications)
	}
}

func TestDecideAnswerMergesANoOnOtherIntoTheHoldersYes(t *testing.T) {
	st := examplePool()
	// Bob's user also holds YES on Ann and on Bob: the NO on Other goes
	// into both, and its own row closes, emptied.
	st.Positions = append(st.Positions,
		&Position{ID: 4, UserID: 11, MarketID: 1, Side: Yes, Shares: 100, CostBasis: 60, Bought: 100, Spent: 60},
		&Position{ID: 5, UserID: 11, MarketID: 2, Side: Yes, Shares: 50, CostBasis: 20, Bought: 50, Spent: 20})
	st.Markets[0].QYes += 100
	st.Markets[1].QYes += 50
	eff, err := DecideAnswer(st, NewAnswer{Name: "Cid", Probability: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var basis, spent int64
	for _, p := range eff.Positions {
		if p.UserID != 11 {
			continue
		}
		switch p.ID {
		case 3:
			if p.Open() || p.Shares != 0 || p.CostBasis != 0 || p.Spent != 0 {
				t.Fatalf("the NO on Other's row reads %+v, want closed and empty", p)
			}
		case 4, 5:
			if p.Shares != 3800+map[int64]int64{4: 100, 5: 50}[p.ID] {
				t.Fatalf("position %d holds %d shares", p.ID, p.Shares)
			}
		default:
			t.Fatalf("an unexpected position %+v", p)
		}
		basis += p.CostBasis
		spent += p.Spent
	}
	if basis != 3080 || spent != 3080 {
		t.Fatalf("the holder's cost basis sums to %d and spent to %d, want 3,080 each", basis, spent)
	}
}

func TestDecideAnswerRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*AnswerState)
		p      float64
		want   error
	}{
		{"a probability at Other's", nil, 0.180263, input.ErrInvalid},
		{"a probability above Other's", nil, 0.5, input.ErrInvalid},
		{"a pool without Other", func(st *AnswerState) { st.Markets[2].Other = false }, 0.05, ErrNoNewAnswer},
		{"a resolved pool", func(st *AnswerState) { st.Markets[0].Resolved = true }, 0.05, ErrNoNewAnswer},
		{"a pool paused by a proposed resolution", func(st *AnswerState) { st.Markets[1].Paused = true }, 0.05, ErrNoNewAnswer},
		{"a binary pool", func(st *AnswerState) { st.Markets, st.Positions = st.Markets[2:], nil }, 0.05, ErrNoNewAnswer},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			st := examplePool()
			if c.change != nil {
				c.change(st)
			}
			if _, err := DecideAnswer(st, NewAnswer{Name: "Cid", Probability: c.p}); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	t.Run("positions that do not add up to the quantities refuse the split", func(t *testing.T) {
		st := examplePool()
		st.Positions[0].Shares++
		if _, err := DecideAnswer(st, NewAnswer{Name: "Cid", Probability: 0.05}); err == nil {
			t.Fatal("the split went ahead")
		}
	})
}
