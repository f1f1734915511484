package storagetest

import (
	"cmp"
	"errors"
	"slices"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

func testNotifications(t *testing.T, newStores func(*testing.T) Stores) {
	if _, ok := newStores(t).Markets.(social.NotificationStore); !ok {
		t.Skip("this market store keeps no notifications")
	}
	notes := func(e *env, u *account.User, unread bool) []*social.Notification {
		e.t.Helper()
		ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, unread, 100, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		return ns
	}
	t.Run("a trade notifies its trader once, and a refused one not at all", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("nia", 1000, 0)
		res, err := e.buy(u, m, market.Yes, 600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.buy(u, m, market.Yes, 600); !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("second buy: %v", err)
		}
		ns := notes(e, u, false)
		if len(ns) != 1 {
			t.Fatalf("%d notifications, want 1: %+v", len(ns), ns)
		}
		n := ns[0]
		if n.Type != social.TypeTradeExecuted || n.RelatedType != social.RelatedEvent || n.RelatedID != ev.ID || n.Read || n.ID == 0 ||
			n.Data.Shares != res.Trade.Shares || n.Data.Amount != res.Trade.Amount || n.Data.Side != "YES" || n.Data.Action != "buy" || n.Data.MarketName != m.Name {
			t.Fatalf("notification = %+v", n)
		}
	})
	t.Run("a settlement notifies every holder once with their payout", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		both, loser := e.user("both", 5000, 0), e.user("loser", 5000, 0)
		y, _ := e.buy(both, m, market.Yes, 1000)
		e.buy(both, m, market.No, 500)
		e.buy(loser, m, market.No, 800)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			u    *account.User
			paid int64
		}{{both, y.Trade.Shares}, {loser, 0}} {
			var resolved []*social.Notification
			for _, n := range notes(e, tc.u, false) {
				if n.Type == social.TypeMarketResolved {
					resolved = append(resolved, n)
				}
			}
			if len(resolved) != 1 || resolved[0].Data.Amount != tc.paid || resolved[0].Data.Won != "YES" {
				t.Fatalf("user %d: market_resolved = %+v, want one paying %d", tc.u.ID, resolved, tc.paid)
			}
		}
		if ns := notes(e, c, false); len(ns) != 0 {
			t.Fatalf("the creator, who held nothing, got %+v", ns)
		}
	})
	t.Run("a settlement's notification is listed once, unread until its holder marks it read, and only its holder can", func(t *testing.T) {
		e := newEnv(t, newStores)
		store := e.stores.Markets.(social.NotificationStore)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		a, b, other := e.user("a", 5000, 0), e.user("b", 5000, 0), e.user("other", 0, 0)
		ay, _ := e.buy(a, m, market.Yes, 1000)
		e.buy(a, m, market.No, 400)
		e.buy(b, m, market.No, 800)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		resolved := func(ns []*social.Notification) []*social.Notification {
			var out []*social.Notification
			for _, n := range ns {
				if n.Type == social.TypeMarketResolved {
					out = append(out, n)
				}
			}
			return out
		}
		unread := notes(e, a, true)
		r := resolved(unread)
		if len(unread) != 3 || len(r) != 1 || unread[0] != r[0] {
			t.Fatalf("a's unread notifications %+v: want its two trades and, newest, the settlement", unread)
		}
		n := r[0]
		if n.Read || n.ID == 0 || n.UserID != a.ID || n.RelatedID != ev.ID || n.RelatedType != social.RelatedEvent ||
			n.Data.Amount != ay.Trade.Shares || n.Data.Won != "YES" || n.Data.MarketName != m.Name || !n.CreatedAt.Equal(*e.market(m.ID).ResolvedAt) {
			t.Fatalf("settlement notification %+v", n)
		}
		if err := store.MarkRead(e.ctx, other.ID, n.ID); !errors.Is(err, social.ErrNotificationNotFound) {
			t.Fatalf("another user marking it: %v", err)
		}
		if err := store.MarkRead(e.ctx, b.ID, n.ID); !errors.Is(err, social.ErrNotificationNotFound) {
			t.Fatalf("another holder marking it: %v", err)
		}
		for range 2 {
			if err := store.MarkRead(e.ctx, a.ID, n.ID); err != nil {
				t.Fatalf("marking it read: %v", err)
			}
		}
		if un := notes(e, a, true); len(un) != 2 || len(resolved(un)) != 0 {
			t.Fatalf("a's unread after marking the settlement's: %+v", un)
		}
		all := notes(e, a, false)
		if r := resolved(all); len(all) != 3 || len(r) != 1 || r[0].ID != n.ID || !r[0].Read || r[0].Data != n.Data || !r[0].CreatedAt.Equal(n.CreatedAt) || all[0] != r[0] {
			t.Fatalf("a's notifications after marking the settlement's: %+v", all)
		}
		// b marks all read: its trade and the settlement's.
		if got, err := store.MarkAllRead(e.ctx, b.ID); err != nil || got != 2 {
			t.Fatalf("MarkAllRead = %d, %v; want the trade and the settlement", got, err)
		}
		if got, err := store.MarkAllRead(e.ctx, b.ID); err != nil || got != 0 {
			t.Fatalf("MarkAllRead again = %d, %v", got, err)
		}
		if un := notes(e, b, true); len(un) != 0 {
			t.Fatalf("b's unread after all read: %+v", un)
		}
		if r := resolved(notes(e, b, false)); len(r) != 1 || !r[0].Read || r[0].Data.Amount != 0 || r[0].Data.Won != "YES" {
			t.Fatalf("b's settlement notification %+v", r)
		}
		if ns := notes(e, other, false); len(ns) != 0 {
			t.Fatalf("a user who held nothing got %+v", ns)
		}
		if page, _ := store.Notifications(e.ctx, a.ID, false, 1, 0); len(page) != 1 || page[0].ID != n.ID {
			t.Fatalf("a's first page of one: %+v", page)
		}
		if page, _ := store.Notifications(e.ctx, a.ID, false, 5, 1); len(page) != 2 || page[0].Type != social.TypeTradeExecuted {
			t.Fatalf("a's page after the first: %+v", page)
		}
	})
	t.Run("a pool's settlement notifies a holder once per market, its later markets listed first", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		u := e.user("u", 10000, 0)
		for _, m := range ms {
			if _, err := e.buy(u, m, market.Yes, 500); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		ns := notes(e, u, false)
		var got []string
		for _, n := range ns {
			if n.Type == social.TypeMarketResolved {
				got = append(got, n.Data.MarketName+" "+n.Data.Won)
			}
		}
		// The markets settle in ascending id order at one instant, and
		// ties list by id, descending.
		byID := slices.Clone(ms)
		slices.SortFunc(byID, func(x, y *market.Market) int { return cmp.Compare(y.ID, x.ID) })
		var want []string
		for _, m := range byID {
			won := " NO"
			if m.ID == ms[1].ID {
				won = " YES"
			}
			want = append(want, m.Name+won)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("market_resolved notifications %v, want %v", got, want)
		}
	})
	t.Run("notifications list newest first and are marked read by their owner only", func(t *testing.T) {
		e := newEnv(t, newStores)
		store := e.stores.Markets.(social.NotificationStore)
		a, b := e.user("a", 0, 0), e.user("b", 0, 0)
		var ids []int64
		for _, x := range []string{"one", "two", "three"} {
			n := &social.Notification{UserID: a.ID, Type: social.TypeCommentReply, RelatedType: social.RelatedComment, RelatedID: 9, Data: social.NotificationData{Author: "b", Excerpt: x}}
			if err := store.CreateNotification(e.ctx, n); err != nil {
				t.Fatal(err)
			}
			if n.ID == 0 || n.CreatedAt.IsZero() {
				t.Fatalf("created %+v", n)
			}
			ids = append(ids, n.ID)
		}
		got := notes(e, a, false)
		if len(got) != 3 || got[0].ID != ids[2] || got[2].ID != ids[0] || got[0].Data.Excerpt != "three" {
			t.Fatalf("order = %+v", got)
		}
		if err := store.MarkRead(e.ctx, b.ID, ids[1]); !errors.Is(err, social.ErrNotificationNotFound) {
			t.Fatalf("b marking a's notification: %v", err)
		}
		if err := store.MarkRead(e.ctx, a.ID, ids[1]); err != nil {
			t.Fatal(err)
		}
		if un := notes(e, a, true); len(un) != 2 || un[0].ID != ids[2] || un[1].ID != ids[0] {
			t.Fatalf("unread = %+v", un)
		}
		if n, err := store.MarkAllRead(e.ctx, a.ID); err != nil || n != 2 {
			t.Fatalf("MarkAllRead = %d, %v", n, err)
		}
		if un := notes(e, a, true); len(un) != 0 {
			t.Fatalf("unread after all read = %+v", un)
		}
		if page, _ := store.Notifications(e.ctx, a.ID, false, 1, 1); len(page) != 1 || page[0].ID != ids[1] {
			t.Fatalf("page 2 of 1 = %+v", page)
		}
	})
}
