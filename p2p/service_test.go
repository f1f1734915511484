package p2p_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/storage/memory"
)

func TestCreateChecksTheAd(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	u := &account.User{Name: "Trader", Email: "t@example.com", Language: "en"}
	if err := store.CreateUser(ctx, u, "x"); err != nil {
		t.Fatal(err)
	}
	svc := p2p.NewService(store)
	valid := func() p2p.NewAd {
		return p2p.NewAd{UserID: u.ID, Type: "sell", FiatCurrency: "RUB", ExchangeRate: 100, MinAmount: 1000, MaxAmount: 5000,
			PaymentMethods: []string{"SBP"}, PaymentDuration: 15, Instructions: "Pay by SBP."}
	}
	neg := int64(-1)
	cases := []struct {
		name  string
		edit  func(*p2p.NewAd)
		field string
	}{
		{"an unknown type is refused", func(n *p2p.NewAd) { n.Type = "swap" }, "type"},
		{"a currency that is not three letters is refused", func(n *p2p.NewAd) { n.FiatCurrency = "RU" }, "fiat_currency"},
		{"a zero exchange rate is refused", func(n *p2p.NewAd) { n.ExchangeRate = 0 }, "exchange_rate"},
		{"a zero min_amount is refused", func(n *p2p.NewAd) { n.MinAmount = 0 }, "min_amount"},
		{"max_amount under min_amount is refused", func(n *p2p.NewAd) { n.MaxAmount = 999 }, "max_amount"},
		{"a negative remaining_amount is refused", func(n *p2p.NewAd) { n.RemainingAmount = &neg }, "remaining_amount"},
		{"no payment method is refused", func(n *p2p.NewAd) { n.PaymentMethods = nil }, "payment_methods"},
		{"an empty payment method is refused", func(n *p2p.NewAd) { n.PaymentMethods = []string{" "} }, "payment_methods"},
		{"a payment method twice, in any case, is refused", func(n *p2p.NewAd) { n.PaymentMethods = []string{"SBP", "sbp"} }, "payment_methods"},
		{"eleven payment methods are refused", func(n *p2p.NewAd) { n.PaymentMethods = strings.Split("a b c d e f g h i j k", " ") }, "payment_methods"},
		{"a zero payment duration is refused", func(n *p2p.NewAd) { n.PaymentDuration = 0 }, "payment_duration"},
		{"a payment duration over a day is refused", func(n *p2p.NewAd) { n.PaymentDuration = 24*60 + 1 }, "payment_duration"},
		{"instructions with a NUL are refused", func(n *p2p.NewAd) { n.Instructions = "a\x00b" }, "instructions"},
		{"instructions over 2000 characters are refused", func(n *p2p.NewAd) { n.Instructions = strings.Repeat("я", 2001) }, "instructions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := valid()
			c.edit(&n)
			_, err := svc.Create(ctx, n)
			var ie *input.Error
			if !errors.As(err, &ie) || ie.Field != c.field {
				t.Fatalf("got %v, want an invalid %s", err, c.field)
			}
		})
	}
	t.Run("a valid ad is approved, active, and its remaining amount defaults to max_amount", func(t *testing.T) {
		ad, err := svc.Create(ctx, valid())
		if err != nil {
			t.Fatal(err)
		}
		if !ad.IsActive || ad.ModerationStatus != p2p.StatusApproved || ad.RemainingAmount != 5000 || ad.Owner.Name != "Trader" {
			t.Fatalf("ad = %+v", ad)
		}
	})
	t.Run("an ad of an unknown user is refused", func(t *testing.T) {
		n := valid()
		n.UserID = 424242
		if _, err := svc.Create(ctx, n); !errors.Is(err, p2p.ErrUserNotFound) {
			t.Fatalf("got %v", err)
		}
	})
}
