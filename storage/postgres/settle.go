package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

// A settlement resolves one market, or every market of an exclusive pool,
// in one transaction of a few set-based statements, whatever the number
// of positions; Go holds a few numbers per market, never a position:
//
//  1. lock the markets (ascending id) and check them (Settlement.Begin,
//     PoolSettlement.Plan);
//  2. lock the escrow and the fee accounts, stage every paid holder of
//     each market with its user account and what it is paid
//     (settle_pay, a temporary table, which writes no WAL), and read
//     each market's total, holders and first and last open position;
//  3. decide, in Go, which accounts pay how much (Settlement.Sources,
//     market.Split), and write (settling.write): one INSERT … SELECT of
//     the postings per market, one UPDATE … FROM of the credited
//     balances in ascending account id order, then, with the treasury
//     locked last, Settlement.Finish's leftover postings, the balances of
//     the escrow, the fee accounts and the treasury, the markets, and the
//     ids of the markets' notifications; COMMIT.
//
// A settlement writes one posting per paid holder and paying account and
// one balance per paid holder, and nothing per position: a position it
// closes keeps its row, and reads close it by its market (settledCols),
// which also gives each holder its market_resolved notification (social.go)
// and each position its realization (reads.go). The payout rule is
// market.Settlement.Payout, in SQL once (payoutSQL), for the postings and
// the reads alike; storage/storagetest holds it to the memory store, which
// runs the Go rule.
//
// Locks. The markets' locks keep the set of open positions still. The
// escrow and the fee accounts are locked first: only operations holding a
// market's lock touch them. The holders' accounts are not locked while the
// postings are written (checked row by row, a posting's foreign key takes
// a KEY SHARE lock, which trades, FOR NO KEY UPDATE, neither wait for nor
// block; checked once, see settlechecks.go, it takes none). Their
// balances change in one statement near the end, which locks them in
// ascending id order, as every money operation locks accounts; so a holder
// trading on another market waits for the end of a settlement at most. The
// treasury is locked last, when every other account is locked already, so
// a settlement holds it only for its last round trip; a void's refunds
// that the treasury pays are posted before and its balance moves at the
// end.

// sqlCreatePay makes the table of a settlement's paid holders: market,
// holder, whether the row pays the holder's bonus account (a void's
// refund of bonus money, market.Settlement.BonusPayout) or its user
// account, that account, and what it is paid. A void pays a holder up to
// two rows, the bonus one first.
const sqlCreatePay = `CREATE TEMPORARY TABLE settle_pay (market bigint NOT NULL, holder bigint NOT NULL,
	bonus boolean NOT NULL DEFAULT false, account bigint, amount bigint NOT NULL) ON COMMIT DROP`

// payoutSQL is market.Settlement.Payout in SQL: what a settlement pays
// position x when its market resolves with outcome code won (1 YES, 0 NO,
// 2 void): a kopeck a share of the winning side, or, for a void, the net
// cost floored at 0. The postings of a settlement and every read of a
// settled position use it, so what was paid and what is shown agree.
func payoutSQL(x, won string) string {
	return `CASE WHEN ` + won + ` = ` + strconv.Itoa(outcomeVoid) + ` THEN GREATEST(` + x + `.spent - ` + x + `.returned, 0)
		WHEN ` + x + `.side = ` + won + ` THEN ` + x + `.shares ELSE 0 END`
}

// voidBonusSQL is market.Settlement.BonusPayout of a void in SQL: the
// part of position x's refund that returns to the bonus balance, its
// bonus net cost floored at 0 and capped by the refund.
func voidBonusSQL(x string) string {
	return `LEAST(GREATEST(` + x + `.bonus_net, 0), GREATEST(` + x + `.spent - ` + x + `.returned, 0))`
}

// stageSQL stages the paid holders of market $1, which settles with
// outcome code $2, into settle_pay, each with its user account (NULL if it
// has none). A resolution pays only the winning side, on which a holder
// has at most one open position (positions_open_key); a void pays both, a
// holder once for the two: the bonus part of its refunds to its bonus
// account, the rest to its user account.
//
// stageChunkSQL stages only the holders whose id is in ($3, $4].
func stageSQL(void bool) string { return stageHoldersSQL(void, "") }

