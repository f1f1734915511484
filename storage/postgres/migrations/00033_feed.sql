-- The feed (GET /api/v1/events?q=&tag=&sort=&status=&cursor=): search,
-- filters and four sorts over every listed event, each served by an index
-- rather than by reading every event (docs/feed-and-search.md).
--
-- * event_feed holds each event's sort and filter keys: listed (the
--   event's is_active), open (a market of it not resolved yet), closes_at
--   (the earliest finish_at among its unresolved markets; once all are
--   resolved, the latest of all) and volume (the amount of every trade on
--   its markets, kopecks: the sum of its candles' volumes, of any one
--   interval). The feed's sorts walk its partial indexes.
-- * event_hours holds each event's volume hour by hour (the sum of its
--   markets' hourly candles): the trending sort sums the last 24 hours
--   of every event from it, a few rows per traded event, rather than
--   joining every market's candles to its event.
-- * event_search holds each event's texts as two tsvectors: `english`
--   over the English names and rules (event, pools, markets), `russian`
--   over the Russian ones, each with a GIN index. A search asks both.
--   They live apart from event_feed, whose volume every trade changes, so
--   that a trade never rewrites a GIN index's entries.
--
-- Triggers keep both, whichever write changes an event: its creation and
-- edits (events, pools, markets inserted, updated or deleted), answers
-- added later, approval and hiding (is_active), resolutions and moves of
-- the trading window (markets.resolved, finish_at). A trade's hourly
-- candle only appends its volume to feed_volume_log: an insert of a new
-- row, which no other trade waits for. Were the trade to add to its
-- event's event_feed and event_hours rows, trades on different markets
-- of one event would queue on those rows until each commits (measured:
-- half the throughput on 8 markets of one event). feed_fold(), which the
-- store runs before each read of the feed, moves the log into event_feed
-- and event_hours: a reader sees every trade committed before it asked.
-- Its other updates of markets fire nothing.

-- +goose Up

CREATE TABLE event_feed (
    event_id  bigint      PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    listed    boolean     NOT NULL,
    open      boolean     NOT NULL DEFAULT true,
    closes_at timestamptz,
    volume    bigint      NOT NULL DEFAULT 0
);

CREATE INDEX event_feed_volume_idx ON event_feed (volume, event_id) WHERE listed;
CREATE INDEX event_feed_closing_idx ON event_feed (closes_at, event_id) WHERE listed;

CREATE TABLE event_search (
    event_id bigint   PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    en       tsvector NOT NULL,
    ru       tsvector NOT NULL
);

CREATE INDEX event_search_en_idx ON event_search USING gin (en);
CREATE INDEX event_search_ru_idx ON event_search USING gin (ru);

CREATE TABLE event_hours (
    start    timestamptz NOT NULL,
    event_id bigint      NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    volume   bigint      NOT NULL,
    PRIMARY KEY (start, event_id)
);

