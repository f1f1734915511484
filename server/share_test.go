package server_test

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/web"
)

// hostileName is an event name that would break out of an attribute
// and run a script if it were not escaped.
const hostileName = `Derby "><script>alert(1)</script> & co`

// shareWorld is a harness taking proposals, a creator with a shared
// (active) event named hostileName, a hidden one, a proposal, and a
// credited trader.
type shareWorld struct {
	h                        *harness
	creator, trader          apiUser
	shared, hidden, proposed apiEvent
}

// eachStoreSharing runs f once per store on a shareWorld; opts configure
// its server.
func eachStoreSharing(t *testing.T, f func(t *testing.T, w *shareWorld), opts ...harnessOption) {
	t.Helper()
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			o := append([]harnessOption{withConfig(func(c *server.Config) {
				c.Web = true
				c.Proposals, c.ProposalAnteKopecks = true, testAnte
			})}, opts...)
			h := newHarness(t, sc.new(t), o...)
			w := &shareWorld{h: h, creator: h.register(t, "creator"), trader: h.register(t, "trader")}
			h.makeCreator(t, w.creator.id)
			h.credit(t, w.trader.id, 1_000_000, false)
			w.shared = h.createEvent(t, w.creator.token, twoPoolEvent(hostileName))
			h.activate(t, w.creator.token, w.shared.ID, true)
			w.hidden = h.createEvent(t, w.creator.token, twoPoolEvent("Hidden derby"))
			w.proposed = h.propose(t, w.trader.token, twoPoolEvent("Proposed derby")).apiEvent
			f(t, w)
		})
	}
}

// metaContent is the content of the page's <meta> whose property or name
// is key; "" when there is none.
func metaContent(page []byte, key string) string {
	re := regexp.MustCompile(`<meta (?:property|name)="` + regexp.QuoteMeta(key) + `" content="([^"]*)">`)
	m := re.FindSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]))
}

// TestSharePage: the page of a shared event carries its Open Graph and
// Twitter card tags, escaped, with absolute links; any other event's
// page is the app's plain page.
func TestSharePage(t *testing.T) {
	plain, err := web.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	index := plain.File(web.Index).Body
	eachStoreSharing(t, func(t *testing.T, w *shareWorld) {
		path := fmt.Sprintf("/events/%d", w.shared.ID)
		r := fetch(t, w.h, http.MethodGet, path, nil)
		t.Run("the tags name the event, its prices and its card, with absolute links", func(t *testing.T) {
			expect(t, r, http.StatusOK, "")
			base := "http://example.com"
			want := map[string]string{
				"og:title":            hostileName,
				"og:type":             "website",
				"og:site_name":        "predictkit",
				"og:url":              base + path,
				"og:image":            fmt.Sprintf("%s/og/events/%d.png", base, w.shared.ID),
				"og:image:width":      "1200",
				"og:image:height":     "630",
				"twitter:card":        "summary_large_image",
				"twitter:title":       hostileName,
				"twitter:image":       fmt.Sprintf("%s/og/events/%d.png", base, w.shared.ID),
				"og:description":      "A1: YES 50.0% · A2: YES 30.0% · B1: YES 60.0%",
				"twitter:description": "A1: YES 50.0% · A2: YES 30.0% · B1: YES 60.0%",
			}
			for k, v := range want {
				if got := metaContent(r.body, k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			oembed := fmt.Sprintf(`<link rel="alternate" type="application/json+oembed" href="%s/api/v1/oembed?format=json&amp;url=http%%3A%%2F%%2Fexample.com%%2Fevents%%2F%d"`, base, w.shared.ID)
			if !bytes.Contains(r.body, []byte(oembed)) {
				t.Errorf("no oEmbed discovery link %s in\n%s", oembed, r.body)
			}
		})
		t.Run("the name is escaped everywhere: no tag of it reaches the page", func(t *testing.T) {
			if bytes.Contains(r.body, []byte("<script>alert")) || bytes.Contains(r.body, []byte(`Derby "`)) {
				t.Errorf("the page carries the name unescaped:\n%s", r.body)
			}
			if !bytes.Contains(r.body, []byte("&#34;&gt;&lt;script&gt;")) {
				t.Errorf("the page does not carry the escaped name:\n%s", r.body)
			}
		})
		t.Run("the app still loads: the same scripts, the app's own policy, no framing", func(t *testing.T) {
			if !bytes.Contains(r.body, []byte(`<script type="module" src="/assets/app.js"></script>`)) || !bytes.Contains(r.body, []byte(`<div id="page"></div>`)) {
				t.Errorf("the page lost the app:\n%s", r.body)
			}
			if got := r.header.Get("Content-Security-Policy"); got != web.ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy = %q", got)
			}
			if got := r.header.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options = %q", got)
			}
		})
		t.Run("the page revalidates by its ETag, which a trade changes", func(t *testing.T) {
			etag := r.header.Get("ETag")
			again := fetch(t, w.h, http.MethodGet, path, map[string]string{"If-None-Match": etag})
			expect(t, again, http.StatusNotModified, "")
			w.h.buy(t, w.trader.token, w.shared.Pools[1].Markets[0].ID, "YES", 50_000)
			after := fetch(t, w.h, http.MethodGet, path, map[string]string{"If-None-Match": etag})
			expect(t, after, http.StatusOK, "")
			if d := metaContent(after.body, "og:description"); strings.Contains(d, "B1: YES 60.0%") || !strings.HasPrefix(d, "A1: YES 50.0% · A2: YES 30.0% · B1: YES ") {
				t.Errorf("after a buy of B1's YES, og:description = %q", d)
			}
		})
		for _, tc := range []struct{ name, path string }{
			{"a hidden event", fmt.Sprintf("/events/%d", w.hidden.ID)},
			{"a proposed event", fmt.Sprintf("/events/%d", w.proposed.ID)},
			{"an unknown event", "/events/987654321"},
			{"an id that is not a number", "/events/abc"},
		} {
			t.Run("the page of "+tc.name+" is the app's plain page", func(t *testing.T) {
				r := fetch(t, w.h, http.MethodGet, tc.path, nil)
				expect(t, r, http.StatusOK, "")
				if !bytes.Equal(r.body, index) {
					t.Errorf("%s answered a page other than the app's:\n%s", tc.path, r.body)
				}
			})
		}
	})
}