func stageChunkSQL(void bool) string {
	return stageHoldersSQL(void, ` AND x.user_id > $3 AND x.user_id <= $4`)
}

func stageHoldersSQL(void bool, holders string) string {
	if !void {
		return `INSERT INTO settle_pay (market, holder, account, amount)
SELECT x.market_id, x.user_id, a.id, ` + payoutSQL("x", "$2::smallint") + `
FROM positions x
LEFT JOIN ledger_accounts a ON a.kind = 'user' AND a.owner = x.user_id
WHERE x.market_id = $1 AND x.closed_at IS NULL AND x.side = $2::smallint AND x.shares > 0` + holders
	}
	return `INSERT INTO settle_pay (market, holder, bonus, account, amount)
SELECT $1, h.user_id, k.bonus, a.id, k.amount
FROM (SELECT x.user_id, sum(` + payoutSQL("x", "$2::smallint") + `)::bigint AS amount,
		sum(` + voidBonusSQL("x") + `)::bigint AS bonus
	FROM positions x WHERE x.market_id = $1 AND x.closed_at IS NULL` + holders + `
	GROUP BY x.user_id) h
CROSS JOIN LATERAL (VALUES (true, h.bonus), (false, h.amount - h.bonus)) AS k(bonus, amount)
LEFT JOIN ledger_accounts a ON a.kind = CASE WHEN k.bonus THEN 'user_bonus' ELSE 'user' END AND a.owner = h.user_id
WHERE k.amount > 0`
}

// sqlSettleMemory gives the rest of the settlement's transaction the
// memory to group a void's positions by holder, and the credits by
// account, in one hash table each: a void of a million positions groups
// 750,000 holders, about 150 MB; with the default 4 MB the planner read
// the positions in holder order through positions_user_id_idx instead,
// a heap page for every position, or spilled the groups to disk. Only
// the settlement's statements get it, and only one settlement of a
// market runs at a time. JIT compilation is off for them too: their
// costs are over its threshold at every size, and compiling took a tenth
// of a second a statement for expressions a settlement runs once a row.
const sqlSettleMemory = `SELECT set_config('work_mem', '256MB', true), set_config('jit', 'off', true)`

// sqlStaged reads what settle_pay holds for market $1: paid holders,
// their total, holders with no user account; and the market's first and
// last open position id (NULL for none), each found at an end of
// positions_market_open_idx.
const sqlStaged = `SELECT count(*), COALESCE(sum(amount), 0)::bigint, count(*) FILTER (WHERE account IS NULL),
	(SELECT min(id) FROM positions WHERE market_id = $1 AND closed_at IS NULL),
	(SELECT max(id) FROM positions WHERE market_id = $1 AND closed_at IS NULL)
FROM settle_pay WHERE market = $1`

// sqlCreateHolderAccounts creates the user (or bonus) account of every
// staged holder that has none, and stages it. A holder has paid, so this
// finds nothing unless a position was written around the money path.
const sqlCreateHolderAccounts = `WITH made AS (
	INSERT INTO ledger_accounts (kind, owner)
	SELECT DISTINCT CASE WHEN bonus THEN 'user_bonus' ELSE 'user' END, holder FROM settle_pay WHERE account IS NULL ORDER BY 2, 1
	ON CONFLICT (kind, owner) DO NOTHING)
SELECT 1`

const sqlStageHolderAccounts = `UPDATE settle_pay p SET account = a.id FROM ledger_accounts a
WHERE p.account IS NULL AND a.kind = CASE WHEN p.bonus THEN 'user_bonus' ELSE 'user' END AND a.owner = p.holder`

// sqlPayFromOne posts what every staged holder of market $1 is paid from
// account $2, reason $3, at $4: a settlement one account pays whole.
const sqlPayFromOne = `INSERT INTO postings (from_account, to_account, amount, reason, created_at)
SELECT $2, p.account, p.amount, $3, $4 FROM settle_pay p WHERE p.market = $1 ORDER BY p.account`

