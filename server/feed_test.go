package server_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// apiFeedEvent is an event of the feed with what the feed adds; the
// pointers make a view without the field fail.
type apiFeedEvent struct {
	ID               int64    `json:"id"`
	Name             string   `json:"name"`
	Tags             []string `json:"tags"`
	VolumeKopecks    *int64   `json:"volume_kopecks"`
	Volume24hKopecks *int64   `json:"volume_24h_kopecks"`
	ClosesAt         *string  `json:"closes_at"`
	Pools            []struct {
		Markets []struct {
			Name           string    `json:"name"`
			YesProbability float64   `json:"yes_probability"`
			Sparkline      []float64 `json:"sparkline"`
		} `json:"markets"`
	} `json:"pools"`
}

type apiFeed struct {
	Events     []apiFeedEvent `json:"events"`
	NextCursor *string        `json:"next_cursor"`
}

func (h *harness) feed(t *testing.T, query url.Values) apiFeed {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/events?" + query.Encode()})
	expect(t, r, http.StatusOK, "")
	var out apiFeed
	r.decode(t, &out)
	if !strings.Contains(string(r.body), `"next_cursor":`) {
		t.Fatalf("the feed has no next_cursor: %s", r)
	}
	return out
}

func feedNames(f apiFeed) []string {
	out := []string{}
	for _, e := range f.Events {
		out = append(out, e.Name)
	}
	return out
}

// feedEventBody is a one-pool event body with Russian texts.
func feedEventBody(name, nameRu, rulesRu string, tags []string, answers ...string) map[string]any {
	var ms []any
	for _, a := range answers {
		ms = append(ms, map[string]any{"name": a, "probability": 0.4})
	}
	return map[string]any{"name": name, "name_ru": nameRu, "tags": tags, "pools": []any{map[string]any{
		"name": "Winner", "margin": 0.02, "lmsr_b_kopecks": 100_000, "rules": "Official result", "rules_ru": rulesRu,
		"markets": ms}}}
}

