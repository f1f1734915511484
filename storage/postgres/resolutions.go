package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// The challenge window's proposals and disputes (market.ProposalStore,
// migration 00032).

// proposalCols is the SELECT list of resolution_proposals r joined to
// the market it names m, for scanProposal.
const proposalCols = `r.market_id, r.pool_id, r.event_id, r.exclusive, m.name, r.outcome, r.proposed_by,
	r.challenge_until, r.disputed, r.created_at, r.done, COALESCE(r.final, ''), r.claimed_until IS NOT NULL`

// proposalFrom joins a proposal to its market.
const proposalFrom = ` FROM resolution_proposals r JOIN markets m ON m.id = r.market_id `

// proposalCovering is the condition of the proposal that covers market
// $1: its own, or its exclusive pool's.
const proposalCovering = `WHERE r.market_id = $1 OR (r.exclusive AND r.pool_id = (SELECT pool_id FROM markets WHERE id = $1))`

// scanProposal scans one row of proposalCols; claimed says whether a
// worker ever claimed it.
func scanProposal(row pgx.Row) (p *market.ResolutionProposal, claimed bool, err error) {
	p = &market.ResolutionProposal{}
	err = row.Scan(&p.MarketID, &p.PoolID, &p.EventID, &p.Exclusive, &p.MarketName, &p.Outcome, &p.By,
		&p.ChallengeUntil, &p.Disputed, &p.CreatedAt, &p.Done, &p.Final, &claimed)
	if err != nil {
		return nil, false, err
	}
	p.ChallengeUntil, p.CreatedAt = p.ChallengeUntil.UTC(), p.CreatedAt.UTC()
	return p, claimed, nil
}

// lockScope locks the markets a proposal on market id covers: it, or
// every market of its exclusive pool, in ascending id order (as trades
// lock them).
func lockScope(ctx context.Context, tx pgx.Tx, id int64) ([]*market.Market, error) {
	var poolID int64
	var exclusive bool
	err := tx.QueryRow(ctx, `SELECT m.pool_id, p.exclusive FROM markets m JOIN pools p ON p.id = m.pool_id WHERE m.id = $1`, id).Scan(&poolID, &exclusive)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoMarket
	} else if err != nil {
		return nil, err
	}
	if exclusive {
		return lockPoolMarkets(ctx, tx, poolID)
	}
	rows, err := tx.Query(ctx, sqlLockMarkets, []int64{id})
	if err != nil {
		return nil, err
	}
	return scanMarkets(rows)
}

// sqlInsertNotes writes the notifications of notificationArrays in one
// statement and returns each one's id with its user.
const sqlInsertNotes = `INSERT INTO notifications (user_id, type, related_id, related_type, data, created_at)
SELECT u.user_id, u.type, u.related_id, u.related_type, u.data::jsonb, u.created_at
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::timestamptz[])
	AS u(user_id, type, related_id, related_type, data, created_at)
RETURNING id, user_id`

