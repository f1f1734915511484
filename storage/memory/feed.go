package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/predictkit/predictkit/market"
)

// feedRow is an event the feed considers, with its sort keys.
type feedRow struct {
	e     *market.Event
	stats market.FeedStats
}

// Feed implements market.Store: it reads every event, as the memory store
// reads everything, and works out each one's stats on the way.
func (s *Store) Feed(_ context.Context, q market.FeedQuery) ([]*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []feedRow
	for id, ev := range s.events {
		if !ev.IsActive || (q.Tag != "" && !slices.Contains(ev.Tags, q.Tag)) {
			continue
		}
		e := s.event(id)
		open := false
		for _, p := range e.Pools {
			for _, m := range p.Markets {
				open = open || !m.Resolved
			}
		}
		if (q.Status == market.FeedOpen && !open) || (q.Status == market.FeedResolved && open) {
			continue
		}
		if !feedMatch(e, q.Words) {
			continue
		}
		rows = append(rows, feedRow{e: e, stats: s.feedStats(e, q.Since)})
	}
	slices.SortFunc(rows, func(a, b feedRow) int { return feedOrder(q.Sort, a, b) })
	if c := q.After; c != nil {
		after := feedRow{e: &market.Event{ID: c.ID}}
		switch q.Sort {
		case market.SortTrending:
			after.stats.Volume24h = c.Key
		case market.SortVolume:
			after.stats.Volume = c.Key
		case market.SortClosing:
			after.stats.ClosesAt = time.UnixMicro(c.Key).UTC()
		}
		i, _ := slices.BinarySearchFunc(rows, after, func(r, t feedRow) int { return feedOrder(q.Sort, r, t) })
		for i < len(rows) && feedOrder(q.Sort, rows[i], after) <= 0 {
			i++
		}
		rows = rows[i:]
	}
	rows = page(rows, q.Limit, q.Offset)
	out := make([]*market.Event, 0, len(rows))
	for _, r := range rows {
		st := r.stats
		r.e.Stats = &st
		for _, p := range r.e.Pools {
			for _, m := range p.Markets {
				s.sparkline(m, q.Since)
			}
		}
		out = append(out, r.e)
	}
	return out, nil
}

// feedOrder compares two rows in the order of sort, ties by id in the
// sort's direction.
func feedOrder(sort string, a, b feedRow) int {
	switch sort {
	case market.SortTrending:
		return cmp.Or(cmp.Compare(b.stats.Volume24h, a.stats.Volume24h), cmp.Compare(b.e.ID, a.e.ID))
	case market.SortVolume:
		return cmp.Or(cmp.Compare(b.stats.Volume, a.stats.Volume), cmp.Compare(b.e.ID, a.e.ID))
	case market.SortClosing:
		return cmp.Or(a.stats.ClosesAt.Compare(b.stats.ClosesAt), cmp.Compare(a.e.ID, b.e.ID))
	}
	return cmp.Compare(b.e.ID, a.e.ID)
}

// feedMatch reports whether e's English texts, or its Russian texts,
// hold words (market.FeedMatches).
func feedMatch(e *market.Event, words []string) bool {
	if len(words) == 0 {
		return true
	}
	en, ru := []string{e.Name}, []string{e.NameRu}
	for _, p := range e.Pools {
		en, ru = append(en, p.Name, p.Rules), append(ru, p.NameRu, p.RulesRu)
		for _, m := range p.Markets {
			en, ru = append(en, m.Name), append(ru, m.NameRu)
		}
	}
	return market.FeedMatches(words, en...) || market.FeedMatches(words, ru...)
}

// feedStats works out e's FeedStats from its markets and their candles.
// Called with mu held.
func (s *Store) feedStats(e *market.Event, since time.Time) market.FeedStats {
	var st market.FeedStats
	var soonest, latest time.Time
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			for _, c := range s.candles[candleKey{m.ID, 24 * time.Hour}] {
				st.Volume += c.Volume
			}
			for _, c := range s.candles[candleKey{m.ID, time.Hour}] {
				if !c.Start.Before(since) {
					st.Volume24h += c.Volume
				}
			}
			if !m.Resolved && (soonest.IsZero() || m.FinishAt.Before(soonest)) {
				soonest = m.FinishAt
			}
			if m.FinishAt.After(latest) {
				latest = m.FinishAt
			}
		}
	}
	st.ClosesAt = soonest
	if soonest.IsZero() {
		st.ClosesAt = latest
	}
	// As PostgreSQL keeps it, to the microsecond.
	st.ClosesAt = st.ClosesAt.Truncate(time.Microsecond).UTC()
	return st
}

// sparkline sets m's Sparkline from its hourly candles. Called with mu
// held.
func (s *Store) sparkline(m *market.Market, since time.Time) {
	cs := s.candles[candleKey{m.ID, time.Hour}]
	i, _ := slices.BinarySearchFunc(cs, since, func(c market.Candle, t time.Time) int { return c.Start.Compare(t) })
	var before *float64
	if i > 0 {
		before = &cs[i-1].Close
	}
	m.Sparkline = market.Sparkline(since, m.CreatedAt, before, cs[i:], m.YesProbability())
}
