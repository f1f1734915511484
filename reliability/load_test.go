package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fixture is what the load trades with: users with money, markets, a
// partner with a float.
type fixture struct {
	base       func() string
	markets    []int64
	users      []loadUser
	credit     int64
	partnerID  int64
	partnerKey string
}

type loadUser struct {
	id    int64
	token string
}

var admin = map[string]string{"Authorization": "Bearer " + adminToken}

// setup prepares, through the operator API of the server at base, nUsers
// users credited with a billion kopecks, one event of nMarkets deep
// markets, and a partner with a float.
func setup(t *testing.T, base func() string, nUsers, nMarkets int) *fixture {
	t.Helper()
	fx := &fixture{base: base, credit: 1_000_000_000}
	api := func(path string) string { return base() + "/api/v1" + path }
	register := func(name string) loadUser {
		var out struct {
			User struct {
				ID int64 `json:"id"`
			} `json:"user"`
			Token string `json:"access_token"`
		}
		mustCall(t, http.MethodPost, api("/auth/register"), nil,
			map[string]string{"email": fmt.Sprintf("%s-%d@reliability.test", name, time.Now().UnixNano()), "password": "password-123", "name": name},
			&out, http.StatusCreated)
		return loadUser{id: out.User.ID, token: out.Token}
	}
	creator := register("creator")
	mustCall(t, http.MethodPatch, api(fmt.Sprintf("/admin/users/%d", creator.id)), admin, map[string]bool{"is_creator": true}, nil, http.StatusOK)
	var markets []map[string]any
	for i := range nMarkets {
		markets = append(markets, map[string]any{"name": fmt.Sprintf("Market %d", i), "probability": 0.5})
	}
	var ev struct {
		ID    int64 `json:"id"`
		Pools []struct {
			Markets []struct {
				ID int64 `json:"id"`
			} `json:"markets"`
		} `json:"pools"`
	}
	mustCall(t, http.MethodPost, api("/events"), map[string]string{"Authorization": "Bearer " + creator.token}, map[string]any{
		"name":  "Reliability",
		"pools": []map[string]any{{"name": "Pool", "margin": 0.02, "lmsr_b_kopecks": 10_000_000, "markets": markets}},
	}, &ev, http.StatusCreated)
	for _, m := range ev.Pools[0].Markets {
		fx.markets = append(fx.markets, m.ID)
	}
	mustCall(t, http.MethodPost, api(fmt.Sprintf("/events/%d/active", ev.ID)), map[string]string{"Authorization": "Bearer " + creator.token},
		map[string]bool{"is_active": true}, nil, http.StatusOK)
	for i := range nUsers {
		u := register(fmt.Sprintf("trader%d", i))
		mustCall(t, http.MethodPost, api(fmt.Sprintf("/admin/users/%d/credit", u.id)), admin, map[string]int64{"amount_kopecks": fx.credit}, nil, http.StatusOK)
		fx.users = append(fx.users, u)
	}
	var p struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	mustCall(t, http.MethodPost, api("/admin/partners"), admin, map[string]string{"name": "Reliability partner"}, &p, http.StatusCreated)
	mustCall(t, http.MethodPost, api(fmt.Sprintf("/admin/partners/%d/float", p.ID)), admin, map[string]int64{"amount_kopecks": 1_000_000_000_000}, nil, http.StatusOK)
	fx.partnerID, fx.partnerKey = p.ID, p.Key
	return fx
}

// sent is one request of the load and what came back.
type sent struct {
	kind   string // buy, sell, bet
	user   int64  // the trader (buy, sell)
	ext    string // the partner's user (bet)
	market int64
	side   string
	amount int64 // budget of a buy or a bet
	shares int64 // shares of a sale
	betID  string
	// status is 0 when no answer came: the request may or may not have
	// run. code is the error code of a refusal.
	status int
	code   string
	// From a 200: the trade, as the answer tells it.
	tradeID   int64
	gotShares int64
	gotAmount int64
	replayed  bool
}

// ambiguous reports whether the request may have executed although it
// was not answered 200: no answer, or a 5xx.
func (s *sent) ambiguous() bool { return s.status == 0 || s.status >= 500 }

// load drives the server with buys, sales and partner bets from
// goroutines and records every request.
type load struct {
	fx   *fixture
	stop atomic.Bool
	wg   sync.WaitGroup

	mu   sync.Mutex
	reqs []*sent
}

// budgetStep spaces one user's buy budgets so that a trade's charge
// (a few kopecks under its budget) names the request it came from.
const budgetStep = 20

func startLoad(fx *fixture, partnerWorkers int, seed uint64) *load {
	l := &load{fx: fx}
	for i, u := range fx.users {
		l.wg.Add(1)
		go l.trader(u, rand.New(rand.NewPCG(seed, uint64(i))))
	}
	for w := range partnerWorkers {
		l.wg.Add(1)
		go l.partner(w, rand.New(rand.NewPCG(seed, uint64(1000+w))))
	}
	return l
}

