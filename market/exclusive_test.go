package market

import (
	"strings"
	"testing"
)

func TestAuditEscrowsOfExclusivePools(t *testing.T) {
	// A pool of three markets (ids 1, 2, 3) whose outcomes, if they won,
	// would pay 500, 900 and 0: its escrow (market 1's) must hold 900.
	pool := func(lead, second, third int64, resolved bool) []EscrowState {
		ms := []Market{
			{ID: 1, PoolID: 7, Exclusive: true, QYes: 1500, Q0Yes: 1000},
			{ID: 2, PoolID: 7, Exclusive: true, QYes: 1900, Q0Yes: 1000},
			{ID: 3, PoolID: 7, Exclusive: true, QYes: 0, Q0Yes: 0},
		}
		out := make([]EscrowState, 3)
		for i, b := range []int64{lead, second, third} {
			ms[i].Resolved = resolved
			out[i] = EscrowState{Market: ms[i], Balance: b}
		}
		return out
	}
	for _, c := range []struct {
		name string
		es   []EscrowState
		want string // a problem that must be reported; "" for none
	}{
		{"an escrow that covers the largest outcome passes", pool(900, 0, 0, false), ""},
		{"an escrow short of the largest outcome is reported", pool(899, 0, 0, false), "exclusive pool 7: escrow 899 does not cover 900"},
		{"money in another market's escrow is reported", pool(900, 1, 0, false), "market 2: of exclusive pool 7"},
		{"a resolved pool with money left is reported", pool(1, 0, 0, true), "exclusive pool 7: resolved but its escrow holds 1"},
		{"an empty resolved pool passes", pool(0, 0, 0, true), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := AuditEscrows(c.es)
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("problems %v, want none", got)
				}
				return
			}
			for _, p := range got {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Fatalf("problems %v, want one containing %q", got, c.want)
		})
	}
}

func TestDecideTradesNeedsTheWholeExclusivePool(t *testing.T) {
	m := &Market{ID: 2, PoolID: 7, Exclusive: true, B: 1000, QYes: 0, QNo: 693, Q0Yes: 0, Q0No: 693, Margin: 0}
	other := &Market{ID: 3, PoolID: 7, Exclusive: true, B: 1000}
	stranger := &Market{ID: 4, PoolID: 8, Exclusive: true, B: 1000}
	for _, c := range []struct {
		name string
		pool []*Market
	}{
		{"a market of an exclusive pool locked alone fails the batch", nil},
		{"a pool without the traded market fails the batch", []*Market{other, stranger}},
		{"a pool with a market of another pool fails the batch", []*Market{m, stranger}},
		{"a pool out of id order fails the batch", []*Market{other, m}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &State{Market: m, Pool: c.pool, Balances: nil}
			if _, err := DecideTrades(st, []Request{{UserID: 1, Side: Yes, Action: ActionBuy, Amount: 100}}); err == nil {
				t.Fatal("decided on a pool that was not locked whole")
			}
		})
	}
}
