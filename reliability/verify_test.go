package reliability

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// verdict is what the verification counted, for the log and the README.
type verdict struct {
	requests, answered, ambiguous, trades, ambiguousExecuted, replays int
}

func (v verdict) String() string {
	return fmt.Sprintf("%d requests: %d answered 200 (%d of them replays), %d without an answer or with a 5xx of which %d had executed; %d trades in the log, each asked for, each with its postings; audit ok",
		v.requests, v.answered, v.replays, v.ambiguous, v.ambiguousExecuted, v.trades)
}

// verify checks, straight in the database at databaseURL, what the load
// was told against what the trade log holds:
//
//   - every trade answered 200 is in the log, as the answer described it;
//   - every trade in the log was asked for: answered 200, or a request
//     with no answer (or a 5xx) of the same trader, market, side and
//     size; a refused request (4xx) left no trade;
//   - a partner's client_bet_id executed at most once, and every 200 for
//     it (replays included) describes that one trade;
//   - every trade has its postings (cost and fee of a buy, payout and fee
//     of a sale), and every trader's balance is its credit minus its buys
//     plus its sales;
//   - the ledger audit and the escrow audit hold.
func verify(t *testing.T, databaseURL string, fx *fixture, reqs []*sent) verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := postgres.New(ctx, databaseURL)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	defer st.Close()

	var v verdict
	v.requests = len(reqs)
	var trades []*market.Trade
	byID := map[int64]*market.Trade{}
	for _, m := range fx.markets {
		ts, err := st.Trades(ctx, m)
		if err != nil {
			t.Fatalf("verify: trades of market %d: %v", m, err)
		}
		for _, tr := range ts {
			trades = append(trades, tr)
			byID[tr.ID] = tr
		}
	}
	v.trades = len(trades)
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// Answers of users' trades.
	answered := map[int64]*sent{}
	ambiguousOf := map[int64][]*sent{} // by user
	byBet := map[string][]*sent{}
	for _, s := range reqs {
		if s.status == http.StatusOK {
			v.answered++
		}
		if s.ambiguous() {
			v.ambiguous++
		}
		if s.kind == "bet" {
			byBet[s.betID] = append(byBet[s.betID], s)
			continue
		}
		switch {
		case s.status == http.StatusOK:
			tr := byID[s.tradeID]
			if tr == nil {
				bad("trade %d was answered 200 (%s of user %d) but is not in the trade log", s.tradeID, s.kind, s.user)
				continue
			}
			if prev := answered[s.tradeID]; prev != nil {
				bad("trade %d was answered twice", s.tradeID)
			}
			answered[s.tradeID] = s
			if tr.UserID != s.user || tr.MarketID != s.market || tr.Side.String() != s.side || string(tr.Action) != s.kind ||
				tr.Shares != s.gotShares || tr.Amount != s.gotAmount {
				bad("trade %d in the log %+v is not what the answer said %+v", s.tradeID, *tr, *s)
			}
		case s.ambiguous():
			ambiguousOf[s.user] = append(ambiguousOf[s.user], s)
		}
	}
	used := map[*sent]bool{}
	for _, tr := range trades {
		if tr.ClientBetID != "" {
			continue
		}
		if answered[tr.ID] != nil {
			continue
		}
		var match *sent
		for _, s := range ambiguousOf[tr.UserID] {
			if used[s] || s.market != tr.MarketID || s.side != tr.Side.String() || s.kind != string(tr.Action) {
				continue
			}
			if (s.kind == "sell" && s.shares == tr.Shares) || (s.kind == "buy" && tr.Amount <= s.amount && tr.Amount > s.amount-budgetStep) {
				match = s
				break
			}
		}
		if match == nil {
			bad("trade %+v was never asked for (or was asked for and refused)", *tr)
			continue
		}
		used[match] = true
		v.ambiguousExecuted++
	}

	// Partner bets.
	seenBet := map[string]*market.Trade{}
	for _, tr := range trades {
		if tr.ClientBetID == "" {
			continue
		}
		if tr.PartnerID != fx.partnerID {
			bad("trade %d names partner %d", tr.ID, tr.PartnerID)
		}
		if prev := seenBet[tr.ClientBetID]; prev != nil {
			bad("client_bet_id %s executed twice: trades %d and %d", tr.ClientBetID, prev.ID, tr.ID)
		}
		seenBet[tr.ClientBetID] = tr
		ss := byBet[tr.ClientBetID]
		if len(ss) == 0 {
			bad("trade %d has client_bet_id %s, which was never sent", tr.ID, tr.ClientBetID)
			continue
		}
		mayHaveRun := false
		for _, s := range ss {
			mayHaveRun = mayHaveRun || s.status == http.StatusOK || s.ambiguous()
		}
		if !mayHaveRun {
			bad("trade %d executed client_bet_id %s, which was refused every time it was sent", tr.ID, tr.ClientBetID)
		}
		s := ss[0]
		if tr.MarketID != s.market || !strings.EqualFold(tr.Side.String(), s.side) || tr.Action != market.ActionBuy || tr.Amount > s.amount {
			bad("trade %+v is not the bet that was sent %+v", *tr, *s)
		}
		u, err := st.SubAccount(ctx, fx.partnerID, s.ext)
		if err != nil || u.ID != tr.UserID {
			bad("trade %d of client_bet_id %s is not on the sub-account of %s (%v)", tr.ID, tr.ClientBetID, s.ext, err)
		}
		if !mayHaveRun {
			continue
		}
		answeredOnce := false
		for _, s := range ss {
			if s.status != http.StatusOK {
				continue
			}
			if answeredOnce {
				v.replays++
			}
			answeredOnce = true
			if s.gotAmount != tr.Amount || s.gotShares != tr.Shares {
				bad("client_bet_id %s was answered cost %d shares %d, the trade is %d and %d", tr.ClientBetID, s.gotAmount, s.gotShares, tr.Amount, tr.Shares)
			}
		}
		if !answeredOnce {
			v.ambiguousExecuted++
		}
	}
	for id, ss := range byBet {
		for _, s := range ss {
			if s.status == http.StatusOK && seenBet[id] == nil {
				bad("client_bet_id %s was answered 200 but no trade has it", id)
				break
			}
		}
	}

	// Postings of every trade.
	type posting struct {
		reason string
		amount int64
	}
	postings := map[int64][]posting{}
	rows, err := st.DB().Query(ctx, `SELECT trade_id, reason, amount FROM postings WHERE trade_id IS NOT NULL`)
	if err != nil {
		t.Fatalf("verify: postings: %v", err)
	}
	for rows.Next() {
		var id int64
		var p posting
		if err := rows.Scan(&id, &p.reason, &p.amount); err != nil {
			t.Fatalf("verify: postings: %v", err)
		}
		postings[id] = append(postings[id], p)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("verify: postings: %v", err)
	}
	for id := range postings {
		if byID[id] == nil {
			bad("postings name trade %d, which is not in the log", id)
		}
	}
	for _, tr := range trades {
		sum := map[string]int64{}
		for _, p := range postings[tr.ID] {
			sum[p.reason] += p.amount
		}
		main := "buy"
		if tr.Action == market.ActionSell {
			main = "sell"
		}
		want := map[string]int64{main: tr.Cost, "fee": tr.Fee}
		if tr.Action == market.ActionSell {
			want[main] = tr.Amount
		}
		for reason, amount := range want {
			if sum[reason] != amount {
				bad("trade %d (%s): postings %q sum to %d, want %d (all: %v)", tr.ID, tr.Action, reason, sum[reason], amount, postings[tr.ID])
			}
		}
		if tr.Action == market.ActionBuy && tr.Cost+tr.Fee != tr.Amount {
			bad("trade %d: cost %d + fee %d != charge %d", tr.ID, tr.Cost, tr.Fee, tr.Amount)
		}
	}

	// Every trader's balance is what its trades say.
	flow := map[int64]int64{}
	for _, tr := range trades {
		if tr.Action == market.ActionBuy {
			flow[tr.UserID] -= tr.Amount
		} else {
			flow[tr.UserID] += tr.Amount
		}
	}
	for _, u := range fx.users {
		b, err := st.Balances(ctx, u.id)
		if err != nil {
			t.Fatalf("verify: balances: %v", err)
		}
		if want := fx.credit + flow[u.id]; b.Balance != want {
			bad("user %d holds %d, its credit and trades say %d", u.id, b.Balance, want)
		}
	}

	// The audits.
	acc := account.NewService(st)
	r, err := acc.Audit(ctx)
	if err != nil {
		t.Fatalf("verify: audit: %v", err)
	}
	if !r.OK {
		bad("ledger audit: %v", r.Problems)
	}
	esc, err := market.NewService(st, acc).AuditEscrows(ctx)
	if err != nil {
		t.Fatalf("verify: escrow audit: %v", err)
	}
	for _, p := range esc {
		bad("escrow audit: %s", p)
	}

	if len(problems) > 0 {
		if len(problems) > 30 {
			problems = append(problems[:30], fmt.Sprintf("… and %d more", len(problems)-30))
		}
		t.Fatalf("verify: %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return v
}

// auditOverHTTP asks the running server for its audit.
func auditOverHTTP(t *testing.T, base string) {
	t.Helper()
	var r struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	mustCall(t, http.MethodGet, base+"/api/v1/admin/audit", admin, nil, &r, http.StatusOK)
	if !r.OK {
		t.Fatalf("the server's audit: %v", r.Problems)
	}
}
