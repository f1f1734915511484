package server

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// DemoHistory is how far back the demo's history starts: the original
// demo (the Demo Cup final, Alice and Bob) happened then, and the
// platform's events and trades (demo_events.go) fill the days since.
const DemoHistory = 14 * 24 * time.Hour

// DemoMariaEmail is the demo trader with the busiest profile: positions
// on many events, a payout from the resolved market and a refund from the
// voided one. The README's profile screenshot is hers. Her password, as
// every demo user's, is DemoPassword.
const DemoMariaEmail = "maria@demo.predictkit"

// DemoPlatform is what SeedDemoPlatform made.
type DemoPlatform struct {
	// UserIDs are the demo's traders and its second creator, in the
	// order of demoPeople.
	UserIDs []int64
	// EventIDs are the events of demoEvents, in order.
	EventIDs []int64
	// CupEventID is the event whose exclusive pool asks "Who lifts the
	// cup?"; ResolvedMarketID and VoidedMarketID the markets settled in
	// the past (winners paid; every stake refunded).
	CupEventID       int64
	ResolvedMarketID int64
	VoidedMarketID   int64
	// Trades is how many trades the history made.
	Trades int
}

// demoAction is one step of the history, at its time.
type demoAction struct {
	at time.Time
	do func(ctx context.Context) error
}

// demoRun is the state of one seeding.
type demoRun struct {
	accounts *account.Service
	markets  *market.Service
	comments *social.Service
	clock    *demoClock
	now      time.Time
	rng      *rand.Rand
	out      *DemoPlatform
	people   map[string]*account.User // by e-mail
	made     []*market.Event          // by demoEvents index, once created
	comment  map[[2]int]int64         // (event, comment) index → comment id
	// held is each trader's shares, by (user, market, side), for sales.
	held    map[heldKey]int64
	actions []demoAction
}

type heldKey struct {
	user, market int64
	side         market.Side
}

// SeedDemoPlatform adds to the original demo d, through the services, a
// platform's worth of history: the people of demoPeople, the tags and
// events of demoEvents, created on past days, with trades by the traders
// spread over those days (denser in the last 24 hours), comments, one
// market resolved by its creator (winners paid) and one voided by the
// operator (every stake refunded). Each trade goes through
// market.Service.Execute, as a user's does.
//
// now is the real time; clock, when not nil, is set to each step's time
// in turn (and left at the last one): the services and the store stamp
// what they record with it. Without a clock everything is recorded now,
// in the same order. The random choices (amounts, traders, times within
// their day) come from a fixed seed, so that every demo has the same ids,
// prices and balances.
func SeedDemoPlatform(ctx context.Context, accounts *account.Service, markets *market.Service, comments *social.Service, d *Demo, clock *demoClock, now time.Time) (*DemoPlatform, error) {
	r := &demoRun{
		accounts: accounts, markets: markets, comments: comments, clock: clock, now: now,
		rng:     rand.New(rand.NewPCG(33, 2026)),
		out:     &DemoPlatform{},
		people:  map[string]*account.User{},
		made:    make([]*market.Event, len(demoEvents)),
		comment: map[[2]int]int64{},
		held:    map[heldKey]int64{},
	}
	for email, id := range map[string]int64{DemoCreatorEmail: d.CreatorID, DemoAliceEmail: d.AliceID, DemoBobEmail: d.BobID} {
		u, err := accounts.User(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("demo user %s: %w", email, err)
		}
		r.people[email] = u
	}
	start := now.Add(-DemoHistory)
	r.planPeople(start.Add(2 * time.Hour))
	for i := range demoEvents {
		if err := r.planEvent(i); err != nil {
			return nil, err
		}
	}
	// People read their notifications now and then: what came since this
	// morning is still unread.
	r.plan(now.Add(-8*time.Hour), func(ctx context.Context) error {
		for _, id := range r.out.UserIDs {
			if _, err := r.comments.MarkAllRead(ctx, id); err != nil {
				return fmt.Errorf("demo notifications of user %d: %w", id, err)
			}
		}
		return nil
	})
	// Stable: steps planned at the same time keep their planned order.
	slices.SortStableFunc(r.actions, func(a, b demoAction) int { return a.at.Compare(b.at) })
	for _, a := range r.actions {
		if err := ctx.Err(); err != nil {
			return nil, err // the server is stopping while it starts
		}
		if r.clock != nil {
			r.clock.set(a.at)
		}
		if err := a.do(ctx); err != nil {
			return nil, err
		}
	}
	for i, e := range r.made {
		r.out.EventIDs = append(r.out.EventIDs, e.ID)
		if demoEvents[i].cup {
			r.out.CupEventID = e.ID
		}
	}
	return r.out, nil
}

func (r *demoRun) plan(at time.Time, do func(ctx context.Context) error) {
	r.actions = append(r.actions, demoAction{at: at, do: do})
}

