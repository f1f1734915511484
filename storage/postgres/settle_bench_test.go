package postgres_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// seedOpenPositions gives market m n open positions (n a multiple of 4)
// in bulk SQL, as n buys would have left them: every four positions are a
// holder on both sides and two holders on one side each, 100 to 998 shares
// a position, each bought at half a kopeck a share, no fee. The positions
// lie in the table in an order unrelated to their holders' (opened over
// time, by anyone): a settlement that reads the positions holder by
// holder reads the table all over, as it would in production. The
// holders' ledger accounts (balance and bonus, as a first trade makes
// them) are made in the order the holders signed up in. What the
// positions cost went from the outside world into the escrow as one
// posting; the holders' balances are 0, with no postings, so the ledger
// balances. The market's q and volume follow,
// and the escrow, which holds the subsidy plus what the positions cost,
// covers either side and every refund of a void: the audit holds before
// and after settlement.
func seedOpenPositions(tb testing.TB, e *env, m *market.Market, n int) {
	tb.Helper()
	if n%4 != 0 {
		tb.Fatalf("seed %d positions: want a multiple of 4", n)
	}
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	at := time.Now().UTC().Truncate(time.Microsecond)
	var yes, no, paid int64
	err = tx.QueryRow(e.ctx, `WITH
seq AS (SELECT g AS j, 3 * (g / 4) + CASE WHEN g % 4 = 3 THEN 2 WHEN g % 4 = 2 THEN 1 ELSE 0 END AS k,
		CASE WHEN g % 4 IN (0, 2) THEN 1 ELSE 0 END AS side,
		2 * (50 + (g::bigint * 7919) % 450) AS shares
	FROM generate_series(0, $1::int - 1) g),
new_users AS (
	INSERT INTO users (name, created_at)
	SELECT 'holder ' || k, $2 FROM generate_series(0, 3 * ($1::int / 4) - 1) k ORDER BY k
	RETURNING id),
holders AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM new_users),
accs AS (INSERT INTO ledger_accounts (kind, owner) SELECT k.kind, h.id FROM holders h, (VALUES ('user'), ('user_bonus')) k(kind) ORDER BY h.id, k.kind),
pos AS (
	INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
	SELECT h.id, $3, s.side, s.shares, s.shares / 2, s.shares, s.shares / 2, 0, $2, $2
	FROM seq s JOIN holders h ON h.k = s.k ORDER BY md5(s.j::text)
	RETURNING side, shares, cost_basis)
SELECT COALESCE(sum(shares) FILTER (WHERE side = 1), 0)::bigint, COALESCE(sum(shares) FILTER (WHERE side = 0), 0)::bigint,
	COALESCE(sum(cost_basis), 0)::bigint FROM pos`, n, at, m.ID).Scan(&yes, &no, &paid)
	if err != nil {
		tb.Fatalf("seed positions: %v", err)
	}
	if _, err := tx.Exec(e.ctx, `UPDATE markets SET q_yes = q_yes + $2, q_no = q_no + $3, volume = volume + $4 WHERE id = $1`, m.ID, yes, no, paid); err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(e.ctx, `INSERT INTO ledger_accounts (kind, owner) VALUES ('external', 0) ON CONFLICT DO NOTHING`); err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(e.ctx, `WITH
p AS (INSERT INTO postings (from_account, to_account, amount, reason, created_at)
	SELECT (SELECT id FROM ledger_accounts WHERE kind = 'external' AND owner = 0),
		(SELECT id FROM ledger_accounts WHERE kind = 'market_escrow' AND owner = $1), $2, 'deposit', $3)
UPDATE ledger_accounts SET balance = balance + CASE kind WHEN 'external' THEN -$2::bigint ELSE $2::bigint END
WHERE (kind = 'external' AND owner = 0) OR (kind = 'market_escrow' AND owner = $1)`, m.ID, paid, at); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE users, ledger_accounts, positions, postings`); err != nil {
		tb.Fatal(err)
	}
	// The seed wrote about a gigabyte of WAL: without a checkpoint here,
	// the one it set off would run through the timed settlement, and
	// every page the settlement touches first would be logged whole.
	if _, err := e.store.DB().Exec(e.ctx, `CHECKPOINT`); err != nil {
		tb.Fatal(err)
	}
}

// heapPeak samples the Go heap every few milliseconds until stop is
// called, which returns the largest HeapInuse seen and its growth over
// HeapInuse at the start, in bytes.
func heapPeak() (stop func() (peak, growth uint64)) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var top atomic.Uint64
	top.Store(base)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > top.Load() {
			top.Store(ms.HeapInuse)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-finished
		sample()
		return top.Load(), top.Load() - base
	}
}

// benchSettlePositions is the number of open positions of
// BenchmarkSettle1M: PREDICTKIT_BENCH_SETTLE_POSITIONS, else 1,000,000.
func benchSettlePositions(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("PREDICTKIT_BENCH_SETTLE_POSITIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 || n%4 != 0 {
			b.Fatalf("PREDICTKIT_BENCH_SETTLE_POSITIONS=%q: want a positive multiple of 4", v)
		}
	}
	return n
}

// benchmarkSettle times resolving (YES) and voiding a market that holds n
// open positions, which the PostgreSQL store settles in chunks of
// postgres.SettleChunkSize inside one transaction. Besides the time of
// one settlement (ns/op) it reports µs a position and the Go heap
// (HeapInuse) while settling: its peak and its growth over the start,
// which must not grow with n. Every iteration seeds a market first (not
// timed): run it with -benchtime 1x.
func benchmarkSettle(b *testing.B, n int) {
	for _, c := range []struct{ name, won string }{{"resolve", "YES"}, {"void", "VOID"}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			var settling time.Duration
			var peak, growth uint64
			var wal float64
			for range b.N {
				b.StopTimer()
				ev, creator := e.event(0, 100_000_000, 0.5)
				m := ev.Pools[0].Markets[0]
				seedOpenPositions(b, e, m, n)
				var lsn string
				if err := e.store.DB().QueryRow(e.ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
					b.Fatal(err)
				}
				stop := heapPeak()
				start := time.Now()
				b.StartTimer()
				err := e.markets.Close(e.ctx, creator.ID, m.EventID, m.PoolID, m.ID, c.won)
				b.StopTimer()
				settling += time.Since(start)
				p, g := stop()
				peak, growth = max(peak, p), max(growth, g)
				if err != nil {
					b.Fatal(err)
				}
				var bytes float64
				if err := e.store.DB().QueryRow(e.ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8`, lsn).Scan(&bytes); err != nil {
					b.Fatal(err)
				}
				wal += bytes
				var open int64
				if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM positions x JOIN markets m ON m.id = x.market_id
					WHERE x.market_id = $1 AND x.closed_at IS NULL AND NOT m.resolved`, m.ID).Scan(&open); err != nil || open != 0 {
					b.Fatalf("%d positions left open (%v)", open, err)
				}
			}
			e.audit()
			b.ReportMetric(settling.Seconds()*1e6/float64(n*b.N), "µs/position")
			// The write-ahead log the cluster wrote meanwhile, other
			// databases' included: on a quiet server, the settlement's.
			b.ReportMetric(wal/float64(b.N)/(1<<20), "WAL-MB")
			b.ReportMetric(float64(peak)/(1<<20), "heap-inuse-MB")
			b.ReportMetric(float64(growth)/(1<<20), "heap-growth-MB")
		})
	}
}

// BenchmarkSettle1M: resolving or voiding a market of 1,000,000 open
// positions (PREDICTKIT_BENCH_SETTLE_POSITIONS for another number) in one
// transaction; the target is 20 s on a 2-core machine, with a flat heap.
// Seeding the positions takes a few minutes.
func BenchmarkSettle1M(b *testing.B) { benchmarkSettle(b, benchSettlePositions(b)) }

// BenchmarkSettle10k is the same with 10,000 positions: compare its
// heap-growth-MB with BenchmarkSettle1M's.
func BenchmarkSettle10k(b *testing.B) { benchmarkSettle(b, 10_000) }

// BenchmarkTradesDuringSettlement measures a hot market's trades while a
// large settlement runs on another market (PREDICTKIT_BENCH_SETTLE_POSITIONS
// positions, else 1,000,000): trades per second without a settlement,
// before and after it, and during it, in the same sitting. The traders
// hold no position on the settled market, so they share no ledger row
// with it; a holder's trade on another market would wait for the end of
// the settlement, when its account is credited. They trade through the
// Batcher (group commit), as the server does. Each pace (one
// transaction; chunks of PREDICTKIT_BENCH_SETTLE_CHUNK positions, else the
// default, without a pause and at the default share) runs in turn on one
// store, in the same sitting, each on a market of its own;
// PREDICTKIT_BENCH_SETTLE_PACES=once,chunks,throttled picks some.
func BenchmarkTradesDuringSettlement(b *testing.B) {
	n := benchSettlePositions(b)
	const traders = 16
	e := newEnv(b)
	hot, _ := e.event(0.02, 1_000_000_000, 0.5)
	hm := hot.Pools[0].Markets[0]
	users := make([]*account.User, traders)
	for i := range users {
		users[i] = e.user("hot", 1_000_000_000_000)
	}
	batcher := market.NewBatcher(e.store, 64, 0)
	// trade runs the traders until stop is closed and returns how many
	// trades they made.
	trade := func(stop <-chan struct{}) int64 {
		var count atomic.Int64
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, err := batcher.Trade(context.Background(), hm.ID, market.Request{UserID: u.ID, Side: market.Side(i % 2), Action: market.ActionBuy, Amount: 1000})
					if err != nil || res.Err != nil {
						b.Errorf("trade: %v %v", err, res.Err)
						return
					}
					count.Add(1)
				}
			}()
		}
		wg.Wait()
		return count.Load()
	}
	// window trades for d and returns the rate.
	window := func(d time.Duration) float64 {
		stop := make(chan struct{})
		time.AfterFunc(d, func() { close(stop) })
		start := time.Now()
		c := trade(stop)
		return float64(c) / time.Since(start).Seconds()
	}
	chunk := postgres.DefaultSettleChunk
	if v := os.Getenv("PREDICTKIT_BENCH_SETTLE_CHUNK"); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 1 {
			b.Fatalf("PREDICTKIT_BENCH_SETTLE_CHUNK=%q: want a positive number", v)
		}
		chunk = c
	}
	paces := []struct {
		name  string
		chunk int
		share float64
	}{{"once", 0, 1}, {"chunks", chunk, 1}, {"throttled", chunk, postgres.DefaultSettleShare}}
	for _, p := range paces {
		if v := os.Getenv("PREDICTKIT_BENCH_SETTLE_PACES"); v != "" && !slices.Contains(strings.Split(v, ","), p.name) {
			continue
		}
		b.Run(p.name, func(b *testing.B) {
			e.store.SetSettlePace(p.chunk, p.share)
			tradesDuringSettlement(b, e, n, window, trade)
		})
	}
}

// tradesDuringSettlement is one pace of BenchmarkTradesDuringSettlement.
func tradesDuringSettlement(b *testing.B, e *env, n int, window func(time.Duration) float64, trade func(<-chan struct{}) int64) {
	var idle, during []float64
	var settleTime time.Duration
	for range b.N {
		b.StopTimer()
		ev, creator := e.event(0, 100_000_000, 0.5)
		m := ev.Pools[0].Markets[0]
		seedOpenPositions(b, e, m, n)
		window(2 * time.Second) // warm up
		b.StartTimer()
		before := window(10 * time.Second)
		stop := make(chan struct{})
		var made int64
		done := make(chan struct{})
		go func() { made = trade(stop); close(done) }()
		start := time.Now()
		if err := e.markets.Close(e.ctx, creator.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		close(stop)
		<-done
		after := window(10 * time.Second)
		b.StopTimer()
		settleTime += d
		idle = append(idle, before, after)
		during = append(during, float64(made)/d.Seconds())
		b.Logf("%d positions settled in %v; hot market %.0f trades/s before, %.0f during, %.0f after", n, d.Round(time.Millisecond), before, float64(made)/d.Seconds(), after)
	}
	e.audit()
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	b.ReportMetric(mean(idle), "idle-trades/s")
	b.ReportMetric(mean(during), "settling-trades/s")
	b.ReportMetric(mean(during)/mean(idle), "ratio")
	b.ReportMetric(settleTime.Seconds()/float64(b.N), "settle-s")
}
