package server

// Fuzz targets for every JSON request body the server reads. Each one
// checks that no input panics, that every refusal is a request error (a
// 400 with a detail, never a 500), that what is accepted obeys the
// body's bounds (amounts positive integers within their limits, required
// fields present), and that an accepted body, written back as JSON, is
// accepted again as the same value.
//
// Plain `go test` runs the seeds below and the corpora in
// testdata/fuzz/<FuzzName>/; fuzz one longer with e.g.
//
//	go test -run '^$' -fuzz '^FuzzBuyBody$' -fuzztime 1m ./server/

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
	"golang.org/x/crypto/bcrypt"
)

// fuzzBody fuzzes decoding into T with decode (decodeStrict, or
// decodeObject for the partner API); check looks at an accepted value.
func fuzzBody[T any](f *testing.F, decode func([]byte, any) error, check func(t *testing.T, v *T), seeds ...string) {
	f.Helper()
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v T
		if err := decode(in, &v); err != nil {
			var re *requestError
			if !errors.Is(err, errBadRequest) || !errors.As(err, &re) || re.detail == "" {
				t.Fatalf("%q is refused with %v, not a request error naming a field", in, err)
			}
			return
		}
		if check != nil {
			check(t, &v)
		}
		out, err := json.Marshal(&v)
		if err != nil {
			t.Fatalf("%q was accepted as %+v, which does not encode: %v", in, v, err)
		}
		var again T
		if err := decode(out, &again); err != nil {
			t.Fatalf("%q was accepted as %s, which is refused: %v", in, out, err)
		}
		if out2, _ := json.Marshal(&again); !bytes.Equal(out, out2) {
			t.Fatalf("%q was accepted as %s, which reads back as %s", in, out, out2)
		}
	})
}

// inRange fails t unless lo <= n <= hi.
func inRange(t *testing.T, field string, n, lo, hi int64) {
	t.Helper()
	if n < lo || n > hi {
		t.Fatalf("%s %d was accepted, outside %d..%d", field, n, lo, hi)
	}
}

// Largest amounts the domains accept: the bodies check only their shape,
// and the services the bounds.
const (
	maxTradeAmount  = market.MaxTradeKopecks
	maxCreditAmount = account.MaxCredit
)

// services are a memory store's services, for the fuzz targets whose
// bounds the services check: an accepted body must carry values in range
// once the service has accepted it too.
type services struct {
	ctx      context.Context
	accounts *account.Service
	partners *partner.Service
	user     *account.User
	partner  *partner.Partner
}

func newServices(f *testing.F) *services {
	f.Helper()
	store := memory.New()
	s := &services{ctx: context.Background(), accounts: account.NewService(store)}
	s.accounts.BcryptCost = bcrypt.MinCost
	s.partners = partner.NewService(store, store, market.NewService(store, s.accounts))
	var err error
	if s.user, _, err = s.accounts.Register(s.ctx, account.Registration{Email: "fuzz@example.com", Password: "password123", Name: "Fuzz"}); err != nil {
		f.Fatal(err)
	}
	if s.partner, _, err = s.partners.CreatePartner(s.ctx, "Fuzz"); err != nil {
		f.Fatal(err)
	}
	return s
}

// refusedInput reports whether a service refused the input as invalid
// (and so changed nothing); any other outcome means it took the values.
func refusedInput(err error) bool { return errors.Is(err, input.ErrInvalid) }

func FuzzRegisterBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *registerBody) {
		if b.Email == "" || b.Password == "" || b.Name == "" {
			t.Fatalf("a registration without a required field was accepted: %+v", b)
		}
	}, `{"email":"ann@example.com","password":"correct horse battery","name":"Ann"}`,
		`{"email":"ann@example.com","password":"p","name":"Ann","language":"ru"}`, `{"email":"","password":"","name":""}`)
}

func FuzzLoginBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *loginBody) {
		if b.Email == "" || b.Password == "" {
			t.Fatalf("a login without a required field was accepted: %+v", b)
		}
	}, `{"email":"ann@example.com","password":"correct horse battery"}`, `{"email":"a","password":"b","Email":"c"}`)
}

