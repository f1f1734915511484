package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// follows are who follows which event: by event, each follower's time.
// Made on first use.
type follows map[int64]map[int64]time.Time

// Follow implements market.Store.
func (s *Store) Follow(_ context.Context, userID, eventID int64, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.events[eventID]; !ok {
		return market.ErrEventNotFound
	}
	if s.follows == nil {
		s.follows = follows{}
	}
	if s.follows[eventID] == nil {
		s.follows[eventID] = map[int64]time.Time{}
	}
	if _, ok := s.follows[eventID][userID]; !ok {
		// As PostgreSQL keeps it, to the microsecond.
		s.follows[eventID][userID] = at.UTC().Truncate(time.Microsecond)
	}
	return nil
}

// Unfollow implements market.Store.
func (s *Store) Unfollow(_ context.Context, userID, eventID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.follows[eventID], userID)
	return nil
}

// Following implements market.Store.
func (s *Store) Following(_ context.Context, userID int64, after market.FollowCursor, limit int) ([]market.Followed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []market.Followed
	for ev, users := range s.follows {
		if at, ok := users[userID]; ok {
			all = append(all, market.Followed{EventID: ev, At: at})
		}
	}
	newestFirst := func(a, b market.Followed) int {
		return cmp.Or(b.At.Compare(a.At), cmp.Compare(b.EventID, a.EventID))
	}
	slices.SortFunc(all, newestFirst)
	out := []market.Followed{}
	for _, f := range all {
		if after.EventID != 0 && newestFirst(market.Followed(after), f) >= 0 {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, f)
	}
	return out, nil
}

// followersOf are the followers of event eventID, ascending; callers hold
// s.mu.
func (s *Store) followersOf(eventID int64) []int64 {
	return slices.Sorted(maps.Keys(s.follows[eventID]))
}

// notifyFollowers tells the followers of effs' markets' events that are
// not among the holders the settlement told (its own notifications) of
// each market's resolution, as a holder who was paid nothing is told.
// Callers hold s.mu, after writeAll.
func (s *Store) notifyFollowers(effs []*market.Effects) {
	for _, eff := range effs {
		m := eff.Market
		if m == nil {
			continue
		}
		told := map[int64]bool{}
		var at time.Time
		for _, n := range eff.Notifications {
			if n.Type == social.TypeMarketResolved {
				told[n.UserID] = true
			}
		}
		if m.ResolvedAt != nil {
			at = *m.ResolvedAt
		}
		won := m.Outcome()
		for _, u := range s.followersOf(m.EventID) {
			if told[u] {
				continue
			}
			s.addNotification(social.Notification{UserID: u, Type: social.TypeMarketResolved, RelatedID: m.EventID,
				RelatedType: social.RelatedEvent, CreatedAt: at, Data: social.NotificationData{MarketName: m.Name, MarketNameRu: m.NameRu, Won: won, Following: true}})
		}
	}
}
