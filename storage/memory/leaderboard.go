package memory

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
)

// The leaderboard's buckets: the memory store updates them in the write
// that makes a trade or a settlement, under s.mu, so its board never
// trails (ApplyLeaderboard has nothing to do).

var _ leaderboard.Store = (*Store)(nil)

// boardFigures are one user's figures of one day, or of all time.
type boardFigures struct {
	pnl, volume, trades int64
}

func (f *boardFigures) add(pnl, volume, trades int64) {
	f.pnl += pnl
	// Volume stops at MaxInt64, as a market's does.
	if volume > math.MaxInt64-f.volume {
		f.volume = math.MaxInt64
	} else {
		f.volume += volume
	}
	f.trades += trades
}

// boardState is the board of the memory store: per user, per UTC day.
type boardState struct {
	days  map[int64]map[time.Time]*boardFigures
	total map[int64]*boardFigures
}

// countBoard adds what eff made to the buckets of its traders that are
// not partner sub-accounts. Callers hold s.mu.
func (s *Store) countBoard(eff *market.Effects) {
	add := func(user int64, at time.Time, pnl, volume, trades int64) {
		if u, ok := s.users[user]; !ok || u.u.PartnerID != 0 {
			return
		}
		if s.board.days == nil {
			s.board.days, s.board.total = map[int64]map[time.Time]*boardFigures{}, map[int64]*boardFigures{}
		}
		days := s.board.days[user]
		if days == nil {
			days = map[time.Time]*boardFigures{}
			s.board.days[user] = days
		}
		d := leaderboard.Day(at)
		if days[d] == nil {
			days[d] = &boardFigures{}
		}
		days[d].add(pnl, volume, trades)
		if s.board.total[user] == nil {
			s.board.total[user] = &boardFigures{}
		}
		s.board.total[user].add(pnl, volume, trades)
	}
	for _, te := range eff.Trades {
		add(te.Trade.UserID, te.Trade.CreatedAt, 0, te.Trade.Cost, 1)
	}
	for _, e := range eff.PnL {
		add(e.Position.UserID, e.At, e.Delta, 0, 0)
	}
}

// Leaderboard implements leaderboard.Store.
func (s *Store) Leaderboard(_ context.Context, q leaderboard.Query) ([]leaderboard.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since, period := q.Since()
	var rows []leaderboard.Row
	for user, total := range s.board.total {
		f := *total
		if period {
			f = boardFigures{}
			n := 0
			for d, g := range s.board.days[user] {
				if !d.Before(since) && !d.After(q.Today) {
					f.add(g.pnl, g.volume, g.trades)
					n++
				}
			}
			if n == 0 {
				continue
			}
		}
		u := s.users[user].u
		rows = append(rows, leaderboard.Row{UserID: user, Name: u.Name, AvatarURL: clonePtr(u.AvatarURL), Hidden: u.ProfileHidden, Level: u.Level,
			PnL: f.pnl, Volume: f.volume, Trades: f.trades})
	}
	slices.SortFunc(rows, func(a, b leaderboard.Row) int {
		if q.By == leaderboard.ByVolume {
			return cmp.Or(cmp.Compare(b.Volume, a.Volume), cmp.Compare(a.UserID, b.UserID))
		}
		return cmp.Or(cmp.Compare(b.PnL, a.PnL), cmp.Compare(a.UserID, b.UserID))
	})
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
	}
	return rows, nil
}

// ApplyLeaderboard implements leaderboard.Applier: the memory store's
// board is written with its trades, so there is never anything to apply.
func (s *Store) ApplyLeaderboard(context.Context, int) (int, error) { return 0, nil }

// LeaderboardCursor is the last change-log entry the board counts: all
// of them, always.
func (s *Store) LeaderboardCursor(ctx context.Context) (int64, error) {
	b, err := s.changes.ChangeBounds(ctx)
	return b.Last, err
}

// LeaderboardTotals implements leaderboard.Store.
func (s *Store) LeaderboardTotals(_ context.Context, userID int64) (leaderboard.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := leaderboard.Row{UserID: userID}
	if f := s.board.total[userID]; f != nil {
		r.PnL, r.Volume, r.Trades = f.pnl, f.volume, f.trades
	}
	return r, nil
}
