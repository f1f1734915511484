package memory

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// What the live stream reads besides the change log: a resolution's
// settlement notifications and its holders' balances, and the tickets a
// browser opens its stream with.

type ticketRec struct {
	user    int64
	expires time.Time
}

// SettlementNotifications returns the market_resolved notifications about
// event eventID made at at (the resolution's time) for any of users.
func (s *Store) SettlementNotifications(_ context.Context, eventID int64, at time.Time, users []int64) ([]*social.Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*social.Notification
	for _, u := range users {
		for _, n := range s.notifications[u] {
			if n.Type == social.TypeMarketResolved && n.RelatedType == social.RelatedEvent && n.RelatedID == eventID && n.CreatedAt.Equal(at) {
				c := *n
				out = append(out, &c)
			}
		}
	}
	return out, nil
}

// BalancesOf returns the balances of users (zero for a user with no
// postings).
func (s *Store) BalancesOf(_ context.Context, users []int64) (map[int64]account.Balances, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int64]account.Balances, len(users))
	for _, u := range users {
		out[u] = account.Balances{Balance: s.balance(account.UserAccount(u)), Bonus: s.balance(account.BonusAccount(u))}
	}
	return out, nil
}

// CreateStreamTicket stores a stream ticket's hash for userID until
// expiresAt, and forgets the tickets expired by then.
func (s *Store) CreateStreamTicket(_ context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tickets == nil {
		s.tickets = map[string]ticketRec{}
	}
	now := s.now()
	for k, t := range s.tickets {
		if !t.expires.After(now) {
			delete(s.tickets, k)
		}
	}
	s.tickets[string(hash)] = ticketRec{user: userID, expires: expiresAt}
	return nil
}

// UseStreamTicket takes the ticket with hash, once: it returns its user
// and true if the ticket exists and has not expired at now, and forgets
// it either way.
func (s *Store) UseStreamTicket(_ context.Context, hash []byte, now time.Time) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tickets[string(hash)]
	if !ok {
		return 0, false, nil
	}
	delete(s.tickets, string(hash))
	if !t.expires.After(now) {
		return 0, false, nil
	}
	return t.user, true, nil
}
