package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/sim"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// store is what the engine needs of a store: both stores implement it.
type store interface {
	market.Store
	account.Store
}

// stores are the stores the replay runs on: the in-memory one, and
// PostgreSQL (a fresh schema per test) when PREDICTKIT_TEST_DATABASE_URL
// is set.
var stores = []struct {
	name string
	open func(*testing.T) store
}{
	{"memory", func(*testing.T) store { return memory.New() }},
	{"postgres", func(t *testing.T) store { return pgtest.New(t) }},
}

// platform is the real engine on a store, with one creator.
type platform struct {
	t        *testing.T
	ctx      context.Context
	store    store
	accounts *account.Service
	markets  *market.Service
	creator  *account.User
}

func newPlatform(t *testing.T, store store) *platform {
	t.Helper()
	ctx := context.Background()
	accounts := account.NewService(store)
	p := &platform{t: t, ctx: ctx, store: store, accounts: accounts, markets: market.NewService(store, accounts)}
	c, _, err := accounts.Register(ctx, account.Registration{Email: "creator@example.com", Password: "password123", Name: "Creator"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if p.creator, err = accounts.SetRoles(ctx, c.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *platform) balance(ref account.Ref) int64 {
	p.t.Helper()
	b, err := p.store.Balance(p.ctx, ref)
	if err != nil {
		p.t.Fatalf("balance of %v: %v", ref, err)
	}
	return b
}

// TestMakerPnLMatchesTheLedger replays simulated trades through the
// platform's engine, on each store: every trade is priced the same to the kopeck, the
// escrow and the fee accounts hold what the simulation says, and after the
// drawn winner is resolved the treasury has gained exactly the simulated
// maker's P&L and every trader holds their simulated cash and payout.
func TestMakerPnLMatchesTheLedger(t *testing.T) {
	for _, design := range []sim.Kind{sim.Binary, sim.Pool} {
		for seed := uint64(1); seed <= 6; seed++ {
			rng := rand.New(rand.NewPCG(seed, 99))
			c := sim.DefaultConfig()
			c.Design = design
			c.Seed = seed
			c.Outcomes = 2 + rng.IntN(4)
			c.B = 300 + rng.Int64N(5000)
			// Real fees, and any float up to the limit (whose decimal
			// reading takes the slow path of lmsr.ChargeForCost).
			c.Margin = []float64{0.01, 0.03, 0.2, rng.Float64() * 0.2}[rng.IntN(4)]
			c.Mix = sim.Mix{Informed: 0.5, Noise: 0.3, Momentum: 0.1, Arbitrage: 0.1}
			c.Traders, c.Cash, c.Budget, c.Steps = 8, 20_000, 300+rng.Int64N(2000), 150
			for _, st := range stores {
				t.Run(fmt.Sprintf("a %s design of %d outcomes, b %d, margin %v, seed %d, books the same money on %s", design, c.Outcomes, c.B, c.Margin, seed, st.name), func(t *testing.T) {
					replay(t, c, st.open(t))
				})
			}
		}
	}
}

func replay(t *testing.T, c sim.Config, st store) {
	res, err := sim.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trades) < 50 {
		t.Fatalf("only %d trades: too few to test anything", len(res.Trades))
	}
	p := newPlatform(t, st)
	users := make([]int64, c.Traders)
	for k := range users {
		u, _, err := p.accounts.Register(p.ctx, account.Registration{Email: fmt.Sprintf("t%d@example.com", k), Password: "password123", Name: "Trader"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.accounts.Credit(p.ctx, u.ID, c.Cash, false); err != nil {
			t.Fatal(err)
		}
		users[k] = u.ID
	}
	treasury0 := p.balance(account.Treasury)
	np := market.NewPool{Name: "Winner", Margin: c.Margin, B: c.B, Exclusive: c.Design == sim.Pool}
	for i := range c.Outcomes {
		np.Markets = append(np.Markets, market.NewMarket{Name: fmt.Sprintf("Outcome %d", i), Probability: 1 / float64(c.Outcomes)})
	}
	ev, err := p.markets.CreateEvent(p.ctx, p.creator, market.NewEvent{Name: "Simulated", Pools: []market.NewPool{np}})
	if err != nil {
		t.Fatal(err)
	}
	ms := ev.Pools[0].Markets
	if got := treasury0 - p.balance(account.Treasury); got != res.Metrics.Subsidy {
		t.Fatalf("the platform escrowed %d, the simulation %d", got, res.Metrics.Subsidy)
	}

	for n, tr := range res.Trades {
		r := market.Request{UserID: users[tr.Trader], Side: tr.Side, Action: market.ActionBuy, Amount: tr.Budget}
		if tr.Sell {
			r.Action, r.Amount, r.Shares = market.ActionSell, 0, tr.Shares
		}
		out, err := p.markets.Execute(p.ctx, ms[tr.Outcome].ID, r)
		if err == nil {
			err = out.Err
		}
		if err != nil {
			t.Fatalf("trade %d (%+v): the platform refused it: %v", n, tr, err)
		}
		got := out.Trade
		if got.Shares != tr.Shares || got.Amount != tr.Cash || got.Cost != tr.Cost || got.Fee != tr.Fee {
			t.Fatalf("trade %d (%+v): the platform booked shares %d, amount %d, cost %d, fee %d", n, tr, got.Shares, got.Amount, got.Cost, got.Fee)
		}
		// The traded market's price after the trade is the simulation's
		// after the step, to the last bit: within a step only the binary
		// design trades more than one market (an arbitrageur's legs), and
		// its markets are independent.
		if p := out.Market.YesProbability(); p != res.Prices[tr.Step][tr.Outcome] {
			t.Fatalf("trade %d: the platform's price %v, the simulation's %v", n, p, res.Prices[tr.Step][tr.Outcome])
		}
	}

	var fees, escrow int64
	for _, m := range ms {
		fees += p.balance(account.FeeAccount(m.ID))
		escrow += p.balance(account.EscrowAccount(m.ID))
	}
	if fees != res.Metrics.Fees {
		t.Errorf("fee accounts hold %d, the simulation collected %d", fees, res.Metrics.Fees)
	}
	if want := res.Metrics.Subsidy + res.Metrics.Collected; escrow != want {
		t.Errorf("escrow holds %d, want subsidy %d + collected %d", escrow, res.Metrics.Subsidy, res.Metrics.Collected)
	}

	// Resolve to the drawn winner: the pool by its winner's YES, the
	// binary markets one by one.
	for i, m := range ms {
		if c.Design == sim.Pool && i != res.Winner {
			continue
		}
		side := "NO"
		if i == res.Winner {
			side = "YES"
		}
		if err := p.markets.Close(p.ctx, p.creator.ID, ev.ID, m.PoolID, m.ID, side); err != nil {
			t.Fatalf("resolve market %d %s: %v", i, side, err)
		}
	}
	if got := p.balance(account.Treasury) - treasury0; got != res.Metrics.PnL {
		t.Errorf("the treasury gained %d at resolution, the simulated maker's P&L is %d", got, res.Metrics.PnL)
	}
	if res.Metrics.PnL < -res.Metrics.Subsidy || res.Metrics.WorstPnL < -res.Metrics.Subsidy {
		t.Errorf("P&L %d, worst %d, below −subsidy %d", res.Metrics.PnL, res.Metrics.WorstPnL, res.Metrics.Subsidy)
	}
	for k, id := range users {
		b, err := p.accounts.Balances(p.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := res.Cash[k] + res.Paid[k]; b.Balance != want {
			t.Errorf("trader %d holds %d, the simulation says cash %d + payout %d", k, b.Balance, res.Cash[k], res.Paid[k])
		}
	}
	report, err := p.accounts.Audit(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK {
		t.Errorf("audit: %v", report.Problems)
	}
}