-- +goose StatementBegin
CREATE FUNCTION feed_refresh(ev bigint) RETURNS void LANGUAGE sql AS $$
    -- An event without markets (an edit replacing its pools deletes the
    -- old ones before it inserts the new) stays open until they come.
    UPDATE event_feed f SET open = COALESCE(s.open, true), closes_at = s.closes_at
    FROM (SELECT bool_or(NOT m.resolved) AS open,
                 COALESCE(min(m.finish_at) FILTER (WHERE NOT m.resolved), max(m.finish_at)) AS closes_at
          FROM markets m WHERE m.event_id = ev) s
    WHERE f.event_id = ev AND (f.open, f.closes_at) IS DISTINCT FROM (COALESCE(s.open, true), s.closes_at);
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION feed_search_refresh(ev bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO event_search AS s (event_id, en, ru)
    SELECT e.id,
        to_tsvector('english', concat_ws(' ', e.name,
            (SELECT string_agg(concat_ws(' ', p.name, p.rules), ' ') FROM pools p WHERE p.event_id = e.id),
            (SELECT string_agg(m.name, ' ') FROM markets m WHERE m.event_id = e.id))),
        to_tsvector('russian', concat_ws(' ', e.name_ru,
            (SELECT string_agg(concat_ws(' ', p.name_ru, p.rules_ru), ' ') FROM pools p WHERE p.event_id = e.id),
            (SELECT string_agg(m.name_ru, ' ') FROM markets m WHERE m.event_id = e.id)))
    FROM events e WHERE e.id = ev
    ON CONFLICT (event_id) DO UPDATE SET en = excluded.en, ru = excluded.ru
        WHERE (s.en, s.ru) IS DISTINCT FROM (excluded.en, excluded.ru);
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION feed_events_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO event_feed (event_id, listed) VALUES (NEW.id, NEW.is_active);
    ELSIF OLD.is_active IS DISTINCT FROM NEW.is_active THEN
        UPDATE event_feed SET listed = NEW.is_active WHERE event_id = NEW.id;
    END IF;
    IF TG_OP = 'INSERT' OR (OLD.name, OLD.name_ru) IS DISTINCT FROM (NEW.name, NEW.name_ru) THEN
        PERFORM feed_search_refresh(NEW.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION feed_pools_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM feed_search_refresh(OLD.event_id);
    ELSIF TG_OP = 'INSERT' OR (OLD.name, OLD.name_ru, OLD.rules, OLD.rules_ru) IS DISTINCT FROM (NEW.name, NEW.name_ru, NEW.rules, NEW.rules_ru) THEN
        PERFORM feed_search_refresh(NEW.event_id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION feed_markets_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM feed_refresh(OLD.event_id);
        PERFORM feed_search_refresh(OLD.event_id);
        RETURN NULL;
    END IF;
    PERFORM feed_refresh(NEW.event_id);
    IF TG_OP = 'INSERT' OR (OLD.name, OLD.name_ru) IS DISTINCT FROM (NEW.name, NEW.name_ru) THEN
        PERFORM feed_search_refresh(NEW.event_id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- feed_volume_log: the volumes trades added, not yet folded into
-- event_feed and event_hours (no foreign key: a trade takes no lock on
-- its event for it).
CREATE TABLE feed_volume_log (
    id       bigserial   PRIMARY KEY,
    event_id bigint      NOT NULL,
    start    timestamptz NOT NULL,
    delta    bigint      NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION feed_volume_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO feed_volume_log (event_id, start, delta)
    SELECT m.event_id, NEW.start, NEW.volume - CASE WHEN TG_OP = 'UPDATE' THEN OLD.volume ELSE 0 END
    FROM markets m WHERE m.id = NEW.market_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- feed_fold moves feed_volume_log into event_feed and event_hours. Folds
-- take turns on a transaction-level advisory lock (two folds updating the
-- same events in different orders could deadlock); an empty log costs one
-- index probe and no lock.
-- +goose StatementBegin
CREATE FUNCTION feed_fold() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM feed_volume_log) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.feed_fold'));
    WITH d AS (
        DELETE FROM feed_volume_log RETURNING event_id, start, delta
    ), e AS (
        UPDATE event_feed f SET volume = f.volume + s.v
        FROM (SELECT event_id, sum(delta) AS v FROM d GROUP BY event_id) s
        WHERE f.event_id = s.event_id
    )
    INSERT INTO event_hours AS h (start, event_id, volume)
    SELECT d.start, d.event_id, sum(d.delta) FROM d
    WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)
    GROUP BY d.start, d.event_id
    ORDER BY d.start, d.event_id
    ON CONFLICT (start, event_id) DO UPDATE SET volume = h.volume + excluded.volume;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER events_feed AFTER INSERT OR UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION feed_events_changed();
CREATE TRIGGER pools_feed AFTER INSERT OR UPDATE OR DELETE ON pools
    FOR EACH ROW EXECUTE FUNCTION feed_pools_changed();
CREATE TRIGGER markets_feed_insert AFTER INSERT OR DELETE ON markets
    FOR EACH ROW EXECUTE FUNCTION feed_markets_changed();
-- A trade's update of markets changes none of these columns: the WHEN
-- keeps the trigger from running at all.
CREATE TRIGGER markets_feed_update AFTER UPDATE ON markets
    FOR EACH ROW WHEN ((OLD.resolved, OLD.finish_at, OLD.name, OLD.name_ru) IS DISTINCT FROM (NEW.resolved, NEW.finish_at, NEW.name, NEW.name_ru))
    EXECUTE FUNCTION feed_markets_changed();
CREATE TRIGGER candles_feed_insert AFTER INSERT ON candles
    FOR EACH ROW WHEN (NEW.width_seconds = 3600 AND NEW.volume <> 0)
    EXECUTE FUNCTION feed_volume_changed();
CREATE TRIGGER candles_feed_update AFTER UPDATE ON candles
    FOR EACH ROW WHEN (NEW.width_seconds = 3600 AND NEW.volume <> OLD.volume)
    EXECUTE FUNCTION feed_volume_changed();

-- The events that exist already. event_hours is read for the last day
-- only: the two before are enough.
INSERT INTO event_feed (event_id, listed) SELECT id, is_active FROM events;
SELECT feed_refresh(id), feed_search_refresh(id) FROM events;
UPDATE event_feed f SET volume = v.volume
FROM (SELECT m.event_id, sum(c.volume) AS volume FROM candles c JOIN markets m ON m.id = c.market_id
      WHERE c.width_seconds = 86400 GROUP BY m.event_id) v
WHERE f.event_id = v.event_id;
INSERT INTO event_hours (start, event_id, volume)
SELECT c.start, m.event_id, sum(c.volume) FROM candles c JOIN markets m ON m.id = c.market_id
WHERE c.width_seconds = 3600 AND c.start >= now() - interval '2 days' AND c.volume <> 0
GROUP BY c.start, m.event_id;

-- +goose Down

DROP TRIGGER candles_feed_update ON candles;
DROP TRIGGER candles_feed_insert ON candles;
DROP TRIGGER markets_feed_update ON markets;
DROP TRIGGER markets_feed_insert ON markets;
DROP TRIGGER pools_feed ON pools;
DROP TRIGGER events_feed ON events;
DROP FUNCTION feed_fold();
DROP FUNCTION feed_volume_changed();
DROP FUNCTION feed_markets_changed();
DROP FUNCTION feed_pools_changed();
DROP FUNCTION feed_events_changed();
DROP FUNCTION feed_search_refresh(bigint);
DROP FUNCTION feed_refresh(bigint);
DROP TABLE feed_volume_log;
DROP TABLE event_hours;
DROP TABLE event_search;
DROP TABLE event_feed;
