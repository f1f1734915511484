package market_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/memory"
)

type creatorWorld struct {
	ctx      context.Context
	store    *memory.Store
	accounts *account.Service
	markets  *market.Service
	creator  *account.User
}

func newCreatorWorld(t *testing.T) *creatorWorld {
	t.Helper()
	w := &creatorWorld{ctx: context.Background(), store: memory.New()}
	w.accounts = account.NewService(w.store)
	w.markets = market.NewService(w.store, w.accounts)
	c, _, err := w.accounts.Register(w.ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "C"})
	if err != nil {
		t.Fatal(err)
	}
	if w.creator, err = w.accounts.SetRoles(w.ctx, c.ID, account.RolesPatch{IsCreator: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAnEventEscrowsAtMostMaxEventSubsidy: the sum of an event's
// subsidies is bounded, checked before anything is written.
func TestAnEventEscrowsAtMostMaxEventSubsidy(t *testing.T) {
	w := newCreatorWorld(t)
	pool := func(p float64) market.NewPool {
		np := market.NewPool{Name: "P", B: market.MaxLiquidity}
		for range market.MaxMarketsPerPool {
			np.Markets = append(np.Markets, market.NewMarket{Name: "M", Probability: p})
		}
		return np
	}
	t.Run("every market an event may hold, at b = 10^12 and 0.01, is refused as invalid pools", func(t *testing.T) {
		var pools []market.NewPool
		for range market.MaxPools {
			pools = append(pools, pool(market.MinProbability))
		}
		_, err := w.markets.CreateEvent(w.ctx, w.creator, market.NewEvent{Name: "Too much", Pools: pools})
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "pools" || !strings.Contains(ie.Reason, "the most one event may") {
			t.Fatalf("err = %v", err)
		}
		if es, _ := w.store.Escrows(w.ctx); len(es) != 0 {
			t.Fatalf("the refused event left %d markets", len(es))
		}
		if tr, _ := w.store.Balance(w.ctx, account.Treasury); tr != 0 {
			t.Fatalf("treasury = %d", tr)
		}
	})
	t.Run("every market an event may hold, at b = 10^12 and 50/50, opens", func(t *testing.T) {
		var pools []market.NewPool
		for range market.MaxPools {
			pools = append(pools, pool(0.5))
		}
		ev, err := w.markets.CreateEvent(w.ctx, w.creator, market.NewEvent{Name: "Large", Pools: pools})
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := w.store.Balance(w.ctx, account.Treasury)
		if -tr > market.MaxEventSubsidy || len(ev.Pools) != market.MaxPools {
			t.Fatalf("treasury = %d", tr)
		}
	})
}
