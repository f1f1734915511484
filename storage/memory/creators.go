package memory

import (
	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// creatorLoad reads what creator id has open (market.CreatorLoad); the
// caller holds s.mu.
func (s *Store) creatorLoad(id int64) market.CreatorLoad {
	var load market.CreatorLoad
	open := map[int64]bool{} // the markets of the creator's open events
	for eid, e := range s.events {
		if e.CreatorID != id {
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