// planPeople registers demoPeople from at on, a few minutes apart, with
// their profiles and money, and adds the tags.
func (r *demoRun) planPeople(at time.Time) {
	r.plan(at, func(ctx context.Context) error {
		for _, t := range demoTags {
			if _, _, err := r.markets.PutTag(ctx, t.Slug, t.Name, t.NameRu); err != nil {
				return fmt.Errorf("demo tag %s: %w", t.Slug, err)
			}
		}
		return nil
	})
	for i, p := range demoPeople {
		r.plan(at.Add(time.Duration(i+1)*37*time.Minute), func(ctx context.Context) error {
			u, _, err := r.accounts.Register(ctx, account.Registration{Email: p.email, Password: DemoPassword, Name: p.name, Language: p.language, Seeded: true})
			if err != nil {
				return fmt.Errorf("register %s: %w", p.email, err)
			}
			nick := p.nickname
			if u, err = r.accounts.UpdateProfile(ctx, u.ID, account.ProfilePatch{Nickname: &nick}); err != nil {
				return fmt.Errorf("demo nickname %s: %w", nick, err)
			}
			if _, err := r.accounts.Credit(ctx, u.ID, p.deposit, false); err != nil {
				return fmt.Errorf("credit %s: %w", p.email, err)
			}
			if p.creator {
				yes := true
				if u, err = r.accounts.SetRoles(ctx, u.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
					return fmt.Errorf("make %s a creator: %w", p.email, err)
				}
			}
			r.people[p.email] = u
			r.out.UserIDs = append(r.out.UserIDs, u.ID)
			return nil
		})
	}
}

// user is the demo user with e-mail email, registered by now.
func (r *demoRun) user(ctx context.Context, email string) (*account.User, error) {
	if u, ok := r.people[email]; ok {
		return u, nil
	}
	return nil, fmt.Errorf("demo user %s: not registered yet", email)
}

// planEvent plans event i's creation, trades, comments and end.
func (r *demoRun) planEvent(i int) error {
	de := demoEvents[i]
	created := r.now.Add(-de.created)
	finish := r.now.Add(de.closesIn)
	if !finish.After(created) {
		return fmt.Errorf("demo event %q closes before it opens", de.event.Name)
	}
	r.plan(created, func(ctx context.Context) error {
		creator, err := r.user(ctx, de.creator)
		if err != nil {
			return err
		}
		in := de.event
		in.Pools = slices.Clone(in.Pools)
		for j := range in.Pools {
			in.Pools[j].FinishAt = &finish
		}
		e, err := r.markets.CreateEvent(ctx, creator, in)
		if err != nil {
			return fmt.Errorf("create demo event %q: %w", in.Name, err)
		}
		yes := true
		if err := r.markets.SetActive(ctx, creator.ID, e.ID, &yes); err != nil {
			return fmt.Errorf("activate demo event %q: %w", in.Name, err)
		}
		r.made[i] = e
		return nil
	})
	// Trading runs from half an hour after the event opens until it
	// closes or the demo's now, whichever is first: some days of it, then
	// the last 24 hours, busier.
	until := finish
	if r.now.Before(until) {
		until = r.now
	}
	until = until.Add(-10 * time.Minute)
	from := created.Add(30 * time.Minute)
	recent := r.now.Add(-24 * time.Hour)
	for j, p := range de.event.Pools {
		runs := [][]int{} // the markets each run of trades moves: the pool, or each market alone
		if p.Exclusive {
			runs = append(runs, nil)
		} else {
			for k := range p.Markets {
				runs = append(runs, []int{k})
			}
		}
		for _, only := range runs {
			n := de.trades
			if p.Exclusive {
				n *= 2
			}
			var times []time.Time
			if until.After(recent) && from.Before(recent) {
				// Half in the last day, so that its hourly sparkline has
				// shape; the rest over the days before.
				old := n / 2
				times = append(r.spread(from, recent, old), r.spread(recent.Add(5*time.Minute), until, n-old)...)
			} else {
				times = r.spread(from, until, n)
			}
			for k, at := range times {
				progress := float64(k+1) / float64(len(times))
				r.planTrade(at, i, j, only, progress)
			}
		}
	}
	for k, c := range de.comments {
		r.plan(r.now.Add(-c.ago), func(ctx context.Context) error {
			author, err := r.user(ctx, c.by)
			if err != nil {
				return err
			}
			var parent int64
			if c.replyTo > 0 {
				parent = r.comment[[2]int{i, c.replyTo - 1}]
			}
			cm, err := r.comments.Post(ctx, author, r.made[i].ID, c.text, parent)
			if err != nil {
				return fmt.Errorf("demo comment on %q: %w", de.event.Name, err)
			}
			r.comment[[2]int{i, k}] = cm.ID
			return nil
		})
	}
	if s := de.settle; s != nil {
		if at := r.now.Add(-s.ago); !at.After(finish) || at.After(r.now) {
			return fmt.Errorf("demo event %q settles at %s, not between its close and now", de.event.Name, at)
		}
		r.plan(r.now.Add(-s.ago), func(ctx context.Context) error { return r.settle(ctx, i, s) })
	}
	return nil
}

