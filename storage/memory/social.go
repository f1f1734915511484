package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/social"
)

var _ social.NotificationStore = (*Store)(nil)

// addNotification stores n; callers hold s.mu.
func (s *Store) addNotification(n social.Notification) *social.Notification {
	n.ID = s.next("notification")
	if n.CreatedAt.IsZero() {
		n.CreatedAt = s.now()
	}
	n.Type, n.RelatedType = strings.Clone(n.Type), strings.Clone(n.RelatedType)
	d := &n.Data
	d.EventName, d.MarketName, d.Side, d.Action = strings.Clone(d.EventName), strings.Clone(d.MarketName), strings.Clone(d.Side), strings.Clone(d.Action)
	d.Won, d.Author, d.Excerpt, d.Other = strings.Clone(d.Won), strings.Clone(d.Author), strings.Clone(d.Excerpt), strings.Clone(d.Other)
	d.EventNameRu, d.ExcerptRu = strings.Clone(d.EventNameRu), strings.Clone(d.ExcerptRu)
	d.Proposed, d.Until = strings.Clone(d.Proposed), strings.Clone(d.Until)
	d.Chain, d.TokenAmount = strings.Clone(d.Chain), strings.Clone(d.TokenAmount)
	s.notifications[n.UserID] = append(s.notifications[n.UserID], &n)
	return &n
}

// CreateNotification implements social.NotificationStore.
func (s *Store) CreateNotification(_ context.Context, n *social.Notification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.addNotification(*n)
	n.ID, n.CreatedAt = stored.ID, stored.CreatedAt
	s.logChanges(social.NotificationChange(stored))
	return nil
}

// Notifications implements social.NotificationStore.
func (s *Store) Notifications(_ context.Context, userID int64, unreadOnly bool, limit, offset int) ([]*social.Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ns []*social.Notification
	for _, n := range s.notifications[userID] {
		if !unreadOnly || !n.Read {
			c := *n
			ns = append(ns, &c)
		}
	}
	slices.SortFunc(ns, func(a, b *social.Notification) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	out := []*social.Notification{}
	return append(out, page(ns, limit, offset)...), nil
}

// MarkRead implements social.NotificationStore.
func (s *Store) MarkRead(_ context.Context, userID, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notifications[userID] {
		if n.ID == id {
			n.Read = true
			return nil
		}
	}
	return social.ErrNotificationNotFound
}

// MarkAllRead implements social.NotificationStore.
func (s *Store) MarkAllRead(_ context.Context, userID int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var changed int64
	for _, n := range s.notifications[userID] {
		if !n.Read {
			n.Read = true
			changed++
		}
	}
	return changed, nil
}