// TestFeed: GET /api/v1/events searches in both languages, filters by
// tag and status, sorts four ways and pages with a cursor; every event
// carries its volumes, closing time and sparklines; bad parameters are
// 400 invalid_request.
func TestFeed(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h) // "World cup", untagged
		expect(t, h.putTag(t, "football", map[string]any{"name": "Football", "name_ru": "Футбол"}), http.StatusOK, "")
		derby := h.createEvent(t, w.creator.token, feedEventBody("Harbour derby", "Портовое дерби", "Засчитывается итог основного времени", []string{"football"}, "Harbour Rovers", "Quayside"))
		h.activate(t, w.creator.token, derby.ID, true)
		vote := h.createEvent(t, w.creator.token, feedEventBody("City vote", "Городское голосование", "Итоги избирательной комиссии", nil, "Yes"))
		h.activate(t, w.creator.token, vote.ID, true)
		hidden := h.createEvent(t, w.creator.token, feedEventBody("Hidden derby", "Скрытое дерби", "", []string{"football"}, "A"))
		_ = hidden
		h.buy(t, w.alice.token, derby.Pools[0].Markets[0].ID, "YES", 50_000)

		t.Run("a search finds an event by a word of its Russian rules or an English answer", func(t *testing.T) {
			for q, want := range map[string][]string{
				"основного":   {"Harbour derby"},
				"quayside":    {"Harbour derby"},
				"ДЕРБИ":       {"Harbour derby"}, // the hidden one is not found
				"избиратель":  {"City vote"},     // a prefix
				"rules a":     {"World cup"},
				"nonexistent": {},
			} {
				if got := feedNames(h.feed(t, url.Values{"q": {q}})); !slices.Equal(got, want) {
					t.Errorf("q=%q lists %q, want %q", q, got, want)
				}
			}
		})
		t.Run("a tag lists only its events, and each carries its tags", func(t *testing.T) {
			f := h.feed(t, url.Values{"tag": {"football"}})
			if got := feedNames(f); !slices.Equal(got, []string{"Harbour derby"}) || !slices.Equal(f.Events[0].Tags, []string{"football"}) {
				t.Fatalf("tag football: %+v", f.Events)
			}
			if got := h.feed(t, url.Values{"tag": {"no-such-tag"}}); len(got.Events) != 0 {
				t.Fatalf("an unknown tag lists %q", feedNames(got))
			}
		})
		t.Run("the sorts order the events and each carries volumes, closing time and sparklines", func(t *testing.T) {
			for sort, want := range map[string][]string{
				"":         {"Harbour derby", "City vote", "World cup"},
				"trending": {"Harbour derby", "City vote", "World cup"},
				"new":      {"City vote", "Harbour derby", "World cup"},
				"volume":   {"Harbour derby", "City vote", "World cup"},
			} {
				if got := feedNames(h.feed(t, url.Values{"sort": {sort}})); !slices.Equal(got, want) {
					t.Errorf("sort=%q lists %q, want %q", sort, got, want)
				}
			}
			f := h.feed(t, url.Values{"sort": {"closing"}})
			if len(f.Events) != 3 {
				t.Fatalf("sort=closing lists %q", feedNames(f))
			}
			for i, e := range f.Events {
				if e.VolumeKopecks == nil || e.Volume24hKopecks == nil || e.ClosesAt == nil {
					t.Fatalf("event %q lacks the feed's fields", e.Name)
				}
				if i > 0 && *f.Events[i-1].ClosesAt > *e.ClosesAt {
					t.Errorf("closing: %s before %s", *f.Events[i-1].ClosesAt, *e.ClosesAt)
				}
				if e.Name == "Harbour derby" && (*e.VolumeKopecks != 50_000 || *e.Volume24hKopecks != 50_000) {
					t.Errorf("the derby's volumes are %d and %d, want 50000 (the amount paid)", *e.VolumeKopecks, *e.Volume24hKopecks)
				}
				for _, p := range e.Pools {
					for _, m := range p.Markets {
						if n := len(m.Sparkline); n < 1 || n > 24 || m.Sparkline[n-1] != m.YesProbability {
							t.Errorf("market %q: sparkline %v, price %v", m.Name, m.Sparkline, m.YesProbability)
						}
					}
				}
			}
		})
		t.Run("a resolved event leaves the open feed for the resolved one", func(t *testing.T) {
			m := vote.Pools[0].Markets[0]
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(vote.ID, vote.Pools[0].ID, m.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
			expect(t, r, http.StatusOK, "")
			if got := feedNames(h.feed(t, url.Values{"sort": {"new"}})); slices.Contains(got, "City vote") {
				t.Errorf("the open feed lists a resolved event: %q", got)
			}
			if got := feedNames(h.feed(t, url.Values{"status": {"resolved"}})); !slices.Equal(got, []string{"City vote"}) {
				t.Errorf("status=resolved lists %q", got)
			}
			if got := feedNames(h.feed(t, url.Values{"status": {"all"}, "sort": {"new"}})); !slices.Equal(got, []string{"City vote", "Harbour derby", "World cup"}) {
				t.Errorf("status=all lists %q", got)
			}
		})
		t.Run("pages follow one another with next_cursor until it is null", func(t *testing.T) {
			var names []string
			q := url.Values{"status": {"all"}, "sort": {"new"}, "limit": {"2"}}
			for pages := 0; ; pages++ {
				if pages > 3 {
					t.Fatal("the cursor never ends")
				}
				f := h.feed(t, q)
				names = append(names, feedNames(f)...)
				if f.NextCursor == nil {
					break
				}
				q.Set("cursor", *f.NextCursor)
			}
			if !slices.Equal(names, []string{"City vote", "Harbour derby", "World cup"}) {
				t.Fatalf("paged through %q", names)
			}
			if got := feedNames(h.feed(t, url.Values{"status": {"all"}, "sort": {"new"}, "limit": {"1"}, "offset": {"1"}})); !slices.Equal(got, []string{"Harbour derby"}) {
				t.Fatalf("limit=1&offset=1 lists %q", got)
			}
		})
		t.Run("a bad parameter is 400 invalid_request naming it", func(t *testing.T) {
			newCursor := h.feed(t, url.Values{"sort": {"new"}, "limit": {"1"}}).NextCursor
			for _, tc := range []struct{ query, field string }{
				{"sort=hot", "sort"},
				{"status=closed", "status"},
				{"tag=Not%20a%20slug", "tag"},
				{"cursor=garbage!", "cursor"},
				{"sort=volume&cursor=" + url.QueryEscape(*newCursor), "cursor"},
				{"sort=new&offset=1&cursor=" + url.QueryEscape(*newCursor), "cursor"},
				{"q=" + strings.Repeat("a", 201), "q"},
				{"q=%00", "q"},
				{"limit=x", "limit"},
			} {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/events?" + tc.query})
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if !strings.Contains(string(r.body), tc.field) {
					t.Errorf("%s: %s does not name %s", tc.query, r, tc.field)
				}
			}
		})
	})
}
