package postgres_test

import (
	"testing"

	"github.com/predictkit/predictkit/market"
)

// TestMigrationTakesFlaggedPositionsAsBonusWhole: positions written before
// migration 00039 kept only their use_bonus flag; the migration counts a
// flagged position's shares and net cost as bonus money, whole, and
// leaves the others with none, so that a sale or void after it keeps the
// bonus money bonus.
func TestMigrationTakesFlaggedPositionsAsBonusWhole(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0.02, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	mixed, money := e.user("mixed", 5000), e.user("money", 5000)
	if _, err := e.accounts.Credit(e.ctx, mixed.ID, 5000, true); err != nil {
		t.Fatal(err)
	}
	for _, r := range []market.Request{
		{UserID: mixed.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 2000, UseBonus: true},
		{UserID: mixed.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000},
		{UserID: mixed.ID, Side: market.Yes, Action: market.ActionSell, Shares: 100},
		{UserID: money.ID, Side: market.No, Action: market.ActionBuy, Amount: 1500},
	} {
		if _, err := e.markets.Execute(e.ctx, m.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	// Down past 00039 (and whatever came after it), then up again.
	for {
		v, err := e.store.MigrationVersion(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 39 {
			break
		}
		if _, err := e.store.MigrateDown(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.MigrateUp(e.ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		user  int64
		bonus bool
	}{
		{"a position with use_bonus is bonus money whole", mixed.ID, true},
		{"a position without it holds no bonus money", money.ID, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := e.store.OpenPositions(e.ctx, c.user)
			if err != nil || len(ps) != 1 {
				t.Fatalf("positions %+v, %v", ps, err)
			}
			p := ps[0]
			wantShares, wantNet := int64(0), int64(0)
			if c.bonus {
				wantShares, wantNet = p.Shares, p.Spent-p.Returned
			}
			if p.UseBonus != c.bonus || p.BonusShares != wantShares || p.BonusNet != wantNet {
				t.Fatalf("after the migration the position reads %+v, want %d bonus shares and %d bonus net cost", p.Position, wantShares, wantNet)
			}
		})
	}
	e.audit()
}
