package server_test

import (
	"strings"
	"testing"

	"github.com/predictkit/predictkit/wallet"
)

// TestDepositPageInBrowser: the Deposit page on a server with the EVM
// and TRON keys watching BSC and TRON (the chains' nodes are never asked:
// the page shows addresses, not deposits), linked from the profile's
// zero-balance notice and balances, shows each user's derived
// addresses with QR codes, the token, the rate, the confirmations and
// the warning, copies an address, reads in Russian once the profile's language is Russian,
// and on a server that watches nothing says deposits are not enabled;
// axe-core finds nothing in either theme. It needs what
// TestWebAppInBrowser needs, and skips without it.
func TestDepositPageInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	withWallets(&cfg)
	h, _ := startServer(t, cfg)
	offCfg := testConfig(memoryStore())
	offCfg.Web = true
	off, _ := startServer(t, offCfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())

	user, russian, offUser := h.register(t, "dana"), h.register(t, "ivan"), off.register(t, "olga")

	var got struct {
		Chains []struct {
			Chain    string `json:"chain"`
			Heading  string `json:"heading"`
			Address  string `json:"address"`
			QRSrc    string `json:"qr_src"`
			QRAlt    string `json:"qr_alt"`
			QRLoaded bool   `json:"qr_loaded"`
			Text     string `json:"text"`
		} `json:"chains"`
		Nav      string   `json:"nav"`
		ZeroHref string   `json:"zero_href"`
		Overflow int      `json:"phone_overflow"`
		History  string   `json:"history"`
		Copied   string   `json:"copied"`
		RuText   string   `json:"ru_text"`
		OffText  string   `json:"off_text"`
		Axe      []string `json:"axe"`
	}
	d.run(t, "deposit", map[string]any{
		"user": asBrowserUser(user), "ru_user": asBrowserUser(russian),
		"off_base": "http://" + off.base, "off_user": asBrowserUser(offUser),
	}, &got)

	want := []struct{ chain, heading, address, token, rate, confirmations string }{
		{"bsc", "BNB Smart Chain (BSC)", derive(t, wallet.EVM, evmXPub, user.id), bscUSDT, "1 token = ₽90.00", "15"},
		{"tron", "TRON", derive(t, wallet.Tron, tronXPub, user.id), tronUSDT, "1 token = ₽91.00", "20"},
	}
	if len(got.Chains) != len(want) {
		t.Fatalf("the page shows %d chains, want %d: %+v", len(got.Chains), len(want), got.Chains)
	}
	for i, w := range want {
		c := got.Chains[i]
		if c.Chain != w.chain || c.Heading != w.heading || c.Address != w.address {
			t.Errorf("chain %d shows %s %q %q, want %s %q %q", i, c.Chain, c.Heading, c.Address, w.chain, w.heading, w.address)
		}
		if !c.QRLoaded || !strings.HasPrefix(c.QRSrc, "data:image/svg+xml;base64,") || !strings.Contains(c.QRAlt, w.heading) {
			t.Errorf("%s's QR code: loaded %v, src %q, alt %q", w.chain, c.QRLoaded, c.QRSrc, c.QRAlt)
		}
		for _, s := range []string{w.token, w.rate, "Confirmations needed\n" + w.confirmations, "Send only this token, and only on " + w.heading} {
			if !strings.Contains(c.Text, s) {
				t.Errorf("%s's card lacks %q: %q", w.chain, s, c.Text)
			}
		}
	}
	if got.Overflow > 0 {
		t.Errorf("on a phone the page is %d px wider than the screen", got.Overflow)
	}
	if got.ZeroHref != "/deposit" {
		t.Errorf("the zero-balance notice links %q, want /deposit", got.ZeroHref)
	}
	if got.Nav != "page" {
		t.Errorf("the nav's Deposit link has aria-current %q, want page", got.Nav)
	}
	if got.Copied != want[0].address {
		t.Errorf("the copy button copied %q, want %q", got.Copied, want[0].address)
	}
	// The deposits list: the API's empty list, shown as such.
	if ds, next := myDeposits(t, h, user.token, ""); len(ds) != 0 || next != nil {
		t.Fatalf("a new user's deposits: %+v, next %v", ds, next)
	}
	if !strings.Contains(got.History, "No deposits yet.") || strings.Contains(got.History, "not available") {
		t.Errorf("the deposits list shows %q, want %q", got.History, "No deposits yet.")
	}
	ivan := derive(t, wallet.Tron, tronXPub, russian.id)
	for _, s := range []string{"Ваш адрес", "Курс", "1 токен = ", ivan, "Отправляйте только этот токен"} {
		if !strings.Contains(got.RuText, s) {
			t.Errorf("the Russian page lacks %q: %q", s, got.RuText)
		}
	}
	if !strings.Contains(got.OffText, "Deposits are not enabled on this server.") || strings.Contains(got.OffText, "Your address") {
		t.Errorf("the page on a server watching nothing shows %q", got.OffText)
	}
	if got.Axe == nil {
		t.Log("no axe-core: the page was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("axe-core: %s", v)
	}
}
