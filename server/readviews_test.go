package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// viewsHarness is a started server (the views follow the change log only
// from start to stop) with a two-pool world.
func viewsHarness(t *testing.T, store server.Store, mod ...func(*server.Config)) (*harness, *world) {
	t.Helper()
	h := streamHarness(t, store, mod...)
	return h, newWorld(t, h)
}

// lastEventID is the answer's Predictkit-Last-Event-Id, which must be a
// number.
func lastEventID(t *testing.T, r *response) int64 {
	t.Helper()
	n, err := strconv.ParseInt(r.header.Get(server.HeaderLastEventID), 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s: Predictkit-Last-Event-Id %q is not a change-log id", r, r.header.Get(server.HeaderLastEventID))
	}
	return n
}

func TestReadViewsHeaders(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h, w := viewsHarness(t, h.store)
		pool := fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID)
		get := func(path string, header map[string]string) *response {
			return h.do(t, req{method: http.MethodGet, path: path, header: header})
		}

		t.Run("an unchanged view keeps its ETag, and answers 304 to it", func(t *testing.T) {
			a, b := get(pool, nil), get(pool, nil)
			expect(t, a, http.StatusOK, "")
			if a.header.Get("ETag") == "" || a.header.Get("ETag") != b.header.Get("ETag") || !bytes.Equal(a.body, b.body) {
				t.Fatalf("two reads of an unchanged pool: ETag %q then %q", a.header.Get("ETag"), b.header.Get("ETag"))
			}
			if got := a.header.Get("Cache-Control"); got != "public, max-age=1, stale-while-revalidate=5" {
				t.Errorf("Cache-Control %q", got)
			}
			lastEventID(t, a)
			nm := get(pool, map[string]string{"If-None-Match": a.header.Get("ETag")})
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != a.header.Get("ETag") {
				t.Fatalf("If-None-Match with the ETag answered %s (ETag %q)", nm, nm.header.Get("ETag"))
			}
			lastEventID(t, nm)
			if hits := mustMetric(t, h.scrape(t), "predictkit_read_views_total", map[string]string{"route": "/api/v1/pools/:id", "outcome": "hit"}); hits < 1 {
				t.Errorf("no read of the unchanged pool was answered from memory")
			}
		})

		t.Run("a trade changes the ETag and is in every view read at once", func(t *testing.T) {
			before := get(pool, nil)
			reads := []string{pool, fmt.Sprintf("/api/v1/markets/%d", w.a1.ID), fmt.Sprintf("/api/v1/events/%d", w.event.ID),
				"/api/v1/events", "/api/v1/market/trades/latest", "/api/v1/events?sort=volume&limit=5"}
			old := map[string]string{}
			for _, p := range reads {
				old[p] = get(p, nil).header.Get("ETag")
			}
			tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 20_000)
			for _, p := range reads {
				r := get(p, nil)
				expect(t, r, http.StatusOK, "")
				if r.header.Get("ETag") == old[p] {
					t.Errorf("GET %s kept its ETag after a trade", p)
				}
				if lastEventID(t, r) <= lastEventID(t, before) {
					t.Errorf("GET %s: Last-Event-Id did not move past the trade", p)
				}
			}
			if m := h.market(t, w.a1.ID); m.YesProbability != tr.Market.YesProbability {
				t.Errorf("the market read after the trade is at %v, the trade left it at %v", m.YesProbability, tr.Market.YesProbability)
			}
			var latest []struct {
				Amount int64 `json:"amount"`
			}
			get("/api/v1/market/trades/latest", nil).decode(t, &latest)
			if len(latest) == 0 || latest[0].Amount != tr.CostKopecks {
				t.Errorf("the latest trades read after the trade begin %+v, want the trade's %d", latest, tr.CostKopecks)
			}
			if r := get(pool, map[string]string{"If-None-Match": before.header.Get("ETag")}); r.status != http.StatusOK {
				t.Errorf("the ETag of before the trade answered %s", r)
			}
		})

		t.Run("an error is not cached and keeps its shape", func(t *testing.T) {
			for _, p := range []string{"/api/v1/pools/999999", "/api/v1/pools/x", "/api/v1/markets/999999/candles?interval=2m"} {
				for range 2 {
					r := get(p, nil)
					if r.status < 400 || r.errorCode() == "" || r.header.Get("ETag") != "" || r.header.Get(server.HeaderLastEventID) != "" {
						t.Fatalf("GET %s answered %s with ETag %q", p, r, r.header.Get("ETag"))
					}
					if got := r.header.Get("Cache-Control"); got != "no-store" {
						t.Errorf("GET %s: error with Cache-Control %q", p, got)
					}
				}
			}
		})

		t.Run("a request with credentials is answered the same body, not to be stored", func(t *testing.T) {
			anon := get(pool, nil)
			r := h.do(t, req{method: http.MethodGet, path: pool, token: w.alice.token})
			if !bytes.Equal(r.body, anon.body) || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("with a token: %s, Cache-Control %q", r, r.header.Get("Cache-Control"))
			}
		})
	})
}

