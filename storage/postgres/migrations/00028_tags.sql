-- Tags: labels the operator keeps (PUT /api/v1/admin/tags/{slug}) and
-- events carry.
--
-- A tag is named by its slug, which never changes (a rename changes its
-- names only), so event_tags refers to the slug itself: an event's tags
-- read without a join, and the slug's rule is checked here as well as in
-- the service. An event's tags keep the order its creator gave them
-- (ordinal). Creating an event locks the rows of the tags it names
-- (FOR KEY SHARE), so that a tag it found cannot be gone at commit.
--
-- GET /api/v1/tags counts each tag's active events: event_tags
-- (tag_slug, event_id) serves the count, and the filter by tag that
-- the feed will have, with an index range scan per tag.

-- +goose Up

CREATE TABLE tags (
    slug       text        PRIMARY KEY CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$'),
    name       text        NOT NULL,
    name_ru    text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE TABLE event_tags (
    event_id bigint   NOT NULL REFERENCES events (id),
    tag_slug text     NOT NULL REFERENCES tags (slug),
    ordinal  smallint NOT NULL,
    PRIMARY KEY (event_id, tag_slug)
);

CREATE INDEX event_tags_tag_slug_idx ON event_tags (tag_slug, event_id);

-- +goose Down

DROP TABLE event_tags;
DROP TABLE tags;
