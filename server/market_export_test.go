package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
)

// exportPageSize is the store page of the export tests: small, so that
// a market of a few trades spans several pages.
const exportPageSize = 3

func tradesCSVPath(id int64) string { return fmt.Sprintf("/api/v1/markets/%d/trades.csv", id) }

// readTradesCSV parses a trades file, failing unless it is RFC 4180 CSV
// with the documented header.
func readTradesCSV(t *testing.T, body []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("the file is not CSV: %v\n%s", err, body)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], server.TradesCSVHeader) {
		t.Fatalf("header %v, want %v", rows, server.TradesCSVHeader)
	}
	return rows[1:]
}

// wantRows are the rows the file must hold for trades, as a user checks
// them against the trades the store recorded.
func wantRows(ts []*market.Trade) [][]string {
	out := [][]string{}
	for _, tr := range ts {
		out = append(out, []string{strconv.FormatInt(tr.ID, 10), tr.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"),
			tr.Side.String(), string(tr.Action), strconv.FormatInt(tr.Shares, 10), strconv.FormatInt(tr.Amount, 10),
			strconv.FormatInt(tr.Fee, 10), strconv.FormatInt(tr.Cost, 10),
			strconv.FormatFloat(tr.PriceBefore, 'g', -1, 64), strconv.FormatFloat(tr.PriceAfter, 'g', -1, 64)})
	}
	return out
}

// exportWorld is a market with trades of both sides, buys and sells, a
// partner's bet, more than one store page of them, and trades on the
// market beside it.
type exportWorld struct {
	*world
	// secrets are strings that identify the traders and must not be in
	// any file: e-mails, the partner's user and bet ids.
	secrets []string
}

func newExportWorld(t *testing.T, h *harness) *exportWorld {
	t.Helper()
	w := &exportWorld{world: newWorld(t, h)}
	bookie := h.createPartner(t, "Bookie", 1_000_000)
	w.secrets = []string{w.alice.email, w.bob.email, "punter-0042", "bet-export-1", "Bookie"}
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	h.buy(t, w.bob.token, w.a1.ID, "NO", 7_000)
	h.buy(t, w.alice.token, w.a2.ID, "NO", 5_000) // the market beside
	h.partnerBet(t, bookie.Key, map[string]any{"external_user_id": "punter-0042", "market_id": w.a1.ID, "side": "yes",
		"amount_kopecks": 4_000, "client_bet_id": "bet-export-1"})
	h.buy(t, w.alice.token, w.a1.ID, "NO", 3_000)
	h.sell(t, w.alice.token, w.a1.ID, "YES", 1_000)
	h.sell(t, w.bob.token, w.a1.ID, "NO", 500)
	h.buy(t, w.bob.token, w.a1.ID, "YES", 2_500)
	return w
}

