package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/stats"
)

// The statistics' aggregates: the memory store counts them in the writes
// that make the trades, the resolutions, the users, the credited
// deposits and the paid withdrawals, under s.mu, so they never trail
// (ApplyStats has nothing to do). They follow the definitions the
// PostgreSQL consumer applies (storage/postgres/stats.go).

var (
	_ stats.Store   = (*Store)(nil)
	_ stats.Applier = (*Store)(nil)
)

// statsState holds the aggregates; made on first use.
type statsState struct {
	// days' OpenInterest is the day's change of it, not the running figure.
	days       map[time.Time]*stats.Day
	dayTraders map[time.Time]map[int64]bool
	traders    map[int64]bool
	// markets' running open interest, and whether it has left (resolved).
	markets    map[int64]*statsMarket
	marketDays map[time.Time]map[int64]*stats.TopMarket
}

type statsMarket struct {
	open     int64
	resolved bool
}

func (s *Store) statsTables() *statsState {
	if s.stats == nil {
		s.stats = &statsState{days: map[time.Time]*stats.Day{}, dayTraders: map[time.Time]map[int64]bool{},
			traders: map[int64]bool{}, markets: map[int64]*statsMarket{}, marketDays: map[time.Time]map[int64]*stats.TopMarket{}}
	}
	return s.stats
}

func (st *statsState) day(d time.Time) *stats.Day {
	x := st.days[d]
	if x == nil {
		x = &stats.Day{Date: d}
		st.days[d] = x
	}
	return x
}

func (st *statsState) market(id int64) *statsMarket {
	m := st.markets[id]
	if m == nil {
		m = &statsMarket{}
		st.markets[id] = m
	}
	return m
}

// countStats adds eff's trades and resolutions. It runs before write
// stores eff's markets, so that a market resolving now is told from one
// resolved before. Callers hold s.mu.
func (s *Store) countStats(eff *market.Effects) {
	st := s.statsTables()
	for _, te := range eff.Trades {
		t := te.Trade
		d := stats.DayOf(t.CreatedAt)
		day := st.day(d)
		day.Volume += t.Cost
		day.Fees += t.Fee
		day.Trades++
		if st.dayTraders[d] == nil {
			st.dayTraders[d] = map[int64]bool{}
		}
		if !st.dayTraders[d][t.UserID] {
			st.dayTraders[d][t.UserID] = true
			day.ActiveTraders++
		}
		st.traders[t.UserID] = true
		// A buy brings its cost (its charge less the fee) into the
		// market, a sell takes out what it pays.
		oi := t.Cost
		if t.Action == market.ActionSell {
			oi = -t.Amount
		}
		day.OpenInterest += oi
		st.market(t.MarketID).open += oi
		if st.marketDays[d] == nil {
			st.marketDays[d] = map[int64]*stats.TopMarket{}
		}
		md := st.marketDays[d][t.MarketID]
		if md == nil {
			md = &stats.TopMarket{MarketID: t.MarketID}
			st.marketDays[d][t.MarketID] = md
		}
		md.Volume += t.Cost
		md.Trades++
	}
	resolve := func(m *market.Market) {
		if m == nil || !m.Resolved || m.ResolvedAt == nil {
			return
		}
		if old := s.markets[m.ID]; old == nil || old.Resolved {
			return
		}
		sm := st.market(m.ID)
		if sm.resolved {
			return
		}
		sm.resolved = true
		st.day(stats.DayOf(*m.ResolvedAt)).OpenInterest -= sm.open
	}
	resolve(eff.Market)
	for _, m := range eff.Pool {
		if eff.Market == nil || m.ID != eff.Market.ID {
			resolve(m)
		}
	}
}

// countSignup counts a registration at. Callers hold s.mu.
func (s *Store) countSignup(at time.Time) {
	s.statsTables().day(stats.DayOf(at)).NewUsers++
}

// countMoney counts the credited deposits and paid withdrawals that es
// tell of. Callers hold s.mu.
func (s *Store) countMoney(es []changelog.Entry) {
	for _, e := range es {
		if d, dep, wd, ok := stats.Money(e.Type, e.Data); ok {
			day := s.statsTables().day(d)
			day.Deposits += dep
			day.Withdrawals += wd
		}
	}
}

// ApplyStats implements stats.Applier: the memory store's aggregates are
// written with what they count, so there is never anything to apply.
func (s *Store) ApplyStats(context.Context, int) (int, error) { return 0, nil }

// StatsDays implements stats.Store.
func (s *Store) StatsDays(_ context.Context, from, to time.Time) (int64, []stats.Day, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statsTables()
	var before int64
	var days []stats.Day
	for d, x := range st.days {
		switch {
		case d.Before(from):
			before += x.OpenInterest
		case !d.After(to):
			days = append(days, *x)
		}
	}
	slices.SortFunc(days, func(a, b stats.Day) int { return a.Date.Compare(b.Date) })
	open := before
	for i := range days {
		open += days[i].OpenInterest
		days[i].OpenInterest = open
	}
	return before, days, nil
}

// StatsTotals implements stats.Store.
func (s *Store) StatsTotals(context.Context) (stats.Totals, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statsTables()
	t := stats.Totals{Traders: int64(len(st.traders))}
	for _, x := range st.days {
		t.Volume += x.Volume
		t.Fees += x.Fees
		t.Trades += x.Trades
		t.Users += x.NewUsers
		t.Deposits += x.Deposits
		t.Withdrawals += x.Withdrawals
		t.OpenInterest += x.OpenInterest
	}
	return t, nil
}

// StatsTopMarkets implements stats.Store.
func (s *Store) StatsTopMarkets(_ context.Context, day time.Time, limit int) ([]stats.TopMarket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []stats.TopMarket{}
	for _, md := range s.statsTables().marketDays[stats.DayOf(day)] {
		out = append(out, *md)
	}
	slices.SortFunc(out, func(a, b stats.TopMarket) int {
		return cmp.Or(cmp.Compare(b.Volume, a.Volume), cmp.Compare(a.MarketID, b.MarketID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		if m := s.markets[out[i].MarketID]; m != nil {
			out[i].EventID, out[i].MarketName = m.EventID, m.Name
			if e := s.events[m.EventID]; e != nil {
				out[i].EventName = e.Name
			}
		}
	}
	return out, nil
}

// StatsCursor is the last change-log entry the statistics count: all of
// them, always.
func (s *Store) StatsCursor(ctx context.Context) (int64, error) {
	b, err := s.changes.ChangeBounds(ctx)
	return b.Last, err
}
