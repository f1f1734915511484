package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// sqlCreatorLoad reads a creator's market.CreatorLoad: the events with
// an unresolved market, and the subsidies the treasury posted to the
// escrows of their markets.
const sqlCreatorLoad = `WITH open AS (
	SELECT e.id FROM events e
	WHERE e.creator_id = $1 AND e.status = 'approved'
		AND EXISTS (SELECT 1 FROM markets m WHERE m.event_id = e.id AND NOT m.resolved)
)
SELECT (SELECT count(*) FROM open),
	(SELECT COALESCE(sum(p.amount), 0)::bigint
		FROM open
		JOIN markets m ON m.event_id = open.id
		JOIN ledger_accounts a ON a.kind = 'market_escrow' AND a.owner = m.id
		JOIN postings p ON p.to_account = a.id
		JOIN ledger_accounts t ON t.id = p.from_account AND t.kind = 'platform_treasury'
		WHERE p.reason = 'subsidy')`

// checkCreator locks creator id's users row, so that the creator's
// creations take turns, then reads the creator's load and calls check
// with it. Read committed: each statement after the lock sees every
// creation that committed before it was granted.
func checkCreator(ctx context.Context, tx pgx.Tx, id int64, check func(market.CreatorLoad) error) error {
	// FOR NO KEY UPDATE: the creations exclude each other, but not the
	// key-share locks of the rows that reference the user (trades,
	// positions...).
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&one); err != nil {
		return err
	}
	var load market.CreatorLoad
	if err := tx.QueryRow(ctx, sqlCreatorLoad, id).Scan(&load.OpenEvents, &load.SubsidyKopecks); err != nil {
		return err
	}
	return check(load)
}