// TestSharePagePublicURL: with PREDICTKIT_PUBLIC_URL the links are made
// of it, whatever host the request named.
func TestSharePagePublicURL(t *testing.T) {
	eachStoreSharing(t, func(t *testing.T, w *shareWorld) {
		r := fetch(t, w.h, http.MethodGet, fmt.Sprintf("/events/%d", w.shared.ID), nil)
		want := fmt.Sprintf("https://app.example.org/predict/og/events/%d.png", w.shared.ID)
		if got := metaContent(r.body, "og:image"); got != want {
			t.Errorf("og:image = %q, want %q", got, want)
		}
	}, withConfig(func(c *server.Config) { c.PublicURL = "https://app.example.org/predict/" }))
}

// decodeCard decodes a card answer and checks its size.
func decodeCard(t *testing.T, r *response) image.Image {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "image/png" {
		t.Fatalf("Content-Type = %q", ct)
	}
	img, err := png.Decode(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("the card is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 630 {
		t.Fatalf("the card is %dx%d, want 1200x630", b.Dx(), b.Dy())
	}
	return img
}

// samePixels reports whether a and b are the same image.
func samePixels(a, b image.Image) bool {
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// TestShareImage: the card is a 1200×630 PNG, revalidated by an ETag
// that a trade changes, with a new image.
func TestShareImage(t *testing.T) {
	eachStoreSharing(t, func(t *testing.T, w *shareWorld) {
		path := fmt.Sprintf("/og/events/%d.png", w.shared.ID)
		r := w.h.do(t, req{method: http.MethodGet, path: path})
		expect(t, r, http.StatusOK, "")
		before := decodeCard(t, r)
		etag := r.header.Get("ETag")
		t.Run("it is public and revalidated by its ETag", func(t *testing.T) {
			if cc := r.header.Get("Cache-Control"); cc != "public, max-age=60" {
				t.Errorf("Cache-Control = %q", cc)
			}
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("ETag = %q", etag)
			}
			again := w.h.do(t, req{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": etag}})
			expect(t, again, http.StatusNotModified, "")
			same := w.h.do(t, req{method: http.MethodGet, path: path})
			if !bytes.Equal(same.body, r.body) || same.header.Get("ETag") != etag {
				t.Errorf("a second read differs: ETag %q", same.header.Get("ETag"))
			}
		})
		t.Run("a request with a cookie gets the same public answer", func(t *testing.T) {
			c := w.h.do(t, req{method: http.MethodGet, path: path, header: map[string]string{"Cookie": "x=y"}})
			if cc := c.header.Get("Cache-Control"); cc != "public, max-age=60" || !bytes.Equal(c.body, r.body) {
				t.Errorf("with a cookie: Cache-Control %q", cc)
			}
		})
		t.Run("a trade makes a new card under a new ETag", func(t *testing.T) {
			w.h.buy(t, w.trader.token, w.shared.Pools[0].Markets[0].ID, "YES", 200_000)
			after := w.h.do(t, req{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": etag}})
			expect(t, after, http.StatusOK, "")
			if after.header.Get("ETag") == etag {
				t.Errorf("the ETag did not change: %q", etag)
			}
			if samePixels(before, decodeCard(t, after)) {
				t.Error("the card did not change after the trade")
			}
		})
		for _, tc := range []struct {
			name, path string
			status     int
			code       string
		}{
			{"a hidden event", fmt.Sprintf("/og/events/%d.png", w.hidden.ID), http.StatusNotFound, "event_not_found"},
			{"a proposed event", fmt.Sprintf("/og/events/%d.png", w.proposed.ID), http.StatusNotFound, "event_not_found"},
			{"an unknown event", "/og/events/987654321.png", http.StatusNotFound, "event_not_found"},
			{"an id that is not a number", "/og/events/abc.png", http.StatusBadRequest, "invalid_id"},
		} {
			t.Run("the card of "+tc.name+" is "+tc.code, func(t *testing.T) {
				expect(t, w.h.do(t, req{method: http.MethodGet, path: tc.path}), tc.status, tc.code)
			})
		}
	})
}
