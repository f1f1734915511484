package server

import (
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

// TestProfileMemoKeepsOnlyWhatNothingMadeStale checks each way the memo
// drops a user's parts, and that a read which began before a drop that
// concerns it is not kept.
func TestProfileMemoKeepsOnlyWhatNothingMadeStale(t *testing.T) {
	const ttl = 5 * time.Second
	t0 := time.Unix(1_700_000_000, 0)
	// alice holds a position in pool 7; bob holds none.
	const alice, bob = 1, 2
	parts := func(id int64) profileParts {
		p := profileParts{balances: account.Balances{Balance: 100 * id}}
		if id == alice {
			p.open = []market.OpenPosition{{PositionDetail: &market.PositionDetail{PoolID: 7}}}
		}
		return p
	}
	cases := []struct {
		name string
		// between runs after the read began and before it is kept;
		// after runs once it is kept.
		between, after func(m *profileMemo)
		at             time.Duration // when alice reads again
		head           int64         // the log's last entry then
		kept           bool          // whether alice's parts are served
	}{
		{name: "a read nothing concerns is served again", kept: true},
		{name: "it is not served once ttl old", at: ttl},
		{name: "it is not served while the log has entries the memo has not applied", head: 1},
		{name: "an entry addressed to the user drops it",
			after: func(m *profileMemo) { m.apply([]changelog.Entry{{Seq: 1, Type: changelog.Balance, UserID: alice}}) }, head: 1},
		{name: "an entry addressed to another user leaves it",
			after: func(m *profileMemo) { m.apply([]changelog.Entry{{Seq: 1, Type: changelog.Balance, UserID: bob}}) }, head: 1, kept: true},
		{name: "a price in a pool of its open positions drops it",
			after: func(m *profileMemo) {
				m.apply([]changelog.Entry{{Seq: 1, Type: changelog.Price, PoolID: 7, MarketID: 70}})
			}, head: 1},
		{name: "a price in another pool leaves it",
			after: func(m *profileMemo) {
				m.apply([]changelog.Entry{{Seq: 1, Type: changelog.Price, PoolID: 8, MarketID: 80}})
			}, head: 1, kept: true},
		{name: "the user's write drops it", after: func(m *profileMemo) { m.user(alice) }},
		{name: "a write by no user drops it", after: func(m *profileMemo) { m.everyone() }},
		{name: "a read that began before the user's write is not kept", between: func(m *profileMemo) { m.user(alice) }},
		{name: "a read that began before a price in its pool is not kept",
			between: func(m *profileMemo) { m.apply([]changelog.Entry{{Seq: 1, Type: changelog.Price, PoolID: 7}}) }, head: 1},
		{name: "a read that began before a drop of everything is not kept", between: func(m *profileMemo) { m.everyone() }},
		{name: "a read that began before another user's write is kept", between: func(m *profileMemo) { m.user(bob) }, kept: true},
		{name: "turning the cache off drops it", after: func(m *profileMemo) { m.set(0); m.set(ttl) }},
		{name: "losing the log drops it", after: func(m *profileMemo) { m.setLive(false, 0); m.setLive(true, 0) }},
		{name: "sweeps keep what is fresh", after: func(m *profileMemo) { m.sweep(t0.Add(ttl / 2)); m.sweep(t0.Add(ttl / 2)) }, kept: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newProfileMemo()
			m.set(ttl)
			m.setLive(true, 0)
			if _, ok, _ := m.get(alice, 0, t0); ok {
				t.Fatal("an empty memo served parts")
			}
			_, _, r := m.get(alice, 0, t0)
			if c.between != nil {
				c.between(m)
			}
			m.put(alice, parts(alice), r, t0)
			if c.after != nil {
				c.after(m)
			}
			got, ok, _ := m.get(alice, c.head, t0.Add(c.at))
			if ok != c.kept {
				t.Fatalf("served %v, want %v", ok, c.kept)
			}
			if ok && got.balances.Balance != 100 {
				t.Fatalf("served %+v", got)
			}
		})
	}
	t.Run("a nil memo keeps nothing", func(t *testing.T) {
		var m *profileMemo
		_, _, r := m.get(alice, 0, t0)
		m.put(alice, parts(alice), r, t0)
		m.user(alice)
		m.everyone()
		if _, ok, _ := m.get(alice, 0, t0); ok || m.serving() {
			t.Fatal("a nil memo served parts")
		}
	})
}
