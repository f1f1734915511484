package storagetest

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// tagged creates an event carrying tags, active or hidden.
func (e *env) tagged(c *account.User, active bool, tags ...string) (*market.Event, error) {
	e.t.Helper()
	np := market.NewPool{Name: "Winner", Margin: 0.02, B: 10000, Markets: []market.NewMarket{{Name: "Yes", Probability: 0.5}}}
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Tagged", Tags: tags, Pools: []market.NewPool{np}})
	if err != nil || !active {
		return ev, err
	}
	return ev, e.markets.SetActive(e.ctx, c.ID, ev.ID, &active)
}

func (e *env) putTag(slug, name, nameRu string) (*market.Tag, bool) {
	e.t.Helper()
	tag, created, err := e.markets.PutTag(e.ctx, slug, name, nameRu)
	if err != nil {
		e.t.Fatalf("put tag %s: %v", slug, err)
	}
	return tag, created
}

func testTags(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a tag is created, then renamed, and listed by slug", func(t *testing.T) {
		e := newEnv(t, newStores)
		if tags, err := e.markets.Tags(e.ctx); err != nil || tags == nil || len(tags) != 0 {
			t.Fatalf("no tags yet: %v, %v", tags, err)
		}
		if _, created := e.putTag("sport", "Sport", "Спорт"); !created {
			t.Error("the first put did not create the tag")
		}
		e.putTag("a-b", "A-B", "")
		e.putTag("ab", "AB", "")
		tag, created := e.putTag("sport", "Sports", "")
		if created || tag.Name != "Sports" || tag.NameRu != "" {
			t.Errorf("the second put: created %v, tag %+v", created, tag)
		}
		tags, err := e.markets.Tags(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []market.Tag{{Slug: "a-b", Name: "A-B"}, {Slug: "ab", Name: "AB"}, {Slug: "sport", Name: "Sports"}}
		if !slices.Equal(tags, want) {
			t.Errorf("tags = %+v, want %+v", tags, want)
		}
	})
	t.Run("an event keeps its tags in order and each tag counts the active events carrying it", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.putTag("sport", "Sport", "")
		e.putTag("football", "Football", "")
		e.putTag("empty", "Empty", "")
		ev, err := e.tagged(c, true, "sport", "football")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.tagged(c, true, "football"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.tagged(c, false, "football"); err != nil { // hidden: not counted
			t.Fatal(err)
		}
		untagged, err := e.tagged(c, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.stores.Markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Tags, []string{"sport", "football"}) {
			t.Errorf("event tags = %q, want [sport football]", got.Tags)
		}
		if got, _ := e.stores.Markets.Event(e.ctx, untagged.ID); got.Tags == nil || len(got.Tags) != 0 {
			t.Errorf("an untagged event's tags = %#v, want empty", got.Tags)
		}
		feed, err := e.stores.Markets.ActiveEvents(e.ctx, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, fe := range feed {
			if fe.ID == ev.ID && !slices.Equal(fe.Tags, []string{"sport", "football"}) {
				t.Errorf("the feed's event tags = %q", fe.Tags)
			}
		}
		tags, err := e.markets.Tags(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int64{}
		for _, tg := range tags {
			counts[tg.Slug] = tg.Events
		}
		if want := map[string]int64{"empty": 0, "football": 2, "sport": 1}; !maps.Equal(counts, want) {
			t.Errorf("counts = %v, want %v", counts, want)
		}
		if tag, _ := e.putTag("football", "Soccer", ""); tag.Events != 2 {
			t.Errorf("a renamed tag counts %d events, want 2", tag.Events)
		}
	})
	t.Run("an event naming an unknown tag is refused and nothing is written", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.putTag("sport", "Sport", "")
		_, err := e.tagged(c, false, "sport", "nope")
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "tags[1]" {
			t.Fatalf("err = %v, want an input error on tags[1]", err)
		}
		if tr, _ := e.stores.Accounts.Balance(e.ctx, account.Treasury); tr != 0 {
			t.Errorf("treasury = %d after a refused event, want 0", tr)
		}
		ev, err := e.tagged(c, true, "sport")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.stores.Markets.Event(e.ctx, ev.ID-1); !errors.Is(err, market.ErrEventNotFound) {
			t.Errorf("the refused event was stored: %v", err)
		}
		tags, _ := e.markets.Tags(e.ctx)
		if len(tags) != 1 || tags[0].Events != 1 {
			t.Errorf("tags = %+v, want sport with 1 event", tags)
		}
	})
	t.Run("bad slugs, names and tag lists are input errors", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.putTag("sport", "Sport", "")
		for _, tc := range []struct{ slug, name, nameRu, field string }{
			{"Sport", "Sport", "", "slug"},
			{"-sport", "Sport", "", "slug"},
			{"sport-", "Sport", "", "slug"},
			{"", "Sport", "", "slug"},
			{"a23456789012345678901234567890123", "Long", "", "slug"},
			{"spo rt", "Sport", "", "slug"},
			{"news", "", "", "name"},
			{"news", "News\x00", "", "name"},
			{"news", "News", string(make([]byte, 65)), "name_ru"},
		} {
			_, _, err := e.markets.PutTag(e.ctx, tc.slug, tc.name, tc.nameRu)
			var ie *input.Error
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Errorf("PutTag(%q, %q, %q) = %v, want an input error on %s", tc.slug, tc.name, tc.nameRu, err, tc.field)
			}
		}
		for _, tc := range []struct {
			tags  []string
			field string
		}{
			{[]string{"sport", "Sport"}, "tags[1]"},
			{[]string{"sport", "sport"}, "tags[1]"},
			{[]string{"a", "b", "c", "d", "e", "f"}, "tags"},
		} {
			_, err := e.tagged(c, false, tc.tags...)
			var ie *input.Error
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Errorf("tags %q: %v, want an input error on %s", tc.tags, err, tc.field)
			}
		}
		if tags, _ := e.markets.Tags(e.ctx); len(tags) != 1 {
			t.Errorf("tags = %+v, want sport alone", tags)
		}
	})
}
