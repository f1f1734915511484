package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// The partner scenario: one partner with a large float; each client bets
// for its own external users with a fresh client_bet_id per bet, and
// repeats a fifth of its accepted bets at once, as a partner does when it
// did not get an answer. A repeat must answer 200 with the original body,
// byte for byte, and Idempotent-Replayed: true; any other answer is a
// replay_mismatch error.

// duplicateShare is the fraction of accepted bets repeated at once.
const duplicateShare = 0.2

const (
	epBet = iota
	epBetRepeat
)

func preparePartner(ctx context.Context, a *api, cfg Config, fx *fixture) error {
	var p struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	if err := a.call(ctx, http.MethodPost, "/api/v1/admin/partners", a.admin,
		map[string]string{"name": "bench " + fx.runID}, &p, http.StatusCreated); err != nil {
		return err
	}
	fx.partnerKey = p.Key
	return a.call(ctx, http.MethodPost, "/api/v1/admin/partners/"+itoa(p.ID)+"/float", a.admin,
		map[string]int64{"amount_kopecks": partnerFloat}, nil, http.StatusOK)
}

func partnerPhases(fx *fixture, cfg Config) []phase {
	return []phase{{
		name:      "bet",
		share:     1,
		endpoints: []string{"POST /api/v1/partner/bet", "POST /api/v1/partner/bet (repeat)"},
		client: func(i int) step {
			b := &bettor{key: fx.partnerKey, markets: fx.markets, prefix: fmt.Sprintf("bench-%s-c%d-", fx.runID, i)}
			if cfg.Users < cfg.Clients {
				b.externals = []string{fmt.Sprintf("bench-%s-%d", fx.runID, i%cfg.Users)}
			} else {
				for j := i; j < cfg.Users; j += cfg.Clients {
					b.externals = append(b.externals, fmt.Sprintf("bench-%s-%d", fx.runID, j))
				}
			}
			return b.step
		},
	}}
}

// bettor is a partner's client: it bets for its external users.
type bettor struct {
	key       string
	markets   []int64
	externals []string
	prefix    string // of its client_bet_ids
	n         int
}

func (b *bettor) step(ctx context.Context, s *session) {
	b.n++
	side := "yes"
	if s.rng.IntN(2) == 0 {
		side = "no"
	}
	body := []byte(`{"external_user_id":"` + b.externals[s.rng.IntN(len(b.externals))] +
		`","market_id":` + itoa(b.markets[s.rng.IntN(len(b.markets))]) +
		`,"side":"` + side + `","amount_kopecks":` + strconv.FormatInt(100+s.rng.Int64N(901), 10) +
		`,"client_bet_id":"` + b.prefix + strconv.Itoa(b.n) + `"}`)
	r := request{method: http.MethodPost, path: "/api/v1/partner/bet", partnerKey: b.key, body: body}
	status, first, _ := s.do(ctx, epBet, r)
	if status != http.StatusOK {
		return
	}
	s.count(func(c *counts) { c.trades++; c.executed++ })
	if s.rng.Float64() >= duplicateShare {
		return
	}
	s.count(func(c *counts) { c.attempts++ })
	status, again, replayed := s.do(ctx, epBetRepeat, r)
	switch {
	case status == 0:
		return // a transport error, counted as such
	case status != http.StatusOK:
		// Counted under its status already; a mismatch all the same.
	case !bytes.Equal(first, again):
		s.fail(epBetRepeat, "replay_mismatch", fmt.Sprintf("the repeat answered %s, the bet %s", again, first))
	case replayed != "true":
		s.fail(epBetRepeat, "replay_mismatch", "the repeat's answer lacks Idempotent-Replayed: true")
	default:
		s.count(func(c *counts) { c.replayed++ })
		return
	}
	s.count(func(c *counts) { c.mismatched++ })
}
