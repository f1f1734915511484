package account

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

	"github.com/predictkit/predictkit/input"
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
	KindDisputeBonds Kind = "dispute_bonds"     // bonds of the disputes of one proposed resolution, until the operator decides
	KindAnte         Kind = "proposal_ante"     // an event proposal's ante, held until the operator decides; owner: the event
	// KindWithdrawalPending holds a withdrawal's amount from its request
	// until the operator pays or rejects it or the user cancels it; owner:
	// the withdrawal. The audit checks it holds exactly the amounts of
	// the pending withdrawals.
	KindWithdrawalPending Kind = "withdrawal_pending"
	// KindWithdrawals is the money paid out to one chain; owner: the
	// chain's number (wallet.Number). It only ever receives.
	KindWithdrawals Kind = "withdrawals"
	// KindDeposits is the outside world of one chain: its token deposits
	// come from here; owner: the chain's number (wallet.Number).
	KindDeposits Kind = "deposits"
	// KindReferralRewards is the platform's spending on referral rewards
	// (owner 0): each reward moves from it to the referrer's bonus
	// balance, so its balance is minus all the rewards ever paid.
	KindReferralRewards Kind = "referral_rewards"
	// KindSignupBonuses is the platform's spending on sign-up bonuses
	// (owner 0), as KindReferralRewards is on referrals.
	KindSignupBonuses Kind = "signup_bonuses"
)

// Kinds lists every account kind.
var Kinds = []Kind{KindUser, KindUserBonus, KindPartnerFloat, KindEscrow, KindFees, KindTreasury, KindExternal, KindDisputeBonds, KindAnte,
	KindWithdrawalPending, KindWithdrawals, KindDeposits, KindReferralRewards, KindSignupBonuses}

// MayGoNegative reports whether an account of kind k may hold a negative
// balance. Only the outside world (the operator's credits, and each
// chain's deposits), the platform's treasury and its promotional
// accounts may: a deposit is money the outside world handed in, a market
// subsidy is capital the treasury has put at risk, and a reward or bonus
// is money the platform spends to grow. No user, partner, escrow or fee account is
// ever below zero.
func (k Kind) MayGoNegative() bool {
	return k == KindExternal || k == KindTreasury || k == KindDeposits || k == KindReferralRewards || k == KindSignupBonuses
}

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

// DisputeBondAccount holds the bonds of the disputes of the proposed
// resolution of market id (see market.ResolutionProposal) until the operator
// decides.
func DisputeBondAccount(id int64) Ref { return Ref{KindDisputeBonds, id} }

// EscrowAccount is the escrow of market id.
func EscrowAccount(id int64) Ref { return Ref{KindEscrow, id} }

// DepositsAccount is the outside world of the chain numbered chain
// (wallet.Number): token deposits on that chain are posted from it, so
// its balance is minus what the chain's deposits brought in.
func DepositsAccount(chain int64) Ref { return Ref{KindDeposits, chain} }

// AnteAccount holds the ante of the proposal of event id while the
// operator decides on it.
func AnteAccount(eventID int64) Ref { return Ref{KindAnte, eventID} }

// WithdrawalPendingAccount holds the amount of withdrawal id while it is
// pending.
func WithdrawalPendingAccount(id int64) Ref { return Ref{KindWithdrawalPending, id} }

// WithdrawalsAccount is the money paid out to the chain numbered chain
// (wallet.Number): the platform's money that left it there.
func WithdrawalsAccount(chain int64) Ref { return Ref{KindWithdrawals, chain} }

// The platform's promotional accounts: what referral rewards and sign-up
// bonuses have cost it.
var (
	ReferralRewards = Ref{KindReferralRewards, 0}
	SignupBonuses   = Ref{KindSignupBonuses, 0}
)

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

// MaxExposure bounds how far below zero the two accounts that may go
// negative may go: the outside world (deposits and float funding come
// from it) and the treasury (market subsidies come from it), 2 × 10^18
// kopecks (2 × 10^16 RUB) each. Every other account only ever holds
// money that came from these two, and the balances sum to zero, so no
// balance, and no sum of balances, can pass 2 × MaxExposure (4 × 10^18):
// int64 (about 9.22 × 10^18) never overflows. Apply refuses a posting
// that would take either past it (ErrBalanceLimit).
const MaxExposure = 2_000_000_000_000_000_000

