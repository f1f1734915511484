-- Amendments: dated notes an event's creator adds to it
-- (POST /api/v1/events/{id}/amendments), shown with the event, oldest
-- first, in both languages. Names and rules never change after an
-- event's first trade; an amendment is added beside them.
--
-- An edit before the first trade (PATCH /api/v1/events/{id}) needs no
-- schema: it deletes the event's pools and markets, which nothing refers
-- to before a trade, and inserts the new ones.

-- +goose Up

CREATE TABLE event_amendments (
    id         bigserial   PRIMARY KEY,
    event_id   bigint      NOT NULL REFERENCES events (id),
    text       text        NOT NULL,
    text_ru    text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE INDEX event_amendments_event_idx ON event_amendments (event_id, id);

-- +goose Down

DROP TABLE event_amendments;
