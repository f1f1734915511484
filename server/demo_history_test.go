package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// demoTraderEmails are the demo's traders besides Alice and Bob (see
// docs/web-app.md's table of demo accounts).
var demoTraderEmails = []string{
	server.DemoMariaEmail, "dmitry@demo.predictkit", "sam@demo.predictkit", "priya@demo.predictkit",
	"kenji@demo.predictkit", "olga@demo.predictkit", "lucas@demo.predictkit",
}

// TestDemoPlatform starts the server with its demo data, as `go run
// ./cmd/predictkit` does, and checks it looks like a platform a visitor
// would browse: many events over several tags in both languages, an
// exclusive pool asked as one question, two weeks of trades by several
// people with the last day busiest, a market resolved with its winners
// paid, one voided with every stake refunded, comments, and a ledger that
// balances.
func TestDemoPlatform(t *testing.T) {
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.Demo = true
	start := time.Now()
	h, _ := startServer(t, cfg)

	type market struct {
		ID             int64   `json:"id"`
		Name           string  `json:"name"`
		NameRu         string  `json:"name_ru"`
		Other          bool    `json:"other"`
		Volume         int64   `json:"volume"`
		Resolved       bool    `json:"resolved"`
		WinningOutcome *string `json:"winning_outcome"`
		ResolvedBy     *string `json:"resolved_by"`
	}
	type pool struct {
		ID        int64    `json:"id"`
		Name      string   `json:"name"`
		NameRu    string   `json:"name_ru"`
		Rules     string   `json:"rules"`
		RulesRu   string   `json:"rules_ru"`
		Exclusive bool     `json:"exclusive"`
		Markets   []market `json:"markets"`
	}
	type event struct {
		ID     int64    `json:"id"`
		Name   string   `json:"name"`
		NameRu string   `json:"name_ru"`
		Tags   []string `json:"tags"`
		Pools  []pool   `json:"pools"`
	}
	var feed struct {
		Events []event `json:"events"`
	}
	h.do(t, req{method: http.MethodGet, path: "/api/v1/events?status=all&limit=100"}).decode(t, &feed)
	var markets []market
	for _, e := range feed.Events {
		for _, p := range e.Pools {
			markets = append(markets, p.Markets...)
		}
	}
	find := func(outcome string) (market, bool) {
		for _, m := range markets {
			if m.WinningOutcome != nil && *m.WinningOutcome == outcome {
				return m, true
			}
		}
		return market{}, false
	}

	t.Run("the original demo is still there, first: the Demo Cup final with its two pools of two markets", func(t *testing.T) {
		var e event
		h.do(t, req{method: http.MethodGet, path: "/api/v1/events/1"}).decode(t, &e)
		if e.Name != "Demo Cup final" || len(e.Pools) != 2 || len(e.Pools[0].Markets) != 2 || e.Pools[0].Markets[0].ID != 1 {
			t.Errorf("event 1 is %+v", e)
		}
	})

	t.Run("the feed holds at least 12 events over at least 4 tags, each named and ruled in English and Russian", func(t *testing.T) {
		tags := map[string]bool{}
		for _, e := range feed.Events {
			for _, tag := range e.Tags {
				tags[tag] = true
			}
			if e.NameRu == "" {
				t.Errorf("event %d %q has no Russian name", e.ID, e.Name)
			}
			for _, p := range e.Pools {
				if p.Rules == "" || p.RulesRu == "" || p.NameRu == "" {
					t.Errorf("pool %q of event %q lacks rules, Russian rules or a Russian name", p.Name, e.Name)
				}
				for _, m := range p.Markets {
					if m.NameRu == "" {
						t.Errorf("market %q of event %q has no Russian name", m.Name, e.Name)
					}
				}
			}
		}
		if len(feed.Events) < 12 || len(tags) < 4 {
			t.Errorf("%d events over the tags %v", len(feed.Events), tags)
		}
		var list struct {
			Tags []struct {
				Slug   string `json:"slug"`
				Name   string `json:"name"`
				NameRu string `json:"name_ru"`
				Events int    `json:"events"`
			} `json:"tags"`
		}
		h.do(t, req{method: http.MethodGet, path: "/api/v1/tags"}).decode(t, &list)
		for _, tag := range list.Tags {
			if tag.Name == "" || tag.NameRu == "" || tag.Events == 0 {
				t.Errorf("tag %+v", tag)
			}
		}
	})

	t.Run("one exclusive pool asks \"Who lifts the cup?\" with 4 to 6 answers, one of them Other", func(t *testing.T) {
		var cup []pool
		for _, e := range feed.Events {
			for _, p := range e.Pools {
				if p.Exclusive && p.Name == "Who lifts the cup?" {
					cup = append(cup, p)
				}
			}
		}
		if len(cup) != 1 {
			t.Fatalf("%d exclusive pools ask who lifts the cup", len(cup))
		}
		others := 0
		for _, m := range cup[0].Markets {
			if m.Other {
				others++
			}
			if m.Volume == 0 {
				t.Errorf("answer %q was never traded", m.Name)
			}
		}
		if n := len(cup[0].Markets); n < 4 || n > 6 || others != 1 {
			t.Errorf("the cup has %d answers, %d of them Other", n, others)
		}
	})

	t.Run("several people traded over the past days, most in the last 24 hours, so hourly and daily candles have shape", func(t *testing.T) {
		latest := []struct {
			Name      string `json:"name"`
			CreatedAt string `json:"created_at"`
		}{}
		h.do(t, req{method: http.MethodGet, path: "/api/v1/market/trades/latest"}).decode(t, &latest)
		names := map[string]bool{}
		for _, tr := range latest {
			names[tr.Name] = true
			at, err := time.Parse(time.RFC3339Nano, tr.CreatedAt)
			if err != nil || at.After(start.Add(time.Minute)) || at.Before(start.Add(-server.DemoHistory)) {
				t.Errorf("a trade at %q, not within the demo's history", tr.CreatedAt)
			}
		}
		if len(latest) < 40 || len(names) < 5 {
			t.Errorf("the latest %d trades are by %d people: %v", len(latest), len(names), names)
		}
		candles := func(id int64, interval string, from time.Time) int {
			q := url.Values{"interval": {interval}, "from": {from.UTC().Format(time.RFC3339)}}
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/candles?%s", id, q.Encode())})
			expect(t, r, http.StatusOK, "")
			var wrapped struct {
				Candles []map[string]any `json:"candles"`
			}
			r.decode(t, &wrapped)
			return len(wrapped.Candles)
		}
		busy := 0
		for _, m := range markets {
			if m.Resolved || m.ID <= 4 { // the original demo's trades are two weeks old
				continue
			}
			days, hours := candles(m.ID, "1d", start.Add(-server.DemoHistory)), candles(m.ID, "1h", start.Add(-24*time.Hour))
			if days >= 5 && hours >= 6 {
				busy++
			}
		}
		if busy < 10 {
			t.Errorf("only %d markets traded on 5 days or more and in 6 hours or more of the last day", busy)
		}
	})

	// closed finds the demo traders' closed positions on market id.
	closed := func(t *testing.T, id int64) []apiPosition {
		var out []apiPosition
		for _, email := range demoTraderEmails {
			token := h.login(t, email, server.DemoPassword)
			var page struct {
				Positions []apiPosition `json:"positions"`
			}
			h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed?limit=100", token: token}).decode(t, &page)
			for _, p := range page.Positions {
				if p.MarketID == id {
					out = append(out, p)
				}
			}
		}
		return out
	}

	t.Run("a market resolved by its creator paid its winners", func(t *testing.T) {
		m, ok := find("NO")
		if !ok || m.ResolvedBy == nil || *m.ResolvedBy != "creator" {
			t.Fatalf("no market resolved NO by its creator: %+v", m)
		}
		var won, lost int
		for _, p := range closed(t, m.ID) {
			switch {
			case p.WonSide == 0 && p.Side == "NO":
				won++
			case p.WonSide == 0 && p.Side == "YES":
				lost++
			}
		}
		if won == 0 || lost == 0 {
			t.Errorf("%d winning and %d losing positions on the resolved market", won, lost)
		}
	})

	t.Run("a market voided by the operator refunded every stake", func(t *testing.T) {
		m, ok := find("VOID")
		if !ok || m.ResolvedBy == nil || *m.ResolvedBy != "operator" {
			t.Fatalf("no market voided by the operator: %+v", m)
		}
		ps := closed(t, m.ID)
		if len(ps) == 0 {
			t.Fatal("no position on the voided market")
		}
		for _, p := range ps {
			if p.WonSide != 2 {
				t.Errorf("a position on the voided market closed with won_side %d", p.WonSide)
			}
		}
	})

	t.Run("events carry comments, replies among them", func(t *testing.T) {
		total, replies := 0, 0
		for _, e := range feed.Events {
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d/comments", e.ID)})
			expect(t, r, http.StatusOK, "")
			var wrapped struct {
				Comments []struct {
					ID      int64 `json:"id"`
					Replies int   `json:"replies_count"`
				} `json:"comments"`
			}
			r.decode(t, &wrapped)
			for _, c := range wrapped.Comments {
				total++
				replies += c.Replies
			}
		}
		if total < 8 || replies < 2 {
			t.Errorf("%d comments, %d replies", total, replies)
		}
	})

	t.Run("the ledger balances and every escrow covers its market", func(t *testing.T) {
		if ok, postings, problems := h.audit(t); !ok || postings < 300 {
			t.Errorf("audit: ok %v, %d postings, %v", ok, postings, problems)
		}
	})
}
