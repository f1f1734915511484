package postgres_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/storage/postgres"
)

// explain returns the plan of sql with sequential scans and sorts priced
// out, so that an index the migrations made for it must show.
func explain(t *testing.T, e *env, sql string, args ...any) string {
	t.Helper()
	return explainUnder(t, e, `SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`, sql, args...)
}

// explainUnder returns the plan of sql in a transaction that first runs
// settings (statements without arguments), and rolls it back.
func explainUnder(t *testing.T, e *env, settings, sql string, args ...any) string {
	t.Helper()
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	if _, err := tx.Exec(e.ctx, settings); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(e.ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// TestP2PListWalksIndexes: the list is answered by the database from
// the indexes of migration 00005, never by loading the board.
func TestP2PListWalksIndexes(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ name, query, index string }{
		{"the default list walks the newest-first index", "", "p2p_ads_newest_idx"},
		{"the inactive list walks the newest-first index", "is_active=false", "p2p_ads_newest_idx"},
		{"best_price on sell ads walks the price index", "type=sell&sort_by=best_price", "p2p_ads_price_idx"},
		{"best_price on buy ads walks the price index", "type=buy&sort_by=best_price", "p2p_ads_price_idx"},
		{"best_price in one currency walks the currency index", "type=sell&fiat_currency=RUB&sort_by=best_price", "p2p_ads_currency_idx"},
		{"an author's nickname is looked up in the users' nickname index", "author_nickname=anna", "users_nickname_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := url.ParseQuery(c.query)
			q, err := p2p.ParseQuery(v)
			if err != nil {
				t.Fatal(err)
			}
			sql, args := postgres.P2PAdsQuery(q)
			if plan := explain(t, e, sql, args...); !strings.Contains(plan, c.index) {
				t.Fatalf("plan does not use %s:\n%s", c.index, plan)
			}
		})
	}
	want := map[string]string{"history": "chat_messages_session_idx", "operator queue": "chat_sessions_queue_idx"}
	for name, q := range postgres.ChatQueries {
		t.Run("the chat's "+name+" walks "+want[name], func(t *testing.T) {
			if plan := explain(t, e, q.SQL, q.Args...); !strings.Contains(plan, want[name]) {
				t.Fatalf("plan does not use %s:\n%s", want[name], plan)
			}
		})
	}
}

// TestP2PRarePaymentMethodUsesItsIndex: on a board of thousands of ads
// where one method is rare, the planner (with its real costs and fresh
// statistics) finds the rare method's ads through the GIN index.
func TestP2PRarePaymentMethodUsesItsIndex(t *testing.T) {
	e := newEnv(t)
	u := e.user("bulk", 0)
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO p2p_ads (user_id, type, fiat_currency, exchange_rate, min_amount, max_amount,
			remaining_amount, payment_methods, payment_method_keys, payment_duration, is_active, moderation_status, created_at, updated_at)
		SELECT $1, CASE WHEN i % 2 = 0 THEN 'buy' ELSE 'sell' END, 'RUB', 90 + i % 20, 100, 100000, 100000,
			CASE WHEN i % 1000 = 0 THEN ARRAY['SBP'] ELSE ARRAY['Cash'] END,
			CASE WHEN i % 1000 = 0 THEN ARRAY['sbp'] ELSE ARRAY['cash'] END,
			15, true, 'approved', now() - i * interval '1 second', now()
		FROM generate_series(1, 20000) i`, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `ANALYZE p2p_ads`); err != nil {
		t.Fatal(err)
	}
	q, err := p2p.ParseQuery(url.Values{"payment_method": {"sbp"}})
	if err != nil {
		t.Fatal(err)
	}
	sql, args := postgres.P2PAdsQuery(q)
	rows, err := e.store.DB().Query(e.ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if text := strings.Join(plan, "\n"); !strings.Contains(text, "p2p_ads_payment_methods_idx") {
		t.Fatalf("plan does not use the GIN index:\n%s", text)
	}
	ads, err := e.store.P2PAds(e.ctx, q)
	if err != nil || len(ads) != 20 {
		t.Fatalf("%d ads, %v", len(ads), err)
	}
}
