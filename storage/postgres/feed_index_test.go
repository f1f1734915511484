package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// TestFeedWalksIndexes checks that each of the feed's statements has the
// indexes of migration 00033 to walk: with sequential scans and sorts
// priced out, the planner must pick them. (A search's GIN indexes are
// picked by their estimates, which an empty table does not have:
// BenchmarkFeed100kEvents checks them on 100,000 events.)
func TestFeedWalksIndexes(t *testing.T) {
	e := newEnv(t)
	since := time.Now().Add(-24 * time.Hour)
	after := &market.FeedCursor{Key: 5, ID: 1000}
	cases := []struct {
		name string
		q    market.FeedQuery
		want []string
	}{
		{"new", market.FeedQuery{Sort: market.SortNew}, []string{"event_feed_pkey"}},
		{"volume", market.FeedQuery{Sort: market.SortVolume, After: after}, []string{"event_feed_volume_idx"}},
		{"closing", market.FeedQuery{Sort: market.SortClosing, After: after}, []string{"event_feed_closing_idx"}},
		{"trending", market.FeedQuery{Sort: market.SortTrending, After: after}, []string{"event_hours_pkey", "event_feed_pkey"}},
		{"tag", market.FeedQuery{Sort: market.SortNew, Tag: "sport"}, []string{"event_tags_tag_slug_idx"}},
	}
	for _, c := range cases {
		c.q.Status, c.q.Limit, c.q.Since = market.FeedOpen, 20, since
		if c.q.After != nil {
			c.q.After.Sort = c.q.Sort
		}
		t.Run("the "+c.name+" feed walks "+strings.Join(c.want, " and "), func(t *testing.T) {
			sql, args := postgres.FeedStatement(c.q)
			text := explain(t, e, sql, args...)
			for _, idx := range c.want {
				if !strings.Contains(text, idx) {
					t.Errorf("plan does not use %s:\n%s", idx, text)
				}
			}
		})
	}
}
