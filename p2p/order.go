package p2p

import (
	"cmp"
	"slices"
)

// This file is the list's meaning written once as plain Go: which ads a
// query selects and in what order. The in-memory store uses it as is;
// the PostgreSQL store says the same in SQL, and the conformance suite
// checks that both agree.

// Matches reports whether ad, with its Owner filled, is in q's list.
func (q Query) Matches(ad *Ad) bool {
	switch {
	case ad.ModerationStatus != StatusApproved,
		ad.IsActive != q.IsActive,
		q.Type != "" && ad.Type != q.Type,
		q.FiatCurrency != "" && ad.FiatCurrency != q.FiatCurrency,
		q.HasAmount && (q.Amount < ad.MinAmount || q.Amount > ad.MaxAmount),
		q.HasMaxPaymentDuration && ad.PaymentDuration > q.MaxPaymentDuration,
		q.AuthorNickname != "" && (ad.Owner.Nickname == "" || NicknameKey(ad.Owner.Nickname) != NicknameKey(q.AuthorNickname)):
		return false
	}
	if q.PaymentMethod != "" {
		key := PaymentMethodKey(q.PaymentMethod)
		return slices.ContainsFunc(ad.PaymentMethods, func(m string) bool { return PaymentMethodKey(m) == key })
	}
	return true
}

// Compare orders two ads of q's list: negative when a comes first.
func (q Query) Compare(a, b *Ad) int {
	switch q.SortBy {
	case SortRating:
		if c := cmp.Compare(b.Owner.Stats.AvgRating(), a.Owner.Stats.AvgRating()); c != 0 {
			return c
		}
	case SortOrdersCount:
		if c := cmp.Compare(b.Owner.Stats.CompletedOrders, a.Owner.Stats.CompletedOrders); c != 0 {
			return c
		}
	case SortBestPrice:
		ka, kb := bestPriceKey(a), bestPriceKey(b)
		if c := cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1])); c != 0 {
			return c
		}
	default: // newest first
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	}
	return cmp.Compare(a.ID, b.ID)
}

// bestPriceKey orders sell ads by rate ascending, then buy ads by rate
// descending.
func bestPriceKey(ad *Ad) [2]int64 {
	if ad.Type == TypeSell {
		return [2]int64{0, ad.ExchangeRate}
	}
	return [2]int64{1, -ad.ExchangeRate}
}

// Select applies q to ads (each with its Owner filled): the ads it
// selects, sorted and paged. It is the reference the stores agree with.
func (q Query) Select(ads []*Ad) []*Ad {
	var out []*Ad
	for _, ad := range ads {
		if q.Matches(ad) {
			out = append(out, ad)
		}
	}
	slices.SortFunc(out, q.Compare)
	if q.Offset >= len(out) {
		return []*Ad{}
	}
	out = out[q.Offset:]
	if q.Limit >= 0 && q.Limit < len(out) {
		out = out[:q.Limit]
	}
	return out
}
