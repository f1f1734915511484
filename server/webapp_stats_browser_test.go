package server_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statsFigures is a day of GET /api/v1/stats/daily, and the overview's
// today.
type statsFigures map[string]any

// statsOverviewFigures is GET /api/v1/stats/overview.
type statsOverviewFigures struct {
	AsOf       string           `json:"as_of"`
	Totals     map[string]int64 `json:"totals"`
	Today      statsFigures     `json:"today"`
	TopMarkets []struct {
		MarketID     int64  `json:"market_id"`
		EventID      int64  `json:"event_id"`
		EventName    string `json:"event_name"`
		MarketName   string `json:"market_name"`
		VolumeKopeck int64  `json:"volume_kopecks"`
		Trades       int64  `json:"trades"`
	} `json:"top_markets"`
}

// statsOverview reads the overview as token (a viewer's, or the admin
// token).
func statsOverview(t *testing.T, h *harness, token string) statsOverviewFigures {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/overview", token: token})
	expect(t, r, http.StatusOK, "")
	var o statsOverviewFigures
	r.decode(t, &o)
	return o
}

// statsDaily reads the days from..to.
func statsDaily(t *testing.T, h *harness, token, from, to string) []statsFigures {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/daily?from=" + from + "&to=" + to, token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Days []statsFigures `json:"days"`
	}
	r.decode(t, &out)
	return out.Days
}

// int64Of is a day's field as an integer (JSON numbers decode as float64;
// the statistics are whole kopecks and counts).
func int64Of(d statsFigures, key string) int64 {
	f, _ := d[key].(float64)
	return int64(f)
}

// browserCards is what stats.js read of the cards: data-stat → the raw
// value and the text shown.
type browserCards map[string]struct {
	Value string `json:"value"`
	Text  string `json:"text"`
}

