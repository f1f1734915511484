-- Consumers of the change log that must see every entry (a webhook
-- dispatcher, a maintained aggregate) keep where they have read to here,
-- moved in the transaction that applies what they read, so that a crash
-- repeats nothing and loses nothing. Pruning keeps every entry after the
-- smallest cursor, however old: a consumer away for longer than the
-- retention misses nothing. A consumer that is retired deletes its row.

-- +goose Up

CREATE TABLE change_consumers (
    name       text        PRIMARY KEY,
    after      bigint      NOT NULL CHECK (after >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down

DROP TABLE change_consumers;