// viewSnapshot is a read of a view with the id it reflects and the stream
// that continues it.
type viewSnapshot struct {
	path string
	seq  int64
	body []byte
	c    *sseConn
}

func TestReadViewsAreConsistentWithTheStream(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h, w := viewsHarness(t, h.store)
		traders := []apiUser{w.alice, w.bob}
		for i := range 2 {
			u := h.register(t, fmt.Sprintf("trader%d", i))
			h.credit(t, u.id, 5_000_000, false)
			traders = append(traders, u)
		}
		views := []struct{ path, topic string }{
			{fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID), fmt.Sprintf("pool:%d", w.poolA.ID)},
			{fmt.Sprintf("/api/v1/markets/%d", w.a1.ID), fmt.Sprintf("market:%d", w.a1.ID)},
			{"/api/v1/market/trades/latest", "trades"},
		}

		// Traders buy on pool A's two markets while snapshots are taken.
		var wg sync.WaitGroup
		var failed sync.Map
		for i, u := range traders {
			wg.Go(func() {
				for k := range 40 {
					m := []int64{w.a1.ID, w.a2.ID}[(i+k)%2]
					a := call(h.base, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", m), token: u.token,
						body: map[string]any{"side": []string{"YES", "NO"}[k%2], "amount_kopecks": 1_000 + 10*k + i}})
					if a.err != nil || a.status != http.StatusOK {
						failed.Store(fmt.Sprintf("%d/%d", i, k), fmt.Sprintf("%d %s %v", a.status, a.body, a.err))
					}
				}
			})
		}
		var snaps []viewSnapshot
		for round := range 4 {
			for _, v := range views {
				r := h.do(t, req{method: http.MethodGet, path: v.path})
				for tries := 0; r.header.Get(server.HeaderLastEventID) == "" && tries < 100; tries++ {
					r = h.do(t, req{method: http.MethodGet, path: v.path}) // the log moved under every try: read again
				}
				expect(t, r, http.StatusOK, "")
				s := viewSnapshot{path: v.path, seq: lastEventID(t, r), body: r.body}
				s.c = openStream(t, h, "topics="+v.topic, map[string]string{"Last-Event-ID": strconv.FormatInt(s.seq, 10)})
				t.Cleanup(s.c.close)
				snaps = append(snaps, s)
			}
			time.Sleep(time.Duration(round+1) * 15 * time.Millisecond)
		}
		wg.Wait()
		failed.Range(func(k, v any) bool {
			t.Errorf("trade %s: %s", k, v)
			return true
		})

		for _, s := range snaps {
			fresh := h.do(t, req{method: http.MethodGet, path: s.path})
			expect(t, fresh, http.StatusOK, "")
			ms := drain(t, s.c)
			switch s.path {
			case "/api/v1/market/trades/latest":
				names := map[int64]string{w.a1.ID: w.a1.Name, w.a2.ID: w.a2.Name}
				got, want := sameOrder(applyTrades(t, s.body, ms, names), latestKeys(t, fresh.body))
				if !slices.Equal(got, want) {
					t.Errorf("latest trades from %d plus the stream:\n%v\nwant (a fresh read):\n%v", s.seq, got, want)
				}
			default:
				got, want := applyPrices(t, s.path, s.body, ms), prices(t, s.path, fresh.body)
				if !maps2Equal(got, want) {
					t.Errorf("%s from %d plus the stream: prices %v, a fresh read %v", s.path, s.seq, got, want)
				}
			}
		}
	})
}