// insertNotes writes notifications ns, at most one per user (a
// proposal's holders, or its disputers), in one statement, and returns
// their change-log entries.
func insertNotes(ctx context.Context, tx pgx.Tx, ns []social.Notification, at time.Time) ([]changelog.Entry, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	for i := range ns {
		if ns[i].CreatedAt.IsZero() {
			ns[i].CreatedAt = at
		}
		ns[i].CreatedAt = dbTime(ns[i].CreatedAt)
	}
	rows, err := tx.Query(ctx, sqlInsertNotes, notificationArrays(len(ns), func(i int) *social.Notification { return &ns[i] }, at)...)
	if err != nil {
		return nil, err
	}
	ids := make(map[int64]int64, len(ns))
	for rows.Next() {
		var id, user int64
		if err := rows.Scan(&id, &user); err != nil {
			rows.Close()
			return nil, err
		}
		ids[user] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	es := make([]changelog.Entry, 0, len(ns))
	for i := range ns {
		ns[i].ID = ids[ns[i].UserID]
		es = append(es, social.NotificationChange(&ns[i]))
	}
	return es, nil
}

// postMoney locks the accounts of postings (both of each user whose
// money moves, for the balance entries), checks and writes them, and
// returns the change-log entries of the balances they move.
func postMoney(ctx context.Context, tx pgx.Tx, postings []account.Posting, at time.Time) ([]changelog.Entry, error) {
	if len(postings) == 0 {
		return nil, nil
	}
	var refs []account.Ref
	for _, p := range postings {
		for _, r := range [2]account.Ref{p.From, p.To} {
			refs = append(refs, r)
			if r.Kind == account.KindUser || r.Kind == account.KindUserBonus {
				refs = append(refs, account.UserAccount(r.Owner), account.BonusAccount(r.Owner))
			}
		}
	}
	a, err := lockAccounts(ctx, tx, refs)
	if err != nil {
		return nil, err
	}
	if err := a.check(postings); err != nil {
		return nil, err
	}
	if err := post(ctx, tx, a, postings, at); err != nil {
		return nil, err
	}
	return account.BalanceChanges(a.balance, postings, "", at), nil
}

// Propose implements market.ProposalStore.
func (s *Store) Propose(ctx context.Context, p *market.ResolutionProposal, notes func(*market.ResolutionProposal, []int64) []social.Notification) error {
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now()
	}
	p.CreatedAt, p.ChallengeUntil = dbTime(p.CreatedAt), dbTime(p.ChallengeUntil)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ms, err := lockScope(ctx, tx, p.MarketID)
		if err != nil {
			return err
		}
		ids := make([]int64, len(ms))
		for i, m := range ms {
			if m.Resolved {
				return &decideError{market.ErrResolved}
			}
			ids[i] = m.ID
			if m.ID == p.MarketID {
				p.PoolID, p.EventID, p.Exclusive, p.MarketName = m.PoolID, m.EventID, m.Exclusive, m.Name
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM resolution_proposals WHERE market_id = ANY($1))`, ids).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return &decideError{market.ErrResolved}
		}
		if _, err := tx.Exec(ctx, `UPDATE markets SET paused = true WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO resolution_proposals (market_id, pool_id, event_id, exclusive, outcome, proposed_by, challenge_until, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.MarketID, p.PoolID, p.EventID, p.Exclusive, p.Outcome, p.By, p.ChallengeUntil, p.CreatedAt); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT user_id FROM positions WHERE market_id = ANY($1) AND closed_at IS NULL ORDER BY user_id`, ids)
		if err != nil {
			return err
		}
		holders, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		es, err := insertNotes(ctx, tx, notes(p, holders), p.CreatedAt)
		if err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, es)
	})
	return translate(err, nil)
}

// ProposalOf implements market.ProposalStore.
func (s *Store) ProposalOf(ctx context.Context, marketID int64) (*market.ResolutionProposal, error) {
	p, _, err := scanProposal(s.pool.QueryRow(ctx, `SELECT `+proposalCols+proposalFrom+proposalCovering, marketID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return p, translate(err, nil)
}

// AddDispute implements market.ProposalStore.
func (s *Store) AddDispute(ctx context.Context, d *market.Dispute, check func(market.DisputeCheck) error) error {
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now()
	}
	d.CreatedAt = dbTime(d.CreatedAt)
	asked := d.MarketID
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		c := market.DisputeCheck{}
		p, claimed, err := scanProposal(tx.QueryRow(ctx, `SELECT `+proposalCols+proposalFrom+proposalCovering+` FOR UPDATE OF r`, asked))
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if p != nil {
			c.ResolutionProposal, c.Claimed = p, claimed
			scope := `market_id = $2 AND $3::bigint > 0`
			if p.Exclusive {
				scope = `market_id IN (SELECT id FROM markets WHERE pool_id = $3)`
			}
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM positions WHERE user_id = $1 AND closed_at IS NULL AND `+scope+`),
	EXISTS (SELECT 1 FROM resolution_disputes WHERE market_id = $2 AND user_id = $1)`, d.UserID, p.MarketID, p.PoolID).Scan(&c.Holder, &c.Repeat)
			if err != nil {
				return err
			}
		}
		if err := check(c); err != nil {
			return &decideError{err}
		}
		d.MarketID = p.MarketID
		var es []changelog.Entry
		if d.Bond > 0 {
			es, err = postMoney(ctx, tx, []account.Posting{{From: account.UserAccount(d.UserID), To: market.BondAccount(p.MarketID), Amount: d.Bond, Reason: "dispute_bond", At: d.CreatedAt}}, d.CreatedAt)
			if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO resolution_disputes (market_id, user_id, reason, bond, created_at) VALUES ($1, $2, $3, $4, $5)`,
			p.MarketID, d.UserID, d.Reason, d.Bond, d.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE resolution_proposals SET disputed = true WHERE market_id = $1`, p.MarketID); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, es)
	})
	if err != nil {
		d.MarketID = asked
	}
	return translate(err, nil)
}

