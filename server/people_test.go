package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// apiPublicProfile is GET /users/{id}.
type apiPublicProfile struct {
	ID               int64   `json:"id"`
	Name             string  `json:"name"`
	Nickname         *string `json:"nickname"`
	AvatarURL        *string `json:"avatar_url"`
	Level            int     `json:"level"`
	RegisteredDate   string  `json:"registered_date"`
	TotalPredictions int64   `json:"total_predictions"`
	BiggestWin       int64   `json:"biggest_win"`
	VolumeKopecks    int64   `json:"volume_kopecks"`
	Positions        []struct {
		EventID      int64  `json:"event_id"`
		EventName    string `json:"event_name"`
		MarketID     int64  `json:"market_id"`
		MarketName   string `json:"market_name"`
		Side         string `json:"side"`
		Shares       int64  `json:"shares"`
		ValueKopecks int64  `json:"value_kopecks"`
	} `json:"positions"`
	RecentTrades []struct {
		TradeID       int64  `json:"trade_id"`
		EventID       int64  `json:"event_id"`
		MarketName    string `json:"market_name"`
		Side          string `json:"side"`
		Action        string `json:"action"`
		AmountKopecks int64  `json:"amount_kopecks"`
	} `json:"recent_trades"`
}

func userPath(id int64) string   { return fmt.Sprintf("/api/v1/users/%d", id) }
func followPath(id int64) string { return fmt.Sprintf("/api/v1/events/%d/follow", id) }

// following reads the caller's followed events' ids, and the next cursor.
func (h *harness) following(t *testing.T, token, query string) ([]int64, *string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/following" + query, token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Events     []apiAmendedEvent `json:"events"`
		NextCursor *string           `json:"next_cursor"`
	}
	r.decode(t, &out)
	ids := []int64{}
	for _, e := range out.Events {
		if e.Amendments == nil || len(e.Pools) == 0 {
			t.Fatalf("a followed event is not the event's view: %s", r)
		}
		ids = append(ids, e.ID)
	}
	return ids, out.NextCursor
}

// notesAbout are the caller's notifications of type typ about event.
func (h *harness) notesAbout(t *testing.T, token, typ string, event int64) []apiNotification {
	t.Helper()
	var out []apiNotification
	for _, n := range h.allNotifications(t, token, "?limit=100") {
		if n.Type == typ && n.RelatedType == "event" && n.RelatedID == event {
			out = append(out, n)
		}
	}
	return out
}

// TestPublicProfile: GET /users/{id} shows what anyone may see of a user,
// with the positions and trades of active events, and a hidden profile
// is exactly an unknown id to everyone but its owner.
func TestPublicProfile(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			// Started: the volume is the board's, whose consumer runs
			// with the server.
			h, _ := startServer(t, testConfig(sc.new(t)))
			testPublicProfile(t, h)
		})
	}
}

