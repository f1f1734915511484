package storagetest

import (
	"errors"
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
