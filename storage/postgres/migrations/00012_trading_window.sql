-- The trading window. A pool's markets take trades while
-- live_at <= now < finish_at, and a creator may move finish_at. Each
-- market keeps a copy of its pool's finish_at, written with the pool's in
-- one transaction, because a trade locks its market's row, not its
-- pool's: a move that updates the market rows makes a trade waiting on
-- them read the new finish_at (READ COMMITTED re-reads an updated row it
-- locks, but not the rows it joins), so no trade decides on a window
-- that has moved. live_at never changes and is read from the pool.

-- +goose Up

ALTER TABLE markets ADD COLUMN finish_at timestamptz;
UPDATE markets m SET finish_at = p.finish_at FROM pools p WHERE p.id = m.pool_id;
ALTER TABLE markets ALTER COLUMN finish_at SET NOT NULL;

-- +goose Down

ALTER TABLE markets DROP COLUMN finish_at;
