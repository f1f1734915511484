package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

// store is every store the model drives.
type store interface {
	account.Store
	market.Store
	partner.Store
}

// Sizes of a model's world.
const (
	modelUsers    = 6
	modelPartners = 2
	modelExternal = 4 // external users per partner
	// liveMarkets is how many tradable markets the model keeps: when
	// settlement leaves fewer, it creates a new event.
	liveMarkets = 4
)

// marketRef is where a logical market lives in one world.
type marketRef struct {
	event, pool, id int64
}

// world is one store with the services on it, and the mapping from the
// model's logical names (user 3, market 5) to the store's ids, which may
// differ between stores (PostgreSQL sequences skip values).
type world struct {
	name     string
	ctx      context.Context
	store    store
	accounts *account.Service
	markets  *market.Service
	partners *partner.Service

	creator  *account.User
	users    []*account.User
	partnerz []*partner.Partner
	mkts     []marketRef
	events   []int64
	// receipts are the receipts of accepted partner requests by
	// client_bet_id: a replay must give back the same one.
	receipts map[string]partner.Receipt
	making   making
}

func newWorld(t testing.TB, name string, s store) *world {
	t.Helper()
	acc := account.NewService(s)
	acc.BcryptCost = bcrypt.MinCost
	acc.SignupBonus = modelGrowth.SignupBonusKopecks
	w := &world{
		name: name, ctx: context.Background(), store: s, accounts: acc,
		markets:  market.NewService(s, acc),
		receipts: map[string]partner.Receipt{},
	}
	w.partners = partner.NewService(s, s, w.markets)
	var err error
	w.creator, _, err = acc.Register(w.ctx, account.Registration{Email: "creator@model.test", Password: "password123", Name: "Creator"})
	if err != nil {
		t.Fatalf("%s: register the creator: %v", name, err)
	}
	yes := true
	if w.creator, err = acc.SetRoles(w.ctx, w.creator.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := w.registerAll("password123"); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range modelPartners {
		p, _, err := w.partners.CreatePartner(w.ctx, fmt.Sprintf("Partner %d", i))
		if err != nil {
			t.Fatalf("%s: create partner %d: %v", name, i, err)
		}
		w.partnerz = append(w.partnerz, p)
	}
	return w
}

func externalID(e int) string { return fmt.Sprintf("ext-%d", e) }

// outcome is what one operation did, in terms both stores must agree on
// (no ids, no times).
type outcome struct {
	Err      string
	Shares   int64 // shares bought or sold (a partner's shares_delta)
	Amount   int64 // charge of a buy, payout of a sell, deposit
	Fee      int64
	Replayed bool
	// Balance and Bonus are the trader's balances after the operation, as
	// its answer tells them (users' trades and deposits).
	Balance, Bonus int64
	// Float is a partner's float after a funding.
	Float int64
}

func (o outcome) ok() bool { return o.Err == "" }

func (o outcome) String() string {
	if !o.ok() {
		return "refused: " + o.Err
	}
	s := fmt.Sprintf("ok shares=%d amount=%d fee=%d balance=%d bonus=%d float=%d", o.Shares, o.Amount, o.Fee, o.Balance, o.Bonus, o.Float)
	if o.Replayed {
		s += " replayed"
	}
	return s
}

// knownErrors are the refusals an operation may meet, by a name that
// both stores share. Anything else fails the model: a store error is
// never an acceptable answer to a valid sequence.
var knownErrors = []struct {
	name string
	err  error
}{
	{"insufficient_funds", account.ErrInsufficientFunds},
	{"user_not_found", account.ErrUserNotFound},
	{"market_not_found", market.ErrMarketNotFound},
	{"market_closed", market.ErrClosed},
	{"market_resolved", market.ErrResolved},
	{"price_moved", market.ErrPriceMoved},
	{"no_position", market.ErrNoPosition},
	{"insufficient_shares", market.ErrInsufficientShares},
	{"trade_refused", market.ErrTradeRefused},
	{"idempotency_conflict", market.ErrIdempotencyConflict},
	{"no_account", partner.ErrNoAccount},
	{"partner_not_found", partner.ErrNotFound},
	{"event_not_found", market.ErrEventNotFound},
	{"forbidden", market.ErrForbidden},
	{"not_proposed", market.ErrNotProposed},
	{"not_approved", market.ErrNotApproved},
	{"no_new_answer", market.ErrNoNewAnswer},
	{"no_proposal", market.ErrNoProposal},
	{"challenge_over", market.ErrChallengeOver},
	{"not_holder", market.ErrNotHolder},
	{"already_disputed", market.ErrAlreadyDisputed},
	{"event_resolved", market.ErrEventResolved},
}

// errName names err for the comparison of outcomes; unknown is true for
// an error that is no refusal of the domain.
func errName(err error) (name string, unknown bool) {
	var ai *input.Error
	var mi *input.Error
	var pi *input.Error
	switch {
	case errors.As(err, &ai):
		return "invalid:" + ai.Field, false
	case errors.As(err, &mi):
		return "invalid:" + mi.Field, false
	case errors.As(err, &pi):
		return "invalid:" + pi.Field, false
	}
	for _, k := range knownErrors {
		if errors.Is(err, k.err) {
			return k.name, false
		}
	}
	return "unexpected: " + err.Error(), true
}

// apply runs o in w. An error that is no refusal of the domain is
// returned as err: the model stops there.
func (w *world) apply(o op) (outcome, error) {
	var out outcome
	var err error
	ctx := w.ctx
	switch o.kind {
	case opDeposit:
		var b account.Balances
		b, err = w.accounts.Credit(ctx, w.users[o.user].ID, o.amount, o.bonus)
		out.Amount, out.Balance, out.Bonus = o.amount, b.Balance, b.Bonus
	case opBuy, opSell:
		r := market.Request{UserID: w.users[o.user].ID, Side: o.side, Amount: o.amount, Shares: o.shares, UseBonus: o.bonus}
		if o.kind == opBuy {
			r.Action, r.MaxCost = market.ActionBuy, o.guard
		} else {
			r.Action, r.MinPayout = market.ActionSell, o.guard
		}
		var res *market.Result
		res, err = w.markets.Execute(ctx, w.mkts[o.market].id, r)
		if err == nil {
			t := res.Trade
			out.Shares, out.Amount, out.Fee = t.Shares, t.Amount, t.Fee
			out.Balance, out.Bonus = res.Balances.Balance, res.Balances.Bonus
			if t.UserID != r.UserID || t.MarketID != w.mkts[o.market].id || t.Side != o.side || t.Action != r.Action {
				return out, fmt.Errorf("the trade %+v is not the one asked for", *t)
			}
		}
	case opPartnerBet, opPartnerSell:
		p := w.partnerz[o.partner]
		var rc *partner.Receipt
		if o.kind == opPartnerBet {
			rc, err = w.partners.Bet(ctx, p, partner.Bet{ExternalUserID: externalID(o.ext), MarketID: w.mkts[o.market].id,
				Side: o.side, AmountKopecks: o.amount, ClientBetID: o.betID, MaxCostKopecks: o.guard})
		} else {
			rc, err = w.partners.Sell(ctx, p, partner.Sell{ExternalUserID: externalID(o.ext), MarketID: w.mkts[o.market].id,
				Side: o.side, Shares: o.shares, ClientBetID: o.betID, MinPayoutKopecks: o.guard})
		}
		if err == nil {
			out.Replayed = rc.Replayed
			out.Shares = rc.SharesDelta
			out.Amount = rc.CostKopecks + rc.PayoutKopecks
			key := fmt.Sprintf("%d/%s", o.partner, o.betID)
			plain := *rc
			plain.Replayed = false
			if orig, seen := w.receipts[key]; seen {
				if !rc.Replayed || plain != orig {
					return out, fmt.Errorf("client_bet_id %s ran again or answered another receipt: first %+v, now %+v", o.betID, orig, *rc)
				}
			} else {
				if rc.Replayed {
					return out, fmt.Errorf("client_bet_id %s replayed a receipt that was never given: %+v", o.betID, *rc)
				}
				w.receipts[key] = plain
			}
		}
	case opFundFloat:
		out.Float, err = w.partners.FundFloat(ctx, w.partnerz[o.partner].ID, o.amount)
		out.Amount = o.amount
	case opSetActive:
		active := o.bonus
		err = w.markets.SetActive(ctx, w.ownerOf(w.events[o.event]), w.events[o.event], &active)
	case opSettle:
		m := w.mkts[o.market]
		by := market.ResolvedByCreator
		if o.operator {
			by = market.ResolvedByOperator
			err = w.markets.Resolve(ctx, m.id, o.outcome())
		} else {
			err = w.markets.Close(ctx, w.ownerOf(m.event), m.event, m.pool, m.id, o.outcome())
		}
		if err == nil && !o.operator && w.markets.Challenge > 0 {
			return out, w.checkProposed(m.id, o.outcome())
		}
		if err == nil {
			got, gerr := w.markets.Market(ctx, m.id)
			if gerr != nil {
				return out, gerr
			}
			if !got.Resolved || got.Outcome() != o.outcome() || got.ResolvedBy != by || got.ResolvedAt == nil {
				return out, fmt.Errorf("%s resolved market %d as %q by %q", o, o.market, got.Outcome(), got.ResolvedBy)
			}
		}
	case opNewEvent:
		err = w.newEvent(o.newMarkets, o.window)
	case opGrowth:
		out, err = w.applyGrowth(o)
	case opMoveFinish:
		m := w.mkts[o.market]
		var p *market.Pool
		if o.bonus {
			p, err = w.markets.OperatorMoveFinish(ctx, m.pool, o.at)
		} else {
			p, err = w.markets.MoveFinish(ctx, w.ownerOf(m.event), m.pool, o.at)
		}
		if err == nil && (p.ID != m.pool || !p.FinishAt.Equal(o.at)) {
			return out, fmt.Errorf("the move answered pool %d finishing at %v", p.ID, p.FinishAt)
		}
	default:
		out, err = w.applyMaking(o)
	}
	if err != nil {
		name, unknown := errName(err)
		if unknown {
			return outcome{}, err
		}
		return outcome{Err: name}, nil
	}
	return out, nil
}

// newEvent creates an active event with one pool of the given markets,
// trading in window win.
func (w *world) newEvent(ms []newMarket, win window) error {
	ev, err := w.markets.CreateEvent(w.ctx, w.creator, newEventSpec(fmt.Sprintf("Event %d", len(w.events)), ms, win))
	if err != nil {
		return err
	}
	yes := true
	if err := w.markets.SetActive(w.ctx, w.creator.ID, ev.ID, &yes); err != nil {
		return err
	}
	w.events = append(w.events, ev.ID)
	for _, m := range ev.Pools[0].Markets {
		w.mkts = append(w.mkts, marketRef{event: ev.ID, pool: ev.Pools[0].ID, id: m.ID})
	}
	return nil
}

// audit runs the operator's audit: the ledger and every escrow.
func (w *world) audit() error {
	r, err := w.accounts.Audit(w.ctx)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	problems := slices.Clone(r.Problems)
	esc, err := w.markets.AuditEscrows(w.ctx)
	if err != nil {
		return fmt.Errorf("escrow audit: %w", err)
	}
	problems = append(problems, esc...)
	if len(problems) > 0 {
		return fmt.Errorf("audit failed: %s", strings.Join(problems, "; "))
	}
	return nil
}

// holderBalance is the balance of a user (partner < 0) or of a partner's
// sub-account (0 if it does not exist).
func (w *world) holderBalance(h holder) (account.Balances, error) {
	if h.partner < 0 {
		return w.accounts.Balances(w.ctx, w.users[h.user].ID)
	}
	u, err := w.store.SubAccount(w.ctx, w.partnerz[h.partner].ID, externalID(h.user))
	if errors.Is(err, partner.ErrNoAccount) {
		return account.Balances{}, nil
	}
	if err != nil {
		return account.Balances{}, err
	}
	return w.accounts.Balances(w.ctx, u.ID)
}

// ledger is every account's balance by its logical name ("user 3",
// "escrow of market 5", "float of partner 1"): what two worlds compare.
func (w *world) ledger() (map[string]int64, error) {
	names := map[account.Ref]string{
		account.Treasury: "treasury", account.External: "external",
		account.UserAccount(w.creator.ID): "creator", account.BonusAccount(w.creator.ID): "creator's bonus",
		account.SignupBonuses: "sign-up bonuses", account.ReferralRewards: "referral rewards",
	}
	for i, u := range w.users {
		names[account.UserAccount(u.ID)] = fmt.Sprintf("user %d", i)
		names[account.BonusAccount(u.ID)] = fmt.Sprintf("user %d's bonus", i)
	}
	for i, p := range w.partnerz {
		names[account.FloatAccount(p.ID)] = fmt.Sprintf("float of partner %d", i)
		for e := range modelExternal {
			u, err := w.store.SubAccount(w.ctx, p.ID, externalID(e))
			if errors.Is(err, partner.ErrNoAccount) {
				continue
			}
			if err != nil {
				return nil, err
			}
			names[account.UserAccount(u.ID)] = fmt.Sprintf("sub-account %d of partner %d", e, i)
			names[account.BonusAccount(u.ID)] = fmt.Sprintf("bonus of sub-account %d of partner %d", e, i)
		}
	}
	for i, m := range w.mkts {
		names[account.EscrowAccount(m.id)] = fmt.Sprintf("escrow of market %d", i)
		names[account.FeeAccount(m.id)] = fmt.Sprintf("fees of market %d", i)
	}
	w.makingNames(names)
	states, _, err := w.store.LedgerState(w.ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, st := range states {
		name, ok := names[st.Ref]
		if !ok {
			return nil, fmt.Errorf("ledger account %s belongs to nothing the model made (balance %d)", st.Ref, st.Balance)
		}
		out[name] = st.Balance
	}
	return out, nil
}

// diffLedgers lists the accounts whose balances differ, sorted; an
// account missing on one side counts as 0 there.
func diffLedgers(a, b map[string]int64, an, bn string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %s %d, %s %d", k, an, v, bn, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && v != 0 {
			out = append(out, fmt.Sprintf("%s: %s 0, %s %d", k, an, bn, v))
		}
	}
	sort.Strings(out)
	return out
}