// drain reads a stream's messages until it has been quiet for a while.
func drain(t *testing.T, c *sseConn) []sseMsg {
	t.Helper()
	var out []sseMsg
	quiet := time.NewTimer(time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				t.Fatalf("the stream ended: %v", <-c.done)
			}
			if m.comment == "" {
				out = append(out, m)
				quiet.Reset(time.Second)
			}
		case <-quiet.C:
			return out
		}
	}
}

// tradeKey is what the latest trades and a stream's trade both tell of a
// trade: a client's way of recognizing it.
// tradeKey tells the latest trades apart, which carry no trade id. The
// traders' amounts differ, but a charge may fall a kopeck short of its
// budget, so two trades of one group commit (one time) on the two
// markets could share amount, side and action: the market tells them
// apart.
type tradeKey struct {
	Amount    int64
	Token     string
	Action    string
	Market    string
	CreatedAt string
}

func latestKeys(t *testing.T, body []byte) []tradeKey {
	t.Helper()
	var ts []struct {
		Amount    int64  `json:"amount"`
		Token     string `json:"token"`
		Action    string `json:"action"`
		Market    string `json:"market"`
		CreatedAt string `json:"created_at"`
	}
	(&response{body: body}).decode(t, &ts)
	out := make([]tradeKey, len(ts))
	for i, x := range ts {
		out[i] = tradeKey{x.Amount, x.Token, x.Action, x.Market, x.CreatedAt}
	}
	return out
}

// applyTrades puts the stream's trades in front of the latest trades, as
// a client does, and keeps the newest 50. The snapshot's label is exact
// for this view, so a trade already shown never comes again: a duplicate
// is an error, not something to drop.
func applyTrades(t *testing.T, body []byte, ms []sseMsg, marketNames map[int64]string) []tradeKey {
	t.Helper()
	list := latestKeys(t, body)
	streamed := map[int64]bool{}
	for _, m := range ms {
		if m.event != "trade" {
			continue
		}
		var st streamTrade
		m.decode(t, &st)
		if streamed[st.TradeID] {
			t.Errorf("the stream brought trade %d twice (message %d)", st.TradeID, m.id)
			continue
		}
		streamed[st.TradeID] = true
		k := tradeKey{st.AmountKopecks, st.Side, st.Action, marketNames[st.MarketID], st.CreatedAt}
		if slices.Contains(list, k) {
			t.Errorf("the stream from the snapshot's id brought trade %d (message %d), which the snapshot shows already", st.TradeID, m.id)
			continue
		}
		list = append([]tradeKey{k}, list...)
	}
	return list[:min(len(list), 50)]
}

// sameOrder puts both lists in one order: the trades of one group
// commit share their time, and a client cannot know the store's order
// among them. The trades of the fresh read's oldest time are left out,
// since which of them made the 50 is the store's choice too.
func sameOrder(got, fresh []tradeKey) ([]tradeKey, []tradeKey) {
	if len(fresh) == 0 {
		return got, fresh
	}
	oldest := fresh[len(fresh)-1].CreatedAt
	norm := func(ks []tradeKey) []tradeKey {
		ks = slices.DeleteFunc(slices.Clone(ks), func(k tradeKey) bool { return k.CreatedAt <= oldest })
		slices.SortFunc(ks, func(a, b tradeKey) int {
			if a.CreatedAt != b.CreatedAt {
				return strings.Compare(b.CreatedAt, a.CreatedAt)
			}
			if a.Amount != b.Amount {
				return int(a.Amount - b.Amount)
			}
			return strings.Compare(a.Market+a.Token+a.Action, b.Market+b.Token+b.Action)
		})
		return ks
	}
	return norm(got), norm(fresh)
}