// sqlPaySplit posts what the staged holders of market $1 are paid by
// several accounts, reason $5, at $6: the holders in ascending id order
// (each one's bonus row first), each paid by account $2[i] the part of its
// kopecks that falls in [$3[i], $4[i]) when the holders' kopecks are laid
// end to end after the $7 kopecks of the holders paid before them (0 but
// in a settlement's later chunks), which is market.Split.
const sqlPaySplit = `INSERT INTO postings (from_account, to_account, amount, reason, created_at)
SELECT s.id, p.account, s.part, $5, $6
FROM (SELECT account, amount, (sum(amount) OVER (ORDER BY holder, NOT bonus ROWS UNBOUNDED PRECEDING) - amount + $7::bigint)::bigint AS before
	FROM settle_pay WHERE market = $1) p
CROSS JOIN LATERAL (
	SELECT src.ord, src.id, GREATEST(0, LEAST(p.before + p.amount, src.hi) - GREATEST(p.before, src.lo)) AS part
	FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS src(id, lo, hi, ord)) s
WHERE s.part > 0
ORDER BY p.account, s.ord`

// sqlCredit adds to every staged holder's account what it is paid, one
// UPDATE for all of them. The accounts are locked as the join hands them
// over: with hash and merge joins off (sqlCreditPlans) the join is a
// nested loop over the credits sorted by account, each account found
// through the primary key, so they are locked in ascending id order, as
// every money operation locks accounts, and a settlement of a few
// holders reads a few accounts however many there are (a merge join
// would walk the whole primary key from its start).
const (
	sqlCreditPlans = `SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`
	sqlCredit      = `UPDATE ledger_accounts a SET balance = a.balance + c.amount
FROM (SELECT account, sum(amount)::bigint AS amount FROM settle_pay GROUP BY account ORDER BY account) c
WHERE a.id = c.account`
	sqlCredited = `SELECT count(DISTINCT account) FROM settle_pay`
)

// sqlNotifyBlock gives market $1 the ids of its holders' market_resolved
// notifications: a block of $2 ids from notification_blocks, and the
// first open position id $3 they count from (migration 00015).
const sqlNotifyBlock = `WITH b AS (UPDATE notification_blocks SET next = next + $2 RETURNING next - $2 AS base)
UPDATE markets m SET notify_base = b.base, notify_first = $3 FROM b WHERE m.id = $1`

// Settle resolves market marketID by st (see market.Store):
// market.ErrMarketNotFound, or the error of st.Begin (market.ErrResolved,
// also while the market is settling) with nothing written. A market with
// more open positions than the store's chunk (WithSettlementChunks)
// settles in several transactions (settle_chunks.go), any other in one.
// On a deadlock or serialization failure a transaction runs again.
func (s *Store) Settle(ctx context.Context, marketID int64, st market.Settlement) error {
	chunked, err := s.chunked(ctx, marketID, st)
	if err != nil {
		return err
	}
	if chunked {
		return s.settleInChunks(ctx, marketID, st)
	}
	return s.settleOnce(ctx, marketID, st)
}

// settleOnce resolves market marketID by st in one transaction.
func (s *Store) settleOnce(ctx context.Context, marketID int64, st market.Settlement) error {
	return s.settleTx(ctx, func(tx pgx.Tx, checked bool) error {
		m, err := scanMarket(tx.QueryRow(ctx, sqlLockMarkets, []int64{marketID}))
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoMarket
		} else if err != nil {
			return err
		}
		if err := st.Begin(m); err != nil {
			return &decideError{err}
		}
		return settleMarkets(ctx, tx, s.changeChannel, checked, []*market.Market{m}, []market.Settlement{st})
	})
}

// settleTx runs a settlement fn in a transaction (see Store.tx), told
// whether it checks its postings' accounts itself
// (settlementChecksPostings); if the server refuses it that, it runs
// again with the foreign keys.
func (s *Store) settleTx(ctx context.Context, fn func(tx pgx.Tx, checked bool) error) error {
	checked := s.settlementChecksPostings(ctx)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error { return fn(tx, checked) })
	if err != nil && checked && s.checksRefused(err) {
		err = s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error { return fn(tx, false) })
	}
	return translate(err, nil)
}

// SettlePool resolves exclusive pool poolID as a whole (see market.Store)
// in one transaction: its markets locked in ascending id order, then
// settled one after another as ps.Plan says, each as Settle settles a
// market. On a deadlock or serialization failure it runs again from the
// start.
func (s *Store) SettlePool(ctx context.Context, poolID int64, ps market.PoolSettlement) error {
	return s.settleTx(ctx, func(tx pgx.Tx, checked bool) error {
		ms, err := lockPoolMarkets(ctx, tx, poolID)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return &decideError{market.ErrPoolNotFound}
		}
		plans, err := ps.Plan(ms)
		if err != nil {
			return &decideError{err}
		}
		return settleMarkets(ctx, tx, s.changeChannel, checked, ms, plans)
	})
}

