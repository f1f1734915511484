package market

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

// TestTotalsThatOnlyGrowNeverWrap: a market's volume and a position's
// totals grow with every trade, without bound when a position is churned;
// they stop at MaxInt64 instead of wrapping to negative figures, and the
// average price of a position with a large total stays right.
func TestTotalsThatOnlyGrowNeverWrap(t *testing.T) {
	const top = math.MaxInt64
	pos := &Position{ID: 11, UserID: 1, MarketID: 7, Side: Yes, Shares: 1000, CostBasis: 600, Bought: top - 10, Spent: top - 10, Returned: top - 10}
	st := testState(t, 0.03, map[account.Ref]int64{account.UserAccount(1): 100_000}, pos)
	st.Market.QYes += 1000
	st.Market.Volume = top - 10
	eff, _ := DecideTrades(st, []Request{
		{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 10_000},
		{UserID: 1, Side: Yes, Action: ActionSell, Shares: 500},
	})
	for i, r := range eff.Results {
		if r.Err != nil {
			t.Fatalf("trade %d: %v", i, r.Err)
		}
	}
	t.Run("the market's volume stops at MaxInt64", func(t *testing.T) {
		if eff.Market.Volume != top {
			t.Fatalf("volume = %d", eff.Market.Volume)
		}
	})
	t.Run("the position's totals stop at MaxInt64", func(t *testing.T) {
		p := eff.Positions[0]
		if p.Bought != top || p.Spent != top || p.Returned != top {
			t.Fatalf("position %+v", p)
		}
	})
	t.Run("the average price of a position that spent 10^15 kopecks is right", func(t *testing.T) {
		p := &Position{Bought: 2_000_000_000_000_000, Spent: 1_000_000_000_000_000}
		if got := p.AvgPriceBps(); got != 5000 {
			t.Fatalf("avg price = %d bps, want 5000", got)
		}
	})
}

// pnlStore answers PnLEvents with evs; nothing else of it is called.
type pnlStore struct {
	Store
	evs []PnLEvent
}

func (s pnlStore) PnLEvents(context.Context, int64) ([]PnLEvent, error) { return s.evs, nil }

type anyUser struct{}

func (anyUser) User(_ context.Context, id int64) (*account.User, error) {
	return &account.User{ID: id}, nil
}

// TestThePnLChartNeverWraps: the cumulative P&L stops at the end of int64
// instead of wrapping to the other sign.
func TestThePnLChartNeverWraps(t *testing.T) {
	at := time.Unix(1700000000, 0)
	for _, c := range []struct {
		name  string
		delta int64
		want  int64
	}{
		{"gains past int64 stay at MaxInt64", math.MaxInt64 / 2, math.MaxInt64},
		{"losses past int64 stay at MinInt64", math.MinInt64 / 2, math.MinInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs := []PnLEvent{{At: at, Delta: c.delta}, {At: at, Delta: c.delta}, {At: at, Delta: c.delta}}
			svc := NewService(pnlStore{evs: evs}, anyUser{})
			pts, err := svc.PnLChart(context.Background(), 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := pts[len(pts)-1].PnL; got != c.want {
				t.Fatalf("last point %d, want %d", got, c.want)
			}
		})
	}
}
