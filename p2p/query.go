package p2p

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

// Limits on ads and queries.
const (
	MaxPaymentMethods     = 10
	MaxPaymentMethodLen   = 50 // characters
	MaxInstructionsLen    = 2000
	MaxPaymentDuration    = 24 * 60            // minutes
	MaxAmount             = 10_000_000_000_000 // kopecks
	MaxExchangeRate       = 1_000_000_000_000  // kopecks per unit
	maxNicknameQueryLen   = 100
	maxParameterValueSize = 200
)

// ParseQuery reads the list's query parameters. Every parameter is
// optional; an empty value counts as absent; parameters it does not know
// are ignored. It refuses, with an *input.Error naming the parameter: a
// parameter given more than once, an unknown type or sort_by, an is_active
// other than true or false, a number that is not a non-negative decimal
// integer (or does not fit), a fiat_currency that is not three letters,
// and text that is not UTF-8 or holds control characters. limit defaults
// to DefaultLimit (0 too) and is capped at MaxLimit; offset defaults to 0.
func ParseQuery(v url.Values) (Query, error) {
	q := DefaultQuery()
	get := func(name string) (string, error) {
		vs := v[name]
		if len(vs) > 1 {
			return "", input.Invalid(name, "is given more than once")
		}
		if len(vs) == 0 {
			return "", nil
		}
		if len(vs[0]) > maxParameterValueSize {
			return "", input.Invalid(name, "is too long")
		}
		return vs[0], nil
	}
	num := func(name string) (int64, bool, error) {
		s, err := get(name)
		if err != nil || s == "" {
			return 0, false, err
		}
		n, ok := parseNonNegative(s)
		if !ok {
			return 0, false, input.Invalid(name, "must be a non-negative integer")
		}
		return n, true, nil
	}
	var err error
	if q.Type, err = get("type"); err != nil {
		return Query{}, err
	}
	if q.FiatCurrency, err = get("fiat_currency"); err != nil {
		return Query{}, err
	}
	if q.Amount, q.HasAmount, err = num("amount"); err != nil {
		return Query{}, err
	}
	if q.PaymentMethod, err = get("payment_method"); err != nil {
		return Query{}, err
	}
	if q.MaxPaymentDuration, q.HasMaxPaymentDuration, err = num("max_payment_duration"); err != nil {
		return Query{}, err
	}
	active, err := get("is_active")
	if err != nil {
		return Query{}, err
	}
	switch active {
	case "", "true":
		q.IsActive = true
	case "false":
		q.IsActive = false
	default:
		return Query{}, input.Invalid("is_active", "must be true or false")
	}
	if q.AuthorNickname, err = get("author_nickname"); err != nil {
		return Query{}, err
	}
	if q.SortBy, err = get("sort_by"); err != nil {
		return Query{}, err
	}
	limit, hasLimit, err := num("limit")
	if err != nil {
		return Query{}, err
	}
	if hasLimit {
		q.Limit = int(min(limit, MaxLimit))
	}
	offset, _, err := num("offset")
	if err != nil {
		return Query{}, err
	}
	if offset > MaxOffset {
		return Query{}, input.Invalid("offset", "is too large")
	}
	q.Offset = int(offset)
	return q.Normalize()
}

// Normalize checks q and returns it in the form stores expect: currency
// in upper case, text trimmed, Limit 0 replaced by DefaultLimit and
// capped at MaxLimit. Errors are *input.Error.
func (q Query) Normalize() (Query, error) {
	switch q.Type {
	case "", TypeBuy, TypeSell:
	default:
		return Query{}, input.Invalid("type", "must be buy or sell")
	}
	switch q.SortBy {
	case SortNewest, SortRating, SortOrdersCount, SortBestPrice:
	default:
		return Query{}, input.Invalid("sort_by", "must be rating, orders_count or best_price")
	}
	if q.FiatCurrency != "" {
		c, ok := normalizeCurrency(q.FiatCurrency)
		if !ok {
			return Query{}, input.Invalid("fiat_currency", "must be a three-letter currency code")
		}
		q.FiatCurrency = c
	}
	if q.HasAmount && q.Amount < 0 {
		return Query{}, input.Invalid("amount", "must be a non-negative integer")
	}
	if q.HasMaxPaymentDuration && q.MaxPaymentDuration < 0 {
		return Query{}, input.Invalid("max_payment_duration", "must be a non-negative integer")
	}
	var ok bool
	if q.PaymentMethod, ok = cleanText(q.PaymentMethod, MaxPaymentMethodLen); !ok {
		return Query{}, input.Invalid("payment_method", "must be UTF-8 text of at most 50 characters")
	}
	if q.AuthorNickname, ok = cleanText(q.AuthorNickname, maxNicknameQueryLen); !ok {
		return Query{}, input.Invalid("author_nickname", "must be UTF-8 text of at most 100 characters")
	}
	switch {
	case q.Limit < 0:
		return Query{}, input.Invalid("limit", "must be a non-negative integer")
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit > MaxLimit:
		q.Limit = MaxLimit
	}
	if q.Offset < 0 || q.Offset > MaxOffset {
		return Query{}, input.Invalid("offset", "must be a non-negative integer up to 2^31")
	}
	return q, nil
}

// Values is q as query parameters, the inverse of ParseQuery for a
// normalized q (defaults are left out).
func (q Query) Values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("type", q.Type)
	set("fiat_currency", q.FiatCurrency)
	if q.HasAmount {
		v.Set("amount", strconv.FormatInt(q.Amount, 10))
	}
	set("payment_method", q.PaymentMethod)
	if q.HasMaxPaymentDuration {
		v.Set("max_payment_duration", strconv.FormatInt(q.MaxPaymentDuration, 10))
	}
	if !q.IsActive {
		v.Set("is_active", "false")
	}
	set("author_nickname", q.AuthorNickname)
	set("sort_by", q.SortBy)
	if q.Limit != DefaultLimit {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset != 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	return v
}

// NicknameKey is how the author_nickname filter compares nicknames
// (which are ASCII): ASCII letters lowered, anything else as is.
func NicknameKey(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// PaymentMethodKey is how payment methods are compared: lower case.
func PaymentMethodKey(m string) string { return strings.ToLower(m) }

// parseNonNegative reads s as a decimal integer of at most 19 digits with
// no sign: the only numbers the list accepts.
func parseNonNegative(s string) (int64, bool) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func normalizeCurrency(c string) (string, bool) {
	if len(c) != 3 {
		return "", false
	}
	for i := 0; i < 3; i++ {
		ch := c[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z') {
			return "", false
		}
	}
	return strings.ToUpper(c), true
}

// cleanText trims s and accepts it when it follows the text rule
// (input.IsText: UTF-8 without control characters) and is at most maxLen
// characters long.
func cleanText(s string, maxLen int) (string, bool) {
	s = strings.TrimSpace(s)
	if !input.IsText(s) || utf8.RuneCountInString(s) > maxLen {
		return "", false
	}
	return s, true
}
