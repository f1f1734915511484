package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestFeedInBrowser: on the feed page a visitor finds an event by a word
// of its Russian rules and by an English answer's name, the sort changes
// the order, the Resolved filter shows resolved cards as resolved (the
// outcome, 100%/0%, a voided market refunded), and a tag's page lists
// only its events under the tag's name; axe-core finds nothing on the
// feed or the tag page in either theme. It needs what TestWebAppInBrowser
// needs, and skips without it.
func TestFeedInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	trader := h.register(t, "trader")
	h.credit(t, trader.id, 1_000_000, false)
	expect(t, h.putTag(t, "football", map[string]any{"name": "Football", "name_ru": "Футбол"}), http.StatusOK, "")

	publish := func(body map[string]any) apiEvent {
		ev := h.createEvent(t, creator.token, body)
		h.activate(t, creator.token, ev.ID, true)
		return ev
	}
	derby := publish(feedEventBody("Harbour derby", "Портовое дерби", "Засчитывается итог основного времени", []string{"football"}, "Harbour Rovers", "Quayside"))
	publish(feedEventBody("City vote", "Городское голосование", "Итоги избирательной комиссии", nil, "Greenfield party"))
	weather := publish(feedEventBody("Sunny weekend", "Солнечные выходные", "По данным метеослужбы", nil, "Sunny"))
	cancelled := publish(feedEventBody("Cancelled cup", "Отменённый кубок", "Отменён", []string{"football"}, "Played"))
	// The derby has the volume; the vote is the newest open event.
	h.buy(t, trader.token, derby.Pools[0].Markets[0].ID, "YES", 50_000)
	for _, c := range []struct {
		ev   apiEvent
		side string
	}{{weather, "YES"}, {cancelled, "VOID"}} {
		m := c.ev.Pools[0].Markets[0]
		r := h.do(t, req{method: http.MethodPost, path: (&world{}).closePath(c.ev.ID, c.ev.Pools[0].ID, m.ID), token: creator.token, body: map[string]any{"won_side": c.side}})
		expect(t, r, http.StatusOK, "")
	}

	var got struct {
		All          []string `json:"all"`
		ByRules      []string `json:"by_rules"`
		URL          string   `json:"url"`
		ByAnswer     []string `json:"by_answer"`
		ByNew        []string `json:"by_new"`
		ByVolume     []string `json:"by_volume"`
		Resolved     []string `json:"resolved"`
		ResolvedCard string   `json:"resolved_card"`
		VoidedCard   string   `json:"voided_card"`
		Heading      string   `json:"heading"`
		Tagged       []string `json:"tagged"`
		AxeFeed      []string `json:"axe_feed"`
		AxeTag       []string `json:"axe_tag"`
	}
	d.run(t, "feed", map[string]any{"open_count": 2, "resolved_count": 2, "rules_word_ru": "основного", "answer_en": "Greenfield",
		"resolved_event": "Sunny weekend", "voided_event": "Cancelled cup", "tag": "football"}, &got)
	if !slices.Equal(got.ByRules, []string{"Harbour derby"}) {
		t.Errorf("the search by a Russian rules word lists %q", got.ByRules)
	}
	if !strings.Contains(got.URL, "q=") {
		t.Errorf("the address %q does not keep the search", got.URL)
	}
	if !slices.Equal(got.ByAnswer, []string{"City vote"}) {
		t.Errorf("the search by an English answer lists %q", got.ByAnswer)
	}
	if !slices.Equal(got.ByNew, []string{"City vote", "Harbour derby"}) || !slices.Equal(got.ByVolume, []string{"Harbour derby", "City vote"}) {
		t.Errorf("newest first %q, largest volume first %q", got.ByNew, got.ByVolume)
	}
	if !slices.Equal(got.Resolved, []string{"Cancelled cup", "Sunny weekend"}) && !slices.Equal(got.Resolved, []string{"Sunny weekend", "Cancelled cup"}) {
		t.Errorf("the resolved filter lists %q", got.Resolved)
	}
	if !strings.Contains(got.ResolvedCard, "Resolved YES") || !strings.Contains(got.ResolvedCard, "100%") {
		t.Errorf("the resolved card reads %q, want the outcome and 100%%", got.ResolvedCard)
	}
	if !strings.Contains(got.VoidedCard, "Voided — refunded") || strings.Contains(got.VoidedCard, "%") {
		t.Errorf("the voided card reads %q, want it refunded and no price", got.VoidedCard)
	}
	if got.Heading != "Tag: Football" || !slices.Equal(got.Tagged, []string{"Harbour derby"}) {
		t.Errorf("the tag page is %q listing %q, want Tag: Football listing the derby (the cancelled cup is resolved)", got.Heading, got.Tagged)
	}
	if got.AxeFeed == nil {
		t.Log("no axe-core: the pages were not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range append(got.AxeFeed, got.AxeTag...) {
		t.Errorf("axe-core: %s", v)
	}
}
