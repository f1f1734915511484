package partner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
)

func TestBadRequestsAreRefusedBeforeAnythingRuns(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	svc := partner.NewService(store, store, market.NewService(store, account.NewService(store)))
	p, _, err := svc.CreatePartner(ctx, "P")
	if err != nil {
		t.Fatal(err)
	}
	ok := partner.Bet{ExternalUserID: "u", MarketID: 1, Side: market.Yes, AmountKopecks: 100, ClientBetID: "k"}
	bets := []struct {
		name  string
		edit  func(*partner.Bet)
		field string
	}{
		{"an empty external id", func(b *partner.Bet) { b.ExternalUserID = "" }, "external_user_id"},
		{"an external id of invalid UTF-8", func(b *partner.Bet) { b.ExternalUserID = "\xff\xfe" }, "external_user_id"},
		{"an external id over 256 bytes", func(b *partner.Bet) { b.ExternalUserID = strings.Repeat("я", 129) }, "external_user_id"},
		{"an empty client_bet_id", func(b *partner.Bet) { b.ClientBetID = "" }, "client_bet_id"},
		{"a client_bet_id with a newline", func(b *partner.Bet) { b.ClientBetID = "a\nb" }, "client_bet_id"},
		{"a zero market id", func(b *partner.Bet) { b.MarketID = 0 }, "market_id"},
		{"a zero amount", func(b *partner.Bet) { b.AmountKopecks = 0 }, "amount_kopecks"},
		{"an amount over the trade limit", func(b *partner.Bet) { b.AmountKopecks = market.MaxTradeKopecks + 1 }, "amount_kopecks"},
		{"a negative max cost", func(b *partner.Bet) { b.MaxCostKopecks = -1 }, "max_cost_kopecks"},
		{"an unknown side", func(b *partner.Bet) { b.Side = 7 }, "side"},
	}
	for _, c := range bets {
		t.Run("a bet with "+c.name+" is invalid", func(t *testing.T) {
			b := ok
			c.edit(&b)
			_, err := svc.Bet(ctx, p, b)
			var inv *input.Error
			if !errors.As(err, &inv) || inv.Field != c.field || !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("err = %v, want an invalid %s", err, c.field)
			}
		})
	}
	t.Run("a sell of zero shares is invalid", func(t *testing.T) {
		_, err := svc.Sell(ctx, p, partner.Sell{ExternalUserID: "u", MarketID: 1, Side: market.No, Shares: 0, ClientBetID: "k"})
		if !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("any UTF-8 external id is accepted as opaque text", func(t *testing.T) {
		st, err := svc.State(ctx, p, "ユーザー/42?x=1&y=%20")
		if err != nil || st.Exists || st.ExternalUserID != "ユーザー/42?x=1&y=%20" {
			t.Fatalf("state = %+v, %v", st, err)
		}
	})
	t.Run("a bet on an unknown market is the market's not-found", func(t *testing.T) {
		if _, err := svc.FundFloat(ctx, p.ID, 1000); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Bet(ctx, p, ok); !errors.Is(err, market.ErrMarketNotFound) {
			t.Fatalf("err = %v", err)
		}
		if st, _ := svc.State(ctx, p, "u"); st.Exists {
			t.Fatal("a failed bet created a sub-account")
		}
	})
	t.Run("a partner name is required", func(t *testing.T) {
		if _, _, err := svc.CreatePartner(ctx, " "); !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a float funding must be positive", func(t *testing.T) {
		if _, err := svc.FundFloat(ctx, p.ID, -5); !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
}
