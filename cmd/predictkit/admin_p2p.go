package main

import (
	"context"
	"flag"
	"strings"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of P2P ads: publishing and moderating them.

// printAd prints the ad the server answered with.
func printAd(out *adminOutput, raw []byte, ad *client.P2PAd) error {
	if out.json {
		return out.rawJSON(raw)
	}
	ad, err := decoded(ad)
	if err != nil {
		return err
	}
	return out.table([]string{"ID", "USER", "TYPE", "CURRENCY", "RATE", "MIN", "MAX", "REMAINING", "METHODS", "MINUTES", "ACTIVE", "STATUS"},
		[]string{itoa(ad.ID), itoa(ad.UserID), string(ad.Type), ad.FiatCurrency, itoa(ad.ExchangeRate), itoa(ad.MinAmount), itoa(ad.MaxAmount),
			itoa(ad.RemainingAmount), strings.Join(ad.PaymentMethods, ","), itoa(ad.PaymentDuration), yesNo(ad.IsActive), string(ad.ModerationStatus)})
}

func adminCreateAd(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	user := fs.Int64("user", 0, "the owner's user id (required)")
	typ := fs.String("type", "", "buy or sell (required)")
	currency := fs.String("currency", "", "fiat currency, three letters such as RUB (required)")
	rate := fs.Int64("rate", 0, "exchange rate: kopecks of platform balance per 1 unit of the currency (required)")
	minAmount := fs.Int64("min", 0, "smallest order, kopecks (required)")
	maxAmount := fs.Int64("max", 0, "largest order, kopecks (required)")
	remaining := fs.Int64("remaining", -1, "kopecks still available (default: -max)")
	methods := fs.String("methods", "", "comma-separated payment methods, such as SBP,Sberbank (required)")
	duration := fs.Int64("duration", 0, "minutes the buyer has to pay (required)")
	instructions := fs.String("instructions", "", "payment instructions shown on the ad")
	platform := fs.Bool("platform", false, "mark the ad as the platform's own")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *user); err != nil {
			return err
		}
		var missing []string
		for _, f := range []struct {
			name string
			ok   bool
		}{{"-type", *typ != ""}, {"-currency", *currency != ""}, {"-rate", *rate != 0}, {"-min", *minAmount != 0},
			{"-max", *maxAmount != 0}, {"-methods", *methods != ""}, {"-duration", *duration != 0}} {
			if !f.ok {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return usagef("%s required", strings.Join(missing, ", "))
		}
		var ms []string
		for m := range strings.SplitSeq(*methods, ",") {
			if m = strings.TrimSpace(m); m != "" {
				ms = append(ms, m)
			}
		}
		ad := client.NewP2PAd{
			UserID: *user, Type: client.NewP2PAdType(*typ), FiatCurrency: *currency, ExchangeRate: *rate,
			MinAmount: *minAmount, MaxAmount: *maxAmount, PaymentMethods: ms,
			PaymentDuration: *duration, Instructions: instructions, IsPlatformAd: platform,
		}
		if *remaining >= 0 {
			ad.RemainingAmount = remaining
		}
		res, err := a.AdminCreateP2PAdWithResponse(ctx, ad)
		if err := a.check(res, err); err != nil {
			return err
		}
		return printAd(out, res.Body, res.JSON201)
	}
}

func adminModerateAd(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("id", 0, "the ad's id (required)")
	var active boolFlag
	fs.Var(&active, "active", "true to show the ad on the board, false to hide it")
	status := fs.String("status", "", "moderation status: pending, approved or rejected")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("id", *id); err != nil {
			return err
		}
		if active.v == nil && *status == "" {
			return usagef("give -active=true|false and/or -status pending|approved|rejected")
		}
		m := client.P2PModeration{IsActive: active.v}
		if *status != "" {
			s := client.P2PModerationModerationStatus(*status)
			m.ModerationStatus = &s
		}
		res, err := a.AdminModerateP2PAdWithResponse(ctx, *id, m)
		if err := a.check(res, err); err != nil {
			return err
		}
		return printAd(out, res.Body, res.JSON200)
	}
}