// sqlClaimProposals claims up to $3 due proposals at $1 until $2 (see
// market.ProposalStore.ClaimProposals): SKIP LOCKED lets workers of
// several instances claim side by side, each its own.
const sqlClaimProposals = `WITH due AS (
	SELECT r.market_id FROM resolution_proposals r JOIN markets m ON m.id = r.market_id
	WHERE NOT r.done AND (r.claimed_until IS NULL OR r.claimed_until <= $1)
		AND ((NOT r.disputed AND r.challenge_until <= $1) OR m.resolved)
	ORDER BY r.challenge_until, r.market_id LIMIT $3
	FOR UPDATE OF r SKIP LOCKED)
UPDATE resolution_proposals r SET claimed_until = $2 FROM due, markets m
WHERE r.market_id = due.market_id AND m.id = r.market_id
RETURNING ` + proposalCols

// ClaimProposals implements market.ProposalStore. The claim is one
// statement, committed on its own: the worker polls on every server,
// window or not, and a transaction of its own each time would send a
// COMMIT to the database every few seconds for nothing.
func (s *Store) ClaimProposals(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]*market.ResolutionProposal, error) {
	rows, err := s.pool.Query(ctx, sqlClaimProposals, dbTime(at), dbTime(at.Add(lease)), limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	var out []*market.ResolutionProposal
	for rows.Next() {
		p, _, err := scanProposal(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, p)
	}
	return out, translate(rows.Err(), nil)
}

// FinishProposal implements market.ProposalStore.
func (s *Store) FinishProposal(ctx context.Context, marketID int64, decide func(*market.ResolutionProposal, []market.Dispute, string, time.Time) ([]account.Posting, []social.Notification, error)) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		p, _, err := scanProposal(tx.QueryRow(ctx, `SELECT `+proposalCols+proposalFrom+`WHERE r.market_id = $1 FOR UPDATE OF r`, marketID))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		if p.Done {
			return nil
		}
		m, err := scanMarket(tx.QueryRow(ctx, `SELECT `+marketCols+marketFrom+`WHERE m.id = $1`, marketID))
		if err != nil {
			return err
		}
		if !m.Resolved {
			return &decideError{market.ErrNotResolved}
		}
		ds, err := disputesOf(ctx, tx, []int64{marketID})
		if err != nil {
			return err
		}
		at := now()
		final := m.Outcome()
		postings, notes, err := decide(p, ds[marketID], final, at)
		if err != nil {
			return &decideError{err}
		}
		es, err := postMoney(ctx, tx, postings, at)
		if err != nil {
			return err
		}
		ns, err := insertNotes(ctx, tx, notes, at)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE resolution_proposals SET done = true, final = $2 WHERE market_id = $1`, marketID, final); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, append(es, ns...))
	})
	return translate(err, nil)
}

// rowsQuerier is what disputesOf reads with: a transaction or the pool.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// disputesOf returns the disputes of the proposals of markets ids, each
// proposal's oldest first.
func disputesOf(ctx context.Context, q rowsQuerier, ids []int64) (map[int64][]market.Dispute, error) {
	rows, err := q.Query(ctx, `SELECT market_id, user_id, reason, bond, created_at FROM resolution_disputes
WHERE market_id = ANY($1) ORDER BY market_id, created_at, user_id`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]market.Dispute{}
	for rows.Next() {
		var d market.Dispute
		if err := rows.Scan(&d.MarketID, &d.UserID, &d.Reason, &d.Bond, &d.CreatedAt); err != nil {
			return nil, err
		}
		d.CreatedAt = d.CreatedAt.UTC()
		out[d.MarketID] = append(out[d.MarketID], d)
	}
	return out, rows.Err()
}

// DisputedProposals implements market.ProposalStore.
func (s *Store) DisputedProposals(ctx context.Context) ([]*market.ResolutionProposal, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+proposalCols+proposalFrom+`WHERE r.disputed AND NOT r.done ORDER BY r.challenge_until, r.market_id`)
	if err != nil {
		return nil, translate(err, nil)
	}
	var ps []*market.ResolutionProposal
	var ids []int64
	for rows.Next() {
		p, _, err := scanProposal(rows)
		if err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		ps, ids = append(ps, p), append(ids, p.MarketID)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err, nil)
	}
	ds, err := disputesOf(ctx, s.pool, ids)
	if err != nil {
		return nil, translate(err, nil)
	}
	for _, p := range ps {
		p.Disputes = ds[p.MarketID]
	}
	return ps, nil
}
