package p2p_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/p2p"
)

func TestParseQueryRefusesMalformedParameters(t *testing.T) {
	cases := []struct {
		name, query, field string
	}{
		{"an unknown type is refused", "type=rent", "type"},
		{"a type in upper case is refused", "type=BUY", "type"},
		{"an unknown sort_by is refused", "sort_by=price", "sort_by"},
		{"a sort_by in upper case is refused", "sort_by=RATING", "sort_by"},
		{"is_active other than true or false is refused", "is_active=yes", "is_active"},
		{"is_active=1 is refused", "is_active=1", "is_active"},
		{"is_active=True is refused", "is_active=True", "is_active"},
		{"a negative amount is refused", "amount=-1", "amount"},
		{"a fractional amount is refused", "amount=10.5", "amount"},
		{"an amount with a plus sign is refused", "amount=%2B5", "amount"},
		{"an amount in exponent form is refused", "amount=1e3", "amount"},
		{"an amount that overflows is refused", "amount=99999999999999999999", "amount"},
		{"a word for an amount is refused", "amount=lots", "amount"},
		{"a negative max_payment_duration is refused", "max_payment_duration=-15", "max_payment_duration"},
		{"a non-integer max_payment_duration is refused", "max_payment_duration=15m", "max_payment_duration"},
		{"a negative limit is refused", "limit=-1", "limit"},
		{"a non-integer limit is refused", "limit=ten", "limit"},
		{"a negative offset is refused", "offset=-5", "offset"},
		{"a non-integer offset is refused", "offset=1.0", "offset"},
		{"an offset over 2^31 is refused", "offset=2147483649", "offset"},
		{"a currency of four letters is refused", "fiat_currency=RUBL", "fiat_currency"},
		{"a currency with digits is refused", "fiat_currency=R1B", "fiat_currency"},
		{"a payment method that is not UTF-8 is refused", "payment_method=%FF", "payment_method"},
		{"a payment method with a control character is refused", "payment_method=SB%00P", "payment_method"},
		{"a nickname that is not UTF-8 is refused", "author_nickname=%C3%28", "author_nickname"},
		{"a parameter given twice is refused", "type=buy&type=sell", "type"},
		{"a limit given twice is refused", "limit=1&limit=2", "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p2p.ParseQuery(v)
			var ie *input.Error
			if !errors.As(err, &ie) || !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("got %v, want an *input.Error", err)
			}
			if ie.Field != c.field {
				t.Fatalf("the error names %q, want %q", ie.Field, c.field)
			}
		})
	}
}

func TestParseQueryReadsEveryParameter(t *testing.T) {
	cases := []struct {
		name, query string
		want        p2p.Query
	}{
		{"no parameter is the default list", "", p2p.Query{IsActive: true, Limit: 20}},
		{"empty values count as absent", "type=&amount=&is_active=&sort_by=&limit=", p2p.Query{IsActive: true, Limit: 20}},
		{"unknown parameters are ignored", "colour=red", p2p.Query{IsActive: true, Limit: 20}},
		{"every parameter is read", "type=sell&fiat_currency=usd&amount=5000&payment_method=+SBP+&max_payment_duration=30&is_active=false&author_nickname=Ann&sort_by=best_price&limit=7&offset=3",
			p2p.Query{Type: "sell", FiatCurrency: "USD", Amount: 5000, HasAmount: true, PaymentMethod: "SBP", MaxPaymentDuration: 30, HasMaxPaymentDuration: true,
				AuthorNickname: "Ann", SortBy: "best_price", Limit: 7, Offset: 3}},
		{"zero is a valid amount and duration", "amount=0&max_payment_duration=0", p2p.Query{IsActive: true, Limit: 20, HasAmount: true, HasMaxPaymentDuration: true}},
		{"limit=0 is the default limit", "limit=0", p2p.Query{IsActive: true, Limit: 20}},
		{"a limit over 100 is 100", "limit=5000", p2p.Query{IsActive: true, Limit: 100}},
		{"a huge limit is 100", "limit=9223372036854775807", p2p.Query{IsActive: true, Limit: 100}},
		{"leading zeros are fine", "offset=007", p2p.Query{IsActive: true, Limit: 20, Offset: 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p2p.ParseQuery(v)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// FuzzParseQuery: any query string is either refused with an
// *input.Error or read into a normalized query that reads back the same
// from its own parameters.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "type=buy&sort_by=best_price", "amount=1000&limit=500&offset=2", "is_active=false&author_nickname=Anna_P2P",
		"payment_method=%D0%AEMoney", "fiat_currency=rub&max_payment_duration=15", "amount=-1", "type=buy&type=sell", "limit=0", "offset=99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := p2p.ParseQuery(v)
		if err != nil {
			if !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("%q: an error that is not an *input.Error: %v", raw, err)
			}
			return
		}
		if q.Limit < 1 || q.Limit > p2p.MaxLimit || q.Offset < 0 || q.Offset > p2p.MaxOffset ||
			(q.HasAmount && q.Amount < 0) || (q.HasMaxPaymentDuration && q.MaxPaymentDuration < 0) {
			t.Fatalf("%q: out of bounds: %+v", raw, q)
		}
		switch q.Type {
		case "", p2p.TypeBuy, p2p.TypeSell:
		default:
			t.Fatalf("%q: type %q", raw, q.Type)
		}
		again, err := p2p.ParseQuery(q.Values())
		if err != nil || again != q {
			t.Fatalf("%q: %+v reads back as %+v, %v", raw, q, again, err)
		}
		if n, err := q.Normalize(); err != nil || n != q {
			t.Fatalf("%q: normalizing again changed %+v into %+v, %v", raw, q, n, err)
		}
	})
}
