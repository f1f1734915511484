package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// testFollows: following events (market.Service.Follow, Store.Follow):
// idempotent both ways, listed newest follow first in keyset pages, and
// followers told of resolutions, answers and amendments once, whether
// or not they hold a position.
func testFollows(t *testing.T, newStores func(*testing.T) Stores) {
	follow := func(e *env, u *account.User, ev *market.Event) {
		e.t.Helper()
		if err := e.markets.Follow(e.ctx, u.ID, ev.ID); err != nil {
			e.t.Fatalf("follow %d: %v", ev.ID, err)
		}
	}
	following := func(e *env, u *account.User, limit int, cursor string) *market.FollowPage {
		e.t.Helper()
		p, err := e.markets.Following(e.ctx, u.ID, limit, cursor)
		if err != nil {
			e.t.Fatal(err)
		}
		return p
	}
	ids := func(p *market.FollowPage) []int64 {
		out := []int64{}
		for _, ev := range p.Events {
			out = append(out, ev.ID)
		}
		return out
	}
	equal := func(a, b []int64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}

	t.Run("a follow is idempotent, listed newest first in pages, and an unfollow is idempotent", func(t *testing.T) {
		e := newEnv(t, newStores)
		clock := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
		e.markets.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
		c, u, other := e.creator(), e.user("follower", 0, 0), e.user("other", 0, 0)
		a, b, d := e.event(c, 0.02, 10000, 0.5), e.event(c, 0.02, 10000, 0.5), e.event(c, 0.02, 10000, 0.5)
		if p := following(e, u, 0, ""); len(p.Events) != 0 || p.Events == nil || p.Next != "" {
			t.Fatalf("nothing followed yet: %+v", p)
		}
		follow(e, u, a)
		follow(e, u, b)
		follow(e, u, d)
		follow(e, u, a) // again: keeps its first time, so stays last
		follow(e, other, b)
		if got := ids(following(e, u, 0, "")); !equal(got, []int64{d.ID, b.ID, a.ID}) {
			t.Fatalf("following %v, want %v", got, []int64{d.ID, b.ID, a.ID})
		}
		p1 := following(e, u, 2, "")
		if got := ids(p1); !equal(got, []int64{d.ID, b.ID}) || p1.Next == "" {
			t.Fatalf("first page %v next %q", got, p1.Next)
		}
		if p1.Events[0].Pools == nil || len(p1.Events[0].Pools[0].Markets) != 1 {
			t.Fatalf("a followed event comes with its pools and markets: %+v", p1.Events[0])
		}
		p2 := following(e, u, 2, p1.Next)
		if got := ids(p2); !equal(got, []int64{a.ID}) || p2.Next != "" {
			t.Fatalf("second page %v next %q", got, p2.Next)
		}
		if err := e.markets.Follow(e.ctx, u.ID, 1<<40); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("following an unknown event: %v", err)
		}
		if err := e.markets.Unfollow(e.ctx, u.ID, 1<<40); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("unfollowing an unknown event: %v", err)
		}
		for range 2 {
			if err := e.markets.Unfollow(e.ctx, u.ID, b.ID); err != nil {
				t.Fatal(err)
			}
		}
		if got := ids(following(e, u, 0, "")); !equal(got, []int64{d.ID, a.ID}) {
			t.Fatalf("after the unfollow: %v", got)
		}
		if got := ids(following(e, other, 0, "")); !equal(got, []int64{b.ID}) {
			t.Fatalf("another user's list: %v", got)
		}
		var in *input.Error
		if _, err := e.markets.Following(e.ctx, u.ID, 0, "bogus"); !errors.As(err, &in) {
			t.Fatalf("a bad cursor: %v", err)
		}
		if _, err := e.markets.Following(e.ctx, u.ID, market.MaxFollowingLimit+1, ""); !errors.As(err, &in) {
			t.Fatalf("a limit too large: %v", err)
		}
	})

	if _, ok := newStores(t).Markets.(social.NotificationStore); !ok {
		return
	}

	t.Run("followers are told of each market's resolution once, holders or not", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		holderFollower, follower, holder, bystander := e.user("hf", 100000, 0), e.user("f", 0, 0), e.user("h", 100000, 0), e.user("b", 0, 0)
		ev := e.event(c, 0.02, 10000, 0.5, 0.4)
		m0, m1 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		for _, u := range []*account.User{holderFollower, holder} {
			if _, err := e.buy(u, m0, market.Yes, 5000); err != nil {
				t.Fatal(err)
			}
		}
		follow(e, holderFollower, ev)
		follow(e, follower, ev)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m0.PoolID, m0.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m1.PoolID, m1.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			u    *account.User
			want map[string]string // market name → outcome
		}{
			{holderFollower, map[string]string{m0.Name: "YES", m1.Name: "VOID"}},
			{follower, map[string]string{m0.Name: "YES", m1.Name: "VOID"}},
			{holder, map[string]string{m0.Name: "YES"}},
			{bystander, map[string]string{}},
		} {
			ns := e.notesOf(tc.u, social.TypeMarketResolved)
			got := map[string]string{}
			for _, n := range ns {
				if _, dup := got[n.Data.MarketName]; dup {
					t.Fatalf("%s told twice of %s: %+v", tc.u.Name, n.Data.MarketName, ns)
				}
				if n.RelatedID != ev.ID || n.RelatedType != social.RelatedEvent {
					t.Fatalf("%s: notification %+v does not link the event", tc.u.Name, n)
				}
				got[n.Data.MarketName] = n.Data.Won
				if tc.u == follower && (n.Data.Amount != 0 || !n.Data.Following) {
					t.Fatalf("a follower holding nothing was told %+v", n.Data)
				}
				if holds := n.Data.MarketName == m0.Name && tc.u != follower; holds == n.Data.Following {
					t.Fatalf("%s: a holder is told as a holder, a follower as a follower: %+v", tc.u.Name, n.Data)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%s: told %v, want %v", tc.u.Name, got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("%s: told %v, want %v", tc.u.Name, got, tc.want)
				}
			}
		}
		// A follower's notification is read and marked read like any other.
		ns := e.notesOf(follower, social.TypeMarketResolved)
		if err := e.stores.Markets.(social.NotificationStore).MarkRead(e.ctx, follower.ID, ns[0].ID); err != nil {
			t.Fatal(err)
		}
		e.audit()
	})

	t.Run("followers are told of an answer added and of an amendment once, holders or not", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		holderFollower, follower, holder, bystander := e.user("hf", 100000, 0), e.user("f", 0, 0), e.user("h", 100000, 0), e.user("b", 0, 0)
		ev := e.otherEvent(c, 0.02, 10000, 2, 0.5, 0.3, 0.2)
		ms := e.poolMarkets(ev.Pools[0].ID)
		for _, u := range []*account.User{holderFollower, holder} {
			if _, err := e.buy(u, ms[0], market.Yes, 5000); err != nil {
				t.Fatal(err)
			}
		}
		follow(e, holderFollower, ev)
		follow(e, follower, ev)
		if _, err := e.markets.AddAnswer(e.ctx, c.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Late", Probability: 0.05}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.markets.AddAmendment(e.ctx, c.ID, ev.ID, "Extra time counts.", ""); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			u    *account.User
			want int
		}{{holderFollower, 1}, {follower, 1}, {holder, 1}, {bystander, 0}} {
			for _, typ := range []string{social.TypeAnswerAdded, social.TypeEventAmended} {
				ns := e.notesOf(tc.u, typ)
				if len(ns) != tc.want {
					t.Fatalf("%s has %d %s notifications, want %d", tc.u.Name, len(ns), typ, tc.want)
				}
				if tc.want == 1 && (ns[0].RelatedID != ev.ID || ns[0].RelatedType != social.RelatedEvent) {
					t.Fatalf("%s: %+v does not link the event", tc.u.Name, ns[0])
				}
			}
		}
		if n := e.notesOf(follower, social.TypeAnswerAdded)[0]; n.Data.MarketName != "Late" || n.Data.EventName != "Answers" {
			t.Fatalf("a follower's answer_added: %+v", n.Data)
		}
		e.audit()
	})
}
