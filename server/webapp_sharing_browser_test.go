package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestSharingInBrowser: a page of another site frames a market's embed
// with the iframe of the server's oEmbed answer; the frame shows the
// market's YES price and a link to the event that opens in a new tab;
// a trade made through the API moves the price in the frame without a
// reload; and the embed page has no axe-core violation in either theme,
// in English or in Russian.
// It needs what TestWebAppInBrowser needs, and skips without it.
func TestSharingInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, twoPoolEvent("Cup final"))
	h.activate(t, creator.token, ev.ID, true)
	trader := h.register(t, "trader")
	h.credit(t, trader.id, 1_000_000, false)
	m := ev.Pools[0].Markets[0]

	eventURL := fmt.Sprintf("http://%s/events/%d", h.base, ev.ID)
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/oembed?url=" + url.QueryEscape(eventURL)})
	expect(t, r, http.StatusOK, "")
	var o apiOEmbed
	r.decode(t, &o)
	// Another site: another host name and port than the server's.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><title>A blog</title><main><h1>Who wins the cup?</h1>%s</main></html>", o.HTML)
	}))
	defer site.Close()
	hostURL := strings.Replace(site.URL, "127.0.0.1", "localhost", 1)

	var got struct {
		Before, After, Name, Href, Target, Rel string
		MovedMS                                int64    `json:"moved_ms"`
		YesProbability                         float64  `json:"yes_probability"`
		Axe                                    []axeRun `json:"axe"`
	}
	d.run(t, "sharing", map[string]any{"host_url": hostURL, "market": m.ID, "token": trader.token, "amount": 100_000}, &got)
	if got.Before != "50.0%" || got.Name != m.Name {
		t.Errorf("the frame showed %q at %q, want 50.0%% at %q", got.Name, got.Before, m.Name)
	}
	if want := fmt.Sprintf("%.1f%%", got.YesProbability*100); got.After != want || got.After == got.Before {
		t.Errorf("after the trade the frame showed %q, want %q", got.After, want)
	}
	t.Logf("the frame's price moved %d ms after the trade's answer", got.MovedMS)
	if got.Href != eventURL || got.Target != "_blank" || !strings.Contains(got.Rel, "noopener") {
		t.Errorf("the link is href=%q target=%q rel=%q", got.Href, got.Target, got.Rel)
	}
	if got.Axe == nil {
		t.Log("no axe-core: the embed page was not checked (PREDICTKIT_AXE_CORE)")
	}
	if got.Axe != nil && len(got.Axe) != 4 {
		t.Errorf("axe-core ran %d times, want 4 (two languages, two themes): %+v", len(got.Axe), got.Axe)
	}
	for _, run := range got.Axe {
		for _, v := range run.Violations {
			t.Errorf("the embed page (%s): %s", run.Theme, v)
		}
	}
}

// axeRun is one axe-core run of the sharing flow.
type axeRun struct {
	Theme      string   `json:"theme"`
	Violations []string `json:"violations"`
}
