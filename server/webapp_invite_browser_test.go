package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/server"
)

// The growth rules of TestInviteInBrowser: small enough for two trades
// of inviteBuy to cross them. A friend qualifies at 250 RUB of volume
// and earns the referrer 100 RUB; levels start at 0, 200 and 500 RUB.
const (
	inviteQualify = 25_000
	inviteReward  = 10_000
	inviteBuy     = 30_000 // each of the referee's two buys, on a market without a fee
)

var inviteLevels = []int64{0, 20_000, 50_000}

// TestInviteInBrowser: referrals and levels in the web app. Alice opens
// Invite friends from the header, reads the rule and her zero counts,
// copies her link (the clipboard holds it); a referral code nobody has
// is refused on the register page's field, and nothing is created; Bob
// opens Alice's link, finds the referral code filled in, registers,
// and buys past the qualifying volume on an event page: Alice's page
// shows 1 joined, 1 qualified and the bonus earned, her header's
// balance rises by the reward, and the unread count by the
// notification, all without a reload; the notification reads in
// English and in Russian and links to Invite friends. Bob's profile
// shows his level, which changes live when a second buy crosses the
// next threshold, and his level_up notification links there; his public
// profile and the leaderboard show it too.
// axe-core finds nothing on the pages in either theme. With
// PREDICTKIT_SCREENSHOTS=<dir> it saves Alice's page as <dir>/invite.png
// (docs/screenshots/invite.png). It runs on each store and skips like
// TestWebAppInBrowser.
func TestInviteInBrowser(t *testing.T) {
	for i, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) { invite(t, sc.new(t), i == 0) })
	}
}

