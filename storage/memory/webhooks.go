package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/webhook"
)

var _ webhook.Store = (*Store)(nil)

// webhookState is the partners' webhooks and their deliveries, made on
// first use. The memory store queues a settlement's deliveries under the
// mutex that commits the settlement (queueWebhooks), so it needs no
// change-log cursor: nothing is lost or queued twice because nothing
// happens between the two.
type webhookState struct {
	hooks      map[int64]webhook.Hook
	deliveries map[int64]*webhook.Delivery
	byPartner  map[int64][]int64 // ascending ids
}

func (s *Store) webhooks() *webhookState {
	if s.wh == nil {
		s.wh = &webhookState{hooks: map[int64]webhook.Hook{}, deliveries: map[int64]*webhook.Delivery{}, byPartner: map[int64][]int64{}}
	}
	return s.wh
}

// SetWebhook implements webhook.Store.
func (s *Store) SetWebhook(_ context.Context, h *webhook.Hook) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.partners[h.PartnerID]; !ok {
		return partner.ErrNotFound
	}
	h.CreatedAt = s.now()
	c := *h
	c.URL, c.Secret = strings.Clone(h.URL), strings.Clone(h.Secret)
	s.webhooks().hooks[h.PartnerID] = c
	return nil
}

// Webhook implements webhook.Store.
func (s *Store) Webhook(_ context.Context, partnerID int64) (*webhook.Hook, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.webhooks().hooks[partnerID]
	if !ok {
		return nil, webhook.ErrNoWebhook
	}
	return &h, nil
}

// DeleteWebhook implements webhook.Store.
func (s *Store) DeleteWebhook(_ context.Context, partnerID int64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.webhooks()
	if _, ok := w.hooks[partnerID]; !ok {
		return webhook.ErrNoWebhook
	}
	delete(w.hooks, partnerID)
	for _, id := range w.byPartner[partnerID] {
		if d := w.deliveries[id]; d.Status == webhook.Pending {
			d.Status, d.LastError = webhook.Failed, "webhook removed"
		}
	}
	return nil
}

// queueWebhooks queues the deliveries of a settlement that closed the
// positions of effs (as they were before: before), for the partners
// with a webhook: per market, per partner, a market.resolved then a
// bet.settled per position. Callers hold s.mu, in the settlement.
func (s *Store) queueWebhooks(sts []*market.State, effs []*market.Effects) {
	if s.wh == nil || len(s.wh.hooks) == 0 {
		return
	}
	w := s.wh
	now := s.now()
	for i, eff := range effs {
		if eff == nil || eff.Market == nil || !eff.Market.Resolved {
			continue
		}
		m := eff.Market
		before := map[int64]*market.Position{}
		for _, p := range sts[i].Positions {
			before[p.ID] = p
		}
		type held struct {
			p      *market.Position
			sub    market.SubAccount
			payout int64
		}
		var hs []held
		for _, c := range eff.Positions {
			u, ok := s.users[c.UserID]
			if !ok || u.u.PartnerID == 0 || c.WonSide == nil {
				continue
			}
			if _, ok := w.hooks[u.u.PartnerID]; !ok {
				continue
			}
			var paid int64
			if b := before[c.ID]; b != nil {
				paid = c.Returned - b.Returned
			}
			hs = append(hs, held{p: c, sub: market.SubAccount{PartnerID: u.u.PartnerID, ExternalID: u.u.ExternalID}, payout: paid})
		}
		slices.SortFunc(hs, func(a, b held) int {
			return cmp.Or(cmp.Compare(a.sub.PartnerID, b.sub.PartnerID), cmp.Compare(a.p.ID, b.p.ID))
		})
		at := now
		if m.ResolvedAt != nil {
			at = *m.ResolvedAt
		}
		for j, h := range hs {
			base := webhook.Delivery{PartnerID: h.sub.PartnerID, MarketID: m.ID, EventID: m.EventID, WonSide: *h.p.WonSide,
				CreatedAt: at, Status: webhook.Pending, NextAttemptAt: now, ExpiresAt: now.Add(webhook.DefaultWindow)}
			if j == 0 || hs[j-1].sub.PartnerID != h.sub.PartnerID {
				d := base
				d.Type = webhook.MarketResolved
				s.addDelivery(&d)
			}
			d := base
			d.Type, d.PositionID, d.ExternalUserID = webhook.BetSettled, h.p.ID, h.sub.ExternalID
			d.Side, d.Shares, d.PayoutKopecks = h.p.Side, h.p.Shares, h.payout
			s.addDelivery(&d)
		}
	}
}

