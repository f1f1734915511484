package postgres

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// feedSQL builds the statement that finds a page of the feed's event ids
// with their keys, from the rows of event_feed f (migration 00033). Each
// sort walks an index of event_feed in its order: the primary key (new),
// event_feed_volume_idx (volume), event_feed_closing_idx (closing); the
// filters are checked on the way. Trending orders by the volume of the
// hours since $since (event_hours, a range of its primary key), which
// only the events traded in the last day have: those few are sorted, the
// rest follow by id, as the new sort walks them. The statement's text depends
// only on which filters are set, so each shape keeps its own plan.
type feedSQL struct {
	args []any
}

func (b *feedSQL) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// tsQuery is the words as to_tsquery reads them: every word, the last
// also as a prefix. FeedWords leaves letters and digits only, which
// to_tsquery takes as they are.
func tsQuery(words []string) string {
	return strings.Join(words, " & ") + ":*"
}

// filters is the WHERE of f for q, without the cursor, the tag (tagged)
// and the search (searched).
func (b *feedSQL) filters(q market.FeedQuery) string {
	w := "f.listed"
	switch q.Status {
	case market.FeedOpen:
		w += " AND f.open"
	case market.FeedResolved:
		w += " AND NOT f.open"
	}
	return w
}

// tagged is the condition that the event in column col carries q's tag
// (a range of event_tags_tag_slug_idx); "" without a tag.
func (b *feedSQL) tagged(q market.FeedQuery, col string) string {
	if q.Tag == "" {
		return ""
	}
	return " AND " + col + " IN (SELECT t.event_id FROM event_tags t WHERE t.tag_slug = " + b.arg(q.Tag) + ")"
}

// searched is the condition that the event in column col is one a
// search found; "" without a search.
func searched(q market.FeedQuery, col string) string {
	if len(q.Words) == 0 {
		return ""
	}
	return " AND " + col + " IN (SELECT event_id FROM found)"
}

// with is the statement's WITH: found, the events a search matches, read
// on its own through the GIN indexes (the planner's guess at a prefix's
// matches is too poor to trust it to choose, as part of the whole
// statement, between them and walking a sort's index), then any of more.
func (b *feedSQL) with(q market.FeedQuery, more ...string) string {
	var ctes []string
	if len(q.Words) > 0 {
		tq := b.arg(tsQuery(q.Words))
		ctes = append(ctes, `found AS MATERIALIZED (SELECT s.event_id FROM event_search s
		WHERE s.en @@ to_tsquery('english', `+tq+`) OR s.ru @@ to_tsquery('russian', `+tq+`))`)
	}
	ctes = append(ctes, more...)
	if len(ctes) == 0 {
		return ""
	}
	return "WITH " + strings.Join(ctes, ",\n") + "\n"
}

// build returns the statement: rows of (event id, volume, closes_at,
// 24-hour volume or NULL).
func (b *feedSQL) build(q market.FeedQuery) string {
	where := b.filters(q)
	if q.Sort != market.SortTrending {
		return b.with(q) + b.sorted(q, where+b.tagged(q, "f.event_id")+searched(q, "f.event_id"))
	}
	return b.trending(q, where)
}

// sorted is the statement of the sorts that walk an index of event_feed.
func (b *feedSQL) sorted(q market.FeedQuery, where string) string {
	n := b.arg(q.Limit)
	off := b.arg(q.Offset)
	c := q.After
	const cols = `SELECT f.event_id, f.volume, f.closes_at`
	switch q.Sort {
	case market.SortVolume:
		if c != nil {
			where += " AND (f.volume, f.event_id) < (" + b.arg(c.Key) + ", " + b.arg(c.ID) + ")"
		}
		return cols + `, NULL::bigint FROM event_feed f WHERE ` + where + ` ORDER BY f.volume DESC, f.event_id DESC LIMIT ` + n + ` OFFSET ` + off
	case market.SortClosing:
		if c != nil {
			where += " AND (f.closes_at, f.event_id) > (" + b.arg(time.UnixMicro(c.Key).UTC()) + ", " + b.arg(c.ID) + ")"
		}
		return cols + `, NULL::bigint FROM event_feed f WHERE ` + where + ` ORDER BY f.closes_at, f.event_id LIMIT ` + n + ` OFFSET ` + off
	}
	if c != nil {
		where += " AND f.event_id < " + b.arg(c.ID)
	}
	return cols + `, NULL::bigint FROM event_feed f WHERE ` + where + ` ORDER BY f.event_id DESC LIMIT ` + n + ` OFFSET ` + off
}

