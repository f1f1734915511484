package memory

import (
	"context"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// CreateEvent implements market.Store.
func (s *Store) CreateEvent(_ context.Context, e *market.Event, subsidies []int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createTagged(e, subsidies)
}

// CreateEventLimited implements market.Store: the store's one lock
// serializes it with every other write, so check reads the creator's
// load as the creation will find it.
func (s *Store) CreateEventLimited(_ context.Context, e *market.Event, subsidies []int64, check func(market.CreatorLoad) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unknownTag(e.Tags); err != nil { // a bad request before a limit, as PostgreSQL checks them
		return err
	}
	if check != nil {
		if err := check(s.creatorLoad(e.CreatorID)); err != nil {
			return err
		}
	}
	return s.createTagged(e, subsidies)
}

// creatorLoad reads what creator id has open (market.CreatorLoad); the
// caller holds s.mu. It walks the ledger for the subsidies: creations are
// rare next to trades, and the ledger keeps no index by account.
func (s *Store) creatorLoad(id int64) market.CreatorLoad {
	var load market.CreatorLoad
	open := map[int64]bool{} // the markets of the creator's open events
	for eid, e := range s.events {
		if e.CreatorID != id || e.Status != market.StatusApproved {
			continue
		}
		var ms []int64
		resolved := true
		for _, pid := range s.poolIDs[eid] {
			for _, mid := range s.marketIDs[pid] {
				ms = append(ms, mid)
				resolved = resolved && s.markets[mid].Resolved
			}
		}
		if resolved {
			continue
		}
		load.OpenEvents++
		for _, mid := range ms {
			open[mid] = true
		}
	}
	if len(open) == 0 {
		return load
	}
	for p := range s.ledger.all() {
		if p.Reason == "subsidy" && p.From == account.Treasury && p.To.Kind == account.KindEscrow && open[p.To.Owner] {
			load.SubsidyKopecks += p.Amount
		}
	}
	return load
}
