package account

import (
	"fmt"
	"time"
)

// Kind is the kind of a ledger account.
type Kind string

// The ledger's account kinds. Platform accounts (fees, treasury, external)
// have owner 0; the others are owned by a user, a partner or a market.
const (
	KindUser         Kind = "user"              // a user's withdrawable balance
	KindUserBonus    Kind = "user_bonus"        // a user's bonus balance, spendable on bets only
	KindPartnerFloat Kind = "partner_float"     // a partner's prepaid float, funds its users' bets
	KindEscrow       Kind = "market_escrow"     // a market's money: subsidy plus net trading cash
	KindFees         Kind = "platform_fees"     // margin collected on trades, one account per market
	KindTreasury     Kind = "platform_treasury" // the platform's capital; funds market subsidies
	KindExternal     Kind = "external"          // the outside world: deposits come from here
)

// Kinds lists every account kind.
var Kinds = []Kind{KindUser, KindUserBonus, KindPartnerFloat, KindEscrow, KindFees, KindTreasury, KindExternal}

// MayGoNegative reports whether an account of kind k may hold a negative
// balance. Only the outside world and the platform's treasury may: a
// deposit is money the outside world handed in, and a market subsidy is
// capital the treasury has put at risk. No user, partner, escrow or fee
// account is ever below zero.
func (k Kind) MayGoNegative() bool { return k == KindExternal || k == KindTreasury }

// Ref names one ledger account.
type Ref struct {
	Kind  Kind
	Owner int64
}

func (r Ref) String() string { return fmt.Sprintf("%s:%d", r.Kind, r.Owner) }

// The platform's singleton accounts.
var (
	Treasury = Ref{KindTreasury, 0}
	External = Ref{KindExternal, 0}
)

// FeeAccount is where the margin of market id's trades accrues. Fees are
// kept per market, not in one platform account, so that trades on
// different markets never wait for the same ledger row; the platform's
// fee income is the sum over KindFees accounts.
func FeeAccount(marketID int64) Ref { return Ref{KindFees, marketID} }

// UserAccount is the withdrawable balance of user id.
func UserAccount(id int64) Ref { return Ref{KindUser, id} }

// BonusAccount is the bonus balance of user id.
func BonusAccount(id int64) Ref { return Ref{KindUserBonus, id} }

// FloatAccount is the float of partner id.
func FloatAccount(id int64) Ref { return Ref{KindPartnerFloat, id} }

// EscrowAccount is the escrow of market id.
func EscrowAccount(id int64) Ref { return Ref{KindEscrow, id} }

// Posting moves Amount kopecks from one account to another. Amount is
// always positive; the direction is in From and To.
type Posting struct {
	From, To Ref
	Amount   int64
	// Reason says what caused the movement: "deposit", "buy", "fee",
	// "sell", "payout", "subsidy", "settlement_leftover", "float", "topup".
	Reason string
	// TradeID links the posting to the trade that caused it, when one did.
	TradeID int64
	At      time.Time
}

// Apply adds the effect of postings to balances (creating entries as it
// goes) and reports ErrInsufficientFunds if any account that may not go
// negative would. balances is changed even on error; callers pass a copy.
func Apply(balances map[Ref]int64, postings []Posting) error {
	for _, p := range postings {
		if p.Amount <= 0 {
			return fmt.Errorf("account: posting %s -> %s of %d: %w", p.From, p.To, p.Amount, ErrInvalidAmount)
		}
		balances[p.From] -= p.Amount
		balances[p.To] += p.Amount
		if balances[p.From] < 0 && !p.From.Kind.MayGoNegative() {
			return ErrInsufficientFunds
		}
	}
	return nil
}

// Report is the result of a ledger audit.
type Report struct {
	OK bool `json:"ok"`
	// Sum is the sum over every account's balance; always 0 when OK.
	Sum int64 `json:"sum"`
	// Accounts is how many ledger accounts there are; Postings how many
	// postings.
	Accounts int64 `json:"accounts"`
	Postings int64 `json:"postings"`
	// Problems lists every violation found, empty when OK.
	Problems []string `json:"problems"`
	// CheckedAt is when the audit ran.
	CheckedAt time.Time `json:"checked_at"`
}

// AccountState is one account as the audit sees it: its cached balance and
// the sum of its postings.
type AccountState struct {
	Ref         Ref
	Balance     int64
	PostingsSum int64
}

// Check builds a Report from every account's state: the balances sum to
// zero, equal their postings, and none that may not go negative is.
func Check(accounts []AccountState, postings int64, now time.Time) Report {
	r := Report{OK: true, Accounts: int64(len(accounts)), Postings: postings, Problems: []string{}, CheckedAt: now}
	for _, a := range accounts {
		r.Sum += a.Balance
		if a.Balance != a.PostingsSum {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: balance %d but postings sum to %d", a.Ref, a.Balance, a.PostingsSum))
		}
		if a.Balance < 0 && !a.Ref.Kind.MayGoNegative() {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: negative balance %d", a.Ref, a.Balance))
		}
	}
	if r.Sum != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("balances sum to %d, not 0", r.Sum))
	}
	r.OK = len(r.Problems) == 0
	return r
}