// settling is one attempt of a settlement between its round trips.
type settling struct {
	tx      pgx.Tx
	markets []*market.Market
	plans   []market.Settlement
	at      time.Time
	// ids are the ledger ids of the accounts that pay (escrows, fee
	// accounts, the treasury); start the balances of the locked ones
	// (all but the treasury) when locked, left as the settlement leaves
	// them, and treasury what it takes from the treasury.
	ids         map[account.Ref]int64
	start, left map[account.Ref]int64
	treasury    int64
	staged      []staged
	// changeChannel is the store's (see queueChanges).
	changeChannel string
	// checked says the settlement checks its holders' postings' accounts
	// itself (settlementChecksPostings), not row by row.
	checked bool
}

// staged is what settle_pay holds for one market.
type staged struct {
	holders, total, missing int64
	// first and last are the market's first and last open position ids
	// (nil with no open position).
	first, last *int64
	// sources pay the holders, and parts is what each pays in all.
	sources []market.Source
	parts   []int64
}

// settleMarkets settles ms, locked in ascending id order and checked,
// each by its plan, in transaction tx, and logs one market_resolved
// change per market, announced on channel; checked as
// settlementChecksPostings says.
func settleMarkets(ctx context.Context, tx pgx.Tx, channel string, checked bool, ms []*market.Market, plans []market.Settlement) error {
	x := &settling{tx: tx, markets: ms, plans: plans, changeChannel: channel, checked: checked}
	if err := x.stage(ctx); err != nil {
		return err
	}
	if err := x.decide(); err != nil {
		return err
	}
	return x.write(ctx)
}

// stage locks the accounts that pay, stages every market's paid holders
// and reads what was staged.
func (x *settling) stage(ctx context.Context) error {
	pay := []account.Ref{}
	for i, m := range x.markets {
		pay = append(pay, x.plans[i].Sources(m, nil)[0].From, account.FeeAccount(m.ID))
	}
	ensureKinds, ensureOwners := refArrays(append(pay, account.Treasury))
	lockKinds, lockOwners := refArrays(pay)
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(sqlEnsureAccounts, ensureKinds, ensureOwners, none, []string{})
	b.Queue(sqlLockAccounts, lockKinds, lockOwners, none, []string{})
	b.Queue(sqlTreasury)
	// The table must exist before the statements that use it are
	// prepared, which pgx does for a whole batch before running it.
	b.Queue(sqlCreatePay)
	br := x.tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	acc, err := scanAccounts(rows)
	if err != nil {
		return err
	}
	if len(acc.id) != len(lockKinds) {
		return fmt.Errorf("postgres: locked %d of a settlement's %d paying accounts", len(acc.id), len(lockKinds))
	}
	x.ids, x.start, x.left = acc.id, acc.balance, maps.Clone(acc.balance)
	var treasury int64
	if err := br.QueryRow().Scan(&treasury); err != nil {
		return err
	}
	x.ids[account.Treasury] = treasury
	if _, err := br.Exec(); err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}

	b = &pgx.Batch{}
	b.Queue(sqlSettleMemory)
	for i, m := range x.markets {
		b.Queue(stageSQL(x.plans[i].Void), m.ID, outcomeOf(x.plans[i]))
	}
	b.Queue(`ANALYZE settle_pay`)
	for _, m := range x.markets {
		b.Queue(sqlStaged, m.ID)
	}
	br = x.tx.SendBatch(ctx, b)
	defer br.Close()
	for range 2 + len(x.markets) {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	x.staged = make([]staged, len(x.markets))
	var missing int64
	for i := range x.markets {
		st := &x.staged[i]
		if err := br.QueryRow().Scan(&st.holders, &st.total, &st.missing, &st.first, &st.last); err != nil {
			return err
		}
		missing += st.missing
	}
	// The clock is read once the markets are locked, so that a
	// settlement's time follows the trades before it.
	x.at = now()
	if err := br.Close(); err != nil {
		return err
	}
	if missing == 0 {
		return nil
	}
	b = &pgx.Batch{}
	b.Queue(sqlCreateHolderAccounts)
	b.Queue(sqlStageHolderAccounts)
	return sendAll(ctx, x.tx, b)
}