func invite(t *testing.T, store server.Store, screenshot bool) {
	cfg := testConfig(store)
	cfg.Web = true
	cfg.StreamPing = time.Second
	cfg.Growth = growth.Rules{Levels: inviteLevels, QualifyKopecks: inviteQualify, RewardKopecks: inviteReward}
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())

	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, twoPoolEvent("Invite cup"))
	h.activate(t, creator.token, ev.ID, true)
	b1 := ev.Pools[1].Markets[0] // pool B: no fee, so a buy's volume is its amount
	alice := h.register(t, "alice")
	aliceBefore := inviteProfile(t, h, alice.token)
	bob := browserUser{Name: "Bob Referee", Email: fmt.Sprintf("bob-%d@test.predictkit", emailSeq.Add(1)), Password: "password-bob"}
	dir := ""
	if screenshot {
		dir = screenshotDir(t, "")
	}

	type figures struct {
		Referred  string `json:"referred"`
		Qualified string `json:"qualified"`
		Earned    string `json:"earned"`
	}
	var got struct {
		Link           string   `json:"link"`
		Clipboard      string   `json:"clipboard"`
		Copied         string   `json:"copied"`
		Rule           string   `json:"rule"`
		Before         figures  `json:"before"`
		After          figures  `json:"after"`
		BadField       string   `json:"bad_field"`
		BadError       string   `json:"bad_error"`
		BadInvalid     string   `json:"bad_invalid"`
		BadPath        string   `json:"bad_path"`
		Prefilled      string   `json:"prefilled"`
		BobID          int64    `json:"bob_id"`
		HeaderBefore   int64    `json:"header_before"`
		HeaderAfter    int64    `json:"header_after"`
		Unread         string   `json:"unread"`
		Live           bool     `json:"live"`
		Notification   string   `json:"notification"`
		NotifyLink     string   `json:"notify_link"`
		NotificationRu string   `json:"notification_ru"`
		InviteRu       string   `json:"invite_ru"`
		LevelBefore    string   `json:"level_before"`
		LevelAfter     string   `json:"level_after"`
		LevelLive      bool     `json:"level_live"`
		LevelNotice    string   `json:"level_notification"`
		LevelLink      string   `json:"level_link"`
		PublicLevel    string   `json:"public_level"`
		BoardLevel     string   `json:"board_level"`
		Screenshot     string   `json:"screenshot"`
		Axe            []string `json:"axe"`
	}
	d.run(t, "invite", map[string]any{
		"alice": asBrowserUser(alice), "bob": bob, "event": ev.ID, "market": b1.Name, "market_id": b1.ID,
		"buy": fmt.Sprint(inviteBuy / 100), "buy_kopecks": inviteBuy, "bad_code": "NOPE0000", "dir": dir,
	}, &got)

	profile := inviteProfile(t, h, alice.token)
	if profile.ReferralCode == "" || !strings.HasSuffix(got.Link, "/register?ref="+profile.ReferralCode) {
		t.Errorf("the page's link is %q; Alice's code is %q", got.Link, profile.ReferralCode)
	}
	if got.Clipboard != got.Link {
		t.Errorf("Copy put %q on the clipboard, not the link %q (status %q)", got.Clipboard, got.Link, got.Copied)
	}
	if got.Rule != "You get ₽100 in bonus money when a friend you invited has traded ₽250." {
		t.Errorf("the rule reads %q", got.Rule)
	}
	if got.Before != (figures{"0", "0", "₽0.00"}) {
		t.Errorf("before Bob, the page shows %+v", got.Before)
	}
	if got.BadField != "NOPE0000" || !strings.Contains(got.BadError, "There is no such referral code") || got.BadInvalid != "true" || got.BadPath != "/register" {
		t.Errorf("an unknown code: the field held %q and said %q (aria-invalid %q) at %s", got.BadField, got.BadError, got.BadInvalid, got.BadPath)
	}
	if !strings.EqualFold(got.Prefilled, profile.ReferralCode) {
		t.Errorf("Alice's link filled in the code %q; hers is %q", got.Prefilled, profile.ReferralCode)
	}
	if got.After != (figures{"1", "1", "₽100.00"}) {
		t.Errorf("after Bob traded, the page shows %+v", got.After)
	}
	if got.HeaderAfter-got.HeaderBefore != inviteReward {
		t.Errorf("the header's balance went from %d to %d; want a rise of %d", got.HeaderBefore, got.HeaderAfter, inviteReward)
	}
	if got.Unread != "1" {
		t.Errorf("Alice's header shows %q unread notifications; want 1", got.Unread)
	}
	if !got.Live {
		t.Error("Alice's page was reloaded: the reward did not arrive live")
	}
	if !strings.Contains(got.Notification, "Bob Referee") || got.NotifyLink != "/invite" {
		t.Errorf("the notification reads %q and links to %q", got.Notification, got.NotifyLink)
	}
	if !strings.Contains(got.NotificationRu, "Bob Referee") || !strings.Contains(got.NotificationRu, "Открыть приглашения") {
		t.Errorf("in Russian the notification reads %q", got.NotificationRu)
	}
	// Russian amounts keep their figures and sign together with no-break spaces.
	if ru := strings.ReplaceAll(got.InviteRu, "\u00a0", " "); !strings.Contains(ru, "Пригласить друзей") || !strings.Contains(ru, "Вы получите 100 ₽ бонусами") {
		t.Errorf("in Russian the page reads %q", got.InviteRu)
	}
	if got.LevelBefore != "Level 2" || got.LevelAfter != "Level 3" || !got.LevelLive {
		t.Errorf("Bob's profile showed %q, then %q (live: %v); want Level 2, then Level 3 without a reload", got.LevelBefore, got.LevelAfter, got.LevelLive)
	}
	if !strings.Contains(got.LevelNotice, "Level up") || !strings.Contains(got.LevelNotice, "Open your profile") || got.LevelLink != "/profile" {
		t.Errorf("Bob's level_up notification reads %q and links to %q", got.LevelNotice, got.LevelLink)
	}
	if got.PublicLevel != "Level 3" || got.BoardLevel != "Level 3" {
		t.Errorf("Bob's public profile shows %q, the leaderboard %q; want Level 3", got.PublicLevel, got.BoardLevel)
	}

	// What the server holds: one referral, qualified and paid once, in
	// bonus money, and a ledger that balances.
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/referrals", token: alice.token})
	expect(t, r, http.StatusOK, "")
	var refs struct {
		Code          string `json:"code"`
		Referred      int64  `json:"referred"`
		Qualified     int64  `json:"qualified"`
		EarnedKopecks int64  `json:"earned_kopecks"`
	}
	r.decode(t, &refs)
	if refs.Code != profile.ReferralCode || refs.Referred != 1 || refs.Qualified != 1 || refs.EarnedKopecks != inviteReward {
		t.Errorf("GET /users/me/referrals: %+v", refs)
	}
	if profile.BonusBalance-aliceBefore.BonusBalance != inviteReward || profile.Balance != aliceBefore.Balance {
		t.Errorf("Alice's balances went from %d + %d bonus to %d + %d bonus", aliceBefore.Balance, aliceBefore.BonusBalance, profile.Balance, profile.BonusBalance)
	}
	if b := h.balanceOf(t, account.BonusAccount(alice.id)) - aliceBefore.BonusBalance; b != inviteReward {
		t.Errorf("Alice's bonus account rose by %d; want %d", b, inviteReward)
	}
	if b := h.balanceOf(t, account.ReferralRewards); b != -inviteReward {
		t.Errorf("the referral rewards account holds %d; want %d", b, -inviteReward)
	}
	h.mustAudit(t)

	if dir != "" {
		if st, err := os.Stat(filepath.Join(dir, "invite.png")); err != nil || st.Size() == 0 || got.Screenshot == "" {
			t.Errorf("the screenshot %q: %v", got.Screenshot, err)
		}
	}
	if got.Axe == nil {
		t.Log("no axe-core: the pages were not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("axe-core: %s", v)
	}
}

// growthProfile is what of GET /auth/me the invite test reads.
type growthProfile struct {
	ReferralCode string `json:"referral_code"`
	Level        int    `json:"level"`
	Balance      int64  `json:"balance"`
	BonusBalance int64  `json:"bonus_balance"`
}

func inviteProfile(t *testing.T, h *harness, token string) growthProfile {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		User growthProfile `json:"user"`
	}
	r.decode(t, &out)
	return out.User
}
