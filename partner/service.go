package partner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// Limits on what a partner sends.
const (
	MaxExternalIDLen  = 256 // bytes of UTF-8
	MaxClientBetIDLen = 128
	MaxNameLen        = 100
	// KeyPrefix starts every partner key, so that a key pasted in the
	// wrong place is recognisable.
	KeyPrefix = "pk_"
)

// Service is the partner use cases. It is safe for concurrent use.
type Service struct {
	store   Store
	ledger  Ledger
	markets Markets
	// Now is the clock, in microseconds (what every store keeps); tests
	// replace it.
	Now func() time.Time

	keys keyCache
}

// NewService returns a Service. A single storage value usually serves as
// store and ledger (storage/memory and storage/postgres do); markets is
// the market service, through which every partner trade runs.
func NewService(store Store, ledger Ledger, markets Markets) *Service {
	return &Service{store: store, ledger: ledger, markets: markets, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// CreatePartner registers a partner and returns it with its key. The key is
// shown this once: only its hash is stored.
func (s *Service) CreatePartner(ctx context.Context, name string) (*Partner, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLen {
		return nil, "", input.Invalid("name", fmt.Sprintf("must be 1 to %d characters", MaxNameLen))
	}
	if err := input.Text("name", name); err != nil {
		return nil, "", err
	}
	key := KeyPrefix + account.NewSecret()
	p := &Partner{Name: name}
	if err := s.store.CreatePartner(ctx, p, account.HashToken(key)); err != nil {
		return nil, "", err
	}
	return p, key, nil
}

// Authenticate returns the partner a key belongs to. ErrUnauthorized for a
// missing or unknown key, ErrDisabled for a disabled partner.
func (s *Service) Authenticate(ctx context.Context, key string) (*Partner, error) {
	if key == "" || len(key) > 128 {
		return nil, ErrUnauthorized
	}
	hash := [32]byte(account.HashToken(key))
	p, epoch := s.keys.get(hash, s.Now())
	if p == nil {
		var err error
		if p, err = s.store.PartnerByKey(ctx, hash[:]); err != nil {
			return nil, err
		}
		s.keys.put(hash, p, s.Now(), epoch)
	}
	if p.KeyExpiresAt != nil && !s.Now().Before(*p.KeyExpiresAt) {
		return nil, ErrUnauthorized
	}
	if p.Disabled {
		return nil, ErrDisabled
	}
	return p, nil
}

// CacheKeys lets Authenticate answer from memory, for up to ttl after it
// read a partner from the store, instead of asking the store on every
// request; ttl ≤ 0 turns the cache off and empties it. It is off in a new
// Service.
//
// SetDisabled on s takes effect at once. A change made anywhere else
// (another process on the same database, SQL by hand) reaches s only
// through Invalidate; without that, a disabled partner still trades here
// for up to ttl. The server caches partners only while its store announces
// every change (storage/postgres's WatchAuth).
func (s *Service) CacheKeys(ttl time.Duration) { s.keys.set(ttl) }

// Invalidate drops the cached partner id, whose record changed elsewhere;
// id 0 drops every partner (changes may have been missed).
func (s *Service) Invalidate(id int64) { s.keys.invalidate(id) }

// Partner returns partner id. ErrNotFound.
func (s *Service) Partner(ctx context.Context, id int64) (*Partner, error) {
	return s.store.Partner(ctx, id)
}

// Bounds of a rotation's grace period.
const (
	DefaultKeyGrace = 24 * time.Hour
	MaxKeyGrace     = 30 * 24 * time.Hour
)

// RotateKey gives partner id a new key and returns it (shown this once).
// The old key keeps working for grace (0 ends it at once; at most
// MaxKeyGrace), so that the partner can deploy the new one without a
// gap. A key replaced by an earlier rotation stops working at once: a
// partner has at most two keys. ErrNotFound, *input.Error.
func (s *Service) RotateKey(ctx context.Context, id int64, grace time.Duration) (string, error) {
	if grace < 0 || grace > MaxKeyGrace {
		return "", input.Invalid("grace_seconds", fmt.Sprintf("must be 0 to %d", int64(MaxKeyGrace/time.Second)))
	}
	key := KeyPrefix + account.NewSecret()
	var until time.Time
	if grace > 0 {
		until = s.Now().Add(grace)
	}
	err := s.store.RotatePartnerKey(ctx, id, account.HashToken(key), until)
	s.keys.invalidate(id)
	if err != nil {
		return "", err
	}
	return key, nil
}

// SetDisabled disables or re-enables partner id. ErrNotFound.
func (s *Service) SetDisabled(ctx context.Context, id int64, disabled bool) error {
	err := s.store.SetPartnerDisabled(ctx, id, disabled)
	s.keys.invalidate(id)
	return err
}

// FundFloat moves amount kopecks from outside into partner id's float and
// returns the float's new balance. ErrNotFound, *input.Error.
func (s *Service) FundFloat(ctx context.Context, id, amount int64) (int64, error) {
	if err := input.InRange("amount_kopecks", amount, 1, account.MaxCredit); err != nil {
		return 0, err
	}
	if _, err := s.store.Partner(ctx, id); err != nil {
		return 0, err
	}
	ref := account.FloatAccount(id)
	if err := s.ledger.Transfer(ctx, []account.Posting{{From: account.External, To: ref, Amount: amount, Reason: "float", At: s.Now()}}); err != nil {
		return 0, account.LimitAsInput("amount_kopecks", err)
	}
	return s.ledger.Balance(ctx, ref)
}

// Float returns partner id's float balance.
func (s *Service) Float(ctx context.Context, id int64) (int64, error) {
	return s.ledger.Balance(ctx, account.FloatAccount(id))
}

// Bet buys for partner p's user. The sub-account is created if this is
// its first bet; what its balance lacks is paid from p's float. A repeat
// of an executed ClientBetID with the same parameters returns the original
// receipt (Replayed set) and runs nothing.
//
// Errors: *input.Error; ErrIdempotencyConflict; and the market's
// refusals: market.ErrMarketNotFound, market.ErrClosed,
// market.ErrPriceMoved, market.ErrTradeRefused,
// account.ErrInsufficientFunds (float and sub-account together too poor).
func (s *Service) Bet(ctx context.Context, p *Partner, b Bet) (*Receipt, error) {
	if err := checkIDs(b.ExternalUserID, b.ClientBetID, b.MarketID); err != nil {
		return nil, err
	}
	r := market.Request{
		Side: b.Side, Action: market.ActionBuy, Amount: b.AmountKopecks, MaxCost: b.MaxCostKopecks,
		Partner: &market.PartnerOrder{
			Key:        market.Key{PartnerID: p.ID, ClientBetID: b.ClientBetID},
			Digest:     digest("bet", b.ExternalUserID, b.MarketID, int64(b.Side), b.AmountKopecks, b.MaxCostKopecks),
			ExternalID: b.ExternalUserID, TopUp: true,
		},
	}
	return s.run(ctx, b.MarketID, r)
}

// Sell sells shares for partner p's user; the payout stays on the
// sub-account. Repeats behave as for Bet.
//
// Errors: *input.Error; ErrIdempotencyConflict; ErrNoAccount (no
// sub-account, or no shares on that market and side);
// market.ErrInsufficientShares; market.ErrMarketNotFound,
// market.ErrClosed, market.ErrPriceMoved, market.ErrTradeRefused.
func (s *Service) Sell(ctx context.Context, p *Partner, sl Sell) (*Receipt, error) {
	if err := checkIDs(sl.ExternalUserID, sl.ClientBetID, sl.MarketID); err != nil {
		return nil, err
	}
	r := market.Request{
		Side: sl.Side, Action: market.ActionSell, Shares: sl.Shares, MinPayout: sl.MinPayoutKopecks,
		Partner: &market.PartnerOrder{
			Key:        market.Key{PartnerID: p.ID, ClientBetID: sl.ClientBetID},
			Digest:     digest("sell", sl.ExternalUserID, sl.MarketID, int64(sl.Side), sl.Shares, sl.MinPayoutKopecks),
			ExternalID: sl.ExternalUserID,
		},
	}
	return s.run(ctx, sl.MarketID, r)
}

// run executes r through the market service, the one door of every trade
// (which also makes it run once per idempotency key), and turns its result
// into a receipt.
func (s *Service) run(ctx context.Context, marketID int64, r market.Request) (*Receipt, error) {
	res, err := s.markets.Execute(ctx, marketID, r)
	if errors.Is(err, market.ErrNoPosition) {
		return nil, ErrNoAccount
	}
	if err != nil {
		return nil, err
	}
	return receipt(res.Trade, r.Partner.ExternalID, res.Replayed), nil
}

func receipt(t *market.Trade, externalID string, replayed bool) *Receipt {
	rc := &Receipt{
		ClientBetID: t.ClientBetID, ExternalUserID: externalID, UserID: t.UserID, MarketID: t.MarketID,
		Direction: string(t.Action) + "_" + strings.ToLower(t.Side.String()), TradeID: t.ID, Replayed: replayed,
	}
	if t.Action == market.ActionBuy {
		rc.CostKopecks, rc.SharesDelta = t.Amount, t.Shares
	} else {
		rc.PayoutKopecks, rc.SharesDelta = t.Amount, -t.Shares
	}
	return rc
}

// digest fingerprints a request so that a repeat can be told from a reuse
// of its key with other parameters.
func digest(kind, externalID string, nums ...int64) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d:%s", kind, len(externalID), externalID)
	for _, n := range nums {
		fmt.Fprintf(h, "\x00%d", n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func checkIDs(externalID, clientBetID string, marketID int64) error {
	if err := checkExternalID(externalID); err != nil {
		return err
	}
	if clientBetID == "" || len(clientBetID) > MaxClientBetIDLen || !input.IsText(clientBetID) {
		return input.Invalid("client_bet_id", fmt.Sprintf("must be 1 to %d printable characters", MaxClientBetIDLen))
	}
	return input.InRange("market_id", marketID, 1, math.MaxInt64)
}

// checkExternalID accepts any non-empty text of bounded length that
// follows the text rule (input.Text: UTF-8, no control characters): the
// id is the partner's, opaque to us.
func checkExternalID(id string) error {
	if id == "" || len(id) > MaxExternalIDLen || !utf8.ValidString(id) {
		return input.Invalid("external_user_id", fmt.Sprintf("must be 1 to %d bytes of UTF-8", MaxExternalIDLen))
	}
	return input.Text("external_user_id", id)
}

// State returns partner p's view of its user's sub-account: Exists false
// (and zeros) when the user has never bet.
func (s *Service) State(ctx context.Context, p *Partner, externalID string) (*State, error) {
	if err := checkExternalID(externalID); err != nil {
		return nil, err
	}
	st := &State{ExternalUserID: externalID, Positions: []Position{}}
	u, err := s.store.SubAccount(ctx, p.ID, externalID)
	if errors.Is(err, ErrNoAccount) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	st.Exists, st.UserID = true, u.ID
	b, err := s.ledger.Balances(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	st.BalanceKopecks = b.Balance
	ps, err := s.markets.OpenPositions(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	for _, op := range ps {
		st.Positions = append(st.Positions, Position{MarketID: op.MarketID, Side: op.Side, Shares: op.Shares, AvgPriceBps: op.AvgPriceBps(), ValueKopecks: op.Value})
		st.OpenPositionsKopecks += op.Value
	}
	return st, nil
}

// Partners returns every partner, by id (oldest first). Partners are few
// (an operator creates each), so the list is not paged.
func (s *Service) Partners(ctx context.Context) ([]*Partner, error) {
	return s.store.Partners(ctx)
}
