package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/withdrawal"
)

var _ withdrawal.Store = (*Store)(nil)

// withdrawals are the users' withdrawals, made on first use.
type withdrawals struct {
	byID   map[int64]*withdrawal.Withdrawal
	ids    []int64           // ascending
	byUser map[int64][]int64 // ascending
}

func (s *Store) wd() *withdrawals {
	if s.withdrawals == nil {
		s.withdrawals = &withdrawals{byID: map[int64]*withdrawal.Withdrawal{}, byUser: map[int64][]int64{}}
	}
	return s.withdrawals
}

func cloneWithdrawal(w *withdrawal.Withdrawal) *withdrawal.Withdrawal {
	c := *w
	c.Chain, c.Address, c.Status = strings.Clone(w.Chain), strings.Clone(w.Address), strings.Clone(w.Status)
	c.TxHash, c.Reason = strings.Clone(w.TxHash), strings.Clone(w.Reason)
	c.DecidedAt = clonePtr(w.DecidedAt)
	return &c
}

// withdrawnSince is the sum of userID's counted withdrawals created at or
// after since. Callers hold s.mu.
func (s *Store) withdrawnSince(userID int64, since time.Time) int64 {
	var sum int64
	for _, id := range s.wd().byUser[userID] {
		if w := s.withdrawals.byID[id]; w.Counted() && !w.CreatedAt.Before(since) {
			sum += w.Amount
		}
	}
	return sum
}

// CreateWithdrawal implements withdrawal.Store; the store's one lock is
// the user's.
func (s *Store) CreateWithdrawal(_ context.Context, w *withdrawal.Withdrawal, since time.Time, check func(withdrawal.Load) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[w.UserID]; !ok {
		return account.ErrUserNotFound
	}
	if err := check(withdrawal.Load{Balance: s.balance(account.UserAccount(w.UserID)), Withdrawn: s.withdrawnSince(w.UserID, since)}); err != nil {
		return err
	}
	// The pending account is new, so only the user's balance can refuse
	// the posting.
	probe := w.RequestPosting()
	probe.To = account.WithdrawalPendingAccount(0)
	if err := s.check([]account.Posting{probe}); err != nil {
		return err
	}
	d := s.wd()
	w.ID = s.next("withdrawal")
	ps := []account.Posting{w.RequestPosting()}
	before := s.balancesOf(ps)
	if err := s.post(ps); err != nil {
		return err
	}
	d.byID[w.ID] = cloneWithdrawal(w)
	d.ids = append(d.ids, w.ID)
	d.byUser[w.UserID] = append(d.byUser[w.UserID], w.ID)
	s.logChanges(append([]changelog.Entry{withdrawal.Change(w)}, account.BalanceChanges(before, ps, "", w.CreatedAt)...)...)
	return nil
}

// DecideWithdrawal implements withdrawal.Store.
func (s *Store) DecideWithdrawal(_ context.Context, id int64, decide func(*withdrawal.Withdrawal) (*withdrawal.Decision, error)) (*withdrawal.Withdrawal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.wd().byID[id]
	if !ok {
		return nil, withdrawal.ErrNotFound
	}
	d, err := decide(cloneWithdrawal(w))
	if err != nil {
		return nil, err
	}
	if d.TxHash != "" {
		for _, o := range s.wd().byID {
			if o.ID != id && o.Chain == w.Chain && o.TxHash == d.TxHash {
				return nil, withdrawal.ErrTxHashUsed
			}
		}
	}
	before := s.balancesOf(d.Postings)
	if err := s.post(d.Postings); err != nil {
		return nil, err
	}
	at := d.At
	w.Status, w.TxHash, w.Reason, w.DecidedAt = strings.Clone(d.Status), strings.Clone(d.TxHash), strings.Clone(d.Reason), &at
	out := cloneWithdrawal(w)
	es := []changelog.Entry{withdrawal.Change(out)}
	es = append(es, account.BalanceChanges(before, d.Postings, "", at)...)
	if d.Notification != nil {
		es = append(es, social.NotificationChange(s.addNotification(*d.Notification)))
	}
	s.logChanges(es...)
	return out, nil
}

// Withdrawals implements withdrawal.Store.
func (s *Store) Withdrawals(_ context.Context, q withdrawal.Query) ([]*withdrawal.Withdrawal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.wd()
	ids := d.ids
	if q.UserID != 0 {
		ids = d.byUser[q.UserID]
	}
	out := []*withdrawal.Withdrawal{}
	take := func(id int64) bool {
		w := d.byID[id]
		if q.Status == "" || w.Status == q.Status {
			out = append(out, cloneWithdrawal(w))
		}
		return len(out) < q.Limit
	}
	if q.Oldest {
		for _, id := range ids {
			if id > q.After && !take(id) {
				break
			}
		}
		return out, nil
	}
	for _, id := range slices.Backward(ids) {
		if (q.After == 0 || id < q.After) && !take(id) {
			break
		}
	}
	return out, nil
}

// WithdrawnSince implements withdrawal.Store.
func (s *Store) WithdrawnSince(_ context.Context, userID int64, since time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withdrawnSince(userID, since), nil
}

// PendingLedger implements withdrawal.Store.
func (s *Store) PendingLedger(context.Context) ([]withdrawal.PendingState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.wd()
	out := []withdrawal.PendingState{}
	for _, id := range d.ids {
		w := d.byID[id]
		b := s.balance(account.WithdrawalPendingAccount(id))
		if w.Status == withdrawal.StatusPending || b != 0 {
			out = append(out, withdrawal.PendingState{ID: id, Status: w.Status, Amount: w.Amount, Balance: b})
		}
	}
	for ref, a := range s.accounts {
		if _, ok := d.byID[ref.Owner]; ref.Kind == account.KindWithdrawalPending && a.balance != 0 && !ok {
			out = append(out, withdrawal.PendingState{ID: ref.Owner, Balance: a.balance})
		}
	}
	return out, nil
}