func TestTradesCSV(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			h := newHarness(t, store, withConfig(func(c *server.Config) { c.ExportPageSize = exportPageSize }))
			w := newExportWorld(t, h)
			trades := func() []*market.Trade {
				ts, err := store.Trades(context.Background(), w.a1.ID)
				if err != nil {
					t.Fatal(err)
				}
				return ts
			}

			t.Run("an open market's file holds every trade, row by row, and nobody's id", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)})
				expect(t, r, http.StatusOK, "")
				for name, want := range map[string]string{
					"Content-Type":        "text/csv; charset=utf-8",
					"Content-Disposition": fmt.Sprintf(`attachment; filename="market-%d-trades.csv"`, w.a1.ID),
					"ETag":                "",
				} {
					if got := r.header.Get(name); got != want {
						t.Errorf("%s: %q, want %q", name, got, want)
					}
				}
				ts := trades()
				if len(ts) != 7 || len(ts) <= 2*exportPageSize {
					t.Fatalf("the market has %d trades, want 7 (more than two store pages)", len(ts))
				}
				rows := readTradesCSV(t, r.body)
				want := wantRows(ts)
				if len(rows) != len(want) {
					t.Fatalf("%d rows, want %d", len(rows), len(want))
				}
				for i := range want {
					if !slices.Equal(rows[i], want[i]) {
						t.Errorf("row %d: %v, want %v", i+1, rows[i], want[i])
					}
				}
				sides, actions := map[string]bool{}, map[string]bool{}
				for _, row := range rows {
					sides[row[2]], actions[row[3]] = true, true
					if row[6] == "0" {
						t.Errorf("a trade on a market with a 3%% margin has no fee: %v", row)
					}
				}
				if len(sides) != 2 || len(actions) != 2 {
					t.Errorf("sides %v and actions %v: the file misses some", sides, actions)
				}
				for _, s := range w.secrets {
					if bytes.Contains(r.body, []byte(s)) {
						t.Errorf("the file names %q", s)
					}
				}
			})

			t.Run("an open market's file is read afresh after a new trade", func(t *testing.T) {
				before := readTradesCSV(t, h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)}).body)
				tr := h.buy(t, w.bob.token, w.a1.ID, "NO", 1_500)
				r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)})
				expect(t, r, http.StatusOK, "")
				after := readTradesCSV(t, r.body)
				if len(after) != len(before)+1 || after[len(after)-1][0] != strconv.FormatInt(tr.TradeID, 10) {
					t.Fatalf("after a trade: %d rows ending %v, want %d ending trade %d", len(after), after[len(after)-1], len(before)+1, tr.TradeID)
				}
				if !slices.EqualFunc(before, after[:len(before)], slices.Equal) {
					t.Error("a new trade changed the rows before it")
				}
			})

			t.Run("a market without trades is the header alone", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.b1.ID)})
				expect(t, r, http.StatusOK, "")
				if rows := readTradesCSV(t, r.body); len(rows) != 0 {
					t.Fatalf("%d rows", len(rows))
				}
			})

			t.Run("a resolved market's file has a strong ETag and If-None-Match gets 304", func(t *testing.T) {
				expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token,
					body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
				first := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)})
				expect(t, first, http.StatusOK, "")
				etag := first.header.Get("ETag")
				if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
					t.Fatalf("ETag %q, want a strong one", etag)
				}
				if rows := readTradesCSV(t, first.body); !slices.EqualFunc(rows, wantRows(trades()), slices.Equal) {
					t.Fatal("the resolved market's file is not its trades")
				}
				again := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)})
				expect(t, again, http.StatusOK, "")
				if !bytes.Equal(again.body, first.body) || again.header.Get("ETag") != etag {
					t.Fatal("a second download differs from the first")
				}
				for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
					r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID), header: map[string]string{"If-None-Match": inm}})
					expect(t, r, http.StatusNotModified, "")
					if len(r.body) != 0 || r.header.Get("ETag") != etag {
						t.Errorf("If-None-Match %s: body %q, ETag %q", inm, r.body, r.header.Get("ETag"))
					}
				}
				r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID), header: map[string]string{"If-None-Match": `"stale"`}})
				expect(t, r, http.StatusOK, "")
				if !bytes.Equal(r.body, first.body) {
					t.Error("another ETag does not get the file")
				}
			})

			t.Run("a hidden event's market is answered as GET /markets/{id} answers it", func(t *testing.T) {
				h.activate(t, w.creator.token, w.event.ID, false)
				defer h.activate(t, w.creator.token, w.event.ID, true)
				r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a2.ID)})
				m := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d", w.a2.ID)})
				if r.status != m.status || r.status != http.StatusOK {
					t.Fatalf("the file is %d, the market %d; want both 200", r.status, m.status)
				}
				if rows := readTradesCSV(t, r.body); len(rows) != 1 {
					t.Fatalf("%d rows, want the one trade", len(rows))
				}
			})

			t.Run("an unknown or malformed market id is answered as GET /markets/{id} answers it", func(t *testing.T) {
				for _, c := range []struct {
					id     string
					status int
					code   string
				}{
					{"999999", http.StatusNotFound, "market_not_found"},
					{"0", http.StatusNotFound, "market_not_found"},
					{"abc", http.StatusBadRequest, "invalid_id"},
					{"1e3", http.StatusBadRequest, "invalid_id"},
				} {
					r := h.do(t, req{method: http.MethodGet, path: "/api/v1/markets/" + c.id + "/trades.csv"})
					expect(t, r, c.status, c.code)
					m := h.do(t, req{method: http.MethodGet, path: "/api/v1/markets/" + c.id})
					if m.status != r.status || m.errorCode() != r.errorCode() {
						t.Errorf("market %s: the file is %s, the market %s", c.id, r, m)
					}
				}
			})
		})
	}
}

// TestTradesCSVOverTheNetwork: a file of several pages is streamed by a
// running server, its later pages read after the handler returned and
// the request's deadline ended.
func TestTradesCSVOverTheNetwork(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.ExportPageSize = 2
	h, _ := startServer(t, cfg)
	w := newExportWorld(t, h)
	r := h.do(t, req{method: http.MethodGet, path: tradesCSVPath(w.a1.ID)})
	expect(t, r, http.StatusOK, "")
	if rows := readTradesCSV(t, r.body); len(rows) != 7 {
		t.Fatalf("%d rows over the network, want 7", len(rows))
	}
	if cl := r.header.Get("Content-Length"); cl != "" {
		t.Errorf("an open market's file has a Content-Length %s: it was not streamed", cl)
	}
}

// failingStore fails every page of a market's trades after the first.
type failingStore struct {
	server.Store
	mu    sync.Mutex
	reads int
}

func (f *failingStore) TradesAfter(ctx context.Context, marketID, after int64, limit int) ([]*market.Trade, error) {
	f.mu.Lock()
	f.reads++
	n := f.reads
	f.mu.Unlock()
	if n > 1 {
		return nil, errors.New("pq: connection reset by peer")
	}
	return f.Store.TradesAfter(ctx, marketID, after, limit)
}

// TestTradesCSVCutShort: a store error once the file has begun ends the
// answer without its last chunk, so that the client's download fails
// instead of ending on a file that looks whole.
func TestTradesCSVCutShort(t *testing.T) {
	store := &failingStore{Store: memoryStore()}
	cfg := testConfig(store)
	cfg.ExportPageSize = 2
	h, _ := startServer(t, cfg)
	w := newExportWorld(t, h)
	res, err := http.Get("http://" + h.base + tradesCSVPath(w.a1.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || err == nil {
		t.Fatalf("status %d, read error %v after %q; want 200 and a failed read", res.StatusCode, err, body)
	}
	if rows := strings.Count(string(body), "\n"); rows != 3 {
		t.Errorf("%d lines before the cut, want the header and the first page of 2", rows)
	}
}