// trending is the statement of the trending sort: the traded events
// (hot), then the others by id (cold).
func (b *feedSQL) trending(q market.FeedQuery, where string) string {
	n := b.arg(q.Limit)
	off := b.arg(q.Offset)
	c := q.After
	since := b.arg(q.Since)
	// inner is what each half reads: the page and what it skips.
	inner := b.arg(q.Limit + q.Offset)
	// The tag and the search filter the traded events before they are
	// looked up one by one (semi-joins), and the others as the sorts do.
	hotWhere, coldWhere := where, where+b.tagged(q, "f.event_id")+searched(q, "f.event_id")
	after := " WHERE true" + b.tagged(q, "r.event_id") + searched(q, "r.event_id")
	// After a cursor among the cold events, no hot one is left.
	hot := `SELECT f.event_id, f.volume, f.closes_at, 0::bigint FROM event_feed f WHERE false`
	switch {
	case c != nil && c.Key == 0:
		coldWhere += " AND f.event_id < " + b.arg(c.ID)
	case c != nil:
		after += " AND (r.v, r.event_id) < (" + b.arg(c.Key) + ", " + b.arg(c.ID) + ")"
		fallthrough
	default:
		// The traded events in their order, each looked up by its key
		// until the page is full: no pass over event_feed. OFFSET 0
		// keeps the lookup a nested loop, which keeps the order.
		hot = `SELECT f.event_id, f.volume, f.closes_at, r.v
		FROM (SELECT * FROM recent r` + after + ` ORDER BY r.v DESC, r.event_id DESC) r
		CROSS JOIN LATERAL (SELECT f.event_id, f.volume, f.closes_at FROM event_feed f
			WHERE f.event_id = r.event_id AND ` + hotWhere + ` OFFSET 0) f
		ORDER BY r.v DESC, r.event_id DESC LIMIT ` + inner
	}
	return b.with(q, `recent AS MATERIALIZED (
		SELECT h.event_id, sum(h.volume)::bigint AS v FROM event_hours h
		WHERE h.start >= `+since+` GROUP BY h.event_id HAVING sum(h.volume) > 0)`) + `
	SELECT * FROM (
		(` + hot + `)
		UNION ALL
		(SELECT f.event_id, f.volume, f.closes_at, 0::bigint FROM event_feed f
		 WHERE ` + coldWhere + ` AND NOT EXISTS (SELECT 1 FROM recent r WHERE r.event_id = f.event_id)
		 ORDER BY f.event_id DESC LIMIT ` + inner + `)
	) x ORDER BY 4 DESC, 1 DESC LIMIT ` + n + ` OFFSET ` + off
}

// Feed implements market.Store: the page's ids and keys (feedSQL), then
// its events as eventsPage reads them, then the hourly candles of their
// markets since q.Since, which give each event's 24-hour volume and each
// market's sparkline.
func (s *Store) Feed(ctx context.Context, q market.FeedQuery) ([]*market.Event, error) {
	if q.Limit < 0 {
		q.Limit = math.MaxInt32
	}
	// The trades' volumes since the last read (feed_volume_log) first,
	// in a transaction of their own: the page then counts every trade
	// committed before the call.
	if _, err := s.pool.Exec(ctx, `SELECT feed_fold()`); err != nil {
		return nil, translate(err, nil)
	}
	var b feedSQL
	query := b.build(q)
	rows, err := s.pool.Query(ctx, query, b.args...)
	if err != nil {
		return nil, translate(err, nil)
	}
	var (
		ids   []int64
		stats = map[int64]*market.FeedStats{}
	)
	var (
		id, volume int64
		closes     *time.Time
		v24        *int64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &volume, &closes, &v24}, func() error {
		st := &market.FeedStats{Volume: volume}
		if closes != nil {
			st.ClosesAt = closes.UTC()
		}
		ids = append(ids, id)
		stats[id] = st
		return nil
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(ids) == 0 {
		return []*market.Event{}, nil
	}
	es, err := s.eventsPage(ctx, `SELECT `+eventCols+` FROM events e WHERE e.id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*market.Event, len(es))
	for _, e := range es {
		byID[e.ID] = e
	}
	out := make([]*market.Event, 0, len(ids))
	var markets []*market.Market
	for _, id := range ids {
		e := byID[id]
		if e == nil { // gone between the two reads: never deleted, so not expected
			continue
		}
		e.Stats = stats[id]
		out = append(out, e)
		for _, p := range e.Pools {
			markets = append(markets, p.Markets...)
		}
	}
	if err := s.recentPrices(ctx, markets, q.Since, stats); err != nil {
		return nil, translate(err, nil)
	}
	return out, nil
}

// sqlRecentHours reads the hourly candles of markets $1 since $2, and
// sqlHourBefore the last hourly close of each before $2: both walk the
// candles' primary key, a few rows per market.
const (
	sqlRecentHours = `SELECT c.market_id, c.start, c.open, c.close, c.volume FROM candles c
		WHERE c.market_id = ANY($1) AND c.width_seconds = 3600 AND c.start >= $2 ORDER BY c.market_id, c.start`
	sqlHourBefore = `SELECT m.id, c.close FROM unnest($1::bigint[]) AS m(id)
		CROSS JOIN LATERAL (SELECT close FROM candles c WHERE c.market_id = m.id AND c.width_seconds = 3600 AND c.start < $2
			ORDER BY c.start DESC LIMIT 1) c`
)

// recentPrices sets each market's Sparkline and adds its trades' volume
// since since to its event's Volume24h.
func (s *Store) recentPrices(ctx context.Context, ms []*market.Market, since time.Time, stats map[int64]*market.FeedStats) error {
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	b := &pgx.Batch{}
	b.Queue(sqlRecentHours, ids, since)
	b.Queue(sqlHourBefore, ids, since)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	hours := map[int64][]market.Candle{}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var (
		mid int64
		c   market.Candle
	)
	if _, err := pgx.ForEachRow(rows, []any{&mid, &c.Start, &c.Open, &c.Close, &c.Volume}, func() error {
		c.Start = c.Start.UTC()
		hours[mid] = append(hours[mid], c)
		return nil
	}); err != nil {
		return err
	}
	before := map[int64]float64{}
	if rows, err = br.Query(); err != nil {
		return err
	}
	var closing float64
	if _, err := pgx.ForEachRow(rows, []any{&mid, &closing}, func() error {
		before[mid] = closing
		return nil
	}); err != nil {
		return err
	}
	for _, m := range ms {
		var prior *float64
		if v, ok := before[m.ID]; ok {
			prior = &v
		}
		for _, h := range hours[m.ID] {
			stats[m.EventID].Volume24h += h.Volume
		}
		m.Sparkline = market.Sparkline(since, m.CreatedAt, prior, hours[m.ID], m.YesProbability())
	}
	return br.Close()
}
