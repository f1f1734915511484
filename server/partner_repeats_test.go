package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestPartnerRepeatsReplayTheOriginalAnswer: a repeat of an accepted bet
// or sell gets the original status and body byte for byte, with
// Idempotent-Replayed: true, and runs nothing.
func TestPartnerRepeatsReplayTheOriginalAnswer(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		p := h.createPartner(t, "Bookie", 1_000_000)
		bet := map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "no", "amount_kopecks": 30_000, "client_bet_id": "order-1"}

		first := h.do(t, betReq(p.Key, bet))
		expect(t, first, http.StatusOK, "")
		if v, ok := first.header["Idempotent-Replayed"]; ok {
			t.Errorf("the first execution carries Idempotent-Replayed: %v", v)
		}
		var rc apiReceipt
		first.decode(t, &rc)
		float := h.partner(t, p.ID).FloatKopecks
		trades := h.tradeCount(t, w.a1.ID)

		// Another trade moves the price, so a re-execution would differ.
		h.partnerBet(t, p.Key, map[string]any{"external_user_id": "u-2", "market_id": w.a1.ID, "side": "no", "amount_kopecks": 50_000, "client_bet_id": "order-2"})
		float2 := h.partner(t, p.ID).FloatKopecks

		t.Run("the repeat of a bet has the same status and bytes and the replay header", func(t *testing.T) {
			again := h.do(t, betReq(p.Key, bet))
			if again.status != first.status || !bytes.Equal(again.body, first.body) {
				t.Fatalf("first %s\nrepeat %s", first, again)
			}
			if got := again.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
		})
		t.Run("the repeat of a bet with its keys in another order is still a repeat", func(t *testing.T) {
			body := fmt.Sprintf(`{"client_bet_id":"order-1","amount_kopecks":30000,"side":"no","market_id":%d,"external_user_id":"u-1"}`, w.a1.ID)
			again := h.do(t, betReq(p.Key, body))
			if !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("first %s\nrepeat %s", first, again)
			}
		})
		t.Run("repeats ran nothing: one trade, the float moved once", func(t *testing.T) {
			if got := h.tradeCount(t, w.a1.ID); got != trades+1 {
				t.Errorf("trades %d, want %d", got, trades+1)
			}
			if got := h.partner(t, p.ID).FloatKopecks; got != float2 || float2 >= float {
				t.Errorf("float %d after the repeats, %d before them (and %d after the first bet)", got, float2, float)
			}
		})

		sell := map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "no", "shares": rc.SharesDelta / 2, "client_bet_id": "order-3"}
		sold := h.do(t, sellReq(p.Key, sell))
		expect(t, sold, http.StatusOK, "")
		st := h.partnerState(t, p.Key, "u-1")
		t.Run("the repeat of a sell has the same status and bytes and the replay header", func(t *testing.T) {
			again := h.do(t, sellReq(p.Key, sell))
			if again.status != sold.status || !bytes.Equal(again.body, sold.body) {
				t.Fatalf("first %s\nrepeat %s", sold, again)
			}
			if got := again.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
			after := h.partnerState(t, p.Key, "u-1")
			if after.BalanceKopecks != st.BalanceKopecks || after.Positions[0].Shares != st.Positions[0].Shares {
				t.Errorf("the repeat sold again: %+v → %+v", st, after)
			}
		})
		t.Run("a repeat after the partner was disabled is 403, not a replay", func(t *testing.T) {
			h.setPartnerDisabled(t, p.ID, true)
			expect(t, h.do(t, betReq(p.Key, bet)), http.StatusForbidden, "FORBIDDEN")
			h.setPartnerDisabled(t, p.ID, false)
			again := h.do(t, betReq(p.Key, bet))
			if !bytes.Equal(again.body, first.body) {
				t.Errorf("after re-enabling: %s", again)
			}
		})
		t.Run("the ledger is sound", func(t *testing.T) {
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit: %v", problems)
			}
		})
	})
}

// sent is one answer of a concurrent request.
type sent struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// concurrently sends r n times at once to the started server of h (app.Test
// rebuilds the router on every call, so it is not for concurrent use) and
// checks every answer against the OpenAPI document.
func concurrently(t *testing.T, h *harness, n int, r func(i int) req) []sent {
	t.Helper()
	out := make([]sent, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = send(h.base, r(i))
		}()
	}
	close(start)
	wg.Wait()
	for i, s := range out {
		if s.err != nil {
			t.Fatalf("request %d: %v", i, s.err)
		}
		rq := r(i)
		hr := httptest.NewRequest(rq.method, rq.path, nil)
		h.validate(t, rq, hr, &response{status: s.status, header: s.header, body: s.body})
	}
	return out
}

