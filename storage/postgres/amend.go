package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// sqlLockEventMarkets locks the markets of event $1 in ascending id
// order, as trades lock them (FOR UPDATE rather than FOR NO KEY UPDATE:
// an edit may delete them).
const sqlLockEventMarkets = `SELECT m.id FROM markets m WHERE m.event_id = $1 ORDER BY m.id FOR UPDATE OF m`

// EditEvent implements market.Store: in one transaction it locks the
// event's row (edits of one event take turns), then its markets in
// ascending id order, as trades lock them, so that of an edit and a
// concurrent first trade one waits for the other: the trade finds the
// markets it waited for deleted (market.ErrMarketNotFound), or the edit
// finds the trade.
func (s *Store) EditEvent(ctx context.Context, edit market.EventEdit) (*market.Event, error) {
	var accountIDs map[account.Ref]int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var creator int64
		err := tx.QueryRow(ctx, `SELECT creator_id FROM events WHERE id = $1 FOR NO KEY UPDATE`, edit.EventID).Scan(&creator)
		if errors.Is(err, pgx.ErrNoRows) {
			return &decideError{market.ErrEventNotFound}
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sqlLockEventMarkets, edit.EventID)
		if err != nil {
			return err
		}
		old, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		var traded bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM trades WHERE market_id = ANY($1))`, old).Scan(&traded); err != nil {
			return err
		}
		cur, err := readEvent(ctx, tx, edit.EventID)
		if err != nil {
			return err
		}
		if err := edit.Decide(cur, traded); err != nil {
			return &decideError{err}
		}
		if edit.Name != nil {
			if _, err := tx.Exec(ctx, `UPDATE events SET name = $2 WHERE id = $1`, edit.EventID, *edit.Name); err != nil {
				return err
			}
		}
		if edit.NameRu != nil {
			if _, err := tx.Exec(ctx, `UPDATE events SET name_ru = $2 WHERE id = $1`, edit.EventID, *edit.NameRu); err != nil {
				return err
			}
		}
		if edit.Tags != nil {
			if err := lockTags(ctx, tx, *edit.Tags); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM event_tags WHERE event_id = $1`, edit.EventID); err != nil {
				return err
			}
			if err := insertEventTags(ctx, tx, edit.EventID, *edit.Tags); err != nil {
				return err
			}
		}
		accountIDs = nil
		if edit.Pools != nil {
			if accountIDs, err = replacePools(ctx, tx, edit, creator, old); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	s.accountIDs.remember(accountIDs, nil)
	return s.Event(ctx, edit.EventID)
}

// readEvent reads event id with its pools and markets in tx.
func readEvent(ctx context.Context, tx pgx.Tx, id int64) (*market.Event, error) {
	rows, err := tx.Query(ctx, `SELECT `+eventCols+` FROM events e WHERE e.id = $1`, id)
	if err != nil {
		return nil, err
	}
	es, err := scanEvents(rows)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, &decideError{market.ErrEventNotFound}
	}
	pools, err := loadPools(ctx, tx, `p.event_id = $1`, id)
	if err != nil {
		return nil, err
	}
	attachPools(es, pools)
	return es[0], nil
}