// outcomeOf is the outcome code (winning_outcome) a settlement gives its
// market.
func outcomeOf(s market.Settlement) int16 {
	if s.Void {
		return outcomeVoid
	}
	return sideCode(s.Won)
}

// decide says which accounts pay each market's holders, and how much each
// pays in all, market after market as the locked balances go.
func (x *settling) decide() error {
	for i, m := range x.markets {
		st := &x.staged[i]
		st.sources = x.plans[i].Sources(m, x.left)
		parts, err := market.Split(0, st.total, st.sources)
		if err != nil {
			return &decideError{fmt.Errorf("market %d: %w", m.ID, err)}
		}
		st.parts = parts
		for j, src := range st.sources {
			if _, ok := x.ids[src.From]; !ok {
				return fmt.Errorf("postgres: a settlement pays from %s, which it did not lock", src.From)
			}
			if src.From == account.Treasury {
				x.treasury -= parts[j]
			} else {
				x.left[src.From] -= parts[j]
			}
		}
	}
	return nil
}

// write runs every statement that writes the settlement, in this order:
// the postings to the holders, their balances, the treasury's lock, then
// what Settlement.Finish decides with it (the escrow's leftover), the
// balances of the escrow, the fee accounts and the treasury, the markets,
// the pool's won side and the ids of the markets' notifications, and
// COMMIT. Anything a settlement adds to the database belongs here.
func (x *settling) write(ctx context.Context) error {
	b := &pgx.Batch{}
	if x.checked {
		b.Queue(sqlPostingChecksOff)
	}
	var wantPostings []int64 // per statement queued, -1 when unknown
	for i, m := range x.markets {
		st, s := &x.staged[i], x.plans[i]
		if st.holders == 0 {
			continue
		}
		if one := onlyPayer(st.parts); one >= 0 {
			b.Queue(sqlPayFromOne, m.ID, x.ids[st.sources[one].From], s.Reason(), x.at)
			wantPostings = append(wantPostings, st.holders)
			continue
		}
		ids, lo, hi := make([]int64, len(st.sources)), make([]int64, len(st.sources)), make([]int64, len(st.sources))
		var end int64
		for j, src := range st.sources {
			ids[j], lo[j] = x.ids[src.From], end
			if src.Cap < 0 {
				end = 1<<63 - 1
			} else if e, ok := account.Add(end, src.Cap); ok {
				end = e
			} else {
				end = 1<<63 - 1
			}
			hi[j] = end
		}
		b.Queue(sqlPaySplit, m.ID, ids, lo, hi, s.Reason(), x.at, int64(0))
		wantPostings = append(wantPostings, -1)
	}
	if x.checked {
		b.Queue(sqlPostingChecksOn)
	}
	b.Queue(sqlCreditPlans)
	b.Queue(sqlCredited)
	b.Queue(sqlCredit)
	kinds, owners := refArrays([]account.Ref{account.Treasury})
	b.Queue(sqlLockAccounts, kinds, owners, []int64{}, []string{})
	br := x.tx.SendBatch(ctx, b)
	if x.checked {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
	}
	for _, want := range wantPostings {
		tag, err := br.Exec()
		if err == nil && want >= 0 && tag.RowsAffected() != want {
			err = fmt.Errorf("postgres: wrote %d of a settlement's %d postings", tag.RowsAffected(), want)
		}
		if err != nil {
			br.Close()
			return err
		}
	}
	if x.checked {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	var credited int64
	if err := br.QueryRow().Scan(&credited); err != nil {
		br.Close()
		return err
	}
	tag, err := br.Exec()
	if err == nil && tag.RowsAffected() != credited {
		err = fmt.Errorf("postgres: credited %d of a settlement's %d accounts", tag.RowsAffected(), credited)
	}
	if err != nil {
		br.Close()
		return err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	acc, err := scanAccounts(rows)
	if err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	treasury, ok := acc.balance[account.Treasury]
	if !ok {
		return errors.New("postgres: the treasury is gone")
	}
	fin, err := x.finish(treasury)
	if err != nil {
		return err
	}
	return sendAll(ctx, x.tx, fin)
}

// onlyPayer is the index of the one source that pays everything of parts,
// or -1 when none or several pay.
func onlyPayer(parts []int64) int {
	one := -1
	for i, p := range parts {
		if p > 0 {
			if one >= 0 {
				return -1
			}
			one = i
		}
	}
	return one
}

// finish decides the end of each market's settlement (Settlement.Finish)
// with the treasury's balance, and returns the statements that write it.
func (x *settling) finish(treasury int64) (*pgx.Batch, error) {
	var postings []account.Posting
	var markets []*market.Market
	var poolWon *int
	for i, m := range x.markets {
		s := x.plans[i]
		// What the settlement took from the treasury is not written yet;
		// Finish sees the treasury as it leaves it.
		t, ok := account.Add(treasury, x.treasury)
		if !ok {
			return nil, &decideError{fmt.Errorf("market %d: the refunds would take the treasury out of int64: %w", m.ID, account.ErrBalanceLimit)}
		}
		escrow := s.Sources(m, nil)[0].From
		fin, err := s.Finish(&market.State{Market: m, Now: x.at, Balances: map[account.Ref]int64{escrow: x.left[escrow], account.Treasury: t}})
		if err != nil {
			return nil, &decideError{err}
		}
		if len(fin.Positions) > 0 || len(fin.PnL) > 0 || len(fin.Notifications) > 0 || len(fin.Trades) > 0 || fin.Market == nil {
			return nil, errors.New("postgres: a settlement's finish decided more than postings and the market")
		}
		for _, p := range fin.Postings {
			if p.From != escrow || p.To != account.Treasury {
				return nil, fmt.Errorf("postgres: a settlement's finish pays %s to %s", p.From, p.To)
			}
			x.left[escrow] -= p.Amount
			x.treasury += p.Amount
		}
		postings = append(postings, fin.Postings...)
		markets = append(markets, fin.Market)
		if fin.PoolWonSide != nil {
			poolWon = fin.PoolWonSide
		}
	}
	// The net change of each paying account, in ascending id order (they
	// are all locked already).
	net := map[int64]int64{x.ids[account.Treasury]: x.treasury}
	for r, start := range x.start {
		net[x.ids[r]] += x.left[r] - start
	}
	var ids, deltas []int64
	for _, id := range slices.Sorted(maps.Keys(net)) {
		if net[id] != 0 {
			ids, deltas = append(ids, id), append(deltas, net[id])
		}
	}
	a := &accounts{id: x.ids}
	b := &pgx.Batch{}
	if len(postings) > 0 {
		b.Queue(sqlInsertPostings, a.postingArrays(postings, func(int) int64 { return 0 }, x.at)...)
	}
	if len(ids) > 0 {
		b.Queue(sqlAddBalances, ids, deltas)
	}
	b.Queue(sqlUpdateMarkets, updateMarketArgs(markets)...)
	if poolWon != nil {
		b.Queue(sqlSetPoolWonSide, x.markets[0].PoolID, int32(*poolWon))
	}
	// In ascending market id order, so that the ids of a pool's
	// notifications follow its markets, as the memory store numbers them.
	for i, m := range x.markets {
		if st := &x.staged[i]; st.first != nil {
			b.Queue(sqlNotifyBlock, m.ID, *st.last-*st.first+1, *st.first)
		}
	}
	// The followers who hold nothing on a market are told of it here
	// (follows.go); holders' notifications stay derived.
	for _, m := range x.markets {
		b.Queue(sqlNotifyFollowers, m.ID)
	}
	// Last: the change log's counter is taken by the final statement.
	var changes []changelog.Entry
	for _, m := range markets {
		changes = append(changes, market.ResolvedChange(m))
	}
	queueChanges(b, x.changeChannel, changes)
	return b, nil
}

// sqlTreasury reads the treasury's id without locking it.
const sqlTreasury = `SELECT id FROM ledger_accounts WHERE kind = 'platform_treasury' AND owner = 0`

// sendAll sends b in transaction tx and reads every answer, saying which
// statement failed.
func sendAll(ctx context.Context, tx batchSender, b *pgx.Batch) error {
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	n := b.Len()
	for i := range n {
		if _, err := br.Exec(); err != nil {
			return &stmtError{at: i, last: n - 1, err: err}
		}
	}
	return br.Close()
}
