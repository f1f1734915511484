package postgres

import (
	"context"
	"errors"
	"maps"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// ProposeEvent stores proposal e: CreateEvent with no subsidy posted,
// the markets unapproved and the ante posted from the proposer's account
// to the event's ante account, in the same transaction (see
// CreateEventLimited). account.ErrInsufficientFunds, and nothing
// written, when the proposer's balance is short.
func (s *Store) ProposeEvent(ctx context.Context, e *market.Event) error {
	if e.Proposal == nil {
		return errors.New("postgres: propose event: no proposal")
	}
	n := 0
	for _, p := range e.Pools {
		n += len(p.Markets)
	}
	e.Status = market.StatusProposed
	return s.CreateEventLimited(ctx, e, make([]int64, n), nil)
}

// DecideProposal implements market.Store. It locks, in this order, the
// event's row, its creator's users row (as CreateEventLimited does, so
// that the creator's load is read under the creations' lock), the
// event's markets in ascending id order (as trades lock them, before
// any account) and the accounts of the postings.
func (s *Store) DecideProposal(ctx context.Context, id int64, decide func(*market.Event, market.CreatorLoad) (*market.ProposalOutcome, error)) (*market.Event, error) {
	var e *market.Event
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var creator int64
		err := tx.QueryRow(ctx, `SELECT creator_id FROM events WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&creator)
		if errors.Is(err, pgx.ErrNoRows) {
			return &decideError{market.ErrEventNotFound}
		} else if err != nil {
			return err
		}
		var load market.CreatorLoad
		if err := checkCreator(ctx, tx, creator, func(l market.CreatorLoad) error { load = l; return nil }); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT id FROM markets WHERE event_id = $1 ORDER BY id FOR NO KEY UPDATE`, id); err != nil {
			return err
		}
		if e, err = readEvent(ctx, tx, id); err != nil {
			return err
		}
		out, err := decide(e, load)
		if err != nil {
			return &decideError{err}
		}
		return s.writeDecision(ctx, tx, e, out)
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	return e, nil
}

// writeDecision writes decision out on event e, locked, and updates e
// to match.
func (s *Store) writeDecision(ctx context.Context, tx pgx.Tx, e *market.Event, out *market.ProposalOutcome) error {
	at := dbTime(out.At)
	if _, err := tx.Exec(ctx, `UPDATE events SET status = $2, is_active = $3, decided_at = $4, decision_reason = $5, ante_refunded = $6
		WHERE id = $1`, e.ID, out.Status, out.Active, at, out.Reason, out.Refunded); err != nil {
		return err
	}
	unapproved := out.Status != market.StatusApproved
	if _, err := tx.Exec(ctx, `UPDATE markets SET unapproved = $2 WHERE event_id = $1`, e.ID, unapproved); err != nil {
		return err
	}
	var changes []changelog.Entry
	if len(out.Postings) > 0 {
		var refs []account.Ref
		for _, p := range out.Postings {
			refs = append(refs, p.From, p.To)
			for _, r := range [2]account.Ref{p.From, p.To} {
				if r.Kind == account.KindUser {
					refs = append(refs, account.BonusAccount(r.Owner))
				}
			}
		}
		a, err := lockAccounts(ctx, tx, refs)
		if err != nil {
			return err
		}
		if err := a.check(out.Postings); err != nil {
			return err
		}
		before := maps.Clone(a.balance)
		if err := post(ctx, tx, a, out.Postings, at); err != nil {
			return err
		}
		changes = account.BalanceChanges(before, out.Postings, "", at)
	}
	n := out.Notification
	if n.CreatedAt.IsZero() {
		n.CreatedAt = at
	}
	n.CreatedAt = dbTime(n.CreatedAt)
	if err := tx.QueryRow(ctx, sqlInsertNotification, n.UserID, n.Type, n.RelatedID, n.RelatedType, string(n.Data.AppendJSON(nil)), n.CreatedAt).Scan(&n.ID); err != nil {
		return err
	}
	changes = append(changes, social.NotificationChange(&n))
	if err := s.appendChanges(ctx, tx, changes); err != nil {
		return err
	}
	e.Status, e.IsActive = out.Status, out.Active
	if e.Proposal == nil {
		e.Proposal = &market.Proposal{}
	}
	e.Proposal.DecidedAt, e.Proposal.Reason, e.Proposal.Refunded = &at, out.Reason, out.Refunded
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			m.Unapproved = unapproved
		}
	}
	return nil
}

// EventsByStatus implements market.Store: the partial index of
// migration 00029 serves the proposals and the rejected.
func (s *Store) EventsByStatus(ctx context.Context, status string, limit, offset int) ([]*market.Event, error) {
	return s.eventsPage(ctx, `SELECT `+eventCols+` FROM events e WHERE e.status = $1 ORDER BY e.id LIMIT $2 OFFSET $3`,
		status, pageLimit(limit), max(offset, 0))
}
