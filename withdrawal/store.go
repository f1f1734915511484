package withdrawal

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// Store is what the withdrawal service needs from storage.
// Implementations: storage/memory and storage/postgres. They share the
// account store's ledger.
type Store interface {
	// CreateWithdrawal is a request, decided under its lock: it locks
	// w.UserID's ledger accounts (the lock every movement of the user's
	// money takes), reads the user's Load (the withdrawals counted are
	// those created at or after since), and calls check with it. When
	// check accepts, it stores w (setting w.ID), posts w.RequestPosting
	// and writes w's Change and the user's balance entry to the change
	// log, all in one transaction; otherwise it returns check's error and
	// writes nothing. account.ErrInsufficientFunds when the posting would
	// overdraw the balance. Two requests of one user are decided one
	// after the other, each seeing the other's effect.
	CreateWithdrawal(ctx context.Context, w *Withdrawal, since time.Time, check func(Load) error) error
	// DecideWithdrawal locks withdrawal id, calls decide with it and
	// writes the Decision: the new status, tx hash, reason and time, the
	// postings, the notification, and the withdrawal's Change and the
	// balance entries, in one transaction, and returns the withdrawal as
	// it now is. ErrNotFound for an unknown id; decide's error, with
	// nothing written. Of two concurrent decisions on one withdrawal the
	// second sees the first's outcome.
	DecideWithdrawal(ctx context.Context, id int64, decide func(*Withdrawal) (*Decision, error)) (*Withdrawal, error)
	// Withdrawals returns at most q.Limit withdrawals that q selects, in
	// its order.
	Withdrawals(ctx context.Context, q Query) ([]*Withdrawal, error)
	// WithdrawnSince is the sum of user userID's pending and paid
	// withdrawals created at or after since.
	WithdrawnSince(ctx context.Context, userID int64, since time.Time) (int64, error)
	// PendingLedger returns, from one consistent snapshot, every
	// withdrawal that is pending or whose pending account is not empty,
	// and every non-empty pending account without a withdrawal (ID set,
	// Status ""), for the audit.
	PendingLedger(ctx context.Context) ([]PendingState, error)
}

// Load is what a request is decided on: the user's balance (never the
// bonus balance) and what they have withdrawn in the last 24 hours.
type Load struct {
	Balance   int64
	Withdrawn int64
}

// Decision is the outcome of a decision on a pending withdrawal.
type Decision struct {
	Status string
	TxHash string
	Reason string
	At     time.Time
	// Postings move the pending amount out: to the chain's withdrawals
	// account when paid, back to the user otherwise.
	Postings []account.Posting
	// Notification, when set, tells the user (the operator's decisions;
	// a user's own cancellation needs none).
	Notification *social.Notification
}

// Query selects withdrawals. Stores page by id: newest first (descending
// ids below After, when After is set), or oldest first with Oldest
// (ascending ids above After).
type Query struct {
	UserID int64  // 0: every user's
	Status string // "": every status
	Oldest bool
	After  int64
	Limit  int
}

// PendingState is one withdrawal as the audit sees it: its status and
// amount and what its pending account holds.
type PendingState struct {
	ID      int64
	Status  string // "" when the account has no withdrawal
	Amount  int64
	Balance int64
}
