package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

type apiTag struct {
	Slug   string `json:"slug"`
	Name   string `json:"name"`
	NameRu string `json:"name_ru"`
	Events int64  `json:"events"`
}

// apiTaggedEvent is an event view with its tags; Tags is a pointer so
// that a view without the field fails.
type apiTaggedEvent struct {
	ID   int64     `json:"id"`
	Tags *[]string `json:"tags"`
}

func (h *harness) tags(t *testing.T) []apiTag {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/tags"})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Tags []apiTag `json:"tags"`
	}
	r.decode(t, &out)
	if out.Tags == nil {
		t.Fatalf("GET /tags answered %s, want an array", r)
	}
	return out.Tags
}

func (h *harness) putTag(t *testing.T, slug string, body any) *response {
	t.Helper()
	return h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/tags/" + slug, token: adminToken, body: body})
}

func tagCount(tags []apiTag, slug string) int64 {
	for _, tg := range tags {
		if tg.Slug == slug {
			return tg.Events
		}
	}
	return -1
}

// taggedEvent is a one-market event body carrying tags.
func taggedEvent(tags ...string) map[string]any {
	return map[string]any{"name": "Cup final", "tags": tags, "pools": []any{map[string]any{
		"name": "Winner", "margin": 0.02, "lmsr_b_kopecks": 10_000,
		"markets": []any{map[string]any{"name": "Home", "probability": 0.5}}}}}
}

// TestTags: the operator keeps the tags, creators tag their events, every
// event view carries its tags, and GET /tags counts the listed events
// carrying each.
func TestTags(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		t.Run("the list is empty before the operator makes a tag", func(t *testing.T) {
			if tags := h.tags(t); len(tags) != 0 {
				t.Fatalf("tags = %+v", tags)
			}
		})
		t.Run("the operator creates a tag and renames it, 200 both times", func(t *testing.T) {
			r := h.putTag(t, "sport", map[string]any{"name": "Sport"})
			expect(t, r, http.StatusOK, "")
			r = h.putTag(t, "sport", map[string]any{"name": "Sports", "name_ru": "Спорт"})
			expect(t, r, http.StatusOK, "")
			var tag apiTag
			r.decode(t, &tag)
			if tag != (apiTag{Slug: "sport", Name: "Sports", NameRu: "Спорт"}) {
				t.Fatalf("PUT answered %+v", tag)
			}
			expect(t, h.putTag(t, "football", map[string]any{"name": "Football"}), http.StatusOK, "")
			tags := h.tags(t)
			if len(tags) != 2 || tags[0].Slug != "football" || tags[1] != tag {
				t.Fatalf("tags = %+v", tags)
			}
		})
		t.Run("a PUT without the admin token is 401 and changes nothing", func(t *testing.T) {
			for _, tok := range []string{"", w.creator.token, "not-the-admin-token"} {
				r := h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/tags/sport", token: tok, body: map[string]any{"name": "Hacked"}})
				expect(t, r, http.StatusUnauthorized, "unauthorized")
			}
			if tags := h.tags(t); tags[1].Name != "Sports" {
				t.Fatalf("tags = %+v", tags)
			}
		})
		t.Run("a bad slug, name or body is 400 invalid_request and makes no tag", func(t *testing.T) {
			for _, tc := range []struct {
				slug string
				body any
			}{
				{"Sport", map[string]any{"name": "Sport"}},
				{"-sport", map[string]any{"name": "Sport"}},
				{"sport-", map[string]any{"name": "Sport"}},
				{"spo_rt", map[string]any{"name": "Sport"}},
				{strings.Repeat("a", 33), map[string]any{"name": "Long"}},
				{"news", map[string]any{"name": ""}},
				{"news", map[string]any{"name": "   "}},
				{"news", map[string]any{"name": strings.Repeat("n", 65)}},
				{"news", map[string]any{"name": "News", "name_ru": "bad\u0000"}},
				{"news", map[string]any{"name": "News", "colour": "red"}},
				{"news", nil},
			} {
				r := h.putTag(t, tc.slug, tc.body)
				expect(t, r, http.StatusBadRequest, "invalid_request")
			}
			if tags := h.tags(t); len(tags) != 2 {
				t.Fatalf("tags = %+v", tags)
			}
		})
		var tagged apiTaggedEvent
		t.Run("a creator's event carries its tags in every view", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: w.creator.token, body: taggedEvent("sport", "football")})
			expect(t, r, http.StatusCreated, "")
			r.decode(t, &tagged)
			if tagged.Tags == nil || !slices.Equal(*tagged.Tags, []string{"sport", "football"}) {
				t.Fatalf("the created event's tags: %s", r)
			}
			h.activate(t, w.creator.token, tagged.ID, true)
			r = h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d", tagged.ID)})
			expect(t, r, http.StatusOK, "")
			var one apiTaggedEvent
			r.decode(t, &one)
			if one.Tags == nil || !slices.Equal(*one.Tags, []string{"sport", "football"}) {
				t.Fatalf("GET /events/{id}: %s", r)
			}
			r = h.do(t, req{method: http.MethodGet, path: "/api/v1/events"})
			expect(t, r, http.StatusOK, "")
			var feed struct {
				Events []apiTaggedEvent `json:"events"`
			}
			r.decode(t, &feed)
			for _, e := range feed.Events {
				want := []string{}
				if e.ID == tagged.ID {
					want = []string{"sport", "football"}
				}
				if e.Tags == nil || !slices.Equal(*e.Tags, want) {
					t.Fatalf("the feed's event %d has tags %v, want %q", e.ID, e.Tags, want)
				}
			}
		})
		t.Run("GET /tags counts the listed events carrying each tag, not hidden ones", func(t *testing.T) {
			tags := h.tags(t)
			if tagCount(tags, "sport") != 1 || tagCount(tags, "football") != 1 {
				t.Fatalf("tags = %+v", tags)
			}
			hidden := h.createEvent(t, w.creator.token, taggedEvent("football"))
			if got := tagCount(h.tags(t), "football"); got != 1 {
				t.Fatalf("a hidden event counted: football has %d events", got)
			}
			h.activate(t, w.creator.token, hidden.ID, true)
			if got := tagCount(h.tags(t), "football"); got != 2 {
				t.Fatalf("football has %d events, want 2", got)
			}
			h.activate(t, w.creator.token, tagged.ID, false)
			if tags := h.tags(t); tagCount(tags, "sport") != 0 || tagCount(tags, "football") != 1 {
				t.Fatalf("after hiding an event: %+v", tags)
			}
		})
		t.Run("an unknown, bad or repeated tag is 400 naming it, and no event is made", func(t *testing.T) {
			_, before, _ := h.audit(t)
			for _, tc := range []struct {
				tags  []string
				field string
			}{
				{[]string{"sport", "nope"}, "tags[1]"},
				{[]string{"Sport"}, "tags[0]"},
				{[]string{"sport", "sport"}, "tags[1]"},
				{[]string{"a", "b", "c", "d", "e", "f"}, "tags"},
			} {
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: w.creator.token, body: taggedEvent(tc.tags...)})
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if !strings.Contains(string(r.body), tc.field) {
					t.Errorf("tags %q: the detail does not name %s: %s", tc.tags, tc.field, r)
				}
			}
			if _, after, _ := h.audit(t); after != before {
				t.Fatalf("the refused events posted %d postings", after-before)
			}
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d", tagged.ID+2)})
			expect(t, r, http.StatusNotFound, "event_not_found")
		})
	})
}