// spread returns n times between from and to, in order, each at a random
// point of its own equal share of the span.
func (r *demoRun) spread(from, to time.Time, n int) []time.Time {
	if n <= 0 || !to.After(from) {
		return nil
	}
	step := to.Sub(from) / time.Duration(n)
	out := make([]time.Time, n)
	for k := range out {
		out[k] = from.Add(time.Duration(k)*step + time.Duration(r.rng.Int64N(int64(step))))
	}
	return out
}

// planTrade plans one trade at at on pool j of event i: on market only[0]
// of a pool of separate markets, or on whichever answer of an exclusive
// pool (only nil) lies furthest below where the story has it by
// progress (0 to 1). The trader, the amount and whether it is a sale are
// drawn now, from the fixed seed; the side is chosen when the trade runs,
// from the price then: toward where the story heads, give or take noise.
func (r *demoRun) planTrade(at time.Time, i, j int, only []int, progress float64) {
	trader := demoTraders[r.rng.IntN(len(demoTraders))]
	size := 0.15 + r.rng.Float64()*r.rng.Float64()*1.6 // mostly small, now and then large
	sell := r.rng.Float64() < 0.12
	// Not everyone agrees with the crowd: some trades go against where
	// the price heads, which gives both sides holders and the chart its
	// wiggles.
	against := r.rng.Float64() < 0.3
	noise := r.rng.NormFloat64() * 0.03
	pick := r.rng.Float64()
	r.out.Trades++
	r.plan(at, func(ctx context.Context) error {
		de := demoEvents[i]
		pool := r.made[i].Pools[j]
		p, err := r.markets.Pool(ctx, pool.ID)
		if err != nil {
			return err
		}
		u, err := r.user(ctx, trader)
		if err != nil {
			return err
		}
		// k is the market to trade; want its YES probability by now.
		k, want := 0, 0.0
		if only != nil {
			k = only[0]
			m := de.event.Pools[j].Markets[k]
			want = m.Probability + (de.ends[j][k]-m.Probability)*progress + noise
		} else {
			gap := math.Inf(-1)
			for a, m := range de.event.Pools[j].Markets {
				w := m.Probability + (de.ends[j][a]-m.Probability)*progress
				if g := w - p.Markets[a].YesProbability(); g > gap {
					k, want, gap = a, w+noise, g
				}
			}
			if pick < 0.25 { // now and then, any answer
				k = int(pick * 4 * float64(len(p.Markets)))
				want = 1
			}
		}
		m := p.Markets[k]
		side := market.Yes
		if m.YesProbability() > want && !m.Exclusive {
			side = market.No
		}
		if against && !m.Exclusive {
			side = side.Opposite()
		}
		req := market.Request{UserID: u.ID, Action: market.ActionBuy, Side: side, Amount: max(1000, int64(size*float64(pool.B)/25))}
		if held := r.held[heldKey{u.ID, m.ID, side.Opposite()}]; sell && held > 1 {
			// Taking profit (or cutting a loss) moves the price the
			// same way as the buy would.
			req = market.Request{UserID: u.ID, Action: market.ActionSell, Side: side.Opposite(), Shares: held / 2}
		}
		res, err := r.markets.Execute(ctx, m.ID, req)
		if err != nil {
			return fmt.Errorf("demo trade on %q by %s: %w", m.Name, trader, err)
		}
		key := heldKey{u.ID, m.ID, req.Side}
		if req.Action == market.ActionSell {
			r.held[key] -= res.Trade.Shares
		} else {
			r.held[key] += res.Trade.Shares
		}
		return nil
	})
}

// settle ends event i's first market as s says, after its amendment.
func (r *demoRun) settle(ctx context.Context, i int, s *demoSettlement) error {
	e := r.made[i]
	creator, err := r.user(ctx, demoEvents[i].creator)
	if err != nil {
		return err
	}
	if s.amendment != "" {
		if _, err := r.markets.AddAmendment(ctx, creator.ID, e.ID, s.amendment, s.amendmentRu); err != nil {
			return fmt.Errorf("demo amendment of %q: %w", e.Name, err)
		}
	}
	m := e.Pools[0].Markets[0]
	if s.operator {
		err = r.markets.Resolve(ctx, m.ID, s.outcome)
	} else {
		err = r.markets.Close(ctx, creator.ID, e.ID, e.Pools[0].ID, m.ID, s.outcome)
	}
	if err != nil {
		return fmt.Errorf("demo settlement of %q: %w", e.Name, err)
	}
	if s.outcome == "VOID" {
		r.out.VoidedMarketID = m.ID
	} else {
		r.out.ResolvedMarketID = m.ID
	}
	return nil
}
