package postgres_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// Words the seeded events' texts are made of: a text draws a few of
// each list by its number, so every word is in about 1/len of the events
// and each pair in fewer.
var (
	benchWordsEn = strings.Fields(`harbour rovers city vote mayor rain snow final derby cup league season goals
		price bitcoin rate inflation election senate storm heat record market index launch rocket orbit film award
		album chart transfer coach striker keeper penalty title champion budget tax port bridge metro tram airport`)
	benchWordsRu = strings.Fields(`гавань город выборы мэр дождь снег финал дерби кубок лига сезон голы цена биткоин
		ставка инфляция сенат буря жара рекорд рынок индекс запуск ракета орбита фильм премия альбом трансфер тренер
		нападающий вратарь пенальти титул чемпион бюджет налог порт мост метро трамвай аэропорт`)
)

// seedFeed gives the store n events with set-based SQL: one pool of three
// markets each (an English and a Russian name, rules in both), one of four
// tags each and a rare tag on one in a hundred, one in ten resolved, one
// in twenty hidden, trading windows over the next 60 days, daily candles
// (all-time volume) on a third of them and hourly candles of the last day
// on one in nineteen (the trending ones). The triggers of migration 00033
// are off while it inserts; the feed's tables are then filled as that
// migration's Up fills them for the events that exist before it.
func seedFeed(tb testing.TB, e *env, creatorID int64, n int) {
	tb.Helper()
	start := time.Now()
	en := "ARRAY['" + strings.Join(benchWordsEn, "','") + "']"
	ru := "ARRAY['" + strings.Join(benchWordsRu, "','") + "']"
	word := func(list, g string, prime int) string {
		return fmt.Sprintf("(%s)[1 + ((%s * %d) %% array_length(%s, 1))]", list, g, prime, list)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	steps := []struct{ what, sql string }{
		{"no triggers", `SET LOCAL session_replication_role = replica`},
		{"tags", `INSERT INTO tags (slug, name, name_ru, created_at) VALUES
			('sport', 'Sport', 'Спорт', $1), ('politics', 'Politics', 'Политика', $1), ('crypto', 'Crypto', 'Крипто', $1),
			('weather', 'Weather', 'Погода', $1), ('rare', 'Rare', 'Редкое', $1)`},
		{"events", fmt.Sprintf(`INSERT INTO events (name, name_ru, creator_id, is_active, created_at, status)
			SELECT initcap(%s) || ' ' || %s || ' ' || g, initcap(%s) || ' ' || %s || ' ' || g, %d, g %% 20 <> 0,
				$1::timestamptz - make_interval(secs => %d - g), 'approved'
			FROM generate_series(1, %d) g`,
			word(en, "g", 7), word(en, "g", 13), word(ru, "g", 7), word(ru, "g", 13), creatorID, n, n)},
		{"pools", fmt.Sprintf(`INSERT INTO pools (event_id, ordinal, name, name_ru, rules, rules_ru, margin, b, live_at, finish_at)
			SELECT e.id, 0, 'Who wins ' || %s, 'Кто победит ' || %s,
				'Resolves on the official ' || %s || ' and ' || %s, 'По официальным данным: ' || %s || ' и ' || %s,
				0.02, 100000, e.created_at, $1::timestamptz + make_interval(secs => (e.id * 7919) %% (60 * 86400) + 3600)
			FROM events e`,
			word(en, "e.id", 17), word(ru, "e.id", 17), word(en, "e.id", 19), word(en, "e.id", 23), word(ru, "e.id", 19), word(ru, "e.id", 23))},
		{"markets", fmt.Sprintf(`INSERT INTO markets (pool_id, event_id, outcome_index, name, name_ru, b, q_yes, q_no, q0_yes, q0_no,
				volume, created_at, finish_at, resolved, winning_outcome, resolved_at)
			SELECT p.id, p.event_id, k, initcap(%s) || ' ' || k, initcap(%s) || ' ' || k, 100000, 0, 0, 0, 0,
				0, p.live_at, p.finish_at, p.event_id %% 10 = 3, CASE WHEN p.event_id %% 10 = 3 THEN (k = 0)::int::smallint END,
				CASE WHEN p.event_id %% 10 = 3 THEN $1::timestamptz END
			FROM pools p, generate_series(0, 2) k`, word(en, "(p.event_id + k)", 29), word(ru, "(p.event_id + k)", 29))},
		{"event tags", `INSERT INTO event_tags (event_id, tag_slug, ordinal)
			SELECT id, (ARRAY['sport', 'politics', 'crypto', 'weather'])[1 + id % 4], 0 FROM events
			UNION ALL SELECT id, 'rare', 1 FROM events WHERE id % 100 = 7`},
		{"daily candles", `INSERT INTO candles (market_id, width_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
			SELECT m.id, 86400, date_bin('1 day', $1::timestamptz - interval '3 days', TIMESTAMPTZ 'epoch'), 0.4, 0.6, 0.3, 0.5,
				$1::timestamptz - interval '3 days', $1::timestamptz - interval '3 days', 1000 + (m.id * 37) % 500000, 10
			FROM markets m WHERE m.event_id % 3 = 0`},
		{"hourly candles", `INSERT INTO candles (market_id, width_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
			SELECT m.id, 3600, date_bin('1 hour', $1::timestamptz - make_interval(hours => h), TIMESTAMPTZ 'epoch'),
				0.4, 0.6, 0.3, 0.3 + (h % 5) / 10.0, $1::timestamptz - make_interval(hours => h), $1::timestamptz - make_interval(hours => h),
				100 + (m.id * 31 + h) % 20000, 1
			FROM markets m, generate_series(0, 23, 3) h WHERE m.event_id % 19 = 1`},
		{"feed rows", `INSERT INTO event_feed (event_id, listed) SELECT id, is_active FROM events`},
		{"feed keys", `UPDATE event_feed f SET open = s.open, closes_at = s.closes_at
			FROM (SELECT m.event_id, bool_or(NOT m.resolved) AS open,
				COALESCE(min(m.finish_at) FILTER (WHERE NOT m.resolved), max(m.finish_at)) AS closes_at
				FROM markets m GROUP BY m.event_id) s
			WHERE f.event_id = s.event_id`},
		{"feed volumes", `UPDATE event_feed f SET volume = v.volume
			FROM (SELECT m.event_id, sum(c.volume) AS volume FROM candles c JOIN markets m ON m.id = c.market_id
				WHERE c.width_seconds = 86400 GROUP BY m.event_id) v
			WHERE f.event_id = v.event_id`},
		{"event hours", `INSERT INTO event_hours (start, event_id, volume)
			SELECT c.start, m.event_id, sum(c.volume) FROM candles c JOIN markets m ON m.id = c.market_id
			WHERE c.width_seconds = 3600 GROUP BY c.start, m.event_id`},
		{"search texts", `INSERT INTO event_search (event_id, en, ru)
			SELECT e.id,
				to_tsvector('english', concat_ws(' ', e.name, p.name, p.rules, (SELECT string_agg(m.name, ' ') FROM markets m WHERE m.event_id = e.id))),
				to_tsvector('russian', concat_ws(' ', e.name_ru, p.name_ru, p.rules_ru, (SELECT string_agg(m.name_ru, ' ') FROM markets m WHERE m.event_id = e.id)))
			FROM events e JOIN pools p ON p.event_id = e.id`},
		{"a unique word", `UPDATE events SET name = name || ' Zanzibar' WHERE id = (SELECT max(id) / 2 + 1 FROM events)`},
		{"its text", `UPDATE event_search s SET en = s.en || to_tsvector('english', 'Zanzibar') WHERE event_id = (SELECT max(id) / 2 + 1 FROM events)`},
	}
	for _, s := range steps {
		var args []any
		if strings.Contains(s.sql, "$1") {
			args = []any{now}
		}
		if _, err := tx.Exec(e.ctx, s.sql, args...); err != nil {
			tb.Fatalf("seed %s: %v", s.what, err)
		}
	}
	if err := tx.Commit(e.ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE events, pools, markets, event_tags, candles, event_feed, event_hours, event_search`); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("seeded %d events in %s", n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkFeed100kEvents reads pages of 20 from a feed of 100,000
// events: each sort, a tag, a search (a common word, a unique one, a
// Russian one), the resolved events and the next page after a cursor.
// Each query is the whole page as the API answers it: the keys, the
// events with their pools and markets, and the sparklines.
func BenchmarkFeed100kEvents(b *testing.B) {
	const n = 100_000
	e := newEnv(b)
	creator := e.user("creator", 0)
	seedFeed(b, e, creator.ID, n)
	// On this many events a search goes through the GIN indexes.
	sql, args := postgres.FeedStatement(market.FeedQuery{Words: []string{"zanzibar"}, Sort: market.SortNew, Status: market.FeedOpen, Limit: 20})
	var plan []string
	rows, err := e.store.DB().Query(e.ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			b.Fatal(err)
		}
		plan = append(plan, line)
	}
	if text := strings.Join(plan, "\n"); !strings.Contains(text, "event_search_en_idx") || !strings.Contains(text, "event_search_ru_idx") {
		b.Fatalf("a search does not use the GIN indexes:\n%s", text)
	}
	cursorOf := func(r market.FeedRequest) string {
		p, err := e.markets.Feed(e.ctx, r)
		if err != nil || p.Next == "" {
			b.Fatalf("first page of %+v: %v, next %q", r, err, p.Next)
		}
		return p.Next
	}
	// The two words of event 12345's name, which some other events share.
	twoWords := benchWordsEn[(12345*7)%len(benchWordsEn)] + " " + benchWordsEn[(12345*13)%len(benchWordsEn)]
	cases := []struct {
		name string
		r    market.FeedRequest
	}{
		{"sort=trending", market.FeedRequest{}},
		{"sort=new", market.FeedRequest{Sort: market.SortNew}},
		{"sort=closing", market.FeedRequest{Sort: market.SortClosing}},
		{"sort=volume", market.FeedRequest{Sort: market.SortVolume}},
		{"status=resolved", market.FeedRequest{Status: market.FeedResolved, Sort: market.SortNew}},
		{"tag=sport", market.FeedRequest{Tag: "sport"}},
		{"tag=rare&sort=volume", market.FeedRequest{Tag: "rare", Sort: market.SortVolume}},
		{"q=common word", market.FeedRequest{Text: "harbour"}},
		{"q=two words", market.FeedRequest{Text: twoWords, Sort: market.SortNew}},
		{"q=unique word", market.FeedRequest{Text: "zanzibar"}},
		{"q=russian prefix", market.FeedRequest{Text: "выбор", Sort: market.SortVolume}},
		{"q&tag&closing", market.FeedRequest{Text: "cup", Tag: "sport", Sort: market.SortClosing}},
	}
	for _, sort := range []string{market.SortTrending, market.SortNew, market.SortClosing, market.SortVolume} {
		cases = append(cases, struct {
			name string
			r    market.FeedRequest
		}{"next page sort=" + sort, market.FeedRequest{Sort: sort, Cursor: cursorOf(market.FeedRequest{Sort: sort})}})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var found int
			for b.Loop() {
				p, err := e.markets.Feed(e.ctx, c.r)
				if err != nil {
					b.Fatal(err)
				}
				found = len(p.Events)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/query")
			b.ReportMetric(float64(found), "events")
		})
	}
}

// BenchmarkFeedTradeCost measures what keeping the feed's volumes costs a
// trade (the hourly candle's trigger: event_feed.volume and event_hours),
// with the triggers on and off in turn on the same store: one market
// traded serially, and 8 markets of one event traded by 4 traders per CPU
// (the worst case, since every trade updates the same event's rows).
func BenchmarkFeedTradeCost(b *testing.B) {
	for _, c := range []struct{ markets, parallelism int }{{1, 0}, {8, 4}} {
		for _, on := range []bool{true, false, true, false} {
			name := fmt.Sprintf("%d markets, %d traders per CPU, triggers %v", c.markets, c.parallelism, map[bool]string{true: "on", false: "off"}[on])
			b.Run(name, func(b *testing.B) {
				e := newEnv(b)
				probs := make([]float64, c.markets)
				for i := range probs {
					probs[i] = 0.5
				}
				ev, _ := e.event(0.02, 1_000_000_000, probs...)
				ms := ev.Pools[0].Markets
				if !on {
					if _, err := e.store.DB().Exec(e.ctx, `ALTER TABLE candles DISABLE TRIGGER candles_feed_insert, DISABLE TRIGGER candles_feed_update`); err != nil {
						b.Fatal(err)
					}
				}
				users := make([]*account.User, max(c.parallelism, 1)*runtime.GOMAXPROCS(0))
				for i := range users {
					users[i] = e.user("bench", 1_000_000_000_000)
				}
				var next atomic.Int64
				b.ResetTimer()
				if c.parallelism == 0 {
					for range b.N {
						if _, err := e.markets.Execute(e.ctx, ms[0].ID, market.Request{UserID: users[0].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(c.parallelism)
					b.RunParallel(func(pb *testing.PB) {
						i := int(next.Add(1) - 1)
						u, m := users[i], ms[i%len(ms)]
						for pb.Next() {
							if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Side(i % 2), Action: market.ActionBuy, Amount: 1000}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
			})
		}
	}
}