func testPublicProfile(t *testing.T, h *harness) {
	{
		w := newWorld(t, h)
		buy := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		hidden := h.createEvent(t, w.creator.token, twoPoolEvent("Not shown"))
		h.activate(t, w.creator.token, hidden.ID, true)
		h.buy(t, w.alice.token, hidden.Pools[0].Markets[0].ID, "NO", 5_000)
		h.activate(t, w.creator.token, hidden.ID, false)
		h.setProfile(t, w.alice.token, map[string]any{"nickname": "ace", "avatar_url": "https://example.com/a.png"})
		if _, ok := h.store.(boardStore); ok {
			caughtUp(t, h.store)
		}

		t.Run("anyone reads a profile with its positions and trades on active events and nothing private", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: userPath(w.alice.id)})
			expect(t, r, http.StatusOK, "")
			for _, private := range []string{"balance", "email", "address", "closed_positions", "profile_hidden"} {
				if strings.Contains(string(r.body), `"`+private) {
					t.Fatalf("the public profile shows %s: %s", private, r)
				}
			}
			var p apiPublicProfile
			r.decode(t, &p)
			if p.ID != w.alice.id || p.Name != w.alice.name || p.Nickname == nil || *p.Nickname != "ace" || p.AvatarURL == nil ||
				p.Level < 1 || len(p.RegisteredDate) != len("2006-01-02") {
				t.Fatalf("profile %+v", p)
			}
			if len(p.Positions) != 1 || p.Positions[0].MarketID != w.a1.ID || p.Positions[0].EventName != "World cup" ||
				p.Positions[0].MarketName != w.a1.Name || p.Positions[0].Side != "YES" || p.Positions[0].Shares != buy.Shares ||
				p.Positions[0].ValueKopecks <= 0 {
				t.Fatalf("positions %+v, want only the one on the active event", p.Positions)
			}
			if len(p.RecentTrades) != 1 || p.RecentTrades[0].TradeID != buy.TradeID || p.RecentTrades[0].MarketName != w.a1.Name ||
				p.RecentTrades[0].Action != "buy" || p.RecentTrades[0].AmountKopecks != buy.CostKopecks || p.RecentTrades[0].EventID != w.event.ID {
				t.Fatalf("recent trades %+v", p.RecentTrades)
			}
			if p.VolumeKopecks <= 0 || p.VolumeKopecks > buy.CostKopecks+5_000 {
				t.Fatalf("volume %d after buys of %d and 5000", p.VolumeKopecks, buy.CostKopecks)
			}
		})
		t.Run("a hidden profile answers as an unknown id to others, and is its owner's to see", func(t *testing.T) {
			h.setProfile(t, w.bob.token, map[string]any{"profile_hidden": true})
			hiddenAnswer := h.do(t, req{method: http.MethodGet, path: userPath(w.bob.id), token: w.alice.token})
			unknown := h.do(t, req{method: http.MethodGet, path: userPath(1 << 40)})
			expect(t, hiddenAnswer, http.StatusNotFound, "user_not_found")
			expect(t, unknown, http.StatusNotFound, "user_not_found")
			if string(hiddenAnswer.body) != string(unknown.body) {
				t.Fatalf("hidden %s, unknown %s", hiddenAnswer, unknown)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: userPath(w.bob.id)}), http.StatusNotFound, "user_not_found")
			expect(t, h.do(t, req{method: http.MethodGet, path: userPath(w.bob.id), token: w.bob.token}), http.StatusOK, "")
		})
		t.Run("me is not an id, and the caller's own routes under /users/me keep working", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me"}), http.StatusBadRequest, "invalid_id")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/abc"}), http.StatusBadRequest, "invalid_id")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades", token: w.alice.token}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed", token: w.alice.token}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id)}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/following", token: w.alice.token}), http.StatusOK, "")
		})
	}
}

// TestFollowing: following an event is idempotent both ways, needs a
// token and an event, and lists the events newest follow first.
func TestFollowing(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		second := h.createEvent(t, w.creator.token, twoPoolEvent("Second"))
		third := h.createEvent(t, w.creator.token, twoPoolEvent("Third"))

		t.Run("follow and unfollow answer 204 however often they are sent", func(t *testing.T) {
			for range 2 {
				expect(t, h.do(t, req{method: http.MethodPut, path: followPath(w.event.ID), token: w.alice.token}), http.StatusNoContent, "")
			}
			if ids, _ := h.following(t, w.alice.token, ""); len(ids) != 1 || ids[0] != w.event.ID {
				t.Fatalf("following %v", ids)
			}
			for range 2 {
				expect(t, h.do(t, req{method: http.MethodDelete, path: followPath(w.event.ID), token: w.alice.token}), http.StatusNoContent, "")
			}
			if ids, next := h.following(t, w.alice.token, ""); len(ids) != 0 || next != nil {
				t.Fatalf("following %v after the unfollow", ids)
			}
		})
		t.Run("an unknown event is 404, no token 401, a bad id 400", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPut, path: followPath(1 << 40), token: w.alice.token}), http.StatusNotFound, "event_not_found")
			expect(t, h.do(t, req{method: http.MethodDelete, path: followPath(1 << 40), token: w.alice.token}), http.StatusNotFound, "event_not_found")
			expect(t, h.do(t, req{method: http.MethodPut, path: followPath(w.event.ID)}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodDelete, path: followPath(w.event.ID)}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/following"}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodPut, path: "/api/v1/events/x/follow", token: w.alice.token}), http.StatusBadRequest, "invalid_id")
		})
		t.Run("the list is newest follow first, keyset paged, and each user's own", func(t *testing.T) {
			for _, id := range []int64{w.event.ID, second.ID, third.ID} {
				expect(t, h.do(t, req{method: http.MethodPut, path: followPath(id), token: w.alice.token}), http.StatusNoContent, "")
			}
			expect(t, h.do(t, req{method: http.MethodPut, path: followPath(second.ID), token: w.bob.token}), http.StatusNoContent, "")
			ids, next := h.following(t, w.alice.token, "")
			if fmt.Sprint(ids) != fmt.Sprint([]int64{third.ID, second.ID, w.event.ID}) || next != nil {
				t.Fatalf("following %v (next %v)", ids, next)
			}
			page1, next := h.following(t, w.alice.token, "?limit=2")
			if fmt.Sprint(page1) != fmt.Sprint([]int64{third.ID, second.ID}) || next == nil {
				t.Fatalf("first page %v", page1)
			}
			page2, last := h.following(t, w.alice.token, "?limit=2&cursor="+*next)
			if fmt.Sprint(page2) != fmt.Sprint([]int64{w.event.ID}) || last != nil {
				t.Fatalf("second page %v", page2)
			}
			if ids, _ := h.following(t, w.bob.token, ""); fmt.Sprint(ids) != fmt.Sprint([]int64{second.ID}) {
				t.Fatalf("Bob's list %v", ids)
			}
			for _, q := range []string{"?limit=0", "?limit=51", "?limit=x", "?cursor=bogus"} {
				expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/following" + q, token: w.alice.token}), http.StatusBadRequest, "invalid_request")
			}
		})
	})
}