// Apply adds the effect of postings to balances (creating entries as it
// goes), in order. It refuses a posting that is not positive
// (ErrInvalidAmount), that would take an account that may not go negative
// below zero (ErrInsufficientFunds), that would take the treasury or the
// outside world below -MaxExposure, or any balance out of int64
// (ErrBalanceLimit). The refused posting changes nothing, but the ones
// before it stay applied: callers pass a copy.
func Apply(balances map[Ref]int64, postings []Posting) error {
	for _, p := range postings {
		if p.Amount <= 0 {
			return fmt.Errorf("account: posting %s -> %s of %d: %w", p.From, p.To, p.Amount, ErrInvalidAmount)
		}
		was := balances[p.From]
		from, ok := Sub(was, p.Amount)
		switch {
		case !ok:
			return fmt.Errorf("account: posting %s -> %s of %d: %s would leave int64: %w", p.From, p.To, p.Amount, p.From, ErrBalanceLimit)
		case from < 0 && !p.From.Kind.MayGoNegative():
			return ErrInsufficientFunds
		case from < -MaxExposure:
			return fmt.Errorf("account: posting %s -> %s of %d: %s would pass -%d: %w", p.From, p.To, p.Amount, p.From, int64(MaxExposure), ErrBalanceLimit)
		}
		balances[p.From] = from
		// After the From side, so that a posting to the same account
		// nets to nothing.
		to, ok := Add(balances[p.To], p.Amount)
		if !ok {
			balances[p.From] = was
			return fmt.Errorf("account: posting %s -> %s of %d: %s would leave int64: %w", p.From, p.To, p.Amount, p.To, ErrBalanceLimit)
		}
		balances[p.To] = to
	}
	return nil
}

// LimitAsInput turns ErrBalanceLimit, the refusal of money from outside
// (a deposit, a float funding) that would take the outside world past
// MaxExposure, into invalid input of field; other errors pass unchanged.
func LimitAsInput(field string, err error) error {
	if errors.Is(err, ErrBalanceLimit) {
		return input.Invalid(field, fmt.Sprintf("would take the platform's deposits past their bound of %d kopecks", int64(MaxExposure)))
	}
	return err
}

// Add returns a + b and whether it fits in int64.
func Add(a, b int64) (int64, bool) {
	s := a + b
	// Overflow happened iff both operands have the sign the sum lacks.
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

// Sub returns a - b and whether it fits in int64.
func Sub(a, b int64) (int64, bool) {
	d := a - b
	return d, (a >= 0) == (b >= 0) || (d >= 0) == (a >= 0)
}

// Sum is an exact sum of int64 values, in 128 bits: more terms than any
// ledger holds (2^64) cannot overflow it. The zero value is 0.
type Sum struct {
	hi int64
	lo uint64
}

// Add adds v to s.
func (s *Sum) Add(v int64) {
	lo, carry := bits.Add64(s.lo, uint64(v), 0)
	s.hi += v>>63 + int64(carry) // v's high word is its sign, 0 or -1
	s.lo = lo
}

// Int64 returns s and whether it fits in int64.
func (s Sum) Int64() (int64, bool) {
	return int64(s.lo), s.hi == int64(s.lo)>>63
}

// Sign is -1, 0 or 1.
func (s Sum) Sign() int {
	switch {
	case s.hi < 0:
		return -1
	case s.hi == 0 && s.lo == 0:
		return 0
	}
	return 1
}

// Big returns s as a big.Int.
func (s Sum) Big() *big.Int {
	b := new(big.Int).SetInt64(s.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(s.lo))
}

func (s Sum) String() string { return s.Big().String() }

// Report is the result of a ledger audit.
type Report struct {
	OK bool `json:"ok"`
	// Sum is the sum over every account's balance; always 0 when OK. A
	// sum past int64 is shown as the nearest int64, and a problem says
	// the exact figure.
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
	// PostingsSumOverflows is set when the sum of the account's postings
	// does not fit in int64 (PostingsSum is then meaningless): a store
	// reports it rather than wrapping or failing.
	PostingsSumOverflows bool
}

// Check builds a Report from every account's state: the balances sum to
// zero, equal their postings, none that may not go negative is, and
// neither the treasury nor the outside world is past -MaxExposure. It
// adds in 128 bits, so a ledger whose int64 sum would wrap to zero is not
// sound; Report.Sum is the exact sum, or the nearest int64 when it does
// not fit (a problem says the exact one).
func Check(accounts []AccountState, postings int64, now time.Time) Report {
	r := Report{OK: true, Accounts: int64(len(accounts)), Postings: postings, Problems: []string{}, CheckedAt: now}
	var sum Sum
	for _, a := range accounts {
		sum.Add(a.Balance)
		switch {
		case a.PostingsSumOverflows:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: balance %d but postings sum past int64", a.Ref, a.Balance))
		case a.Balance != a.PostingsSum:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: balance %d but postings sum to %d", a.Ref, a.Balance, a.PostingsSum))
		}
		if a.Balance < 0 && !a.Ref.Kind.MayGoNegative() {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: negative balance %d", a.Ref, a.Balance))
		}
		if a.Balance < -MaxExposure {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: balance %d past the bound of -%d", a.Ref, a.Balance, int64(MaxExposure)))
		}
	}
	v, fits := sum.Int64()
	switch {
	case fits:
		r.Sum = v
	case sum.Sign() > 0:
		r.Sum = math.MaxInt64
	default:
		r.Sum = math.MinInt64
	}
	if sum.Sign() != 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("balances sum to %s, not 0", sum))
	}
	r.OK = len(r.Problems) == 0
	return r
}
