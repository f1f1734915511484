package memory

import (
	"context"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

var _ partner.Store = (*Store)(nil)

type partnerRec struct {
	p   partner.Partner
	key string
	// old is the key a rotation replaced, accepted until oldUntil; "" for
	// none.
	old      string
	oldUntil time.Time
}

// CreatePartner implements partner.Store.
func (s *Store) CreatePartner(_ context.Context, p *partner.Partner, keyHash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.ID = s.next("partner")
	p.CreatedAt = s.now()
	c := *p
	c.Name = strings.Clone(p.Name)
	s.partners[p.ID] = &partnerRec{p: c, key: string(keyHash)}
	s.partnerKeys[string(keyHash)] = p.ID
	return nil
}

// PartnerByKey implements partner.Store.
func (s *Store) PartnerByKey(_ context.Context, keyHash []byte) (*partner.Partner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.partnerKeys[string(keyHash)]
	if !ok {
		return nil, partner.ErrUnauthorized
	}
	rec := s.partners[id]
	p := rec.p
	if rec.key != string(keyHash) {
		until := rec.oldUntil
		p.KeyExpiresAt = &until
	}
	return &p, nil
}

// RotatePartnerKey implements partner.Store.
func (s *Store) RotatePartnerKey(_ context.Context, id int64, newHash []byte, oldUntil time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.partners[id]
	if !ok {
		return partner.ErrNotFound
	}
	if rec.old != "" {
		delete(s.partnerKeys, rec.old)
	}
	rec.old, rec.oldUntil = "", time.Time{}
	if oldUntil.IsZero() {
		delete(s.partnerKeys, rec.key)
	} else {
		rec.old, rec.oldUntil = rec.key, oldUntil
	}
	rec.key = string(newHash)
	s.partnerKeys[rec.key] = id
	return nil
}

// Partner implements partner.Store.
func (s *Store) Partner(_ context.Context, id int64) (*partner.Partner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.partners[id]
	if !ok {
		return nil, partner.ErrNotFound
	}
	p := rec.p
	return &p, nil
}

// SetPartnerDisabled implements partner.Store.
func (s *Store) SetPartnerDisabled(_ context.Context, id int64, disabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.partners[id]
	if !ok {
		return partner.ErrNotFound
	}
	rec.p.Disabled = disabled
	return nil
}

// SubAccount implements partner.Store.
func (s *Store) SubAccount(_ context.Context, partnerID int64, externalID string) (*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.subs[market.SubAccount{PartnerID: partnerID, ExternalID: externalID}]
	if !ok {
		return nil, partner.ErrNoAccount
	}
	u := cloneUser(s.users[id].u)
	return &u, nil
}

// SubAccountID implements market.Store.
func (s *Store) SubAccountID(_ context.Context, sa market.SubAccount) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[sa], nil
}

// TradeByKey implements market.Store.
func (s *Store) TradeByKey(_ context.Context, key market.Key) (*market.Trade, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byKey[key]
	if !ok {
		return nil, nil
	}
	c := *t
	return &c, nil
}
