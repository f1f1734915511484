package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// The trading scenarios, hot and spread, differ only in their markets: one
// for hot, cfg.Markets for spread. Each client alternates a buy for 100 to
// 1,000 kopecks of a random side on a random market with a sale of part
// of a position it bought, so a user never sells more than it holds.

const (
	epBuy = iota
	epSell
)

func tradePhases(fx *fixture, cfg Config) []phase {
	return []phase{{
		name:      "trade",
		share:     1,
		endpoints: []string{"POST /api/v1/markets/{id}/buy", "POST /api/v1/markets/{id}/sell"},
		client: func(i int) step {
			t := &trader{users: usersOf(fx.users, i, cfg.Clients), markets: fx.markets, index: map[holding]int{}}
			return t.step
		},
	}}
}

// usersOf returns the users client i trades as: every clients-th user
// from i when there are at least as many users as clients, so that no two
// clients share a user; otherwise one user shared with other clients.
func usersOf(users []user, i, clients int) []user {
	if len(users) < clients {
		return []user{users[i%len(users)]}
	}
	var own []user
	for j := i; j < len(users); j += clients {
		own = append(own, users[j])
	}
	return own
}

// holding names shares a client bought: which of its users, which
// market, which side.
type holding struct {
	user   int
	market int64
	side   string
}

// trader is a trading client. It tracks the shares it bought from the
// answers, and sells only those: users shared between clients never
// oversell either.
type trader struct {
	users   []user
	markets []int64
	n       int
	// observe, when set, is called with every buy's and sell's status
	// (0 for a transport error) and body as soon as it is answered.
	observe func(s *session, status int, body []byte)

	held   []holding
	shares []int64
	index  map[holding]int // position in held and shares
}

func (t *trader) step(ctx context.Context, s *session) {
	t.n++
	if t.n%2 == 0 && len(t.held) > 0 {
		t.sell(ctx, s)
		return
	}
	t.buy(ctx, s)
}

func (t *trader) buy(ctx context.Context, s *session) {
	h := holding{user: s.rng.IntN(len(t.users)), market: t.markets[s.rng.IntN(len(t.markets))], side: "YES"}
	if s.rng.IntN(2) == 0 {
		h.side = "NO"
	}
	amount := 100 + s.rng.Int64N(901)
	body := `{"side":"` + h.side + `","amount_kopecks":` + strconv.FormatInt(amount, 10) + `}`
	status, resp, _ := s.do(ctx, epBuy, request{
		method: http.MethodPost, path: "/api/v1/markets/" + itoa(h.market) + "/buy",
		auth: t.users[h.user].auth, body: []byte(body),
	})
	if t.observe != nil {
		t.observe(s, status, resp)
	}
	if status != http.StatusOK {
		return
	}
	var out struct {
		Shares int64 `json:"shares"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		s.fail(epBuy, "bad_answer", err.Error())
		return
	}
	s.count(func(c *counts) { c.trades++ })
	t.add(h, out.Shares)
}

func (t *trader) sell(ctx context.Context, s *session) {
	k := s.rng.IntN(len(t.held))
	h, have := t.held[k], t.shares[k]
	shares := 1 + s.rng.Int64N(have)
	body := `{"side":"` + h.side + `","shares":` + strconv.FormatInt(shares, 10) + `}`
	status, resp, _ := s.do(ctx, epSell, request{
		method: http.MethodPost, path: "/api/v1/markets/" + itoa(h.market) + "/sell",
		auth: t.users[h.user].auth, body: []byte(body),
	})
	if t.observe != nil {
		t.observe(s, status, resp)
	}
	switch status {
	case http.StatusOK:
		s.count(func(c *counts) { c.trades++ })
		t.add(h, -shares)
	default:
		// Refused, or unknown after a transport error: forget the
		// position rather than risk selling shares the user lacks.
		t.add(h, -have)
	}
}

// add changes the shares held in h by delta, dropping it at zero.
func (t *trader) add(h holding, delta int64) {
	k, ok := t.index[h]
	if !ok {
		if delta <= 0 {
			return
		}
		t.index[h] = len(t.held)
		t.held = append(t.held, h)
		t.shares = append(t.shares, delta)
		return
	}
	t.shares[k] += delta
	if t.shares[k] > 0 {
		return
	}
	last := len(t.held) - 1
	t.held[k], t.shares[k] = t.held[last], t.shares[last]
	t.index[t.held[k]] = k
	t.held, t.shares = t.held[:last], t.shares[:last]
	delete(t.index, h)
}