func FuzzProfileBody(f *testing.F) {
	fuzzBody[profileBody](f, decodeStrict, nil,
		`{"name":"Ann","nickname":"ann_1","language":"ru","theme":"dark","profile_hidden":true,"avatar_url":"https://x.example/a.png"}`, `{}`, `{"profile_hidden":null}`)
}

func FuzzEventBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *newEventBody) {
		if b.Pools == nil {
			t.Fatal("an event without pools was accepted")
		}
		for _, p := range b.Pools {
			if p.Margin == nil || p.LMSRBKopecks == nil || p.Markets == nil {
				t.Fatalf("a pool without a required field was accepted: %+v", p)
			}
			for _, m := range p.Markets {
				if m.Probability == nil {
					t.Fatal("a market without a probability was accepted")
				}
			}
		}
		_ = b.toDomain()
	}, `{"name":"Rain","pools":[{"name":"Rain","margin":0.02,"lmsr_b_kopecks":100000,"markets":[{"name":"Friday","probability":0.4}]}]}`,
		`{"name":"e","name_ru":"е","pools":[{"name":"p","margin":0,"lmsr_b_kopecks":1,"live_at":"2026-01-01T00:00:00+03:00","finish_at":"2026-02-01T00:00:00Z","markets":[{"name":"m","probability":1e-300,"yes_name":"Y","no_name":"N"}]}]}`,
		`{"name":"e","pools":[{"margin":1e400,"lmsr_b_kopecks":1,"markets":[]}]}`, `{"name":"e","pools":[]}`)
}

func FuzzEventActiveBody(f *testing.F) {
	for _, s := range []string{`{"is_active":true}`, `{"is_active":false}`, `{"is_active":"true"}`, `{"IS_ACTIVE":true}`, `[]`, `{"is_active":true,"is_active":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		raw, ok := lenientField(in, "is_active")
		if !ok {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("%q: the field's value %q is not JSON", in, raw)
		}
	})
}

func FuzzMarketCloseBody(f *testing.F) {
	for _, s := range []string{`{"won_side":"YES"}`, `{"won_side":"NO"}`, `{"won_side":1}`, `{"won_side":null}`, `"YES"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		raw, ok := lenientField(in, "won_side")
		if !ok {
			return
		}
		var won string
		_ = json.Unmarshal(raw, &won)
		if _, ok := market.ParseSide(won); ok && !strings.EqualFold(won, "yes") && !strings.EqualFold(won, "no") {
			t.Fatalf("%q: won_side %q reads as a side", in, won)
		}
	})
}

func FuzzFinishBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *finishBody) {
		if b.FinishAt == nil {
			t.Fatal("a body without finish_at was accepted")
		}
	}, `{"finish_at":"2030-01-02T03:04:05Z"}`, `{"finish_at":"2030-01-02T03:04:05.123456789+03:00"}`, `{"finish_at":null}`,
		`{"finish_at":"tomorrow"}`, `{"finish_at":1893456000}`, `{}`, `{"finish_at":"2030-01-02T03:04:05Z","live_at":"2030-01-01T00:00:00Z"}`)
}

func FuzzBuyBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *buyBody) {
		side, err := parseSide(b.Side)
		if err != nil {
			return
		}
		if side != market.Yes && side != market.No {
			t.Fatalf("side %q reads as %v", b.Side, side)
		}
		r := market.Request{Side: side, Action: market.ActionBuy, Amount: b.AmountKopecks, UseBonus: b.UseBonus,
			MaxCost: b.MaxCostKopecks, MinShares: b.MinShares}
		if refusedInput(r.Check()) {
			return
		}
		inRange(t, "amount_kopecks", b.AmountKopecks, 1, maxTradeAmount)
		inRange(t, "max_cost_kopecks", b.MaxCostKopecks, 0, 1<<63-1)
		inRange(t, "min_shares", b.MinShares, 0, 1<<63-1)
	}, `{"side":"YES","amount_kopecks":10000}`, `{"side":"NO","amount_kopecks":1,"use_bonus":true,"max_cost_kopecks":5,"min_shares":0}`,
		`{"side":"YES","amount_kopecks":100000000000}`, `{"side":"YES","amount_kopecks":100000000001}`, `{"side":"YES","amount_kopecks":1.0}`,
		`{"side":"YES","amount_kopecks":-0}`, `{"side":"YES","amount_kopecks":1e2}`)
}

func FuzzSellBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *sellBody) {
		r := market.Request{Side: market.Yes, Action: market.ActionSell, Shares: b.Shares, MinPayout: b.MinPayoutKopecks}
		if refusedInput(r.Check()) {
			return
		}
		inRange(t, "shares", b.Shares, 1, maxTradeAmount)
		inRange(t, "min_payout_kopecks", b.MinPayoutKopecks, 0, 1<<63-1)
	}, `{"side":"YES","shares":5000}`, `{"side":"NO","shares":1,"min_payout_kopecks":0}`, `{"side":"NO","shares":0}`, `{"side":"NO","shares":-1}`)
}

func FuzzCreditBody(f *testing.F) {
	svc := newServices(f)
	fuzzBody(f, decodeStrict, func(t *testing.T, b *creditBody) {
		if _, err := svc.accounts.Credit(svc.ctx, svc.user.ID, b.AmountKopecks, b.Bonus); refusedInput(err) {
			return
		}
		inRange(t, "amount_kopecks", b.AmountKopecks, 1, maxCreditAmount)
	}, `{"amount_kopecks":100000}`, `{"amount_kopecks":250,"bonus":true}`, `{"amount_kopecks":10000000000001}`, `{"amount_kopecks":"1"}`)
}

func FuzzRolesBody(f *testing.F) {
	fuzzBody[rolesBody](f, decodeStrict, nil, `{"is_creator":true}`, `{"is_creator":false,"is_stats_viewer":true}`, `{}`)
}

func FuzzPartnerBetBody(f *testing.F) {
	svc := newServices(f)
	fuzzBody(f, decodeObject, func(t *testing.T, b *partnerBetBody) {
		if b.MarketID == nil || b.AmountKopecks == nil || b.ExternalUserID == "" || b.ClientBetID == "" {
			t.Fatalf("a bet without a required field was accepted: %+v", b)
		}
		// No market exists: the bet is refused, but only after the
		// service has checked every field.
		_, err := svc.partners.Bet(svc.ctx, svc.partner, partner.Bet{ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID,
			Side: market.Yes, AmountKopecks: *b.AmountKopecks, ClientBetID: b.ClientBetID, MaxCostKopecks: b.MaxCostKopecks})
		if refusedInput(err) {
			return
		}
		inRange(t, "market_id", *b.MarketID, 1, 1<<63-1)
		inRange(t, "amount_kopecks", *b.AmountKopecks, 1, maxTradeAmount)
		inRange(t, "max_cost_kopecks", b.MaxCostKopecks, 0, 1<<63-1)
		if side, err := parsePartnerSide(b.Side); err == nil && b.Side != "yes" && b.Side != "no" {
			t.Fatalf("side %q reads as %v", b.Side, side)
		}
	}, `{"external_user_id":"customer-42","market_id":1,"side":"yes","amount_kopecks":20000,"client_bet_id":"bet-0001"}`,
		`{"external_user_id":"u","market_id":1,"side":"no","amount_kopecks":1,"client_bet_id":"b","max_cost_kopecks":2}`, `not json`, `[1]`)
}

func FuzzPartnerSellBody(f *testing.F) {
	svc := newServices(f)
	fuzzBody(f, decodeObject, func(t *testing.T, b *partnerSellBody) {
		if b.MarketID == nil || b.Shares == nil || b.ExternalUserID == "" || b.ClientBetID == "" {
			t.Fatalf("a sell without a required field was accepted: %+v", b)
		}
		_, err := svc.partners.Sell(svc.ctx, svc.partner, partner.Sell{ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID,
			Side: market.Yes, Shares: *b.Shares, ClientBetID: b.ClientBetID, MinPayoutKopecks: b.MinPayoutKopecks})
		if refusedInput(err) {
			return
		}
		inRange(t, "market_id", *b.MarketID, 1, 1<<63-1)
		inRange(t, "shares", *b.Shares, 1, maxTradeAmount)
		inRange(t, "min_payout_kopecks", b.MinPayoutKopecks, 0, 1<<63-1)
	}, `{"external_user_id":"customer-42","market_id":1,"side":"yes","shares":16000,"client_bet_id":"sell-0001"}`,
		`{"external_user_id":"u","market_id":1,"side":"yes","shares":1,"client_bet_id":"s","min_payout_kopecks":0}`)
}

func FuzzNewPartnerBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *newPartnerBody) {
		if b.Name == "" {
			t.Fatal("a partner without a name was accepted")
		}
	}, `{"name":"Example Bookmaker"}`, `{"name":""}`)
}

func FuzzFloatBody(f *testing.F) {
	svc := newServices(f)
	fuzzBody(f, decodeStrict, func(t *testing.T, b *floatBody) {
		if _, err := svc.partners.FundFloat(svc.ctx, svc.partner.ID, b.AmountKopecks); refusedInput(err) {
			return
		}
		inRange(t, "amount_kopecks", b.AmountKopecks, 1, maxCreditAmount)
	}, `{"amount_kopecks":1000000}`, `{"amount_kopecks":0}`)
}

func FuzzPartnerPatchBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *partnerPatchBody) {
		if b.Disabled == nil {
			t.Fatal("a partner patch without disabled was accepted")
		}
	}, `{"disabled":true}`, `{"disabled":null}`)
}

func FuzzCommentBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *newCommentBody) {
		if b.Content == nil {
			t.Fatal("a comment without content was accepted")
		}
		if b.ParentID != nil {
			inRange(t, "parent_id", *b.ParentID, 1, 1<<63-1)
		}
	}, `{"content":"The forecast says 70% rain."}`, `{"content":"Which forecast?","parent_id":1}`, `{"content":"x","parent_id":0}`)
}

func FuzzReactionBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *reactionBody) {
		if r, err := social.ParseReaction(b.Reaction); err == nil {
			switch b.Reaction {
			case "like", "dislike", "none":
			default:
				t.Fatalf("reaction %q reads as %q", b.Reaction, r)
			}
		}
	}, `{"reaction":"like"}`, `{"reaction":"dislike"}`, `{"reaction":"none"}`, `{"reaction":"LIKE"}`)
}

func FuzzChatOpenBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *chatOpenBody) {
		if b.Language != "" && b.Language != "en" && b.Language != "ru" {
			t.Fatalf("language %q was accepted", b.Language)
		}
	}, `{"language":"ru"}`, `{}`, `{"language":"de"}`)
}

func FuzzChatTextBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *chatTextBody) {
		if b.Text == nil {
			t.Fatal("a message without text was accepted")
		}
	}, `{"text":"How do I withdraw?"}`, `{"text":""}`, `{"text":null}`)
}

func FuzzP2PAdBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *newP2PAdBody) {
		if b.UserID == nil || b.ExchangeRate == nil || b.MinAmount == nil || b.MaxAmount == nil || b.PaymentDuration == nil ||
			b.PaymentMethods == nil || b.Type == "" || b.FiatCurrency == "" {
			t.Fatalf("an ad without a required field was accepted: %+v", b)
		}
	}, `{"user_id":1,"type":"sell","fiat_currency":"usd","exchange_rate":9650,"min_amount":10000,"max_amount":500000,"payment_methods":["Wise"],"payment_duration":30,"instructions":"IBAN"}`,
		`{"user_id":1,"type":"buy","fiat_currency":"RUB","exchange_rate":1,"min_amount":1,"max_amount":1,"remaining_amount":1,"payment_methods":[],"payment_duration":1,"instructions":"","is_platform_ad":true}`)
}

func FuzzP2PModerationBody(f *testing.F) {
	fuzzBody[p2pModerationBody](f, decodeStrict, nil, `{"is_active":false}`, `{"moderation_status":"rejected"}`, `{}`)
}

func FuzzP2PStatsBody(f *testing.F) {
	fuzzBody(f, decodeStrict, func(t *testing.T, b *p2pStatsBody) {
		if b.CompletedOrders == nil {
			t.Fatal("stats without completed_orders were accepted")
		}
	}, `{"completed_orders":12,"rating_count":10,"rating_sum":47}`, `{"completed_orders":-1}`)
}
