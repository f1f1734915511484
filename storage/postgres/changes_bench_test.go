package postgres_test

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkChanges reads 1000 entries after a seq, as a stream resuming
// does, from a log of a million entries (each as large as a trade's):
// the primary key takes it straight there, so the time does not grow
// with the log.
func BenchmarkChanges(b *testing.B) {
	const entries, page = 1_000_000, 1000
	e := newEnv(b)
	// A trade's transaction: its trade, price, notification and balance.
	_, err := e.store.DB().Exec(e.ctx, `WITH entry AS (
	SELECT '{"trade_id":123456,"market_id":12,"pool_id":3,"event_id":2,"side":"YES","action":"buy","shares":1234,"amount_kopecks":1000,"yes_probability":0.5123456789012345,"created_at":"2030-01-02T03:04:05.123456Z"}'::text AS trade,
		'{"market_id":12,"pool_id":3,"event_id":2,"yes_probability":0.5123456789012345,"q_yes":1000000,"q_no":998766,"trade_id":123456,"at":"2030-01-02T03:04:05.123456Z"}'::text AS price,
		'{"id":654321,"user_id":77,"type":"trade_executed","title":"Trade executed","message":"Bought 1,234 YES shares of \"Outcome 0\" for 10.00 RUB","read":false,"created_at":"2030-01-02T03:04:05.123456Z","related_id":2,"related_type":"event","data":{"market_name":"Outcome 0","side":"YES","action":"buy","shares":1234,"amount":1000}}'::text AS note,
		'{"user_id":77,"balance":99000,"bonus_balance":0,"total_balance":99000,"reason":"trade"}'::text AS balance
)
INSERT INTO change_log (first_seq, n, at, types, event_ids, pool_ids, market_ids, user_ids, ats, lens, data)
SELECT 4 * g + 1, 4, now(), '{trade,price,notification,balance}', '{2,2,0,0}', '{3,3,0,0}', '{12,12,0,0}', '{0,0,77,77}',
	ARRAY[now(), now(), now(), now()], ARRAY[octet_length(trade), octet_length(price), octet_length(note), octet_length(balance)],
	trade || price || note || balance
FROM entry, generate_series(0, $1::bigint / 4 - 1) g`, entries)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_log_head SET last = $1`, entries); err != nil {
		b.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE change_log`); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for range b.N {
		after := rng.Int64N(entries - page)
		es, err := e.store.Changes(e.ctx, after, page)
		if err != nil {
			b.Fatal(err)
		}
		if len(es) != page || es[0].Seq != after+1 {
			b.Fatalf("after %d: %d entries from %d", after, len(es), es[0].Seq)
		}
	}
	b.ReportMetric(float64(b.N*page)/b.Elapsed().Seconds(), "entries/s")
}
