package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestPeopleInBrowser: from the leaderboard to a trader's public profile
// (a hidden one is "not found"), editing one's profile (a taken nickname
// refused with the server's reason) and creating and revoking an API key
// in the app, following an event by keyboard and seeing it on the
// Following page and the notification when its creator resolves a
// market; axe-core finds nothing on the new pages in either theme. It
// needs what TestWebAppInBrowser needs, and skips without it.
func TestPeopleInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	w := newWorld(t, h)
	trader := w.bob
	h.buy(t, trader.token, w.a1.ID, "YES", 20_000)
	hidden := h.register(t, "hidden")
	h.setProfile(t, hidden.token, map[string]any{"profile_hidden": true})
	taken := h.register(t, "taken")
	h.setProfile(t, taken.token, map[string]any{"nickname": "taken_nick"})
	follower := w.alice

	var got struct {
		ProfileText   string   `json:"profile_text"`
		HiddenHeading string   `json:"hidden_heading"`
		Taken         string   `json:"taken"`
		Saved         string   `json:"saved"`
		Key           string   `json:"key"`
		KeyListed     string   `json:"key_listed"`
		Notification  string   `json:"notification"`
		Axe           []string `json:"axe"`
	}
	d.run(t, "people", map[string]any{
		"trader": asBrowserUser(trader), "hidden_id": hidden.id, "follower": asBrowserUser(follower),
		"taken_nickname": "taken_nick", "nickname": "alice_browser",
		"event": w.event.ID, "event_name": w.event.Name, "pool": w.poolB.ID, "market": w.b1.ID, "creator_token": w.creator.token,
	}, &got)
	if !strings.Contains(got.ProfileText, w.a1.Name) || !strings.Contains(got.ProfileText, "Open positions") {
		t.Errorf("the public profile shows %q", got.ProfileText)
	}
	if got.HiddenHeading != "User not found" {
		t.Errorf("a hidden profile's heading is %q", got.HiddenHeading)
	}
	if !strings.Contains(got.Taken, "This nickname is taken") {
		t.Errorf("the taken nickname showed %q", got.Taken)
	}
	if !strings.Contains(got.Saved, "Profile saved") {
		t.Errorf("the save showed %q", got.Saved)
	}
	if p := h.me(t, follower.token); p.Nickname == nil || *p.Nickname != "alice_browser" || p.AvatarURL == nil {
		t.Errorf("the profile after the browser's edit: %+v", p)
	}
	if !strings.HasPrefix(got.Key, "pak_") || !strings.Contains(got.KeyListed, "never used") {
		t.Errorf("the key %q, listed as %q", got.Key, got.KeyListed)
	}
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/api-keys", token: follower.token})
	expect(t, r, http.StatusOK, "")
	if strings.Contains(string(r.body), "Browser bot") {
		t.Errorf("the revoked key is still listed: %s", r)
	}
	if !strings.Contains(got.Notification, w.b1.Name) {
		t.Errorf("the notifications page shows %q, want the resolution of %s", got.Notification, w.b1.Name)
	}
	if ids, _ := h.following(t, follower.token, ""); fmt.Sprint(ids) != fmt.Sprint([]int64{w.event.ID}) {
		t.Errorf("the follower follows %v", ids)
	}
	if got.Axe == nil {
		t.Log("no axe-core: the pages were not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("axe-core: %s", v)
	}
}
