package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/social"
)

// The demo users, all with the password DemoPassword.
const (
	DemoCreatorEmail = "creator@demo.predictkit"
	DemoAliceEmail   = "alice@demo.predictkit"
	DemoBobEmail     = "bob@demo.predictkit"
	DemoPassword     = "predictkit-demo"
)

type demoParams struct {
	fx.In
	LC       fx.Lifecycle
	Config   Config
	Kind     StoreKind
	Accounts *account.Service
	Markets  *market.Service
	P2P      *p2p.Service
	Social   *social.Service
	Store    Store
	Logger   *slog.Logger
}

// seedDemo seeds the demo data at start when Config.Demo is set and the
// store is not PostgreSQL.
func seedDemo(p demoParams) {
	if !p.Config.Demo || p.Kind == "postgres" {
		return
	}
	// The demo is two weeks of history (demo_history.go): its clock is
	// set to each step's time while it is seeded, then is the real one.
	clock := installDemoClock(p.Store, p.Accounts, p.Markets, p.Social)
	p.LC.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		now := time.Now().UTC().Truncate(time.Microsecond)
		if clock != nil {
			defer clock.reset()
			clock.set(now.Add(-DemoHistory))
		}
		d, err := SeedDemo(ctx, p.Accounts, p.Markets)
		if err != nil {
			return fmt.Errorf("demo data: %w", err)
		}
		if err := SeedDemoP2P(ctx, p.Accounts, p.P2P, d); err != nil {
			return fmt.Errorf("demo data: %w", err)
		}
		platform, err := SeedDemoPlatform(ctx, p.Accounts, p.Markets, p.Social, d, clock, now)
		if err != nil {
			return fmt.Errorf("demo data: %w", err)
		}
		p.Logger.Info("demo data ready",
			slog.String("creator", DemoCreatorEmail),
			slog.String("traders", DemoAliceEmail+", "+DemoBobEmail),
			slog.String("password", DemoPassword),
			slog.Int64("event_id", d.EventID),
			slog.Int("events", 1+len(platform.EventIDs)),
			slog.Int("trades", platform.Trades),
		)
		return nil
	}})
}

// Demo is what SeedDemo made.
type Demo struct {
	CreatorID, AliceID, BobID int64
	EventID                   int64
	PoolIDs                   []int64
	MarketIDs                 []int64
}

// SeedDemo creates, through the services, a creator and two credited
// traders (password DemoPassword), the tags football and finals, an
// active event carrying both with two pools of two markets each, and a
// few trades.
func SeedDemo(ctx context.Context, accounts *account.Service, markets *market.Service) (*Demo, error) {
	d := &Demo{}
	reg := func(email, name string, balance, bonus int64) (*account.User, error) {
		u, _, err := accounts.Register(ctx, account.Registration{Email: email, Password: DemoPassword, Name: name, Seeded: true})
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", email, err)
		}
		if balance > 0 {
			if _, err := accounts.Credit(ctx, u.ID, balance, false); err != nil {
				return nil, fmt.Errorf("credit %s: %w", email, err)
			}
		}
		if bonus > 0 {
			if _, err := accounts.Credit(ctx, u.ID, bonus, true); err != nil {
				return nil, fmt.Errorf("credit bonus %s: %w", email, err)
			}
		}
		return u, nil
	}
	creator, err := reg(DemoCreatorEmail, "Demo Creator", 100_000, 0)
	if err != nil {
		return nil, err
	}
	yes := true
	if creator, err = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes, IsStatsViewer: &yes}); err != nil {
		return nil, fmt.Errorf("make creator: %w", err)
	}
	alice, err := reg(DemoAliceEmail, "Alice", 1_000_000, 50_000)
	if err != nil {
		return nil, err
	}
	bob, err := reg(DemoBobEmail, "Bob", 1_000_000, 0)
	if err != nil {
		return nil, err
	}
	d.CreatorID, d.AliceID, d.BobID = creator.ID, alice.ID, bob.ID

	for _, t := range []market.Tag{{Slug: "football", Name: "Football", NameRu: "Футбол"}, {Slug: "finals", Name: "Finals", NameRu: "Финалы"}} {
		if _, _, err := markets.PutTag(ctx, t.Slug, t.Name, t.NameRu); err != nil {
			return nil, fmt.Errorf("tag %s: %w", t.Slug, err)
		}
	}
	e, err := markets.CreateEvent(ctx, creator, market.NewEvent{
		Name: "Demo Cup final", NameRu: "Финал Демо-кубка", Tags: []string{"football", "finals"},
		Pools: []market.NewPool{
			{Name: "Who lifts the cup?", NameRu: "Кто возьмёт кубок?",
				Rules: "Resolves on the official result after extra time and penalties.", RulesRu: "По официальному итогу с учётом овертайма и пенальти.",
				Margin: 0.03, B: 1_000_000,
				Markets: []market.NewMarket{
					{Name: "Northside FC", NameRu: "Нортсайд", Probability: 0.55, YesName: "Wins", NoName: "Does not win"},
					{Name: "Southbay United", NameRu: "Саутбэй Юнайтед", Probability: 0.45, YesName: "Wins", NoName: "Does not win"},
				}},
			{Name: "Goals", NameRu: "Голы",
				Rules: "Regular time only.", RulesRu: "Только основное время.",
				Margin: 0.02, B: 500_000,
				Markets: []market.NewMarket{
					{Name: "Over 2.5 goals", NameRu: "Больше 2.5 голов", Probability: 0.5},
					{Name: "Both teams score", NameRu: "Обе забьют", Probability: 0.6},
				}},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create event: %w", err)
	}
	d.EventID = e.ID
	for _, p := range e.Pools {
		d.PoolIDs = append(d.PoolIDs, p.ID)
		for _, m := range p.Markets {
			d.MarketIDs = append(d.MarketIDs, m.ID)
		}
	}
	if err := markets.SetActive(ctx, creator.ID, e.ID, &yes); err != nil {
		return nil, fmt.Errorf("activate event: %w", err)
	}
	m := d.MarketIDs
	trades := []struct {
		market int64
		req    market.Request
	}{
		{m[0], market.Request{UserID: alice.ID, Action: market.ActionBuy, Side: market.Yes, Amount: 50_000}},
		{m[0], market.Request{UserID: bob.ID, Action: market.ActionBuy, Side: market.No, Amount: 30_000}},
		{m[2], market.Request{UserID: bob.ID, Action: market.ActionBuy, Side: market.Yes, Amount: 20_000}},
		{m[3], market.Request{UserID: alice.ID, Action: market.ActionBuy, Side: market.No, Amount: 10_000, UseBonus: true}},
	}
	var aliceShares int64
	for i, t := range trades {
		r, err := markets.Execute(ctx, t.market, t.req)
		if err != nil {
			return nil, fmt.Errorf("demo trade %d: %w", i, err)
		}
		if i == 0 {
			aliceShares = r.Trade.Shares
		}
	}
	if _, err := markets.Execute(ctx, m[0], market.Request{UserID: alice.ID, Action: market.ActionSell, Side: market.Yes, Shares: aliceShares / 2}); err != nil {
		return nil, fmt.Errorf("demo sale: %w", err)
	}
	return d, nil
}
