package memory

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
)

// The change log: every operation that changes what the log tells of
// appends its entries while it holds s.mu, the lock that makes the change
// visible, so that the log's order is the order the changes were made in.

var _ changelog.Reader = (*Store)(nil)

// Changes returns at most limit entries of the change log with a Seq
// larger than after, in ascending order.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]changelog.Entry, error) {
	return s.changes.Changes(ctx, after, limit)
}

// ChangeBounds returns the part of the change log the store holds.
func (s *Store) ChangeBounds(ctx context.Context) (changelog.Bounds, error) {
	return s.changes.ChangeBounds(ctx)
}

// ChangeFeed follows the change log, woken by every append.
func (s *Store) ChangeFeed() changelog.Feed {
	return &changelog.Poller{Log: s.changes, Woken: s.changes.Appended}
}

// PruneChanges drops the entries made before before and returns how many
// it dropped. It takes only the log's own lock, never the store's.
func (s *Store) PruneChanges(ctx context.Context, before time.Time) (int, error) {
	return s.changes.Prune(ctx, before)
}

// ChangeCursor returns the seq consumer name has read the change log up
// to (0 when it has no cursor).
func (s *Store) ChangeCursor(_ context.Context, name string) (int64, error) {
	c, _ := s.changes.Cursor(name)
	return c, nil
}

// SetChangeCursor records that consumer name has read the change log up
// to after (a cursor never moves back); pruning keeps every entry after
// the smallest cursor.
func (s *Store) SetChangeCursor(_ context.Context, name string, after int64) error {
	s.changes.SetCursor(name, after)
	return nil
}

// DropChangeCursor forgets consumer name's cursor.
func (s *Store) DropChangeCursor(_ context.Context, name string) error {
	s.changes.DropCursor(name)
	return nil
}

// logChanges appends es to the change log. Callers hold s.mu.
func (s *Store) logChanges(es ...changelog.Entry) {
	s.countMoney(es)
	s.changes.Append(es...)
}

// balancesOf returns the balances of both accounts of every user whose
// money postings move, as they are now. Callers hold s.mu.
func (s *Store) balancesOf(postings []account.Posting) map[account.Ref]int64 {
	out := map[account.Ref]int64{}
	for _, p := range postings {
		for _, r := range [2]account.Ref{p.From, p.To} {
			if r.Kind == account.KindUser || r.Kind == account.KindUserBonus {
				out[account.UserAccount(r.Owner)] = s.balance(account.UserAccount(r.Owner))
				out[account.BonusAccount(r.Owner)] = s.balance(account.BonusAccount(r.Owner))
			}
		}
	}
	return out
}

// ChangesAppended returns a channel closed when entries are next
// appended: a consumer of the log (ApplyGrowth) waits on it.
func (s *Store) ChangesAppended() <-chan struct{} { return s.changes.Appended() }
