package postgres

import (
	"cmp"
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// sqlTradePlans makes a trade's statements run on generic plans, with
// index scans. They are the same few prepared statements on every
// connection, and their custom plans, which PostgreSQL otherwise keeps for
// them (an array parameter's length changes the estimates), cost more to
// make than to run. A generic plan cannot know how long an array is and
// guesses ten elements, and for ten keys it prefers a sequential scan of a
// table of a thousand rows, testing each row against the whole array,
// which costs more than the primary key, and more as the table grows.
// Every statement of a trade reads rows by a key, so sequential scans are
// turned off for them. Settlement keeps custom plans and sequential scans:
// its statements carry thousands of rows.
const sqlTradePlans = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`

// sqlLockMarkets locks markets $1 in ascending id order: the row locks
// are taken as the sorted rows come out, so two batches sharing markets
// queue on the first of them rather than deadlock.
const sqlLockMarkets = `SELECT ` + marketCols + marketFrom + `WHERE m.id = ANY($1) ORDER BY m.id FOR NO KEY UPDATE OF m`

// sqlLockPositions locks the open positions of the (user $1, market $2)
// pairs and of the (partner $3, external id $4, market $5) sub-account
// pairs, each found through the open-position key. Every writer of a
// market's positions holds the market's lock first, so these row locks
// never wait; they make the rows' ownership explicit, and a batch locks no
// position it does not trade. Each pair is looked up on its own, each side
// by the whole open-position key (a sub-account first by its unique key),
// so that no estimate makes the planner walk every open position of a hot
// market once per trader, as it did with the partial key (user, market)
// on a young table, and for a partner bet whose plan was made while the
// tables were empty.
var sqlLockPositions = `SELECT ` + positionCols + ` FROM positions x
WHERE x.id = ANY(ARRAY(
	SELECT p.id FROM unnest($1::bigint[], $2::bigint[]) AS k(user_id, market_id)
	` + openPositionsOf("k.user_id", "k.market_id") + `
	UNION ALL
	SELECT p.id FROM unnest($3::bigint[], $4::text[], $5::bigint[]) AS s(partner_id, external_id, market_id)
	` + subAccountOf + `
	` + openPositionsOf("u.id", "s.market_id") + `))
ORDER BY x.id
FOR NO KEY UPDATE`

// openPositionsOf joins the open positions (p.id) of the user and market
// the expressions name, each side through the whole open-position key.
func openPositionsOf(user, market string) string {
	return `CROSS JOIN LATERAL (SELECT p.id FROM (VALUES (0::smallint), (1::smallint)) AS side(side)
		JOIN positions p ON p.user_id = ` + user + ` AND p.market_id = ` + market + ` AND p.side = side.side
			AND p.closed_at IS NULL OFFSET 0) p`
}

// subAccountOf joins the sub-account (u.id) of s.partner_id and
// s.external_id through their unique key, one at a time, whatever the
// plan's estimates.
const subAccountOf = `CROSS JOIN LATERAL (SELECT u.id FROM users u
	WHERE u.partner_id = s.partner_id AND u.external_id = s.external_id OFFSET 0) u`

// sqlCreateSubAccounts creates the partner sub-accounts that do not exist
// yet and returns their ids. One made by a concurrent transaction is
// waited for and then left alone (ON CONFLICT); the next statement finds
// it.
const sqlCreateSubAccounts = `INSERT INTO users (name, language, theme, level, profile_hidden, partner_id, external_id, created_at)
SELECT 'Partner user', 'en', 'light', 1, true, s.partner_id, s.external_id, $3
FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS s(partner_id, external_id, ord)
WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.partner_id = s.partner_id AND u.external_id = s.external_id)
ORDER BY s.ord
ON CONFLICT (partner_id, external_id) WHERE partner_id IS NOT NULL DO NOTHING
RETURNING id`

// sqlSubAccounts finds sub-accounts by their unique key, each on its own
// (see sqlLockPositions).
const sqlSubAccounts = `SELECT s.partner_id, s.external_id, u.id
FROM unnest($1::bigint[], $2::text[]) AS s(partner_id, external_id)
` + subAccountOf

// sqlTradesByKey finds the trades of idempotency keys, each through the
// unique key on its own: a generic plan made while trades was young once
// read the whole table for every batch.
var sqlTradesByKey = `SELECT ` + tradeCols + `
FROM unnest($1::bigint[], $2::text[]) AS k(partner_id, client_bet_id)
CROSS JOIN LATERAL (SELECT * FROM trades t
	WHERE t.partner_id = k.partner_id AND t.client_bet_id = k.client_bet_id OFFSET 0) t`

// load is the lock-and-load half of an attempt: what it asks for and what
// it found.
type load struct {
	// marketIDs are the markets to lock, ascending and distinct.
	marketIDs []int64
	kinds     []string
	owners    []int64
	// refs are the accounts to lock; ids their ids when every one is known
	// (cache), which locks them by primary key and creates none.
	refs  []account.Ref
	ids   []int64
	cache *accountIDs
	// (posUsers, posMarkets) and (posSubPartners, posSubExternal,
	// posSubMarkets) are the positions to lock.
	posUsers, posMarkets          []int64
	posSubPartners, posSubMarkets []int64
	posSubExternal                []string
	subPartners                   []int64
	subExternal                   []string
	keyPartners                   []int64
	keyBets                       []string

	markets   map[int64]*market.Market
	accounts  *accounts
	positions []*market.Position
	existing  map[market.Key]*market.Trade
	subs      map[market.SubAccount]int64
	// created are the sub-accounts this transaction made.
	created map[int64]bool
}

func newLoad(locks []market.Lock, cache *accountIDs) *load {
	l := &load{cache: cache, markets: map[int64]*market.Market{}, existing: map[market.Key]*market.Trade{},
		subs: map[market.SubAccount]int64{}, created: map[int64]bool{},
		posUsers: []int64{}, posMarkets: []int64{}, posSubPartners: []int64{}, posSubMarkets: []int64{}, posSubExternal: []string{}}
	var refs []account.Ref
	var subs []market.SubAccount
	for _, lk := range locks {
		l.marketIDs = append(l.marketIDs, lk.MarketID)
		// The markets of an exclusive pool are locked with the traded
		// one, in the same ascending order.
		l.marketIDs = append(l.marketIDs, lk.Pool...)
		refs = append(refs, lk.Accounts...)
		refs = append(refs, account.EscrowAccount(lk.MarketID), account.FeeAccount(lk.MarketID))
		for _, u := range lk.Users {
			l.posUsers, l.posMarkets = append(l.posUsers, u), append(l.posMarkets, lk.MarketID)
		}
		for _, sa := range lk.SubAccounts {
			l.posSubPartners, l.posSubExternal = append(l.posSubPartners, sa.PartnerID), append(l.posSubExternal, sa.ExternalID)
			l.posSubMarkets = append(l.posSubMarkets, lk.MarketID)
		}
		subs = append(subs, lk.SubAccounts...)
		for _, k := range lk.Keys {
			l.keyPartners, l.keyBets = append(l.keyPartners, k.PartnerID), append(l.keyBets, k.ClientBetID)
		}
	}
	slices.Sort(l.marketIDs)
	l.marketIDs = slices.Compact(l.marketIDs)
	l.kinds, l.owners = refArrays(refs)
	if len(subs) == 0 {
		l.refs = make([]account.Ref, len(l.kinds))
		for i := range l.kinds {
			l.refs[i] = account.Ref{Kind: account.Kind(l.kinds[i]), Owner: l.owners[i]}
		}
		if ids, ok := cache.lookup(l.refs); ok {
			slices.Sort(ids)
			l.ids = ids
		}
	}
	// Sorted, so that two transactions creating the same sub-accounts
	// insert them in the same order and wait rather than deadlock.
	slices.SortFunc(subs, func(a, b market.SubAccount) int {
		return cmp.Or(cmp.Compare(a.PartnerID, b.PartnerID), cmp.Compare(a.ExternalID, b.ExternalID))
	})
	subs = slices.Compact(subs)
	l.subPartners, l.subExternal = make([]int64, len(subs)), make([]string, len(subs))
	for i, sa := range subs {
		l.subPartners[i], l.subExternal[i] = sa.PartnerID, sa.ExternalID
	}
	return l
}

// run sends BEGIN and every lock and load in one round trip and reads the
// results. Markets that do not exist are absent from l.markets.
func (l *load) run(ctx context.Context, conn *pgxpool.Conn) error {
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(sqlTradePlans)
	b.Queue(sqlLockMarkets, l.marketIDs)
	hasSubs, hasKeys := len(l.subPartners) > 0, len(l.keyPartners) > 0
	if hasSubs {
		b.Queue(sqlCreateSubAccounts, l.subPartners, l.subExternal, now())
		b.Queue(sqlSubAccounts, l.subPartners, l.subExternal)
	}
	if l.ids != nil {
		b.Queue(sqlLockAccountIDs, l.ids)
	} else {
		b.Queue(sqlEnsureAccounts, l.kinds, l.owners, l.subPartners, l.subExternal)
		b.Queue(sqlLockAccounts, l.kinds, l.owners, l.subPartners, l.subExternal)
	}
	b.Queue(sqlLockPositions, l.posUsers, l.posMarkets, l.posSubPartners, l.posSubExternal, l.posSubMarkets)
	if hasKeys {
		b.Queue(sqlTradesByKey, l.keyPartners, l.keyBets)
	}

	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	ms, err := scanMarkets(rows)
	if err != nil {
		return err
	}
	for _, m := range ms {
		l.markets[m.ID] = m
	}
	if hasSubs {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		var id int64
		if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { l.created[id] = true; return nil }); err != nil {
			return err
		}
		if rows, err = br.Query(); err != nil {
			return err
		}
		var sa market.SubAccount
		if _, err := pgx.ForEachRow(rows, []any{&sa.PartnerID, &sa.ExternalID, &id}, func() error { l.subs[sa] = id; return nil }); err != nil {
			return err
		}
	}
	if l.ids == nil {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if rows, err = br.Query(); err != nil {
		return err
	}
	if l.accounts, err = scanAccounts(rows); err != nil {
		return err
	}
	if l.ids != nil && !l.lockedRefs() {
		l.cache.forget()
		return errStaleAccountIDs
	}
	if rows, err = br.Query(); err != nil {
		return err
	}
	if l.positions, err = scanPositions(rows); err != nil {
		return err
	}
	if hasKeys {
		if rows, err = br.Query(); err != nil {
			return err
		}
		for rows.Next() {
			t := &market.Trade{}
			dest, finish := tradeDest(t)
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			finish()
			l.existing[market.Key{PartnerID: t.PartnerID, ClientBetID: t.ClientBetID}] = t
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return br.Close()
}

// lockedRefs reports whether the accounts locked by id are exactly refs.
func (l *load) lockedRefs() bool {
	if len(l.accounts.id) != len(l.refs) {
		return false
	}
	for _, r := range l.refs {
		if _, ok := l.accounts.id[r]; !ok {
			return false
		}
	}
	return true
}