// send is h.do without a *testing.T, for goroutines.
func send(base string, r req) sent {
	var body io.Reader = http.NoBody
	switch b := r.body.(type) {
	case string:
		body = strings.NewReader(b)
	case nil:
	default:
		return sent{err: fmt.Errorf("send takes string bodies")}
	}
	hr, err := http.NewRequest(r.method, "http://"+base+r.path, body)
	if err != nil {
		return sent{err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return sent{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return sent{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// TestPartnerConcurrentRepeatsExecuteOnce sends 50 identical bets, then
// 50 identical sells, at once over the network: each executes exactly
// once and every answer has the same bytes.
func TestPartnerConcurrentRepeatsExecuteOnce(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, _ := startServer(t, testConfig(sc.new(t)))
			w := newWorld(t, h)
			p := h.createPartner(t, "Bookie", 1_000_000)
			const n = 50
			check := func(t *testing.T, out []sent) {
				t.Helper()
				fresh := 0
				for i, s := range out {
					if s.status != http.StatusOK || !bytes.Equal(s.body, out[0].body) {
						t.Fatalf("answer %d: %d %s; answer 0: %d %s", i, s.status, s.body, out[0].status, out[0].body)
					}
					switch s.header.Get("Idempotent-Replayed") {
					case "":
						fresh++
					case "true":
					default:
						t.Errorf("Idempotent-Replayed = %q", s.header.Get("Idempotent-Replayed"))
					}
				}
				if fresh != 1 {
					t.Errorf("%d answers say they executed, want exactly 1", fresh)
				}
			}

			var rc apiReceipt
			t.Run("50 identical bets make one trade and move the float once", func(t *testing.T) {
				body := fmt.Sprintf(`{"external_user_id":"racer","market_id":%d,"side":"yes","amount_kopecks":40000,"client_bet_id":"race-bet"}`, w.a1.ID)
				out := concurrently(t, h, n, func(int) req { return betReq(p.Key, body) })
				check(t, out)
				(&response{body: out[0].body}).decode(t, &rc)
				if got := h.tradeCount(t, w.a1.ID); got != 1 {
					t.Errorf("%d trades, want 1", got)
				}
				if got := h.partner(t, p.ID).FloatKopecks; got != 1_000_000-rc.CostKopecks {
					t.Errorf("float %d, want %d", got, 1_000_000-rc.CostKopecks)
				}
				st := h.partnerState(t, p.Key, "racer")
				if len(st.Positions) != 1 || st.Positions[0].Shares != rc.SharesDelta || st.UserID != rc.UserID {
					t.Errorf("state %+v after %+v", st, rc)
				}
			})
			t.Run("50 identical sells make one trade and pay once", func(t *testing.T) {
				body := fmt.Sprintf(`{"external_user_id":"racer","market_id":%d,"side":"yes","shares":%d,"client_bet_id":"race-sell"}`, w.a1.ID, rc.SharesDelta/3)
				out := concurrently(t, h, n, func(int) req { return sellReq(p.Key, body) })
				check(t, out)
				var sr apiReceipt
				(&response{body: out[0].body}).decode(t, &sr)
				if got := h.tradeCount(t, w.a1.ID); got != 2 {
					t.Errorf("%d trades, want 2", got)
				}
				st := h.partnerState(t, p.Key, "racer")
				if st.BalanceKopecks != sr.PayoutKopecks || st.Positions[0].Shares != rc.SharesDelta+sr.SharesDelta {
					t.Errorf("state %+v after %+v", st, sr)
				}
			})
			t.Run("concurrent first bets of a new user under distinct keys share one sub-account", func(t *testing.T) {
				out := concurrently(t, h, 10, func(i int) req {
					return betReq(p.Key, fmt.Sprintf(`{"external_user_id":"crowd","market_id":%d,"side":"no","amount_kopecks":1000,"client_bet_id":"crowd-%d"}`, w.b1.ID, i))
				})
				users := map[int64]bool{}
				for i, s := range out {
					if s.status != http.StatusOK || s.header.Get("Idempotent-Replayed") != "" {
						t.Fatalf("bet %d: %d %s", i, s.status, s.body)
					}
					var r apiReceipt
					(&response{body: s.body}).decode(t, &r)
					users[r.UserID] = true
				}
				if len(users) != 1 || h.tradeCount(t, w.b1.ID) != 10 {
					t.Errorf("%d sub-accounts, %d trades; want 1 and 10", len(users), h.tradeCount(t, w.b1.ID))
				}
			})
			t.Run("the ledger is sound", func(t *testing.T) {
				if ok, _, problems := h.audit(t); !ok {
					t.Fatalf("audit: %v", problems)
				}
			})
		})
	}
}
