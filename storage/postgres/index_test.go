package postgres_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// TestFeedsWalkIndexes checks that every feed has an index to walk: with
// sequential scans and sorts priced out, the planner must pick the index
// the migrations made for it.
func TestFeedsWalkIndexes(t *testing.T) {
	e := newEnv(t)
	want := map[string]string{
		"open positions":   "positions_user_open_idx",
		"closed positions": "positions_user_closed_idx",
		"closed stats":     "positions_user_closed_idx",
		"pnl events":       "pnl_events_user_idx",
		"latest trades":    "trades_pkey",
		"price history":    "price_points_market_id_idx",
		"trades":           "trades_market_id_idx",
		"user trades":      "trades_user_id_id_idx",
		"trades after":     "trades_market_id_idx",
		"active events":    "events_active_created_idx",
		"candles":          "candles_pkey",
		"changes":          "change_log_pkey",
	}
	for name, q := range postgres.FeedQueries {
		t.Run("the "+name+" query walks "+want[name], func(t *testing.T) {
			if text := explain(t, e, q.SQL, q.Args...); !strings.Contains(text, want[name]) {
				t.Fatalf("plan does not use %s:\n%s", want[name], text)
			}
		})
	}
}

// TestTradeLookupsGoThroughKeys checks the plans a trade's look-ups get
// when the first trades of a connection plan them on empty tables: the
// generic plan is kept for the connection's life, so it must go through
// the unique keys whatever the tables grow to, and never read a whole
// table or a whole index (a partner bet's positions once took 150 µs,
// its idempotency keys 60 µs, at 20,000 trades).
func TestTradeLookupsGoThroughKeys(t *testing.T) {
	e := newEnv(t)
	want := map[string][]string{
		// A position by (user, market): the unique key, or the chunked
		// settlement's (market, user) index of open positions, both keyed
		// by the two.
		"sub-account positions": {"users_partner_external_key", "positions_open_key|positions_market_open_user_idx"},
		"user positions":        {"positions_open_key|positions_market_open_user_idx"},
		"trades by key":         {"trades_partner_client_bet_key"},
		"sub-accounts":          {"users_partner_external_key"},
		"sub-account creation":  {"users_partner_external_key"},
		"accounts to create":    {"users_partner_external_key", "ledger_accounts_kind_owner_key"},
		"accounts to lock":      {"users_partner_external_key", "ledger_accounts_kind_owner_key", "ledger_accounts_pkey"},
	}
	for name, q := range postgres.TradeLookups {
		t.Run("the "+name+" look-up uses "+strings.ReplaceAll(strings.Join(want[name], " and "), "|", " or "), func(t *testing.T) {
			// EXPLAIN EXECUTE shows a prepared statement's generic plan
			// under force_generic_plan, as pgx's prepared statements get.
			stmt := "lookup_" + strings.NewReplacer(" ", "_", "-", "_").Replace(name)
			args := make([]string, len(q.Args))
			for i, a := range q.Args {
				args[i] = sqlLiteral(t, a)
			}
			text := explainUnder(t, e, postgres.TradePlans+"; PREPARE "+stmt+" AS "+q.SQL,
				"EXECUTE "+stmt+"("+strings.Join(args, ", ")+")")
			for _, idx := range want[name] {
				if !slices.ContainsFunc(strings.Split(idx, "|"), func(i string) bool { return strings.Contains(text, i) }) {
					t.Errorf("plan does not use %s:\n%s", strings.ReplaceAll(idx, "|", " or "), text)
				}
			}
			// positions_market_open_idx is the settlement's branch, which
			// a trade switches off ($1); a trader's look-up must not use it.
			if strings.Count(text, "positions_market_open_idx") > 1 {
				t.Errorf("plan walks a market's open positions for a trader:\n%s", text)
			}
			for _, bad := range []string{"Seq Scan", "Hash Join", "Merge Join"} {
				if strings.Contains(text, bad) {
					t.Errorf("plan has a %s:\n%s", bad, text)
				}
			}
		})
	}
}

// sqlLiteral writes a look-up's argument as an SQL literal.
func sqlLiteral(t *testing.T, a any) string {
	switch v := a.(type) {
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case []int64:
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = strconv.FormatInt(n, 10)
		}
		return "'{" + strings.Join(out, ",") + "}'::bigint[]"
	case time.Time:
		return "'" + v.Format(time.RFC3339Nano) + "'::timestamptz"
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = `"` + s + `"`
		}
		return "'{" + strings.Join(out, ",") + "}'::text[]"
	}
	t.Fatalf("no literal for %T", a)
	return ""
}

