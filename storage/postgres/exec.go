package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// The money path takes two round trips when it succeeds: one sends BEGIN
// and every lock and load, one sends every write and COMMIT. The market's
// row lock is held for the second one and the time decide takes, which is
// what bounds the trades per second of one market.

// sqlLockMarkets locks markets $1 in ascending id order: the row locks
// are taken as the sorted rows come out, so two batches sharing markets
// queue on the first of them rather than deadlock.
const sqlLockMarkets = `SELECT ` + marketCols + marketFrom + `WHERE m.id = ANY($1) ORDER BY m.id FOR NO KEY UPDATE OF m`

const positionCols = `x.id, x.user_id, x.market_id, x.side, x.shares, x.cost_basis, x.bought, x.spent,
	x.returned, x.use_bonus, COALESCE(x.partner_id, 0), x.created_at, x.updated_at, x.closed_at, x.won_side`

// sqlLockPositions locks the open positions of the (user $1, market $2)
// pairs and of the (partner $3, external id $4, market $5) sub-account
// pairs, each found
// through the open-position key. Every writer of a market's positions
// holds the market's lock first, so these row locks never wait; they make
// the rows' ownership explicit, and a batch locks no position it does not
// trade. Each pair is looked up on its own, each side by the whole
// open-position key (a sub-account first by its unique key), so that no
// estimate makes the planner walk every open position of a hot market
// once per trader (seen with the partial key (user, market) on a young
// table: 30 µs a trade, and 150 µs a partner bet, whose plan was made
// while the tables were empty).
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
// read the whole table for every batch (1.8 ms a batch at 20,000 trades).
const sqlTradesByKey = `SELECT ` + tradeCols + `
FROM unnest($1::bigint[], $2::text[]) AS k(partner_id, client_bet_id)
CROSS JOIN LATERAL (SELECT * FROM trades t
	WHERE t.partner_id = k.partner_id AND t.client_bet_id = k.client_bet_id OFFSET 0) t`

// sqlDeleteSubAccounts removes sub-accounts this transaction created that
// no trade used, with the empty ledger accounts made to lock them.
const sqlDeleteSubAccounts = `WITH gone AS (
	DELETE FROM ledger_accounts WHERE kind IN ('user', 'user_bonus') AND owner = ANY($1)
)
DELETE FROM users WHERE id = ANY($1)`

func positionDest(p *market.Position) ([]any, func()) {
	var side int16
	var won *int16
	dest := []any{&p.ID, &p.UserID, &p.MarketID, &side, &p.Shares, &p.CostBasis, &p.Bought, &p.Spent,
		&p.Returned, &p.UseBonus, &p.PartnerID, &p.CreatedAt, &p.UpdatedAt, &p.ClosedAt, &won}
	return dest, func() {
		p.Side = sideOf(side)
		if won != nil {
			w := int(*won)
			p.WonSide = &w
		}
	}
}