// finish stops the load and returns every request sent.
func (l *load) finish() []*sent {
	l.stop.Store(true)
	l.wg.Wait()
	return l.reqs
}

func (l *load) record(s *sent) {
	l.mu.Lock()
	l.reqs = append(l.reqs, s)
	l.mu.Unlock()
}

// send performs one request with a time limit of its own (stopping the
// load never cuts a request short).
func (l *load) send(method, path string, headers map[string]string, in any) (int, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, b, err := call(ctx, method, l.fx.base()+path, headers, in)
	if err != nil {
		return 0, nil
	}
	return st, b
}

func errorCode(b []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error
}

// trader is one user's sequence: buys with budgets unique to the user,
// and sales of unique share counts of what the answers said it holds.
func (l *load) trader(u loadUser, r *rand.Rand) {
	defer l.wg.Done()
	auth := map[string]string{"Authorization": "Bearer " + u.token}
	type pos struct {
		market int64
		side   string
	}
	held := map[pos]int64{}
	for k := int64(1); !l.stop.Load(); k++ {
		m := l.fx.markets[r.IntN(len(l.fx.markets))]
		side := []string{"YES", "NO"}[r.IntN(2)]
		s := &sent{user: u.id, market: m, side: side}
		sellShares := 50 + k
		if r.IntN(10) < 4 && held[pos{m, side}] >= sellShares {
			s.kind, s.shares = "sell", sellShares
		} else {
			s.kind, s.amount = "buy", 1000+budgetStep*k
		}
		body := map[string]any{"side": side}
		if s.kind == "buy" {
			body["amount_kopecks"] = s.amount
		} else {
			body["shares"] = s.shares
		}
		st, b := l.send(http.MethodPost, fmt.Sprintf("/api/v1/markets/%d/%s", m, s.kind), auth, body)
		s.status = st
		if st == http.StatusOK {
			var a struct {
				TradeID int64  `json:"trade_id"`
				Shares  int64  `json:"shares"`
				Cost    *int64 `json:"cost_kopecks"`
				Payout  *int64 `json:"payout_kopecks"`
			}
			if err := json.Unmarshal(b, &a); err == nil {
				s.tradeID, s.gotShares = a.TradeID, a.Shares
				if a.Cost != nil {
					s.gotAmount = *a.Cost
					held[pos{m, side}] += a.Shares
				} else if a.Payout != nil {
					s.gotAmount = *a.Payout
					held[pos{m, side}] -= a.Shares
				}
			}
		} else {
			s.code = errorCode(b)
		}
		l.record(s)
		if st == 0 || st >= 500 {
			time.Sleep(20 * time.Millisecond) // the server or its database is down: do not spin
		}
	}
}

// partner bets for four external users with fresh client_bet_ids. A bet
// that got no definite answer is sent again, same id and parameters,
// until one comes (as the partner guide says); now and then an accepted
// bet is repeated at once, which must be replayed.
func (l *load) partner(w int, r *rand.Rand) {
	defer l.wg.Done()
	key := map[string]string{"X-Partner-Key": l.fx.partnerKey}
	for k := 1; !l.stop.Load(); k++ {
		base := sent{kind: "bet", ext: fmt.Sprintf("w%d-u%d", w, r.IntN(4)), market: l.fx.markets[r.IntN(len(l.fx.markets))],
			side: []string{"yes", "no"}[r.IntN(2)], amount: 500 + r.Int64N(5000), betID: fmt.Sprintf("w%d-bet-%d", w, k)}
		body := map[string]any{"external_user_id": base.ext, "market_id": base.market, "side": base.side,
			"amount_kopecks": base.amount, "client_bet_id": base.betID}
		repeat := r.IntN(8) == 0
		for attempt := 0; ; attempt++ {
			s := base
			st, b := l.send(http.MethodPost, "/api/v1/partner/bet", key, body)
			s.status = st
			if st == http.StatusOK {
				var a struct {
					Cost   int64 `json:"cost_kopecks"`
					Shares int64 `json:"shares_delta"`
				}
				_ = json.Unmarshal(b, &a)
				s.gotAmount, s.gotShares = a.Cost, a.Shares
			} else {
				s.code = errorCode(b)
			}
			l.record(&s)
			if st == http.StatusOK && repeat {
				repeat = false
				continue
			}
			if !s.ambiguous() || attempt > 200 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// loadStats summarizes the answers.
func loadStats(reqs []*sent) string {
	by := map[string]int{}
	for _, s := range reqs {
		k := fmt.Sprintf("%s %d", s.kind, s.status)
		if s.code != "" {
			k += " " + s.code
		}
		by[k]++
	}
	var ks []string
	for k := range by {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s: %d", k, by[k]))
	}
	return strings.Join(parts, ", ")
}
