package server

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/p2p"
)

// SeedDemoP2P gives the demo users nicknames and P2P records and puts a
// few ads on the P2P board: Alice and Bob trade RUB and USD, the creator
// runs a platform ad, and one ad is inactive.
func SeedDemoP2P(ctx context.Context, accounts *account.Service, ads *p2p.Service, d *Demo) error {
	people := []struct {
		id       int64
		nickname string
		stats    p2p.UserStats
	}{
		{d.AliceID, "alice", p2p.UserStats{CompletedOrders: 57, RatingCount: 50, RatingSum: 241}},
		{d.BobID, "bob_trades", p2p.UserStats{CompletedOrders: 12, RatingCount: 10, RatingSum: 43}},
		{d.CreatorID, "predictkit_desk", p2p.UserStats{CompletedOrders: 230, RatingCount: 200, RatingSum: 990}},
	}
	for _, p := range people {
		nick := p.nickname
		if _, err := accounts.UpdateProfile(ctx, p.id, account.ProfilePatch{Nickname: &nick}); err != nil {
			return fmt.Errorf("demo nickname %s: %w", nick, err)
		}
		p.stats.UserID = p.id
		if _, err := ads.SetStats(ctx, p.stats); err != nil {
			return fmt.Errorf("demo P2P record of %s: %w", nick, err)
		}
	}
	board := []p2p.NewAd{
		{UserID: d.AliceID, Type: p2p.TypeSell, FiatCurrency: "RUB", ExchangeRate: 101, MinAmount: 50_000, MaxAmount: 2_000_000,
			PaymentMethods: []string{"SBP", "Sberbank"}, PaymentDuration: 15, Instructions: "Pay by SBP to the phone number in the order, then press Paid."},
		{UserID: d.BobID, Type: p2p.TypeSell, FiatCurrency: "RUB", ExchangeRate: 99, MinAmount: 100_000, MaxAmount: 500_000,
			PaymentMethods: []string{"Tinkoff"}, PaymentDuration: 30, Instructions: "Card transfer only; no third-party payments."},
		{UserID: d.BobID, Type: p2p.TypeBuy, FiatCurrency: "RUB", ExchangeRate: 98, MinAmount: 10_000, MaxAmount: 300_000,
			PaymentMethods: []string{"SBP", "Tinkoff"}, PaymentDuration: 20, Instructions: "I pay within 20 minutes of the order."},
		{UserID: d.AliceID, Type: p2p.TypeBuy, FiatCurrency: "USD", ExchangeRate: 9_400, MinAmount: 500_000, MaxAmount: 5_000_000,
			PaymentMethods: []string{"Wise"}, PaymentDuration: 60, Instructions: "Wise transfers from your own name."},
		{UserID: d.CreatorID, Type: p2p.TypeSell, FiatCurrency: "USD", ExchangeRate: 9_650, MinAmount: 1_000_000, MaxAmount: 50_000_000,
			PaymentMethods: []string{"Wise", "SWIFT"}, PaymentDuration: 120, Instructions: "Platform desk: SWIFT details are sent in the order.", IsPlatformAd: true},
		{UserID: d.CreatorID, Type: p2p.TypeBuy, FiatCurrency: "EUR", ExchangeRate: 10_300, MinAmount: 1_000_000, MaxAmount: 10_000_000,
			PaymentMethods: []string{"SEPA"}, PaymentDuration: 120, Instructions: "Paused until the next settlement window.", IsPlatformAd: true},
	}
	for i, n := range board {
		ad, err := ads.Create(ctx, n)
		if err != nil {
			return fmt.Errorf("demo ad %d: %w", i, err)
		}
		if i == len(board)-1 {
			inactive := false
			if _, err := ads.Moderate(ctx, ad.ID, p2p.Moderation{IsActive: &inactive}); err != nil {
				return fmt.Errorf("demo ad %d: %w", i, err)
			}
		}
	}
	return nil
}