// replacePools replaces the pools of edit.EventID, whose markets old are
// locked, by edit.Pools (see market.Store.EditEvent), and returns the
// ids of the ledger accounts it locked.
func replacePools(ctx context.Context, tx pgx.Tx, edit market.EventEdit, creator int64, old []int64) (map[account.Ref]int64, error) {
	var n int
	for _, p := range edit.Pools {
		n += len(p.Markets)
	}
	if len(edit.Subsidies) != n {
		return nil, fmt.Errorf("postgres: edit event: %d subsidies for %d markets", len(edit.Subsidies), n)
	}
	for _, sub := range edit.Subsidies {
		if sub < 0 {
			return nil, fmt.Errorf("postgres: edit event: negative subsidy %d: %w", sub, account.ErrInvalidAmount)
		}
	}
	created := now()
	refs := []account.Ref{account.Treasury}
	for _, id := range old {
		refs = append(refs, account.EscrowAccount(id))
	}
	// The old escrows, locked in the accounts' order, go back first.
	a, err := lockAccounts(ctx, tx, refs)
	if err != nil {
		return nil, err
	}
	var refunds []account.Posting
	for _, id := range old {
		if b := a.balance[account.EscrowAccount(id)]; b > 0 {
			refunds = append(refunds, account.Posting{From: account.EscrowAccount(id), To: account.Treasury, Amount: b, Reason: market.ReasonSubsidyRefund, At: created})
		}
	}
	if len(refunds) > 0 {
		if err := a.check(refunds); err != nil {
			return nil, err
		}
		if err := post(ctx, tx, a, refunds, created); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM markets WHERE event_id = $1`, edit.EventID); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM pools WHERE event_id = $1`, edit.EventID); err != nil {
		return nil, err
	}
	if edit.Check != nil {
		// The event has no market now: the load leaves it out.
		if err := checkCreator(ctx, tx, creator, edit.Check); err != nil {
			return nil, &decideError{err}
		}
	}
	poolIDs, err := insertPools(ctx, tx, edit.EventID, edit.Pools)
	if err != nil {
		return nil, err
	}
	marketIDs, err := insertMarkets(ctx, tx, edit.EventID, edit.Pools, poolIDs, created)
	if err != nil {
		return nil, err
	}
	refs = refs[:0]
	var postings []account.Posting
	i := 0
	for pi, p := range edit.Pools {
		for _, m := range p.Markets {
			id := marketIDs[[2]int64{poolIDs[pi], int64(m.OutcomeIndex)}]
			escrow := account.EscrowAccount(id)
			refs = append(refs, escrow, account.FeeAccount(id))
			if sub := edit.Subsidies[i]; sub > 0 {
				postings = append(postings, account.Posting{From: account.Treasury, To: escrow, Amount: sub, Reason: "subsidy", At: created})
			}
			i++
		}
	}
	refs = append(refs, account.Treasury)
	b, err := lockAccounts(ctx, tx, refs) // the treasury again: locked already, read as the refunds left it
	if err != nil {
		return nil, err
	}
	if len(postings) > 0 {
		if err := b.check(postings); err != nil {
			return nil, err
		}
		if err := post(ctx, tx, b, postings, created); err != nil {
			return nil, err
		}
	}
	return b.id, nil
}

// AddAmendment implements market.Store: the amendment and the holders'
// and followers' event_amended notifications (one each) (with their change-log entries) in one
// transaction.
func (s *Store) AddAmendment(ctx context.Context, a *market.Amendment, note social.Notification) error {
	a.CreatedAt = dbTime(a.CreatedAt)
	data, err := json.Marshal(note.Data)
	if err != nil {
		return fmt.Errorf("postgres: notification data: %w", err)
	}
	err = s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO event_amendments (event_id, text, text_ru, created_at)
			SELECT id, $2, $3, $4 FROM events WHERE id = $1 RETURNING id`, a.EventID, a.Text, a.TextRu, a.CreatedAt).Scan(&a.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return &decideError{market.ErrEventNotFound}
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `INSERT INTO notifications (user_id, type, related_id, related_type, data, created_at)
			SELECT h.user_id, $2, $3, $4, $5, $6 FROM (
				SELECT x.user_id FROM positions x JOIN markets m ON m.id = x.market_id
				WHERE m.event_id = $1 AND x.closed_at IS NULL AND NOT m.resolved
				UNION
				SELECT f.user_id FROM follows f WHERE f.event_id = $1) h
			ORDER BY h.user_id
			RETURNING id, user_id`, a.EventID, note.Type, note.RelatedID, note.RelatedType, string(data), a.CreatedAt)
		if err != nil {
			return err
		}
		var changes []changelog.Entry
		var id, user int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &user}, func() error {
			n := note
			n.ID, n.UserID, n.CreatedAt = id, user, a.CreatedAt
			changes = append(changes, social.NotificationChange(&n))
			return nil
		}); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, changes)
	})
	return translate(err, nil)
}

// attachAmendments reads the amendments of es and sets each event's,
// oldest first (never nil).
func (s *Store) attachAmendments(ctx context.Context, es []*market.Event) error {
	ids := make([]int64, len(es))
	byID := make(map[int64]*market.Event, len(es))
	for i, e := range es {
		ids[i], byID[e.ID] = e.ID, e
		e.Amendments = []market.Amendment{}
	}
	rows, err := s.pool.Query(ctx, `SELECT id, event_id, text, text_ru, created_at FROM event_amendments
		WHERE event_id = ANY($1) ORDER BY event_id, id`, ids)
	if err != nil {
		return err
	}
	var a market.Amendment
	_, err = pgx.ForEachRow(rows, []any{&a.ID, &a.EventID, &a.Text, &a.TextRu, &a.CreatedAt}, func() error {
		e := byID[a.EventID]
		e.Amendments = append(e.Amendments, a)
		return nil
	})
	return err
}