func (s *Store) addDelivery(d *webhook.Delivery) {
	d.ID = s.next("webhook_delivery")
	s.wh.deliveries[d.ID] = d
	s.wh.byPartner[d.PartnerID] = append(s.wh.byPartner[d.PartnerID], d.ID)
}

// DispatchWebhooks implements webhook.Store: the memory store queues
// deliveries in the settlement itself, so there is nothing to read.
func (s *Store) DispatchWebhooks(context.Context, time.Time, int, time.Duration) (int, error) {
	return 0, nil
}

// DuePartners implements webhook.Store.
func (s *Store) DuePartners(_ context.Context, now time.Time) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wh == nil {
		return nil, nil
	}
	var out []int64
	for p, ids := range s.wh.byPartner {
		if _, ok := s.wh.hooks[p]; !ok {
			continue
		}
		for _, id := range ids {
			if d := s.wh.deliveries[id]; d.Status == webhook.Pending && !d.NextAttemptAt.After(now) {
				out = append(out, p)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// ClaimDeliveries implements webhook.Store.
func (s *Store) ClaimDeliveries(_ context.Context, partnerID int64, now, leaseUntil time.Time, n int) ([]*webhook.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wh == nil {
		return nil, nil
	}
	h, ok := s.wh.hooks[partnerID]
	if !ok {
		return nil, nil
	}
	var due []*webhook.Delivery
	for _, id := range s.wh.byPartner[partnerID] {
		if d := s.wh.deliveries[id]; d.Status == webhook.Pending && !d.NextAttemptAt.After(now) {
			due = append(due, d)
		}
	}
	slices.SortStableFunc(due, func(a, b *webhook.Delivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	var out []*webhook.Delivery
	for _, d := range due[:min(n, len(due))] {
		d.NextAttemptAt = leaseUntil
		d.Attempts++
		c := copyDelivery(d)
		c.URL, c.Secret = h.URL, h.Secret
		out = append(out, c)
	}
	return out, nil
}

func copyDelivery(d *webhook.Delivery) *webhook.Delivery {
	c := *d
	if d.LastAttemptAt != nil {
		t := *d.LastAttemptAt
		c.LastAttemptAt = &t
	}
	if d.DeliveredAt != nil {
		t := *d.DeliveredAt
		c.DeliveredAt = &t
	}
	return &c
}

// RecordAttempt implements webhook.Store.
func (s *Store) RecordAttempt(_ context.Context, a webhook.Attempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wh == nil {
		return nil
	}
	d, ok := s.wh.deliveries[a.ID]
	if !ok || d.Status != webhook.Pending || d.Attempts != a.Attempts {
		return nil
	}
	at := a.At
	d.LastAttemptAt = &at
	d.LastStatusCode, d.LastError, d.LastLatency = a.StatusCode, strings.Clone(a.Error), a.Latency
	d.Status = a.Status
	switch a.Status {
	case webhook.Delivered:
		d.DeliveredAt = &at
	case webhook.Pending:
		d.NextAttemptAt = a.NextAttemptAt
	}
	return nil
}

// Deliveries implements webhook.Store.
func (s *Store) Deliveries(_ context.Context, partnerID, before int64, limit int) ([]*webhook.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*webhook.Delivery{}
	if s.wh == nil {
		return out, nil
	}
	ids := s.wh.byPartner[partnerID]
	for i := len(ids) - 1; i >= 0 && len(out) < limit; i-- {
		if before == 0 || ids[i] < before {
			out = append(out, copyDelivery(s.wh.deliveries[ids[i]]))
		}
	}
	return out, nil
}

// Redeliver implements webhook.Store.
func (s *Store) Redeliver(_ context.Context, partnerID, id int64, now, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wh == nil {
		return webhook.ErrDeliveryNotFound
	}
	d, ok := s.wh.deliveries[id]
	if !ok || d.PartnerID != partnerID {
		return webhook.ErrDeliveryNotFound
	}
	d.Status, d.NextAttemptAt, d.ExpiresAt, d.DeliveredAt = webhook.Pending, now, expires, nil
	return nil
}

// WebhookQueue implements webhook.Store.
func (s *Store) WebhookQueue(_ context.Context, now time.Time) (webhook.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var q webhook.Queue
	if s.wh == nil {
		return q, nil
	}
	for _, d := range s.wh.deliveries {
		if d.Status != webhook.Pending {
			continue
		}
		q.Pending++
		if !d.NextAttemptAt.After(now) {
			q.Due++
			if q.OldestDue.IsZero() || d.NextAttemptAt.Before(q.OldestDue) {
				q.OldestDue = d.NextAttemptAt
			}
		}
	}
	return q, nil
}