// TestFollowersAreNotified: followers hear of each market's resolution,
// of answers added and of amendments, holders or not, once each.
func TestFollowersAreNotified(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		carol := h.register(t, "carol") // follows, holds nothing
		dave := h.register(t, "dave")   // neither
		ev := h.createEvent(t, w.creator.token, otherEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		pool := ev.Pools[0]
		ann := pool.Markets[0]
		h.buy(t, w.alice.token, ann.ID, "YES", 2_000) // Alice holds and follows
		h.buy(t, w.bob.token, ann.ID, "NO", 2_000)    // Bob only holds
		for _, u := range []apiUser{w.alice, carol} {
			expect(t, h.do(t, req{method: http.MethodPut, path: followPath(ev.ID), token: u.token}), http.StatusNoContent, "")
		}
		h.setProfile(t, carol.token, map[string]any{"language": "ru"})

		check := func(t *testing.T, typ string, want map[string]int) {
			t.Helper()
			for _, u := range []apiUser{w.alice, w.bob, carol, dave} {
				if got := len(h.notesAbout(t, u.token, typ, ev.ID)); got != want[u.name] {
					t.Fatalf("%s has %d %s notifications, want %d", u.name, got, typ, want[u.name])
				}
			}
		}
		t.Run("an answer added is told to holders and followers once", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", pool.ID), token: w.creator.token,
				body: map[string]any{"name": "Cid", "probability": 0.05}})
			expect(t, r, http.StatusCreated, "")
			check(t, "answer_added", map[string]int{"alice": 1, "bob": 1, "carol": 1})
			n := h.notesAbout(t, carol.token, "answer_added", ev.ID)[0]
			if !strings.Contains(n.Message, "следите") || !strings.Contains(n.Message, "Cid") {
				t.Fatalf("a follower's answer_added in Russian: %+v", n)
			}
		})
		t.Run("an amendment is told to holders and followers once", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: amendmentsPath(ev.ID), token: w.creator.token, body: map[string]any{"text": "Runoffs count."}})
			expect(t, r, http.StatusCreated, "")
			check(t, "event_amended", map[string]int{"alice": 1, "bob": 1, "carol": 1})
		})
		t.Run("a resolution is told to holders and followers once per market", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, pool.ID, ann.ID), token: w.creator.token,
				body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
			// The exclusive pool's markets (Cid's too) all resolve at once.
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", pool.ID)})
			var p apiPool
			r.decode(t, &p)
			markets := len(p.Markets)
			check(t, "market_resolved", map[string]int{"alice": markets, "bob": 1, "carol": markets}) // Bob holds Ann only
			for _, n := range h.notesAbout(t, carol.token, "market_resolved", ev.ID) {
				if !strings.Contains(n.Message, "следите") || strings.Contains(n.Message, "Выплата") {
					t.Fatalf("a follower who holds nothing is told as a follower: %+v", n)
				}
			}
			for _, n := range h.notesAbout(t, w.alice.token, "market_resolved", ev.ID) {
				if strings.Contains(n.Message, "follow") == strings.Contains(n.Message, "Your payout") {
					t.Fatalf("Alice's notification %+v", n)
				}
			}
		})
		h.mustAudit(t)
	})
}