type browserDashboard struct {
	Cards  browserCards `json:"cards"`
	Charts map[string]struct {
		Name   string `json:"name"`
		Desc   string `json:"desc"`
		Series []struct {
			Key    string  `json:"key"`
			Values []int64 `json:"values"`
			Marks  int     `json:"marks"`
		} `json:"series"`
		Totals []struct {
			Key   string `json:"key"`
			Total int64  `json:"total"`
			Text  string `json:"text"`
		} `json:"totals"`
		YTicks []string `json:"y_ticks"`
		Ticks  []int64  `json:"ticks"`
	} `json:"charts"`
	Top []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"top"`
	Current []string `json:"current"`
}

// figure is the number of a shown figure, read from its digits
// ("₽1,234.56" → 123456 kopecks, "1 234" → 1234), or -1 without any.
func figure(s string) int64 {
	d := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	n, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// roundTicks: ticks start at 0, step evenly by 1, 2 or 5 × 10^n, and
// the last reaches top, in at most six steps.
func roundTicks(ticks []int64, top int64) bool {
	if len(ticks) < 2 || len(ticks) > 7 || ticks[0] != 0 || ticks[len(ticks)-1] < top {
		return false
	}
	step := ticks[1]
	for i := range ticks {
		if ticks[i] != int64(i)*step {
			return false
		}
	}
	for step%10 == 0 {
		step /= 10
	}
	return step == 1 || step == 2 || step == 5
}

// The cards and what the overview holds them to.
var statsCards = []struct {
	stat, key string
	today     bool
}{
	{"today.volume_kopecks", "volume_kopecks", true}, {"today.fees_kopecks", "fees_kopecks", true},
	{"today.trades", "trades", true}, {"today.active_traders", "active_traders", true},
	{"today.new_users", "new_users", true}, {"today.deposits_kopecks", "deposits_kopecks", true},
	{"today.withdrawals_kopecks", "withdrawals_kopecks", true}, {"today.open_interest_kopecks", "open_interest_kopecks", true},
	{"totals.volume_kopecks", "volume_kopecks", false}, {"totals.fees_kopecks", "fees_kopecks", false},
	{"totals.trades", "trades", false}, {"totals.traders", "traders", false}, {"totals.users", "users", false},
	{"totals.deposits_kopecks", "deposits_kopecks", false}, {"totals.withdrawals_kopecks", "withdrawals_kopecks", false},
	{"totals.open_interest_kopecks", "open_interest_kopecks", false},
}

// The charts and the series each draws.
var statsCharts = map[string][]string{
	"volume":        {"volume_kopecks"},
	"fees":          {"fees_kopecks"},
	"trades":        {"trades"},
	"people":        {"active_traders", "new_users"},
	"money":         {"deposits_kopecks", "withdrawals_kopecks"},
	"open_interest": {"open_interest_kopecks"},
}

// checkDashboard holds what a page showed to the API's overview and days.
func checkDashboard(t *testing.T, who string, got browserDashboard, o statsOverviewFigures, days []statsFigures) {
	t.Helper()
	for _, c := range statsCards {
		want := o.Totals[c.key]
		if c.today {
			want = int64Of(o.Today, c.key)
		}
		card, ok := got.Cards[c.stat]
		if !ok {
			t.Errorf("%s: no card %s", who, c.stat)
			continue
		}
		// Money shows two decimals: its digits are the kopecks.
		if card.Value != fmt.Sprint(want) || figure(card.Text) != want {
			t.Errorf("%s: card %s shows %q (value %s), the API says %d", who, c.stat, card.Text, card.Value, want)
		}
	}
	for id, keys := range statsCharts {
		ch, ok := got.Charts[id]
		if !ok {
			t.Errorf("%s: no chart %s", who, id)
			continue
		}
		if len(ch.Series) != len(keys) || len(ch.Totals) != len(keys) {
			t.Errorf("%s: chart %s has %d series and %d totals, want %d", who, id, len(ch.Series), len(ch.Totals), len(keys))
			continue
		}
		if len(ch.YTicks) < 2 {
			t.Errorf("%s: chart %s has the y axis labels %q", who, id, ch.YTicks)
		}
		var highest int64
		for _, key := range keys {
			for _, d := range days {
				highest = max(highest, int64Of(d, key))
			}
		}
		if !roundTicks(ch.Ticks, highest) {
			t.Errorf("%s: chart %s ticks its y axis at %v for values up to %d: not round steps from 0 past the highest", who, id, ch.Ticks, highest)
		}
		for i, key := range keys {
			s := ch.Series[i]
			if s.Key != key || len(s.Values) != len(days) {
				t.Errorf("%s: chart %s's series %d is %s over %d days, want %s over %d", who, id, i, s.Key, len(s.Values), key, len(days))
				continue
			}
			var sum, nonzero int64
			for j, d := range days {
				if s.Values[j] != int64Of(d, key) {
					t.Errorf("%s: chart %s shows %s %d on %v, the API says %d", who, id, key, s.Values[j], d["date"], int64Of(d, key))
				}
				sum += int64Of(d, key)
				if int64Of(d, key) != 0 {
					nonzero++
				}
			}
			switch key {
			case "open_interest_kopecks": // a level: the range's last day
				sum = int64Of(days[len(days)-1], key)
			case "active_traders": // people per day: the busiest day's
				sum = 0
				for _, d := range days {
					sum = max(sum, int64Of(d, key))
				}
			}
			if ch.Totals[i].Total != sum || figure(ch.Totals[i].Text) != sum {
				t.Errorf("%s: chart %s's legend says %q (%d) for %s, the API's days make %d", who, id, ch.Totals[i].Text, ch.Totals[i].Total, key, sum)
			}
			// A bar for every day with something (lines mark every day).
			if (id == "volume" || id == "fees" || id == "trades" || id == "money") && int64(s.Marks) != nonzero {
				t.Errorf("%s: chart %s draws %d bars of %s, the API has %d days with some", who, id, s.Marks, key, nonzero)
			}
		}
	}
	if len(got.Top) != len(o.TopMarkets) {
		t.Errorf("%s: %d top markets shown, the API has %d", who, len(got.Top), len(o.TopMarkets))
	}
	for i := range min(len(got.Top), len(o.TopMarkets)) {
		m := o.TopMarkets[i]
		if got.Top[i].Href != fmt.Sprintf("/events/%d", m.EventID) || !strings.Contains(got.Top[i].Text, m.MarketName) || !strings.Contains(got.Top[i].Text, m.EventName) {
			t.Errorf("%s: top market %d shows %+v, the API says %+v", who, i, got.Top[i], m)
		}
	}
}

// TestStatsInBrowser: after a few trades, a statistics viewer sees the
// Statistics link and the dashboard: its cards, charts and top markets
// as GET /api/v1/stats/overview and /daily say, in each store; changes
// the range (the address keeps it, a reload and Back too); a user who is
// no viewer, and a visitor, see that they have no access and no link;
// the operator reads the same in the console with the admin token and
// grants access to a Russian reader there, who reads it in Russian; on a phone neither page scrolls
// sideways; axe-core finds nothing in either theme. It skips like
// TestWebAppInBrowser. With PREDICTKIT_SCREENSHOTS it saves stats.png and
// admin-stats.png over the demo data.
func TestStatsInBrowser(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			cfg := testConfig(sc.new(t))
			cfg.Web = true
			h, _ := startServer(t, cfg)
			d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())

			creator := h.register(t, "creator")
			h.makeCreator(t, creator.id)
			ev := h.createEvent(t, creator.token, twoPoolEvent("Stats cup"))
			h.activate(t, creator.token, ev.ID, true)
			viewer, ruViewer, other := h.register(t, "viewer"), h.register(t, "ivan"), h.register(t, "other")
			// The viewer by the API; the Russian one the operator makes a
			// viewer in the console, in the flow.
			r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/users/%d", viewer.id), token: adminToken,
				body: map[string]any{"is_stats_viewer": true}})
			expect(t, r, http.StatusOK, "")
			// A few trades by two traders on two markets, one sold back.
			a, b := h.register(t, "anna"), h.register(t, "boris")
			h.credit(t, a.id, 500_000, false)
			h.credit(t, b.id, 500_000, false)
			a1, b1 := ev.Pools[0].Markets[0], ev.Pools[1].Markets[0]
			h.buy(t, a.token, a1.ID, "YES", 120_000)
			h.buy(t, b.token, a1.ID, "NO", 45_000)
			tr := h.buy(t, a.token, b1.ID, "YES", 30_000)
			h.sell(t, a.token, b1.ID, "YES", tr.Shares/2)
			const trades = 4

			// The statistics follow the change log: wait until they count
			// every trade.
			var o statsOverviewFigures
			deadline := time.Now().Add(20 * time.Second)
			for o = statsOverview(t, h, viewer.token); o.Totals["trades"] < trades; o = statsOverview(t, h, viewer.token) {
				if time.Now().After(deadline) {
					t.Fatalf("the statistics count %d trades of %d", o.Totals["trades"], trades)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if len(o.TopMarkets) == 0 {
				t.Fatalf("the overview has no top markets after %d trades today: %+v", trades, o)
			}
			today, _ := o.Today["date"].(string)
			day, err := time.Parse(time.DateOnly, today)
			if err != nil {
				t.Fatalf("today is %q: %v", today, err)
			}
			from := func(n int) string { return day.AddDate(0, 0, -(n - 1)).Format(time.DateOnly) }
			month := statsDaily(t, h, viewer.token, from(30), today)

			var got struct {
				Viewer         browserDashboard `json:"viewer"`
				NavCurrent     string           `json:"nav_current"`
				ChartsNamed    int              `json:"charts_named"`
				WeekURL        string           `json:"week_url"`
				Week           browserDashboard `json:"week"`
				WeekReloaded   []string         `json:"week_reloaded"`
				Year           browserDashboard `json:"year"`
				BackURL        string           `json:"back_url"`
				TopHref        string           `json:"top_href"`
				TopHeading     string           `json:"top_heading"`
				OtherNav       int              `json:"other_nav"`
				OtherText      string           `json:"other_text"`
				OtherCharts    int              `json:"other_charts"`
				AnonText       string           `json:"anon_text"`
				AnonNav        int              `json:"anon_nav"`
				AnonLogin      string           `json:"anon_login"`
				Console        browserDashboard `json:"console"`
				ConsoleQuarter browserDashboard `json:"console_quarter"`
				ConsoleURL     string           `json:"console_url"`
				GrantedFocus   string           `json:"granted_focus"`
				RuText         string           `json:"ru_text"`
				RuNav          int              `json:"ru_nav"`
				RuChart        int              `json:"ru_chart"`
				Phone          phonePage        `json:"phone"`
				PhoneConsole   phonePage        `json:"phone_console"`
				Axe            []string         `json:"axe"`
			}
			d.run(t, "stats", map[string]any{"viewer": asBrowserUser(viewer), "ru_viewer": asBrowserUser(ruViewer), "other": asBrowserUser(other)}, &got)

			// Nothing traded meanwhile: the API still says what the pages read.
			after := statsOverview(t, h, adminToken)
			if after.Totals["trades"] != o.Totals["trades"] || after.Totals["volume_kopecks"] != o.Totals["volume_kopecks"] {
				t.Fatalf("the statistics moved during the test: %+v, then %+v", o.Totals, after.Totals)
			}
			t.Run("the viewer's dashboard shows the API's figures", func(t *testing.T) {
				checkDashboard(t, "the viewer's page", got.Viewer, after, month)
				if got.NavCurrent != "page" || got.ChartsNamed != 1 {
					t.Errorf("the nav's Statistics link is aria-current %q; %d charts named Volume per day", got.NavCurrent, got.ChartsNamed)
				}
				if o.Totals["trades"] != trades || o.Totals["traders"] != 2 || int64Of(o.Today, "active_traders") != 2 {
					t.Errorf("the overview counts %d trades by %d traders (%d today), want %d by 2", o.Totals["trades"], o.Totals["traders"], int64Of(o.Today, "active_traders"), trades)
				}
			})
			t.Run("the range changes, stays in the address, and survives a reload and Back", func(t *testing.T) {
				checkDashboard(t, "the 7-day page", got.Week, after, statsDaily(t, h, viewer.token, from(7), today))
				checkDashboard(t, "the 365-day page", got.Year, after, statsDaily(t, h, viewer.token, from(365), today))
				if got.WeekURL != "?days=7" || got.BackURL != "?days=7" || strings.Join(got.WeekReloaded, ",") != "7 days" {
					t.Errorf("the address said %q, after Back %q; after a reload the chosen range is %q", got.WeekURL, got.BackURL, got.WeekReloaded)
				}
				if strings.Join(got.Viewer.Current, ",") != "30 days" || strings.Join(got.Year.Current, ",") != "365 days" {
					t.Errorf("the chosen ranges read %q and %q", got.Viewer.Current, got.Year.Current)
				}
			})
			t.Run("a top market links to its event", func(t *testing.T) {
				if got.TopHref != fmt.Sprintf("/events/%d", o.TopMarkets[0].EventID) || got.TopHeading != "Stats cup" {
					t.Errorf("the first top market leads to %q, headed %q", got.TopHref, got.TopHeading)
				}
			})
			t.Run("a user who is no viewer and a visitor have no access and no link", func(t *testing.T) {
				for who, text := range map[string]string{"the other user": got.OtherText, "the visitor": got.AnonText} {
					if !strings.Contains(text, "You do not have access to statistics.") || strings.Contains(text, "Volume per day") {
						t.Errorf("%s reads %q", who, text)
					}
				}
				if got.OtherNav != 0 || got.AnonNav != 0 || got.OtherCharts != 0 {
					t.Errorf("Statistics links in the nav: %d for the other user, %d for the visitor; %d charts", got.OtherNav, got.AnonNav, got.OtherCharts)
				}
				if got.AnonLogin != "/login?next=/stats" {
					t.Errorf("the visitor's way in is %q", got.AnonLogin)
				}
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/overview", token: other.token})
				expect(t, r, http.StatusForbidden, "")
			})
			t.Run("the operator's console shows the same with the admin token, and its range", func(t *testing.T) {
				checkDashboard(t, "the console", got.Console, after, month)
				checkDashboard(t, "the console's 90 days", got.ConsoleQuarter, after, statsDaily(t, h, adminToken, from(90), today))
				if got.ConsoleURL != "/admin/stats?days=90" {
					t.Errorf("the console's address is %q", got.ConsoleURL)
				}
			})
			t.Run("the operator grants statistics in the console's Users", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: ruViewer.token})
				expect(t, r, http.StatusOK, "")
				var me struct {
					User struct {
						IsStatsViewer bool `json:"is_stats_viewer"`
					} `json:"user"`
				}
				r.decode(t, &me)
				if !me.User.IsStatsViewer {
					t.Error("the user the operator granted statistics is no viewer")
				}
				if got.GrantedFocus != "Revoke statistics" {
					t.Errorf("after granting, the focus is on %q, not the row's Revoke statistics", got.GrantedFocus)
				}
			})
			t.Run("a Russian viewer reads the page in Russian", func(t *testing.T) {
				for _, s := range []string{"Сегодня", "За всё время", "Объём", "Открытый интерес", "Лучшие рынки сегодня", "30 дн."} {
					if !strings.Contains(got.RuText, s) {
						t.Errorf("the Russian page lacks %q: %q", s, got.RuText)
					}
				}
				if got.RuNav != 1 || got.RuChart != 1 {
					t.Errorf("the Russian nav has %d Статистика links, %d charts named Объём по дням", got.RuNav, got.RuChart)
				}
			})
			t.Run("on a phone neither page scrolls sideways", func(t *testing.T) {
				for name, p := range map[string]phonePage{"/stats": got.Phone, "/admin/stats": got.PhoneConsole} {
					if p.Width != 390 || p.ScrollWidth > p.Width || len(p.Offenders) > 0 {
						t.Errorf("%s on a phone: %d px wide, scrolls %d px; past the edge: %v", name, p.Width, p.ScrollWidth, p.Offenders)
					}
				}
			})
			t.Run("axe-core finds nothing in either theme", func(t *testing.T) {
				if got.Axe == nil {
					t.Skip("no axe-core (PREDICTKIT_AXE_CORE)")
				}
				for _, v := range got.Axe {
					t.Errorf("axe-core: %s", v)
				}
			})
		})
	}

	t.Run("screenshots over the demo data are saved when PREDICTKIT_SCREENSHOTS names a directory", func(t *testing.T) {
		dir := screenshotDir(t, "")
		if dir == "" {
			t.Skip("PREDICTKIT_SCREENSHOTS is not set")
		}
		a := startDemoWebApp(t)
		var files []string
		a.d.run(t, "stats_screenshots", map[string]any{"dir": dir, "viewer": a.creator}, &files)
		for _, f := range files {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("screenshot %s: %v", f, err)
			}
		}
		t.Logf("saved %v", files)
	})
}
