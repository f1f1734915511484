package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestShareEmbed: the embed page of a shared market is the one answer
// any site may frame, allows nothing else beyond its own inline script
// and style, and shows the market; every other answer refuses framing.
func TestShareEmbed(t *testing.T) {
	eachStoreSharing(t, func(t *testing.T, w *shareWorld) {
		m := w.shared.Pools[0].Markets[1]
		path := fmt.Sprintf("/embed/markets/%d", m.ID)
		r := w.h.do(t, req{method: http.MethodGet, path: path})
		expect(t, r, http.StatusOK, "")
		csp := r.header.Get("Content-Security-Policy")
		t.Run("any site may frame it: frame-ancestors * and no X-Frame-Options", func(t *testing.T) {
			if !strings.HasSuffix(csp, "; frame-ancestors *") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			if xfo, ok := r.header["X-Frame-Options"]; ok {
				t.Errorf("X-Frame-Options = %q", xfo)
			}
		})
		t.Run("its policy allows its own inline script and style by hash, fetches here, and nothing else", func(t *testing.T) {
			hashOf := func(tag string) string {
				m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindSubmatch(r.body)
				if m == nil {
					t.Fatalf("no <%s> in\n%s", tag, r.body)
				}
				sum := sha256.Sum256(m[1])
				return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
			}
			want := "default-src 'none'; script-src " + hashOf("script") + "; style-src " + hashOf("style") +
				"; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *"
			if csp != want {
				t.Errorf("Content-Security-Policy = %q\nwant %q", csp, want)
			}
			if strings.Contains(string(r.body), " style=") || strings.Contains(string(r.body), " on") && regexp.MustCompile(` on[a-z]+=`).Match(r.body) {
				t.Error("the page has an inline style attribute or event handler, which its policy refuses")
			}
		})
		t.Run("it shows the market, its event escaped, its price and a link to the event in a new tab", func(t *testing.T) {
			body := string(r.body)
			for _, want := range []string{
				`<h1>A2</h1>`,
				`<p class="event">Derby &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</p>`,
				`<span id="price">30.0%</span>`,
				fmt.Sprintf(`<a href="http://example.com/events/%d" target="_blank" rel="noopener">`, w.shared.ID),
				fmt.Sprintf(`data-market="%d"`, m.ID),
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the page has no %s:\n%s", want, body)
				}
			}
		})
		t.Run("with lang=ru it speaks Russian and shows the Russian names where there are some", func(t *testing.T) {
			ru := w.h.do(t, req{method: http.MethodGet, path: path + "?lang=ru"})
			expect(t, ru, http.StatusOK, "")
			for _, want := range []string{`<html lang="ru">`, `<h1>A2</h1>`, `Derby &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co (ru)</p>`,
				`<span class="side" id="side">ДА</span>`, `Торговать на predictkit<span class="sr-only"> (откроется в новой вкладке)</span>`} {
				if !strings.Contains(string(ru.body), want) {
					t.Errorf("the Russian page has no %s:\n%s", want, ru.body)
				}
			}
		})
		t.Run("every other answer refuses framing", func(t *testing.T) {
			for _, p := range []string{"/", fmt.Sprintf("/events/%d", w.shared.ID), "/assets/app.js", "/api/v1/events",
				fmt.Sprintf("/og/events/%d.png", w.shared.ID), "/api/v1/oembed?url=" + url.QueryEscape(fmt.Sprintf("http://example.com/events/%d", w.shared.ID)),
				"/embed/markets/987654321", "/embed"} {
				o := fetch(t, w.h, http.MethodGet, p, nil)
				if xfo := o.header.Get("X-Frame-Options"); xfo != "DENY" {
					t.Errorf("%s: X-Frame-Options = %q", p, xfo)
				}
				if c := o.header.Get("Content-Security-Policy"); !strings.Contains(c, "frame-ancestors 'none'") {
					t.Errorf("%s: Content-Security-Policy = %q", p, c)
				}
			}
		})
		for _, tc := range []struct {
			name, path string
			status     int
			code       string
		}{
			{"a market of a hidden event", fmt.Sprintf("/embed/markets/%d", w.hidden.Pools[0].Markets[0].ID), http.StatusNotFound, "market_not_found"},
			{"a market of a proposed event", fmt.Sprintf("/embed/markets/%d", w.proposed.Pools[0].Markets[0].ID), http.StatusNotFound, "market_not_found"},
			{"an unknown market", "/embed/markets/987654321", http.StatusNotFound, "market_not_found"},
			{"an id that is not a number", "/embed/markets/abc", http.StatusBadRequest, "invalid_id"},
		} {
			t.Run("the embed of "+tc.name+" is "+tc.code, func(t *testing.T) {
				expect(t, w.h.do(t, req{method: http.MethodGet, path: tc.path}), tc.status, tc.code)
			})
		}
	})
}

