package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/p2p"
)

var _ p2p.Store = (*Store)(nil)

// p2pState is the P2P board: ads by id and users' records. The list is
// answered by p2p.Query.Select, the reference the PostgreSQL store's SQL
// agrees with.
type p2pState struct {
	ads   map[int64]*p2p.Ad // Owner left zero; filled on read
	stats map[int64]p2p.UserStats
}

// p2pData returns the board, made on first use; callers hold s.mu.
func (s *Store) p2pData() *p2pState {
	if s.p2p == nil {
		s.p2p = &p2pState{ads: map[int64]*p2p.Ad{}, stats: map[int64]p2p.UserStats{}}
	}
	return s.p2p
}

func cloneAd(ad p2p.Ad) *p2p.Ad {
	ad.Type = strings.Clone(ad.Type)
	ad.FiatCurrency = strings.Clone(ad.FiatCurrency)
	ad.PaymentMethods = slices.Clone(ad.PaymentMethods)
	for i, m := range ad.PaymentMethods {
		ad.PaymentMethods[i] = strings.Clone(m)
	}
	ad.Instructions = strings.Clone(ad.Instructions)
	ad.ModerationStatus = strings.Clone(ad.ModerationStatus)
	ad.Owner = p2p.Owner{}
	return &ad
}

// withOwner returns a copy of ad with its owner filled; callers hold s.mu.
func (s *Store) withOwner(ad *p2p.Ad) *p2p.Ad {
	c := cloneAd(*ad)
	o := p2p.Owner{ID: ad.UserID, Stats: s.p2pData().stats[ad.UserID]}
	o.Stats.UserID = ad.UserID
	if rec, ok := s.users[ad.UserID]; ok {
		u := rec.u
		o.Name = u.DisplayName()
		if !u.ProfileHidden {
			if u.Nickname != nil {
				o.Nickname = *u.Nickname
			}
			if u.AvatarURL != nil {
				o.AvatarURL = *u.AvatarURL
			}
		}
	}
	c.Owner = o
	return c
}

// CreateP2PAd implements p2p.Store.
func (s *Store) CreateP2PAd(_ context.Context, ad *p2p.Ad) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[ad.UserID]; !ok {
		return p2p.ErrUserNotFound
	}
	now := s.now()
	if ad.CreatedAt.IsZero() {
		ad.CreatedAt = now
	}
	if ad.UpdatedAt.IsZero() {
		ad.UpdatedAt = now
	}
	ad.CreatedAt, ad.UpdatedAt = microUTC(ad.CreatedAt), microUTC(ad.UpdatedAt)
	ad.ID = s.next("p2p_ad")
	s.p2pData().ads[ad.ID] = cloneAd(*ad)
	return nil
}

// microUTC keeps what every store keeps of a time: UTC microseconds.
func microUTC(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// P2PAd implements p2p.Store.
func (s *Store) P2PAd(_ context.Context, id int64) (*p2p.Ad, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ad, ok := s.p2pData().ads[id]
	if !ok {
		return nil, p2p.ErrNotFound
	}
	return s.withOwner(ad), nil
}

// ModerateP2PAd implements p2p.Store.
func (s *Store) ModerateP2PAd(_ context.Context, id int64, m p2p.Moderation, at time.Time) (*p2p.Ad, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ad, ok := s.p2pData().ads[id]
	if !ok {
		return nil, p2p.ErrNotFound
	}
	if m.IsActive != nil {
		ad.IsActive = *m.IsActive
	}
	if m.ModerationStatus != nil {
		ad.ModerationStatus = strings.Clone(*m.ModerationStatus)
	}
	ad.UpdatedAt = microUTC(at)
	return s.withOwner(ad), nil
}

// P2PAds implements p2p.Store: a scan of the board in memory, through the
// reference p2p.Query.Select.
func (s *Store) P2PAds(_ context.Context, q p2p.Query) ([]*p2p.Ad, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*p2p.Ad, 0, len(s.p2pData().ads))
	for _, ad := range s.p2pData().ads {
		if ad.ModerationStatus == p2p.StatusApproved && ad.IsActive == q.IsActive {
			all = append(all, s.withOwner(ad))
		}
	}
	return q.Select(all), nil
}

// SetP2PStats implements p2p.Store.
func (s *Store) SetP2PStats(_ context.Context, st p2p.UserStats) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[st.UserID]; !ok {
		return p2p.ErrUserNotFound
	}
	s.p2pData().stats[st.UserID] = st
	return nil
}

// P2PStats implements p2p.Store.
func (s *Store) P2PStats(_ context.Context, userID int64) (p2p.UserStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return p2p.UserStats{}, p2p.ErrUserNotFound
	}
	st := s.p2pData().stats[userID]
	st.UserID = userID
	return st, nil
}