// prices are the yes probabilities of a pool's or a market's answer, by
// market id.
func prices(t *testing.T, path string, body []byte) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	var p apiPool
	(&response{body: body}).decode(t, &p)
	if len(p.Markets) == 0 { // a market
		var m apiMarket
		(&response{body: body}).decode(t, &m)
		out[m.ID] = m.YesProbability
		return out
	}
	for _, m := range p.Markets {
		out[m.ID] = m.YesProbability
	}
	return out
}

func applyPrices(t *testing.T, path string, body []byte, ms []sseMsg) map[int64]float64 {
	t.Helper()
	out := prices(t, path, body)
	for _, m := range ms {
		if m.event != "price" {
			continue
		}
		var p streamPrice
		m.decode(t, &p)
		if _, ok := out[p.MarketID]; ok {
			out[p.MarketID] = p.YesProbability
		}
	}
	return out
}

func maps2Equal(a, b map[int64]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestReadViewsOff(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h, w := viewsHarness(t, h.store, func(c *server.Config) { c.ReadViews = 0 })
		pool := fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID)
		a := h.do(t, req{method: http.MethodGet, path: pool})
		tr := h.buy(t, w.alice.token, w.a1.ID, "NO", 10_000)
		b := h.do(t, req{method: http.MethodGet, path: pool})
		var p apiPool
		b.decode(t, &p)
		if p.Markets[0].YesProbability != tr.Market.YesProbability || a.header.Get("ETag") == b.header.Get("ETag") {
			t.Fatalf("with the views off, the pool read after a trade is %s", b)
		}
		lastEventID(t, b)
		if r := h.do(t, req{method: http.MethodGet, path: pool, header: map[string]string{"If-None-Match": b.header.Get("ETag")}}); r.status != http.StatusNotModified {
			t.Fatalf("with the views off, If-None-Match answered %s", r)
		}
		if hits, _ := metricValue(h.scrape(t), "predictkit_read_views_total", map[string]string{"route": "/api/v1/pools/:id", "outcome": "hit"}); hits != 0 {
			t.Errorf("with the views off, %v reads were answered from memory", hits)
		}
	})
}

func TestReadViewsSeeAnotherServersChanges(t *testing.T) {
	if postgresURL == nil {
		t.Skip("two servers share a database only on PostgreSQL")
	}
	url := postgresURL(t)
	start := func() *harness {
		cfg := testConfig(nil)
		cfg.Store, cfg.DatabaseURL = nil, url
		h, _ := startServer(t, cfg)
		return h
	}
	a, b := start(), start()
	w := newWorld(t, a)
	pool := fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID)
	event := fmt.Sprintf("/api/v1/events/%d", w.event.ID)
	for range 2 { // kept by b
		b.do(t, req{method: http.MethodGet, path: pool})
		b.do(t, req{method: http.MethodGet, path: event})
	}
	// eventually polls b until ok says its answer shows the change.
	eventually := func(what, path string, ok func(*response) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			r := b.do(t, req{method: http.MethodGet, path: path})
			if ok(r) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never reached the other server's %s: %s", what, path, r)
			}
		}
	}

	t.Run("a trade on one server reaches the other's views", func(t *testing.T) {
		tr := a.buy(t, w.alice.token, w.a1.ID, "YES", 30_000)
		eventually("the trade", pool, func(r *response) bool {
			var p apiPool
			r.decode(t, &p)
			return p.Markets[0].YesProbability == tr.Market.YesProbability
		})
	})

	t.Run("a change the change log does not carry reaches the other's views", func(t *testing.T) {
		a.activate(t, w.creator.token, w.event.ID, false)
		eventually("hiding the event", event, func(r *response) bool {
			var e apiEvent
			r.decode(t, &e)
			return r.status == http.StatusNotFound || !e.IsActive
		})
	})
}
