package market

import (
	"context"
	"errors"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// The challenge window (docs/challenge-window.md). With
// Service.Challenge set, a creator's close does not resolve the market: it
// proposes the outcome. The market (an exclusive pool: every market of
// it) stops trading at once (Paused), holders may dispute the proposal
// until ChallengeUntil by paying a bond, and an undisputed proposal
// settles at ChallengeUntil, exactly once, by a worker that claims due
// proposals from the store (Service.SettleDue). A disputed one waits for
// the operator (Service.Resolve); the bonds come back when the
// operator's outcome differs from the proposal and go to the platform
// otherwise.

// Errors of the challenge window.
var (
	// ErrNoProposal: the market has no proposal open to disputes (none,
	// or one already settled).
	ErrNoProposal = errors.New("market: no proposed resolution to dispute")
	// ErrChallengeOver: the proposal's challenge window has closed.
	ErrChallengeOver = errors.New("market: the challenge window is over")
	// ErrNotHolder: the caller holds no open position in the proposal's
	// market (or exclusive pool).
	ErrNotHolder = errors.New("market: only a holder of an open position may dispute")
	// ErrAlreadyDisputed: the caller disputed this proposal already.
	ErrAlreadyDisputed = errors.New("market: you disputed this proposal already")
	// ErrNotResolved: a proposal cannot be finished before its market
	// resolved.
	ErrNotResolved = errors.New("market: market not resolved yet")
)

// MaxDisputeReasonLen bounds a dispute's reason, characters.
const MaxDisputeReasonLen = 2000

// DefaultDisputeBond is the bond of a dispute when none is configured,
// kopecks.
const DefaultDisputeBond = 10000

// Proposal is a creator's proposed resolution in (or past) its challenge
// window. One market has at most one; an exclusive pool has at most one,
// on the market the creator closed.
type Proposal struct {
	// MarketID is the market the creator closed; for an exclusive pool
	// the proposal covers the whole pool.
	MarketID  int64
	PoolID    int64
	EventID   int64
	Exclusive bool
	// MarketName is MarketID's name, set on reads.
	MarketName string
	// Outcome is MarketID's proposed outcome: "YES", "NO" or "VOID".
	Outcome string
	// By is the creator who proposed it.
	By             int64
	ChallengeUntil time.Time
	// Disputed is set by the first dispute: the proposal then waits for
	// the operator.
	Disputed  bool
	CreatedAt time.Time
	// Done is set once the market resolved and the bonds were returned
	// or kept (FinishProposal); Final is then MarketID's outcome.
	Done  bool
	Final string
	// Disputes are filled by DisputedProposals only.
	Disputes []Dispute
}

// Dispute is one holder's challenge of a proposal, with its bond.
type Dispute struct {
	// MarketID is the proposal's (Proposal.MarketID).
	MarketID  int64
	UserID    int64
	Reason    string
	Bond      int64
	CreatedAt time.Time
}

// OutcomeFor is how p proposes to resolve market m (of p's market or
// pool): the outcome of the market closed, or for another market of an
// exclusive pool NO (another won) or VOID.
func (p *Proposal) OutcomeFor(m *Market) string {
	if m.ID == p.MarketID || p.Outcome == OutcomeVoid {
		return p.Outcome
	}
	return No.String()
}

// DisputeCheck is what a store learns under its lock before a dispute:
// the proposal (nil when none covers the market), whether the user holds
// an open position in its market or pool, and whether the user disputed
// it already.
type DisputeCheck struct {
	Proposal *Proposal
	// Claimed: a worker has claimed the proposal to settle it, so its
	// window is over whatever the clocks say.
	Claimed bool
	Holder  bool
	Repeat  bool
}

// ProposalStore is what the challenge window needs from storage; both
// stores implement it (storage/storagetest checks the rules).
type ProposalStore interface {
	// Propose records p, in one transaction: it locks p.MarketID's
	// market, or every market of its exclusive pool in ascending id
	// order (ErrMarketNotFound), and fails with ErrResolved, writing
	// nothing, if one is resolved or a proposal covers it already.
	// Otherwise it pauses the markets, writes p (setting PoolID,
	// EventID, Exclusive and CreatedAt) and the notifications notes
	// returns for the holders of open positions in them (ascending user
	// id, each once).
	Propose(ctx context.Context, p *Proposal, notes func(p *Proposal, holders []int64) []social.Notification) error
	// ProposalOf returns the proposal that covers market id (its own or
	// its exclusive pool's), done or not; nil and no error when none.
	ProposalOf(ctx context.Context, marketID int64) (*Proposal, error)
	// AddDispute records d against the proposal that covers market
	// d.MarketID, in one transaction: it locks the proposal, calls check
	// (whose error it returns, writing nothing), posts d.Bond from the
	// user's balance to the proposal's bond account
	// (account.ErrInsufficientFunds), writes the dispute and marks the
	// proposal disputed. d.MarketID becomes the proposal's market.
	AddDispute(ctx context.Context, d *Dispute, check func(DisputeCheck) error) error
	// ClaimProposals claims up to limit proposals that are not done and
	// not claimed past now, and are either undisputed with
	// ChallengeUntil <= now or on a resolved market: each is claimed
	// until now+lease, so that no other worker takes it before then,
	// and a claim that dies is taken again after it.
	ClaimProposals(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Proposal, error)
	// FinishProposal ends the proposal of market marketID (its
	// Proposal.MarketID) once that market resolved, in one transaction:
	// it locks the proposal (nothing to do if none or done), reads the
	// market (ErrNotResolved while unresolved), calls decide with the
	// proposal, its disputes and the market's outcome, writes the
	// postings and notifications it returns and marks the proposal done
	// with that outcome.
	FinishProposal(ctx context.Context, marketID int64, decide func(p *Proposal, ds []Dispute, final string, now time.Time) ([]account.Posting, []social.Notification, error)) error
	// DisputedProposals returns the disputed proposals not done, oldest
	// deadline first, each with its disputes (oldest first).
	DisputedProposals(ctx context.Context) ([]*Proposal, error)
}

// BondAccount is where the bonds of the disputes of proposal marketID
// wait for the operator's decision.
func BondAccount(marketID int64) account.Ref { return account.DisputeBondAccount(marketID) }

// DecideBonds returns what ending proposal p with outcome final (the
// outcome of p.MarketID once resolved) moves: each dispute's bond back to
// its disputer when final differs from the proposal, to the treasury (the
// platform) when it is the same; and a dispute_resolved notification to
// each disputer.
func DecideBonds(p *Proposal, ds []Dispute, final string, now time.Time) ([]account.Posting, []social.Notification, error) {
	var ps []account.Posting
	var ns []social.Notification
	upheld := final != p.Outcome
	for _, d := range ds {
		to, back := account.Treasury, int64(0)
		reason := "dispute_bond_forfeit"
		if upheld {
			to, back, reason = account.UserAccount(d.UserID), d.Bond, "dispute_bond_refund"
		}
		if d.Bond > 0 {
			ps = append(ps, account.Posting{From: BondAccount(p.MarketID), To: to, Amount: d.Bond, Reason: reason, At: now})
		}
		ns = append(ns, social.Notification{UserID: d.UserID, Type: social.TypeDisputeResolved, RelatedID: p.EventID, RelatedType: social.RelatedEvent, CreatedAt: now,
			Data: social.NotificationData{MarketName: p.MarketName, Won: final, Proposed: p.Outcome, Amount: back}})
	}
	return ps, ns, nil
}