type apiOEmbed struct {
	Version         string `json:"version"`
	Type            string `json:"type"`
	ProviderName    string `json:"provider_name"`
	ProviderURL     string `json:"provider_url"`
	Title           string `json:"title"`
	HTML            string `json:"html"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
	ThumbnailURL    string `json:"thumbnail_url"`
	ThumbnailWidth  int    `json:"thumbnail_width"`
	ThumbnailHeight int    `json:"thumbnail_height"`
}

// TestOEmbed: oEmbed 1.0 JSON for an event page or a market embed of
// this server; other URLs are 404, other formats 501.
func TestOEmbed(t *testing.T) {
	eachStoreSharing(t, func(t *testing.T, w *shareWorld) {
		oembed := func(query string) *response {
			return w.h.do(t, req{method: http.MethodGet, path: "/api/v1/oembed?" + query})
		}
		page := fmt.Sprintf("http://example.com/events/%d", w.shared.ID)
		first := w.shared.Pools[0].Markets[0]
		t.Run("an event page answers a rich embed of its first market", func(t *testing.T) {
			r := oembed("format=json&url=" + url.QueryEscape(page))
			expect(t, r, http.StatusOK, "")
			var o apiOEmbed
			r.decode(t, &o)
			want := apiOEmbed{Version: "1.0", Type: "rich", ProviderName: "predictkit", ProviderURL: "http://example.com/",
				Title: hostileName, Width: 400, Height: 190,
				HTML:         fmt.Sprintf(`<iframe src="http://example.com/embed/markets/%d" width="400" height="190" title="Derby &#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" loading="lazy" style="border:0"></iframe>`, first.ID),
				ThumbnailURL: fmt.Sprintf("http://example.com/og/events/%d.png", w.shared.ID), ThumbnailWidth: 1200, ThumbnailHeight: 630}
			if o != want {
				t.Errorf("oEmbed = %+v\nwant %+v", o, want)
			}
		})
		t.Run("maxwidth and maxheight make the frame smaller, never larger", func(t *testing.T) {
			r := oembed("maxwidth=300&maxheight=1000&url=" + url.QueryEscape(page))
			expect(t, r, http.StatusOK, "")
			var o apiOEmbed
			r.decode(t, &o)
			if o.Width != 300 || o.Height != 190 || !strings.Contains(o.HTML, `width="300" height="190"`) {
				t.Errorf("oEmbed = %+v", o)
			}
		})
		t.Run("a market embed URL answers that market", func(t *testing.T) {
			m := w.shared.Pools[1].Markets[0]
			r := oembed("url=" + url.QueryEscape(fmt.Sprintf("http://example.com/embed/markets/%d", m.ID)))
			expect(t, r, http.StatusOK, "")
			var o apiOEmbed
			r.decode(t, &o)
			if o.Title != hostileName+" — B1" || !strings.Contains(o.HTML, fmt.Sprintf(`src="http://example.com/embed/markets/%d"`, m.ID)) {
				t.Errorf("oEmbed = %+v", o)
			}
		})
		for _, tc := range []struct {
			name, query string
			status      int
			code        string
		}{
			{"no url", "format=json", http.StatusBadRequest, "invalid_request"},
			{"a maxwidth that is not a positive integer", "maxwidth=0&url=" + url.QueryEscape(page), http.StatusBadRequest, "invalid_request"},
			{"a maxheight that is not a number", "maxheight=tall&url=" + url.QueryEscape(page), http.StatusBadRequest, "invalid_request"},
			{"format=xml", "format=xml&url=" + url.QueryEscape(page), http.StatusNotImplemented, "not_implemented"},
			{"another host", "url=" + url.QueryEscape(fmt.Sprintf("http://evil.example/events/%d", w.shared.ID)), http.StatusNotFound, "not_found"},
			{"another scheme", "url=" + url.QueryEscape(fmt.Sprintf("https://example.com/events/%d", w.shared.ID)), http.StatusNotFound, "not_found"},
			{"a page that is not an event", "url=" + url.QueryEscape("http://example.com/leaderboard"), http.StatusNotFound, "not_found"},
			{"a URL that is not one", "url=" + url.QueryEscape("events/1"), http.StatusNotFound, "not_found"},
			{"a hidden event", "url=" + url.QueryEscape(fmt.Sprintf("http://example.com/events/%d", w.hidden.ID)), http.StatusNotFound, "not_found"},
			{"a proposed event", "url=" + url.QueryEscape(fmt.Sprintf("http://example.com/events/%d", w.proposed.ID)), http.StatusNotFound, "not_found"},
			{"an unknown market", "url=" + url.QueryEscape("http://example.com/embed/markets/987654321"), http.StatusNotFound, "not_found"},
		} {
			t.Run(tc.name+" is "+tc.code, func(t *testing.T) {
				expect(t, oembed(tc.query), tc.status, tc.code)
			})
		}
	})
}