func scanPositions(rows pgx.Rows) ([]*market.Position, error) {
	var ps []*market.Position
	for rows.Next() {
		p := &market.Position{}
		dest, finish := positionDest(p)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// sqlUpdatePositions writes changed positions by id. The redundant
// x.id = ANY($1) lets the planner find them through the primary key: a
// settlement chunk of thousands of rows would otherwise hash-join the
// array against a sequential scan of the whole table.
const sqlUpdatePositions = `UPDATE positions x SET
	shares = u.shares, cost_basis = u.cost_basis, bought = u.bought, spent = u.spent, returned = u.returned,
	use_bonus = u.use_bonus, updated_at = u.updated_at, closed_at = u.closed_at, won_side = u.won_side
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
	$7::boolean[], $8::timestamptz[], $9::timestamptz[], $10::smallint[])
	AS u(id, shares, cost_basis, bought, spent, returned, use_bonus, updated_at, closed_at, won_side)
WHERE x.id = u.id AND x.id = ANY($1)`

// sqlInsertEffects writes everything an Effects creates in one statement.
// New rows that others refer to (positions, trades) take their ids from
// their sequences up front, numbered 1..n in id order, so that postings,
// price points and PnL events name their trade or position by that number
// and the ids come back in the order they were asked for.
const sqlInsertEffects = `WITH
p_ids AS MATERIALIZED (
	SELECT row_number() OVER (ORDER BY s.id) AS ord, s.id
	FROM (SELECT nextval('positions_id_seq') AS id FROM generate_series(1, $1::int)) s
),
t_ids AS MATERIALIZED (
	SELECT row_number() OVER (ORDER BY s.id) AS ord, s.id
	FROM (SELECT nextval('trades_id_seq') AS id FROM generate_series(1, $2::int)) s
),
new_positions AS (
	INSERT INTO positions (id, user_id, market_id, side, shares, cost_basis, bought, spent, returned,
		use_bonus, partner_id, created_at, updated_at, closed_at, won_side)
	SELECT i.id, u.user_id, u.market_id, u.side, u.shares, u.cost_basis, u.bought, u.spent, u.returned,
		u.use_bonus, NULLIF(u.partner_id, 0), u.created_at, u.updated_at, u.closed_at, u.won_side
	FROM unnest($3::bigint[], $4::bigint[], $5::smallint[], $6::bigint[], $7::bigint[], $8::bigint[],
		$9::bigint[], $10::bigint[], $11::boolean[], $12::bigint[], $13::timestamptz[], $14::timestamptz[],
		$15::timestamptz[], $16::smallint[])
		WITH ORDINALITY AS u(user_id, market_id, side, shares, cost_basis, bought, spent, returned,
			use_bonus, partner_id, created_at, updated_at, closed_at, won_side, ord)
	JOIN p_ids i ON i.ord = u.ord
	ORDER BY u.ord
),
new_trades AS (
	INSERT INTO trades (id, market_id, user_id, side, action, shares, amount, cost, fee, price_before,
		price_after, q_yes, q_no, use_bonus, partner_id, client_bet_id, request_hash, created_at)
	SELECT i.id, u.market_id, u.user_id, u.side, u.action, u.shares, u.amount, u.cost, u.fee, u.price_before,
		u.price_after, u.q_yes, u.q_no, u.use_bonus, NULLIF(u.partner_id, 0), NULLIF(u.client_bet_id, ''),
		u.request_hash, u.created_at
	FROM unnest($17::bigint[], $18::bigint[], $19::smallint[], $20::text[], $21::bigint[], $22::bigint[],
		$23::bigint[], $24::bigint[], $25::float8[], $26::float8[], $27::bigint[], $28::bigint[],
		$29::boolean[], $30::bigint[], $31::text[], $32::text[], $33::timestamptz[])
		WITH ORDINALITY AS u(market_id, user_id, side, action, shares, amount, cost, fee, price_before,
			price_after, q_yes, q_no, use_bonus, partner_id, client_bet_id, request_hash, created_at, ord)
	JOIN t_ids i ON i.ord = u.ord
	ORDER BY u.ord
),
new_postings AS (
	INSERT INTO postings (from_account, to_account, amount, reason, trade_id, created_at)
	SELECT u.from_account, u.to_account, u.amount, u.reason, COALESCE(i.id, NULLIF(u.trade_id, 0)), u.created_at
	FROM unnest($34::bigint[], $35::bigint[], $36::bigint[], $37::text[], $38::bigint[], $39::bigint[],
		$40::timestamptz[])
		WITH ORDINALITY AS u(from_account, to_account, amount, reason, trade_ord, trade_id, created_at, ord)
	LEFT JOIN t_ids i ON i.ord = u.trade_ord
	ORDER BY u.ord
),
new_prices AS (
	INSERT INTO price_points (market_id, trade_id, at, yes_probability, q_yes, q_no)
	SELECT u.market_id, COALESCE(i.id, NULLIF(u.trade_id, 0)), u.at, u.yes_probability, u.q_yes, u.q_no
	FROM unnest($41::bigint[], $42::bigint[], $43::bigint[], $44::timestamptz[], $45::float8[],
		$46::bigint[], $47::bigint[])
		WITH ORDINALITY AS u(market_id, trade_ord, trade_id, at, yes_probability, q_yes, q_no, ord)
	LEFT JOIN t_ids i ON i.ord = u.trade_ord
	ORDER BY u.ord
),
new_pnl AS (
	INSERT INTO pnl_events (user_id, position_id, at, delta)
	SELECT u.user_id, COALESCE(NULLIF(u.position_id, 0), i.id), u.at, u.delta
	FROM unnest($48::bigint[], $49::bigint[], $50::bigint[], $51::timestamptz[], $52::bigint[])
		WITH ORDINALITY AS u(user_id, position_ord, position_id, at, delta, ord)
	LEFT JOIN p_ids i ON i.ord = u.position_ord
	ORDER BY u.ord
)
SELECT
	COALESCE((SELECT array_agg(id ORDER BY ord) FROM p_ids), '{}'),
	COALESCE((SELECT array_agg(id ORDER BY ord) FROM t_ids), '{}')`

const sqlUpdateMarkets = `UPDATE markets m SET q_yes = u.q_yes, q_no = u.q_no, volume = u.volume,
	paused = u.paused, resolved = u.resolved, winning_outcome = u.winning_outcome, resolved_at = u.resolved_at
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::boolean[], $6::boolean[],
	$7::smallint[], $8::timestamptz[]) AS u(id, q_yes, q_no, volume, paused, resolved, winning_outcome, resolved_at)
WHERE m.id = u.id AND m.id = ANY($1)`

func updateMarketArgs(ms []*market.Market) []any {
	n := len(ms)
	id, qYes, qNo, volume := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	paused, resolved := make([]bool, n), make([]bool, n)
	won := make([]*int16, n)
	at := make([]*time.Time, n)
	for i, m := range ms {
		id[i], qYes[i], qNo[i], volume[i], paused[i], resolved[i] = m.ID, m.QYes, m.QNo, m.Volume, m.Paused, m.Resolved
		if m.WinningOutcome != nil {
			c := sideCode(*m.WinningOutcome)
			won[i] = &c
		}
		at[i] = timePtr(m.ResolvedAt)
	}
	return []any{id, qYes, qNo, volume, paused, resolved, won, at}
}

// A pool's won side is the first market of it to resolve YES; a later one
// (which the domain prevents) does not overwrite it.
const sqlSetPoolWonSide = `UPDATE pools SET won_side = COALESCE(won_side, $2) WHERE id = $1`

// Exec is the money path: in one transaction it locks market lock.MarketID
// (market.ErrMarketNotFound if there is none), creates and locks the
// ledger accounts lock names plus the market's escrow and fee account in
// ascending id order, loads the open positions lock asks for, calls
// decide and writes the Effects it returns. An error of decide is returned
// as it is, with nothing written. On a deadlock or serialization failure
// the whole transaction runs again, decide included.
func (s *Store) Exec(ctx context.Context, lock market.Lock, decide func(*market.State) (*market.Effects, error)) (*market.Effects, error) {
	var eff *market.Effects
	err := retry(ctx, s.retries, func() error {
		effs, err := s.exec(ctx, []market.Lock{lock}, func(sts []*market.State) ([]*market.Effects, error) {
			eff, err := decide(sts[0])
			return []*market.Effects{eff}, err
		})
		if err == nil {
			eff = effs[0]
		}
		return err
	})
	var mm *missingMarkets
	if errors.As(err, &mm) {
		return nil, market.ErrMarketNotFound
	}
	if err != nil {
		return nil, translate(err, nil)
	}
	return eff, nil
}

// ExecMarkets is Exec over several markets in one transaction (see
// market.Store). A market that does not exist is left out and the
// transaction runs again without it, so that no ledger account is made
// for it; markets are never deleted, so this happens at most once.
func (s *Store) ExecMarkets(ctx context.Context, locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	seen := make(map[int64]bool, len(locks))
	for _, l := range locks {
		if seen[l.MarketID] {
			return nil, errors.New("postgres: ExecMarkets takes distinct markets")
		}
		seen[l.MarketID] = true
	}
	missing := map[int64]bool{}
	for {
		var live []market.Lock
		for _, l := range locks {
			if !missing[l.MarketID] {
				live = append(live, l)
			}
		}
		if len(live) == 0 {
			return make([]*market.Effects, len(locks)), nil
		}
		var effs []*market.Effects
		err := retry(ctx, s.retries, func() error {
			var err error
			effs, err = s.exec(ctx, live, func(sts []*market.State) ([]*market.Effects, error) {
				return decideAll(locks, missing, sts, decide)
			})
			return err
		})
		var mm *missingMarkets
		if errors.As(err, &mm) {
			for _, id := range mm.ids {
				missing[id] = true
			}
			continue
		}
		if err != nil {
			return nil, translate(err, nil)
		}
		// effs are those of the live markets; put back the gaps.
		out := make([]*market.Effects, len(locks))
		k := 0
		for i, l := range locks {
			if !missing[l.MarketID] {
				out[i] = effs[k]
				k++
			}
		}
		return out, nil
	}
}

// decideAll calls decide with a State for every lock, those of missing
// markets without a Market, and returns the Effects of the others.
func decideAll(locks []market.Lock, missing map[int64]bool, live []*market.State,
	decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	if len(missing) == 0 {
		return decide(live)
	}
	all := make([]*market.State, len(locks))
	k := 0
	for i, l := range locks {
		if missing[l.MarketID] {
			shared := live[0]
			all[i] = &market.State{Balances: shared.Balances, Existing: shared.Existing, SubAccounts: shared.SubAccounts,
				NewSubAccounts: shared.NewSubAccounts, Now: shared.Now}
			continue
		}
		all[i] = live[k]
		k++
	}
	effs, err := decide(all)
	if err != nil {
		return nil, err
	}
	if len(effs) != len(all) {
		return nil, fmt.Errorf("postgres: decide returned %d effects for %d states", len(effs), len(all))
	}
	out := make([]*market.Effects, 0, len(live))
	for i, l := range locks {
		if missing[l.MarketID] {
			if effs[i] != nil {
				return nil, fmt.Errorf("postgres: effects for market %d, which does not exist", l.MarketID)
			}
			continue
		}
		out = append(out, effs[i])
	}
	return out, nil
}

var errNoMarket = &decideError{market.ErrMarketNotFound}

// missingMarkets is how an attempt says that markets of its locks do not
// exist; it travels as a decideError, so nothing retries or translates it.
type missingMarkets struct{ ids []int64 }

func (e *missingMarkets) Error() string {
	return fmt.Sprintf("postgres: markets %v do not exist", e.ids)
}

// exec is one attempt of Exec or ExecMarkets.
func (s *Store) exec(ctx context.Context, locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release(conn)

	l := newLoad(locks, &s.accountIDs)
	if err := l.run(ctx, conn); err != nil {
		return nil, err
	}
	if len(l.markets) < len(l.marketIDs) {
		var gone []int64
		for _, id := range l.marketIDs {
			if l.markets[id] == nil {
				gone = append(gone, id)
			}
		}
		return nil, &decideError{&missingMarkets{gone}}
	}

	// The clock is read once the markets are locked, so that the times of
	// a market's trades follow the order they happened in.
	at := now()
	balances := maps.Clone(l.accounts.balance)
	sts := make([]*market.State, len(locks))
	for i, lk := range locks {
		st := &market.State{Market: l.markets[lk.MarketID], Balances: balances, Existing: l.existing,
			SubAccounts: l.subs, NewSubAccounts: l.created, Now: at}
		for _, p := range l.positions {
			if p.MarketID == lk.MarketID {
				st.Positions = append(st.Positions, p)
			}
		}
		sts[i] = st
	}
	effs, err := decide(sts)
	if err != nil {
		return nil, &decideError{err}
	}
	if len(effs) != len(sts) {
		return nil, fmt.Errorf("postgres: decide returned %d effects for %d states", len(effs), len(sts))
	}
	parts := make([]part, 0, len(sts))
	for i, eff := range effs {
		if eff != nil {
			parts = append(parts, part{sts[i].Market, eff})
		}
	}
	if len(parts) == 0 {
		return effs, nil
	}
	w, err := plan(l, parts, at)
	if err != nil {
		return nil, err
	}
	w.batch.Queue(`COMMIT`)
	if err := w.send(ctx, conn); err != nil {
		// The writes and COMMIT went in one round trip: unless the server
		// refused a statement, the trade may have committed.
		return nil, commitFailed(err)
	}
	s.accountIDs.remember(l.accounts.id, w.dropped)
	return effs, nil
}

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

// sqlTradePlans makes a trade's statements run on generic plans, with
// index scans. They are the same few prepared statements on every
// connection, and their custom plans, which PostgreSQL otherwise keeps for
// them (an array parameter's length changes the estimates), cost more to
// make than to run: a one-trade transaction took 5.2 ms with them and 3.1
// ms without, and planning was 8% of a 64-trade batch's database time. A
// generic plan cannot know how long an array is and guesses ten elements,
// and for ten keys it prefers a sequential scan of a table of a thousand
// rows, testing each row against the whole array: locking and updating 27
// markets of 1,000 that way took 0.35 and 0.67 ms where the primary key
// takes 0.20 and 0.48, and it grows with the table. Every statement of a
// trade reads rows by a key, so sequential scans are turned off for them.
// Settlement keeps custom plans and sequential scans: its statements
// carry thousands of rows.
const sqlTradePlans = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`

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

// release rolls back whatever transaction an attempt left open and
// returns the connection. If the rollback fails, the pool discards the
// connection rather than hand out one inside a transaction.
func release(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' && !conn.Conn().IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}

// part is one market's Effects of an attempt.
type part struct {
	m   *market.Market
	eff *market.Effects
}

// writes is the Effects of an attempt turned into the statements that
// store them.
type writes struct {
	trades []*market.TradeEffect
	// dropped are the sub-accounts the writes delete again.
	dropped []int64
	newPos  []*market.Position
	batch   *pgx.Batch
	// insertAt is the place of sqlInsertEffects in the batch, -1 if none.
	insertAt int
}

// plan checks the parts' Effects against what the transaction locked and
// builds the batch that writes them all; the caller queues COMMIT after it
// when the batch ends the transaction (Exec) and not when more follows
// (Settle). Everything that could refuse them is checked here, because
// once the batch is sent nothing stops the commit but an error of the
// database.
func plan(l *load, parts []part, at time.Time) (*writes, error) {
	w := &writes{batch: &pgx.Batch{}, insertAt: -1}
	a, loaded := l.accounts, l.positions

	// Positions: new ones by pointer (a trade, a PnL entry and Positions
	// share it), changed ones by id, which must be among those locked.
	isLoaded := make(map[int64]bool, len(loaded))
	for _, p := range loaded {
		isLoaded[p.ID] = true
	}
	newOrd := map[*market.Position]int64{}
	changed := map[int64]*market.Position{}
	var changedOrder []int64
	addPos := func(p *market.Position) error {
		if p == nil {
			return nil
		}
		if p.ID == 0 {
			if _, ok := newOrd[p]; !ok {
				w.newPos = append(w.newPos, p)
				newOrd[p] = int64(len(w.newPos))
			}
			return nil
		}
		if !isLoaded[p.ID] {
			return fmt.Errorf("postgres: decision changed position %d, which the operation did not lock", p.ID)
		}
		if _, ok := changed[p.ID]; !ok {
			changedOrder = append(changedOrder, p.ID)
		}
		changed[p.ID] = p
		return nil
	}
	// Postings, in the order the decisions made them: those of each
	// trade, then the rest, market after market. tradeMarket is the
	// market of each trade, for price points that do not name theirs.
	var postings []account.Posting
	var tradeOrd, tradeMarket []int64
	var pnl []market.PnLEntry
	var notes []social.Notification
	var updated []*market.Market
	for _, pt := range parts {
		m, eff := pt.m, pt.eff
		for _, p := range eff.Positions {
			if err := addPos(p); err != nil {
				return nil, err
			}
		}
		for _, te := range eff.Trades {
			if err := addPos(te.Position); err != nil {
				return nil, err
			}
		}
		for _, e := range eff.PnL {
			if e.Position == nil {
				return nil, errors.New("postgres: PnL entry without a position")
			}
			if err := addPos(e.Position); err != nil {
				return nil, err
			}
		}
		for _, te := range eff.Trades {
			if te.Trade == nil {
				return nil, errors.New("postgres: trade effect without a trade")
			}
			w.trades = append(w.trades, te)
			tradeMarket = append(tradeMarket, m.ID)
			for _, p := range te.Postings {
				postings = append(postings, p)
				tradeOrd = append(tradeOrd, int64(len(w.trades)))
			}
		}
		for _, p := range eff.Postings {
			postings = append(postings, p)
			tradeOrd = append(tradeOrd, 0)
		}
		pnl = append(pnl, eff.PnL...)
		notes = append(notes, eff.Notifications...)
		if nm := eff.Market; nm != nil {
			if nm.ID != m.ID {
				return nil, fmt.Errorf("postgres: decision on market %d changed market %d", m.ID, nm.ID)
			}
			updated = append(updated, nm)
		}
	}
	if err := a.check(postings); err != nil {
		return nil, err
	}
	accIDs, deltas, err := a.deltas(postings)
	if err != nil {
		return nil, err
	}

	if len(changedOrder) > 0 {
		w.batch.Queue(sqlUpdatePositions, updatePositionArgs(changedOrder, changed)...)
	}
	if len(w.newPos) > 0 || len(w.trades) > 0 || len(postings) > 0 || len(pnl) > 0 {
		args := []any{int32(len(w.newPos)), int32(len(w.trades))}
		args = append(args, newPositionArgs(w.newPos)...)
		args = append(args, tradeArgs(w.trades)...)
		pa := a.postingArrays(postings, func(i int) int64 { return tradeOrd[i] }, at)
		// postingArrays gives (from, to, amount, reason, ref, times); here
		// ref is the trade's number, and a posting of no trade may still
		// name a trade by id.
		ids := make([]int64, len(postings))
		for i, p := range postings {
			if tradeOrd[i] == 0 {
				ids[i] = p.TradeID
			}
		}
		args = append(args, pa[0], pa[1], pa[2], pa[3], pa[4], ids, pa[5])
		args = append(args, priceArgs(w.trades, tradeMarket, at)...)
		args = append(args, pnlArgs(pnl, newOrd, at)...)
		w.insertAt = w.batch.Len()
		w.batch.Queue(sqlInsertEffects, args...)
	}
	if len(accIDs) > 0 {
		w.batch.Queue(sqlAddBalances, accIDs, deltas)
	}
	if len(notes) > 0 {
		args, err := notificationArgs(notes, at)
		if err != nil {
			return nil, err
		}
		w.batch.Queue(sqlInsertNotifications, args...)
	}
	if len(updated) > 0 {
		w.batch.Queue(sqlUpdateMarkets, updateMarketArgs(updated)...)
	}
	for _, pt := range parts {
		if pt.eff.PoolWonSide != nil {
			w.batch.Queue(sqlSetPoolWonSide, pt.m.PoolID, int32(*pt.eff.PoolWonSide))
		}
	}
	for _, pt := range parts {
		for _, id := range pt.eff.DropSubAccounts {
			if !l.created[id] {
				return nil, fmt.Errorf("postgres: decision dropped sub-account %d, which the transaction did not create", id)
			}
			w.dropped = append(w.dropped, id)
		}
	}
	if len(w.dropped) > 0 {
		w.batch.Queue(sqlDeleteSubAccounts, w.dropped)
	}
	return w, nil
}

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := dbTime(*t)
	return &u
}

func wonCode(w *int) *int16 {
	if w == nil {
		return nil
	}
	c := int16(*w)
	return &c
}

func updatePositionArgs(order []int64, byID map[int64]*market.Position) []any {
	n := len(order)
	id, shares, basis, bought, spent, returned := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	bonus := make([]bool, n)
	updated := make([]time.Time, n)
	closed := make([]*time.Time, n)
	won := make([]*int16, n)
	for i, pid := range order {
		p := byID[pid]
		id[i], shares[i], basis[i], bought[i], spent[i], returned[i] = p.ID, p.Shares, p.CostBasis, p.Bought, p.Spent, p.Returned
		bonus[i], updated[i], closed[i], won[i] = p.UseBonus, dbTime(p.UpdatedAt), timePtr(p.ClosedAt), wonCode(p.WonSide)
	}
	return []any{id, shares, basis, bought, spent, returned, bonus, updated, closed, won}
}

func newPositionArgs(ps []*market.Position) []any {
	n := len(ps)
	user, mkt, shares, basis, bought, spent, returned, partner := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	side := make([]int16, n)
	bonus := make([]bool, n)
	created, updated := make([]time.Time, n), make([]time.Time, n)
	closed := make([]*time.Time, n)
	won := make([]*int16, n)
	for i, p := range ps {
		user[i], mkt[i], shares[i], basis[i], bought[i], spent[i], returned[i], partner[i] = p.UserID, p.MarketID, p.Shares, p.CostBasis, p.Bought, p.Spent, p.Returned, p.PartnerID
		side[i], bonus[i] = sideCode(p.Side), p.UseBonus
		created[i], updated[i], closed[i], won[i] = dbTime(p.CreatedAt), dbTime(p.UpdatedAt), timePtr(p.ClosedAt), wonCode(p.WonSide)
	}
	return []any{user, mkt, side, shares, basis, bought, spent, returned, bonus, partner, created, updated, closed, won}
}

func tradeArgs(tes []*market.TradeEffect) []any {
	n := len(tes)
	mkt, user, shares, amount, cost, fee, qYes, qNo, partner := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	side := make([]int16, n)
	action, clientBet, hash := make([]string, n), make([]string, n), make([]string, n)
	before, after := make([]float64, n), make([]float64, n)
	bonus := make([]bool, n)
	created := make([]time.Time, n)
	for i, te := range tes {
		t := te.Trade
		mkt[i], user[i], shares[i], amount[i], cost[i], fee[i], qYes[i], qNo[i], partner[i] = t.MarketID, t.UserID, t.Shares, t.Amount, t.Cost, t.Fee, t.QYes, t.QNo, t.PartnerID
		side[i], action[i], clientBet[i], hash[i] = sideCode(t.Side), string(t.Action), t.ClientBetID, t.RequestHash
		before[i], after[i], bonus[i], created[i] = t.PriceBefore, t.PriceAfter, t.UseBonus, dbTime(t.CreatedAt)
	}
	return []any{mkt, user, side, action, shares, amount, cost, fee, before, after, qYes, qNo, bonus, partner, clientBet, hash, created}
}

func priceArgs(tes []*market.TradeEffect, marketIDs []int64, at time.Time) []any {
	n := len(tes)
	mkt, ord, id, qYes, qNo := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	times := make([]time.Time, n)
	prob := make([]float64, n)
	for i, te := range tes {
		p := te.Price
		mkt[i], ord[i], qYes[i], qNo[i], prob[i] = cmpOr(p.MarketID, marketIDs[i]), int64(i+1), p.QYes, p.QNo, p.YesProbability
		times[i] = at
		if !p.At.IsZero() {
			times[i] = dbTime(p.At)
		}
	}
	return []any{mkt, ord, id, times, prob, qYes, qNo}
}

func pnlArgs(es []market.PnLEntry, newOrd map[*market.Position]int64, at time.Time) []any {
	n := len(es)
	user, ord, id, delta := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	times := make([]time.Time, n)
	for i, e := range es {
		user[i], id[i], delta[i] = e.Position.UserID, e.Position.ID, e.Delta
		if e.Position.ID == 0 {
			ord[i] = newOrd[e.Position]
		}
		times[i] = at
		if !e.At.IsZero() {
			times[i] = dbTime(e.At)
		}
	}
	return []any{user, ord, id, times, delta}
}

func cmpOr(v, fallback int64) int64 {
	if v == 0 {
		return fallback
	}
	return v
}

// send writes the batch (and commits, if it ends with COMMIT); on
// success it sets the ids of new positions and trades, and the trade ids
// of their postings and price points, in the Effects.
func (w *writes) send(ctx context.Context, conn *pgxpool.Conn) error {
	br := conn.SendBatch(ctx, w.batch)
	defer br.Close()
	n := w.batch.Len()
	var posIDs, tradeIDs []int64
	for i := range n {
		if i == w.insertAt {
			if err := br.QueryRow().Scan(&posIDs, &tradeIDs); err != nil {
				return &stmtError{at: i, last: n - 1, err: err}
			}
			continue
		}
		if _, err := br.Exec(); err != nil {
			return &stmtError{at: i, last: n - 1, err: err}
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if len(posIDs) != len(w.newPos) || len(tradeIDs) != len(w.trades) {
		// Committed already; the ids cannot be matched, so say so loudly.
		return fmt.Errorf("postgres: wrote %d positions and %d trades but got %d and %d ids back",
			len(w.newPos), len(w.trades), len(posIDs), len(tradeIDs))
	}
	for i, p := range w.newPos {
		p.ID = posIDs[i]
	}
	for i, te := range w.trades {
		id := tradeIDs[i]
		te.Trade.ID = id
		te.Price.TradeID = id
		for j := range te.Postings {
			te.Postings[j].TradeID = id
		}
	}
	return nil
}
