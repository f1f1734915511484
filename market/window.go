package market

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/input"
)

// FinishMove moves the end of a pool's trading window, its finish_at, to
// At; Now is when the move is decided. A store decides it under the lock
// of the pool's markets (Store.MoveFinish), so that no settlement and no
// trade runs between the decision and the write.
type FinishMove struct {
	At, Now time.Time
}

// Decide checks the move against pool p as locked, its markets included:
// *input.Error when At is not after Now (finish_at moves earlier or
// later, never into the past) or not after the pool's live_at;
// ErrResolved when a market of the pool is resolved, because a resolved
// market's window is over for good.
func (f FinishMove) Decide(p *Pool) error {
	if !f.At.After(f.Now) {
		return input.Invalid("finish_at", "must be in the future (now is "+f.Now.UTC().Format(time.RFC3339)+")")
	}
	if !f.At.After(p.LiveAt) {
		return input.Invalid("finish_at", "must be after live_at ("+p.LiveAt.UTC().Format(time.RFC3339)+")")
	}
	for _, m := range p.Markets {
		if m.Resolved {
			return ErrResolved
		}
	}
	return nil
}

// MoveFinish moves the end of pool poolID's trading window to at, for
// callerID, who must be the creator of the pool's event, and returns the
// pool as moved. Checks in order: ErrPoolNotFound, ErrForbidden (caller
// is not the creator), *input.Error (at is not in the future, or not
// after live_at), ErrResolved (a market of the pool is resolved).
func (s *Service) MoveFinish(ctx context.Context, callerID, poolID int64, at time.Time) (*Pool, error) {
	p, err := s.store.Pool(ctx, poolID)
	if err != nil {
		return nil, err
	}
	// An event is never deleted and its creator never changes, so this
	// check cannot go stale before the store locks the pool.
	e, err := s.store.Event(ctx, p.EventID)
	if err != nil {
		return nil, err
	}
	if e.CreatorID != callerID {
		return nil, ErrForbidden
	}
	return s.OperatorMoveFinish(ctx, poolID, at)
}

// OperatorMoveFinish is MoveFinish for the operator, who may move the
// finish_at of any pool. ErrPoolNotFound, *input.Error, ErrResolved.
func (s *Service) OperatorMoveFinish(ctx context.Context, poolID int64, at time.Time) (*Pool, error) {
	// Stores keep microseconds: the window decided is the window kept.
	move := FinishMove{At: at.UTC().Truncate(time.Microsecond), Now: s.Now()}
	p, err := s.store.MoveFinish(ctx, poolID, move)
	if err != nil {
		return nil, err
	}
	PricePool(p)
	return p, nil
}
