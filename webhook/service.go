package webhook

import (
	"context"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/partner"
)

// Limits of the delivery log.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 100
	// SecretPrefix starts every signing secret.
	SecretPrefix = "whsec_"
)

// Partners is what the service needs to know of partners.
type Partners interface {
	Partner(ctx context.Context, id int64) (*partner.Partner, error)
}

// Service is the operator's side of webhooks: set, read and remove a
// partner's webhook, read its delivery log, send a delivery again.
type Service struct {
	store    Store
	partners Partners
	guard    *Guard
	// Now is the clock (tests replace it); Window is how long a
	// redelivery is retried.
	Now    func() time.Time
	Window time.Duration
	// Woken, when set, is called when a delivery becomes due (a
	// redelivery), so that a local Sender need not wait for its poll.
	Woken func()
}

// NewService returns a Service.
func NewService(store Store, partners Partners, guard *Guard) *Service {
	return &Service{store: store, partners: partners, guard: guard, Window: DefaultWindow,
		Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// SetWebhook sets partner id's webhook to rawURL, checked by the guard,
// with a new signing secret (shown this once by the API; the store keeps
// it, for signing). Replacing a webhook replaces its secret.
// partner.ErrNotFound, *input.Error.
func (s *Service) SetWebhook(ctx context.Context, partnerID int64, rawURL string) (*Hook, error) {
	if _, err := s.partners.Partner(ctx, partnerID); err != nil {
		return nil, err
	}
	u, err := s.guard.CheckURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	h := &Hook{PartnerID: partnerID, URL: u, Secret: SecretPrefix + account.NewSecret()}
	if err := s.store.SetWebhook(ctx, h); err != nil {
		return nil, err
	}
	return h, nil
}

// Webhook returns partner id's webhook. partner.ErrNotFound, ErrNoWebhook.
func (s *Service) Webhook(ctx context.Context, partnerID int64) (*Hook, error) {
	if _, err := s.partners.Partner(ctx, partnerID); err != nil {
		return nil, err
	}
	return s.store.Webhook(ctx, partnerID)
}

// DeleteWebhook removes partner id's webhook; its pending deliveries are
// marked failed. partner.ErrNotFound, ErrNoWebhook.
func (s *Service) DeleteWebhook(ctx context.Context, partnerID int64) error {
	if _, err := s.partners.Partner(ctx, partnerID); err != nil {
		return err
	}
	return s.store.DeleteWebhook(ctx, partnerID, s.Now())
}

// Deliveries returns a page of partner id's delivery log, newest first:
// at most limit (0: DefaultPageLimit) after cursor (empty: from the
// newest). partner.ErrNotFound, *input.Error.
func (s *Service) Deliveries(ctx context.Context, partnerID int64, limit int, cursor string) (*Page, error) {
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if err := input.InRange("limit", int64(limit), 1, MaxPageLimit); err != nil {
		return nil, err
	}
	var before int64
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n < 1 {
			return nil, input.Invalid("cursor", "is not a cursor this server gave")
		}
		before = n
	}
	if _, err := s.partners.Partner(ctx, partnerID); err != nil {
		return nil, err
	}
	ds, err := s.store.Deliveries(ctx, partnerID, before, limit+1)
	if err != nil {
		return nil, err
	}
	p := &Page{Deliveries: ds}
	if len(ds) > limit {
		p.Deliveries = ds[:limit]
		p.Next = ds[limit-1].ID
	}
	return p, nil
}

// Redeliver makes delivery id of partner partnerID due now, whatever
// its status, and retried for Window from now: the operator's answer to
// a partner that lost or refused one. partner.ErrNotFound,
// ErrDeliveryNotFound.
func (s *Service) Redeliver(ctx context.Context, partnerID, id int64) error {
	if _, err := s.partners.Partner(ctx, partnerID); err != nil {
		return err
	}
	now := s.Now()
	if err := s.store.Redeliver(ctx, partnerID, id, now, now.Add(s.Window)); err != nil {
		return err
	}
	if s.Woken != nil {
		s.Woken()
	}
	return nil
}
