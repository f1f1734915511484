package server_test

import (
	"os"
	"testing"
)

// phonePage is what the phone flow found on one page.
type phonePage struct {
	Name        string   `json:"name"`
	Path        string   `json:"path"`
	Width       int      `json:"width"`
	InnerWidth  int      `json:"inner_width"`
	ScrollWidth int      `json:"scroll_width"`
	Offenders   []string `json:"offenders"`
	File        string   `json:"file"`
}

// TestWebAppOnPhone visits every page of the app (testdata/webapp/
// phone.js lists them, one line each) over the demo data on a phone's
// screen, 390×844 with touch and a phone's user agent, as a visitor, a
// signed-in trader, a creator and the operator, and checks that nothing
// overflows the screen sideways: the document is no wider than the
// screen, and no element ends past its right edge unless a box that
// scrolls or clips it sideways keeps it in. With
// PREDICTKIT_SCREENSHOTS=<dir> it saves each page as <dir>/phone/<page>.png
// (docs/screenshots/phone/). It skips like TestWebAppInBrowser.
func TestWebAppOnPhone(t *testing.T) {
	a := startDemoWebApp(t)
	dir := screenshotDir(t, "phone")
	var got []phonePage
	a.d.run(t, "phone", map[string]any{"dir": dir, "event": a.cup.ID, "resolved": a.resolved.ID, "user": a.maria, "creator": a.creator}, &got)
	if len(got) < 20 {
		t.Errorf("the phone pass saw only %d pages", len(got))
	}
	for _, p := range got {
		t.Run(p.Name+" fits the phone's width", func(t *testing.T) {
			if p.Width != 390 || p.InnerWidth != 390 {
				t.Errorf("%s: the page is %d CSS pixels wide (window %d), not the phone's 390: it was zoomed out to fit something wider", p.Path, p.Width, p.InnerWidth)
			}
			if p.ScrollWidth > p.Width {
				t.Errorf("%s: the document scrolls sideways: %d pixels wide on a %d-pixel screen", p.Path, p.ScrollWidth, p.Width)
			}
			for _, o := range p.Offenders {
				t.Errorf("%s: %s, past the screen's %d pixels", p.Path, o, p.Width)
			}
			if dir != "" {
				if st, err := os.Stat(p.File); err != nil || st.Size() == 0 {
					t.Errorf("screenshot %s: %v", p.File, err)
				}
			}
		})
	}
}
