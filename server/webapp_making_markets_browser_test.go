package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMakingMarketsInBrowser is the making-markets story in the app, on a
// server with a challenge window: a creator builds an exclusive pool with
// an Other answer on the New event page and publishes it; a user buys YES
// on Other; the creator adds an answer on the event page and the user's
// profile shows the holding split into YES on Other and YES on the new
// answer, the same shares; the creator's close of a listed answer only
// proposes it; the user disputes it from the event page; the operator
// voids the question in the console, which returns the user's net cost
// and bond; the audit holds. It runs on every store the harness has, and
// needs what TestWebAppInBrowser needs (it skips without it).
func TestMakingMarketsInBrowser(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			cfg := testConfig(sc.new(t))
			cfg.Web = true
			cfg.ResolutionChallenge = time.Hour
			cfg.DisputeBondKopecks = 5000
			h, _ := startServer(t, cfg)
			d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
			makingMarketsStory(t, h, d)
		})
	}
}

func makingMarketsStory(t *testing.T, h *harness, d *webDriver) {
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	user := h.register(t, "user")
	const credit = 100_000
	h.credit(t, user.id, credit, false)
	markets := []string{"Ann", "Bob"}
	const other, answer = "Anyone else", "Cid"
	base := map[string]any{"creator": asBrowserUser(creator), "user": asBrowserUser(user), "other": other, "markets": markets}
	params := func(step string, more map[string]any) map[string]any {
		p := map[string]any{"step": step}
		for k, v := range base {
			p[k] = v
		}
		for k, v := range more {
			p[k] = v
		}
		return p
	}

	// 1. The creator builds and publishes the pool in the app.
	var created struct {
		Event int64 `json:"event"`
		Boxes struct {
			Binary    string `json:"binary"`
			Exclusive string `json:"exclusive"`
			Chosen    string `json:"chosen"`
		} `json:"boxes"`
		Preview  string   `json:"preview"`
		OtherTag string   `json:"other_tag"`
		Axe      []string `json:"axe"`
	}
	d.run(t, "making_markets", params("create", map[string]any{"name": "Browser final"}), &created)
	if b := created.Boxes; b.Binary != "---" || b.Exclusive != "ooo" || b.Chosen != "oox" {
		t.Errorf("the Other checkboxes read binary %q, exclusive %q, after checking the 2nd then the 3rd %q; want ---, ooo, oox", b.Binary, b.Exclusive, b.Chosen)
	}
	if !strings.Contains(created.Preview, other) || !strings.Contains(created.Preview, "Other") {
		t.Errorf("the preview %q does not mark %s as Other", created.Preview, other)
	}
	if !strings.Contains(created.OtherTag, "Other") {
		t.Errorf("the event page labels the Other answer %q", created.OtherTag)
	}
	if created.Axe == nil {
		t.Log("no axe-core: the form was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range created.Axe {
		t.Errorf("the new event page with an Other answer: %s", v)
	}
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d", created.Event)})
	expect(t, r, http.StatusOK, "")
	var ev struct {
		IsActive bool `json:"is_active"`
		Pools    []struct {
			ID        int64 `json:"id"`
			Exclusive bool  `json:"exclusive"`
			Markets   []struct {
				ID    int64  `json:"id"`
				Name  string `json:"name"`
				Other bool   `json:"other"`
			} `json:"markets"`
		} `json:"pools"`
	}
	r.decode(t, &ev)
	if !ev.IsActive || len(ev.Pools) != 1 || !ev.Pools[0].Exclusive || len(ev.Pools[0].Markets) != 3 {
		t.Fatalf("the app made %+v, want one published exclusive pool of three markets", ev)
	}
	for i, m := range ev.Pools[0].Markets {
		if want := i == 2; m.Other != want {
			t.Errorf("market %q has other=%v, want %v", m.Name, m.Other, want)
		}
	}
	otherID := ev.Pools[0].Markets[2].ID

	// 2. The user buys YES on Other; the creator adds an answer; the
	// profile shows the split.
	var split struct {
		Bought string   `json:"bought"`
		Rows   []string `json:"rows"`
	}
	d.run(t, "making_markets", params("split", map[string]any{"event": created.Event, "amount": "100",
		"answer": answer, "answer_ru": "Сид", "answer_percent": "5"}), &split)
	me := h.me(t, user.token)
	shares := map[string]int64{}
	for _, p := range me.Positions {
		if p.EventID == created.Event {
			shares[p.MarketName+" "+p.Side] = p.Amount
		}
	}
	if len(shares) != 2 || shares[other+" YES"] == 0 || shares[other+" YES"] != shares[answer+" YES"] {
		t.Fatalf("after the answer the user holds %v, want YES on %s and on %s, the same shares", shares, other, answer)
	}
	held := fmt.Sprintf("%d,%03d", shares[other+" YES"]/1000, shares[other+" YES"]%1000)
	for _, name := range []string{other, answer} {
		row := ""
		for _, r := range split.Rows {
			if strings.Contains(r, name) {
				row = r
			}
		}
		if !strings.Contains(row, "YES") || !strings.Contains(row, held) {
			t.Errorf("the profile's row for %s reads %q, want YES and %s shares", name, row, held)
		}
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Fatalf("the audit fails after the split: %v", problems)
	}
	if m := h.market(t, otherID); m.Resolved {
		t.Fatalf("Other is resolved before any close: %+v", m)
	}

	// 3. The creator proposes Ann; the user disputes; the operator voids.
	before := h.me(t, user.token).Balance
	reason := "Ann withdrew before the final"
	all := append(append([]string{}, markets...), other, answer)
	var decided struct {
		Made     string            `json:"made"`
		Proposed string            `json:"proposed"`
		Disputed string            `json:"disputed"`
		Queued   string            `json:"queued"`
		States   map[string]string `json:"states"`
	}
	d.run(t, "making_markets", params("dispute", map[string]any{"event": created.Event, "winner": markets[0], "reason": reason,
		"decision": "Void", "all": all}), &decided)
	if !strings.Contains(decided.Made, "Outcome proposed") || !strings.Contains(decided.Proposed, "Proposed: YES") || !strings.Contains(decided.Disputed, "Disputed") {
		t.Errorf("the pages said %q to the creator, then %q and %q to the user", decided.Made, decided.Proposed, decided.Disputed)
	}
	if !strings.Contains(decided.Queued, reason) || !strings.Contains(decided.Queued, fmt.Sprintf("User %d (bond %s)", user.id, roubles(5000))) {
		t.Errorf("the console's queue showed %q", decided.Queued)
	}
	for _, name := range all[1:] {
		if !strings.Contains(decided.Queued, name+" wins") {
			t.Errorf("the console's dispute offers no %q: %q", name+" wins", decided.Queued)
		}
	}
	for _, name := range all {
		if st := decided.States[name]; !strings.Contains(st, "Voided") || !strings.Contains(st, "resolved by the operator") {
			t.Errorf("the user's card of %s reads %q, want it resolved", name, decided.States[name])
		}
	}
	for _, m := range ev.Pools[0].Markets {
		got := h.market(t, m.ID)
		if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != "VOID" || got.ResolvedBy == nil || *got.ResolvedBy != "operator" {
			t.Errorf("market %s is %+v, want voided by the operator", m.Name, got)
		}
	}
	after := h.me(t, user.token)
	if len(after.Positions) != 0 {
		t.Errorf("the user still holds %+v", after.Positions)
	}
	// The user paid ₽100 for YES on Other; the void returns it, and the
	// bond held by the dispute comes back: the whole credit.
	if before != credit-10_000 || after.Balance != credit {
		t.Errorf("the user's balance went %d -> %d, want %d -> %d: the void returns the ₽100 paid and the bond", before, after.Balance, credit-10_000, credit)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails at the end: %v", problems)
	}
}