// TestUserReferencesHaveIndexes checks that every table referring to
// users can be searched by that reference through an index: deleting a
// user (a refused first bet's sub-account, inside a trade that holds its
// market's lock) makes PostgreSQL run this query on each of them, and
// without an index it reads the whole table.
func TestUserReferencesHaveIndexes(t *testing.T) {
	e := newEnv(t)
	rows, err := e.store.DB().Query(e.ctx, `SELECT c.conrelid::regclass::text, a.attname
FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND c.confrelid = 'users'::regclass AND cardinality(c.conkey) = 1
ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct{ table, column string }
	var refs []ref
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.table, &r.column); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(refs) < 10 {
		t.Fatalf("found %d references to users: %v", len(refs), refs)
	}
	for _, r := range refs {
		t.Run(r.table+"."+r.column+" is searched through an index", func(t *testing.T) {
			// The shape of PostgreSQL's own check (ri_triggers.c).
			text := explainUnder(t, e, postgres.TradePlans, `SELECT 1 FROM ONLY `+r.table+` x WHERE `+r.column+` = 1 FOR KEY SHARE OF x`)
			if !strings.Contains(text, "Index Cond: ("+r.column+" = ") || strings.Contains(text, "Seq Scan") {
				t.Errorf("no index search on %s:\n%s", r.column, text)
			}
		})
	}
}

// TestSettlementCreditsLockInAccountOrder checks the plan of a
// settlement's credits: a nested loop over the credits sorted by account,
// each account found through the primary key, so that the accounts are
// locked in ascending id order as the loop reaches them, and a settlement
// of a few holders reads a few accounts however many there are.
func TestSettlementCreditsLockInAccountOrder(t *testing.T) {
	e := newEnv(t)
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO ledger_accounts (kind, owner) SELECT 'user', g FROM generate_series(1, 20000) g;
		ANALYZE ledger_accounts`); err != nil {
		t.Fatal(err)
	}
	for _, holders := range []int{5, 20000} {
		t.Run(strconv.Itoa(holders)+" credited accounts are locked in ascending id order", func(t *testing.T) {
			text := explainUnder(t, e, postgres.SettleCreatePay+`;
				INSERT INTO settle_pay (market, holder, account, amount)
				SELECT 1, owner, id, 100 FROM ledger_accounts WHERE kind = 'user' ORDER BY md5(id::text) LIMIT `+strconv.Itoa(holders)+`;
				ANALYZE settle_pay; `+postgres.SettleCreditPlans, postgres.SettleCredit)
			outer, inner := strings.Index(text, "settle_pay"), strings.Index(text, "Index Scan using ledger_accounts_pkey")
			if !strings.Contains(text, "Nested Loop") || outer < 0 || inner < outer || !strings.Contains(text, "Sort Key: settle_pay.account") {
				t.Errorf("the credits are not a nested loop over the sorted credits into the primary key:\n%s", text)
			}
			for _, bad := range []string{"Hash Join", "Merge Join", "Seq Scan on ledger_accounts"} {
				if strings.Contains(text, bad) {
					t.Errorf("plan has a %s:\n%s", bad, text)
				}
			}
		})
	}
}

// TestTradesUpdatePositionsInPlace checks that a trade that leaves its
// position open updates the row in place (a heap-only update): no index
// of positions may cover a column such a trade changes, or every trade
// writes a new entry into all of them (migration 00007's closed index
// once included returned and spent, and a hot market's positions bloated).
func TestTradesUpdatePositionsInPlace(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("trader", 100_000)
	if _, err := e.buy(u, m, market.Yes, 10_000); err != nil {
		t.Fatal(err)
	}
	open, err := e.store.OpenPositions(e.ctx, u.ID)
	if err != nil || len(open) != 1 {
		t.Fatalf("open positions: %v, %v", open, err)
	}
	for _, c := range []struct {
		name    string
		change  func(p *market.Position)
		inPlace bool
	}{
		{"a buy's changes are written in place", func(p *market.Position) {
			p.Shares, p.CostBasis, p.Bought, p.Spent = p.Shares+500, p.CostBasis+300, p.Bought+500, p.Spent+300
		}, true},
		{"a partial sale's changes are written in place", func(p *market.Position) {
			p.Shares, p.CostBasis, p.Returned = p.Shares-500, p.CostBasis-300, p.Returned+280
		}, true},
		{"closing the position moves it between the open and closed indexes", func(p *market.Position) {
			at, sold := time.Now(), -1
			p.Shares, p.CostBasis, p.Returned, p.ClosedAt, p.WonSide = 0, 0, p.Returned+9_000, &at, &sold
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := open[0].Position
			p.UpdatedAt = time.Now()
			c.change(&p)
			tx, err := e.store.DB().Begin(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(e.ctx)
			// The connection's counts of earlier transactions may not
			// have been reported yet: the update's are the difference.
			counts := func() (updated, inPlace int64) {
				if err := tx.QueryRow(e.ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
					WHERE relid = 'positions'::regclass`).Scan(&updated, &inPlace); err != nil {
					t.Fatal(err)
				}
				return updated, inPlace
			}
			updated0, inPlace0 := counts()
			if err := postgres.UpdatePositions(e.ctx, tx, &p); err != nil {
				t.Fatal(err)
			}
			updated, inPlace := counts()
			updated, inPlace = updated-updated0, inPlace-inPlace0
			if updated != 1 || (inPlace == 1) != c.inPlace {
				t.Fatalf("%d rows updated, %d of them in place; want 1, in place: %v", updated, inPlace, c.inPlace)
			}
		})
	}
}
