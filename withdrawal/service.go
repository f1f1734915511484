package withdrawal

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/wallet"
)

// Window is the span the daily limit looks back over: it is rolling, not
// a calendar day, so a user cannot ask for twice the limit around
// midnight.
const Window = 24 * time.Hour

// Pages.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// Service is the withdrawal use cases.
type Service struct {
	store    Store
	balances Balancer
	// DailyLimit bounds the sum of one user's pending and paid
	// withdrawals created in any Window, in kopecks; 0 is no limit.
	DailyLimit int64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Balancer reads a user's balances: account.Service and every
// account.Store do.
type Balancer interface {
	Balances(ctx context.Context, id int64) (account.Balances, error)
}

// NewService returns a Service on store, reading balances through
// balances (the summary's available amount), with no daily limit.
func NewService(store Store, balances Balancer) *Service {
	return &Service{store: store, balances: balances}
}

// now is the clock's time in UTC, to the microsecond that PostgreSQL
// keeps, so that every store answers the same times.
func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Microsecond)
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// Request is a user's request to withdraw.
type Request struct {
	UserID  int64
	Chain   string
	Address string
	Amount  int64
}

// Request takes r.Amount from the user's balance into a new pending
// withdrawal. Checks, in order: the chain is one of wallet.Chains
// (*input.Error), the amount is 1 to account.MaxCredit (*input.Error),
// the address is the chain's (ErrInvalidAddress); then, under the user's
// ledger lock, the balance covers the amount (account.ErrInsufficientFunds;
// the bonus balance never counts) and the user's withdrawals of the last
// Window stay within DailyLimit (ErrLimit).
func (s *Service) Request(ctx context.Context, r Request) (*Withdrawal, error) {
	if !slices.Contains(wallet.Chains, r.Chain) {
		return nil, input.Invalid("chain", "must be one of "+strings.Join(wallet.Chains, ", "))
	}
	if err := input.InRange("amount_kopecks", r.Amount, 1, account.MaxCredit); err != nil {
		return nil, err
	}
	if err := CheckAddress(r.Chain, r.Address); err != nil {
		return nil, err
	}
	now := s.now()
	w := &Withdrawal{UserID: r.UserID, Chain: strings.Clone(r.Chain), Address: strings.Clone(r.Address), Amount: r.Amount,
		Status: StatusPending, CreatedAt: now}
	limit := s.DailyLimit
	err := s.store.CreateWithdrawal(ctx, w, now.Add(-Window), func(l Load) error {
		if r.Amount > l.Balance {
			return account.ErrInsufficientFunds
		}
		if limit > 0 && r.Amount > limit-l.Withdrawn {
			return ErrLimit
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// CheckAddress is nil when address is one of chain's: EIP-55 checksummed
// on EVM chains, TRON base58check on TRON. ErrInvalidAddress (which
// matches wallet.ErrInvalidAddress too) otherwise, saying why.
func CheckAddress(chain, address string) error {
	if _, err := wallet.Parse(chain, address); err != nil {
		return &addressError{err}
	}
	return nil
}

// addressError is ErrInvalidAddress with wallet's reason.
type addressError struct{ err error }

func (e *addressError) Error() string { return e.err.Error() }
func (e *addressError) Is(target error) bool {
	return target == ErrInvalidAddress || errors.Is(e.err, target)
}

// Detail is what the client may read: why the address was refused.
func (e *addressError) Detail() string {
	return "address: " + strings.TrimPrefix(e.err.Error(), wallet.ErrInvalidAddress.Error()+": ")
}

// Page is a page of withdrawals; Next is the cursor of the next one, ""
// on the last.
type Page struct {
	Withdrawals []*Withdrawal
	Next        string
}

// List is user userID's withdrawals, newest first, limit (1 to
// MaxPageSize; 0 is DefaultPageSize) at a time after cursor (a Page's
// Next; "" for the first page). *input.Error for a bad limit or cursor.
func (s *Service) List(ctx context.Context, userID int64, limit int, cursor string) (*Page, error) {
	return s.page(ctx, Query{UserID: userID}, limit, cursor)
}

// AdminList is every user's withdrawals with status (one of Statuses,
// or "all"; "" is pending): pending ones oldest first, the operator's
// queue, the others newest first. *input.Error for a bad status, limit
// or cursor.
func (s *Service) AdminList(ctx context.Context, status string, limit int, cursor string) (*Page, error) {
	switch {
	case status == "":
		status = StatusPending
	case status == "all":
		status = ""
	case !slices.Contains(Statuses, status):
		return nil, input.Invalid("status", "must be pending, paid, rejected, cancelled or all")
	}
	return s.page(ctx, Query{Status: status, Oldest: status == StatusPending}, limit, cursor)
}

func (s *Service) page(ctx context.Context, q Query, limit int, cursor string) (*Page, error) {
	if limit == 0 {
		limit = DefaultPageSize
	}
	if limit < 1 || limit > MaxPageSize {
		return nil, input.Invalid("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxPageSize))
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}
	q.After, q.Limit = after, limit+1
	ws, err := s.store.Withdrawals(ctx, q)
	if err != nil {
		return nil, err
	}
	p := &Page{Withdrawals: ws}
	if len(ws) > limit {
		p.Withdrawals = ws[:limit]
		p.Next = encodeCursor(ws[limit-1].ID)
	}
	return p, nil
}

func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("w" + strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	bad := input.Invalid("cursor", "must be the next_cursor of an earlier page")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 2 || len(b) > 20 || b[0] != 'w' || strings.TrimLeft(string(b[1:]), "0123456789") != "" {
		return 0, bad
	}
	id, err := strconv.ParseInt(string(b[1:]), 10, 64)
	if err != nil || id <= 0 {
		return 0, bad
	}
	return id, nil
}

// Summary is what a user may withdraw now.
type Summary struct {
	// DailyLimit is the Service's; 0 is none.
	DailyLimit int64
	// Withdrawn is the sum of the user's pending and paid withdrawals
	// created in the last Window.
	Withdrawn int64
	// Available is what a request may ask now: the balance, capped by
	// what the limit leaves.
	Available int64
}

// Summary returns user userID's Summary.
func (s *Service) Summary(ctx context.Context, userID int64) (Summary, error) {
	w, err := s.store.WithdrawnSince(ctx, userID, s.now().Add(-Window))
	if err != nil {
		return Summary{}, err
	}
	b, err := s.balances.Balances(ctx, userID)
	if err != nil {
		return Summary{}, err
	}
	out := Summary{DailyLimit: s.DailyLimit, Withdrawn: w, Available: max(b.Balance, 0)}
	if s.DailyLimit > 0 {
		out.Available = max(min(out.Available, s.DailyLimit-w), 0)
	}
	return out, nil
}

// Cancel is user userID's cancellation of their pending withdrawal id:
// the amount goes back to their balance. ErrNotFound when it is not
// theirs; ErrInvalidState when it is no longer pending.
func (s *Service) Cancel(ctx context.Context, userID, id int64) (*Withdrawal, error) {
	return s.decide(ctx, id, func(w *Withdrawal) (*Decision, error) {
		if w.UserID != userID {
			return nil, ErrNotFound
		}
		return refund(w, StatusCancelled, "", s.now()), nil
	})
}

// Approve is the operator's record that withdrawal id was paid in
// transaction txHash (from a wallet outside the server): the amount moves
// from the pending account to the chain's withdrawals account, and the
// user is told. *input.Error for a hash that is not the chain's form (0x
// and 64 hexadecimal digits on EVM chains, 64 digits on TRON, where a 0x
// is dropped); ErrNotFound; ErrInvalidState when it is not pending (paid
// already, rejected or cancelled).
func (s *Service) Approve(ctx context.Context, id int64, txHash string) (*Withdrawal, error) {
	return s.decide(ctx, id, func(w *Withdrawal) (*Decision, error) {
		h, err := NormalizeTxHash(w.Chain, txHash)
		if err != nil {
			return nil, err
		}
		at := s.now()
		return &Decision{Status: StatusPaid, TxHash: h, At: at,
			Postings:     []account.Posting{{From: w.PendingAccount(), To: chainAccount(w.Chain), Amount: w.Amount, Reason: ReasonPaid, At: at}},
			Notification: notification(w, social.TypeWithdrawalPaid, h, at)}, nil
	})
}

// Reject is the operator's refusal of withdrawal id, for reason (1 to
// MaxReasonLen characters of text, shown to the user): the amount goes
// back to the user's balance, and the user is told. *input.Error for a bad
// reason; ErrNotFound; ErrInvalidState when it is not pending.
func (s *Service) Reject(ctx context.Context, id int64, reason string) (*Withdrawal, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxReasonLen {
		return nil, input.Invalid("reason", fmt.Sprintf("must be 1 to %d characters", MaxReasonLen))
	}
	if err := input.Text("reason", reason); err != nil {
		return nil, err
	}
	return s.decide(ctx, id, func(w *Withdrawal) (*Decision, error) {
		at := s.now()
		d := refund(w, StatusRejected, reason, at)
		d.Notification = notification(w, social.TypeWithdrawalRejected, reason, at)
		return d, nil
	})
}

// decide runs decide on withdrawal id under its lock, once it is known to
// be pending.
func (s *Service) decide(ctx context.Context, id int64, decide func(*Withdrawal) (*Decision, error)) (*Withdrawal, error) {
	if id <= 0 {
		return nil, ErrNotFound
	}
	return s.store.DecideWithdrawal(ctx, id, func(w *Withdrawal) (*Decision, error) {
		d, err := decide(w)
		if err != nil {
			return nil, err
		}
		if w.Status != StatusPending {
			return nil, ErrInvalidState
		}
		return d, nil
	})
}

// refund is the decision that gives w's amount back to its user.
func refund(w *Withdrawal, status, reason string, at time.Time) *Decision {
	return &Decision{Status: status, Reason: reason, At: at,
		Postings: []account.Posting{{From: w.PendingAccount(), To: account.UserAccount(w.UserID), Amount: w.Amount, Reason: ReasonRefund, At: at}}}
}

func notification(w *Withdrawal, typ, excerpt string, at time.Time) *social.Notification {
	return &social.Notification{UserID: w.UserID, Type: typ, RelatedID: w.ID, RelatedType: social.RelatedWithdrawal,
		Data: social.NotificationData{Amount: w.Amount, Excerpt: excerpt, Other: w.Chain}, CreatedAt: at}
}

// NormalizeTxHash returns hash as stored: in lower case, 0x and 64
// hexadecimal digits on an EVM chain, 64 digits on TRON (whose explorers
// show no 0x; one given is dropped). *input.Error otherwise.
func NormalizeTxHash(chain, hash string) (string, error) {
	f, _ := wallet.FamilyOf(chain)
	h := strings.ToLower(strings.TrimSpace(hash))
	digits, ok := strings.CutPrefix(h, "0x")
	if !ok && f == wallet.EVM || len(digits) != 64 || strings.Trim(digits, "0123456789abcdef") != "" {
		if f == wallet.Tron {
			return "", input.Invalid("tx_hash", "must be 64 hexadecimal digits")
		}
		return "", input.Invalid("tx_hash", "must be 0x and 64 hexadecimal digits")
	}
	if f == wallet.Tron {
		return digits, nil
	}
	return "0x" + digits, nil
}

// Audit checks that every pending account holds exactly its withdrawal's
// amount while the withdrawal is pending, and nothing once it is decided:
// otherwise money was paid or refunded without its status changing, or
// the other way round. It returns the problems found, none when sound.
func (s *Service) Audit(ctx context.Context) ([]string, error) {
	st, err := s.store.PendingLedger(ctx)
	if err != nil {
		return nil, err
	}
	return AuditPending(st), nil
}

// AuditPending is Audit's check of states.
func AuditPending(states []PendingState) []string {
	out := []string{}
	for _, p := range states {
		ref := account.WithdrawalPendingAccount(p.ID)
		switch {
		case p.Status == "":
			out = append(out, fmt.Sprintf("%s: holds %d but there is no such withdrawal", ref, p.Balance))
		case p.Status == StatusPending && p.Balance != p.Amount:
			out = append(out, fmt.Sprintf("%s: holds %d but pending withdrawal %d is of %d", ref, p.Balance, p.ID, p.Amount))
		case p.Status != StatusPending && p.Balance != 0:
			out = append(out, fmt.Sprintf("%s: holds %d but withdrawal %d is %s", ref, p.Balance, p.ID, p.Status))
		}
	}
	return out
}
