// Package withdrawal is money leaving predictkit: a user asks for part of
// their balance to be sent to an address on a chain, the amount leaves
// the balance at once into the withdrawal's pending ledger account, and
// the operator, who pays from a wallet outside the server (the server
// holds no keys), either marks it paid with the payout's transaction hash
// or rejects it with a reason, which refunds it. The user may cancel it
// while it is pending. A daily limit bounds what one user may ask in any
// 24 hours; bonus money is never withdrawable.
//
// Every step is one ledger posting written in the same transaction as the
// withdrawal's status change (see Store), so the audit covers them and no
// race pays or refunds a withdrawal twice.
package withdrawal

import (
	"encoding/json"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/wallet"
)

// A withdrawal's statuses. Only a pending one changes, once, to one of
// the others.
const (
	StatusPending   = "pending"
	StatusPaid      = "paid"
	StatusRejected  = "rejected"
	StatusCancelled = "cancelled"
)

// Statuses lists every status.
var Statuses = []string{StatusPending, StatusPaid, StatusRejected, StatusCancelled}

// Posting reasons.
const (
	ReasonRequest = "withdrawal"        // user → pending
	ReasonPaid    = "withdrawal_paid"   // pending → the chain's withdrawals account
	ReasonRefund  = "withdrawal_refund" // pending → user, rejected or cancelled
)

// MaxReasonLen is the longest rejection reason, in characters.
const MaxReasonLen = 500

// Withdrawal is one request to send Amount kopecks of a user's balance to
// Address on Chain.
type Withdrawal struct {
	ID      int64
	UserID  int64
	Chain   string // one of wallet.Chains
	Address string // checked by wallet.Parse: EIP-55 or TRON base58check
	Amount  int64  // kopecks
	Status  string
	// TxHash is the payout's transaction, once paid: 0x and 64 lower-case
	// hexadecimal digits on EVM chains, 64 on TRON.
	TxHash string
	// Reason is a rejection's reason.
	Reason    string
	CreatedAt time.Time
	// DecidedAt is when it stopped being pending; nil while it is.
	DecidedAt *time.Time
}

// Counted reports whether w counts against the daily limit: pending and
// paid withdrawals do, cancelled and rejected ones gave the money back.
func (w *Withdrawal) Counted() bool {
	return w.Status == StatusPending || w.Status == StatusPaid
}

// PendingAccount is the ledger account that holds w's amount while it is
// pending.
func (w *Withdrawal) PendingAccount() account.Ref { return account.WithdrawalPendingAccount(w.ID) }

// RequestPosting is the posting of w's request, once w.ID is set: the
// amount from the user's balance to w's pending account.
func (w *Withdrawal) RequestPosting() account.Posting {
	return account.Posting{From: account.UserAccount(w.UserID), To: w.PendingAccount(), Amount: w.Amount, Reason: ReasonRequest, At: w.CreatedAt}
}

// JSON is a withdrawal as the API shows it.
type JSON struct {
	ID            int64   `json:"id"`
	UserID        int64   `json:"user_id"`
	Chain         string  `json:"chain"`
	Address       string  `json:"address"`
	AmountKopecks int64   `json:"amount_kopecks"`
	Status        string  `json:"status"`
	TxHash        *string `json:"tx_hash"`
	Reason        *string `json:"reason"`
	CreatedAt     string  `json:"created_at"`
	DecidedAt     *string `json:"decided_at"`
}

// View is w as the API shows it: times in RFC 3339 UTC, null for what w
// does not have yet.
func (w *Withdrawal) View() JSON {
	v := JSON{ID: w.ID, UserID: w.UserID, Chain: w.Chain, Address: w.Address, AmountKopecks: w.Amount,
		Status: w.Status, CreatedAt: stamp(w.CreatedAt)}
	if w.TxHash != "" {
		h := w.TxHash
		v.TxHash = &h
	}
	if w.Reason != "" {
		r := w.Reason
		v.Reason = &r
	}
	if w.DecidedAt != nil {
		d := stamp(*w.DecidedAt)
		v.DecidedAt = &d
	}
	return v
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Change is the change-log entry of w's new state, for its user alone.
// Every store builds it with this function, so it reads the same
// whatever the store.
func Change(w *Withdrawal) changelog.Entry {
	b, err := json.Marshal(w.View())
	if err != nil { // a struct of strings and integers always encodes
		panic(err)
	}
	at := w.CreatedAt
	if w.DecidedAt != nil {
		at = *w.DecidedAt
	}
	return changelog.Entry{Type: changelog.Withdrawal, UserID: w.UserID, Data: b, At: at}
}

// chainAccount is the withdrawals account of w's chain.
func chainAccount(chain string) account.Ref {
	return account.WithdrawalsAccount(wallet.Number(chain))
}
