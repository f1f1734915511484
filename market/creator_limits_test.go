package market_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/market"
)

func TestCreatorRulesCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		rules   market.CreatorRules
		load    market.CreatorLoad
		subsidy int64
		limit   string // "" when allowed
	}{
		{"no rules allow anything", market.CreatorRules{}, market.CreatorLoad{OpenEvents: 1e6, SubsidyKopecks: 1e15}, 1e15, ""},
		{"one event below the limit is allowed", market.CreatorRules{MaxOpenEvents: 3}, market.CreatorLoad{OpenEvents: 2}, 693, ""},
		{"an event at the limit is refused", market.CreatorRules{MaxOpenEvents: 3}, market.CreatorLoad{OpenEvents: 3}, 693, market.LimitOpenEvents},
		{"a subsidy that reaches the limit exactly is allowed", market.CreatorRules{MaxSubsidyKopecks: 1000}, market.CreatorLoad{SubsidyKopecks: 307}, 693, ""},
		{"a subsidy past the limit is refused", market.CreatorRules{MaxSubsidyKopecks: 1000}, market.CreatorLoad{SubsidyKopecks: 308}, 693, market.LimitSubsidy},
		{"a subsidy that would wrap is refused", market.CreatorRules{MaxSubsidyKopecks: 1 << 62}, market.CreatorLoad{SubsidyKopecks: 1 << 62}, 1 << 62, market.LimitSubsidy},
		{"the open events are checked first", market.CreatorRules{MaxOpenEvents: 1, MaxSubsidyKopecks: 1}, market.CreatorLoad{OpenEvents: 1, SubsidyKopecks: 1}, 1, market.LimitOpenEvents},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.rules.Check(c.load, c.subsidy)
			if c.limit == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *market.CreatorLimitError
			if !errors.Is(err, market.ErrCreatorLimit) || !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("err = %v, want a %s CreatorLimitError", err, c.limit)
			}
		})
	}
}
