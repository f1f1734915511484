package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// sqlTagEvents counts the active events carrying tag t.slug; it reads
// event_tags_tag_slug_idx.
const sqlTagEvents = `(SELECT count(*) FROM event_tags et JOIN events e ON e.id = et.event_id
	WHERE et.tag_slug = t.slug AND e.is_active)`

// Tags implements market.Store. Slugs sort bytewise (COLLATE "C"), as
// every store sorts them, whatever the database's collation.
func (s *Store) Tags(ctx context.Context) ([]market.Tag, error) {
	rows, err := s.pool.Query(ctx, `SELECT t.slug, t.name, t.name_ru, `+sqlTagEvents+`
		FROM tags t ORDER BY t.slug COLLATE "C"`)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []market.Tag{}
	var t market.Tag
	if _, err := pgx.ForEachRow(rows, []any{&t.Slug, &t.Name, &t.NameRu, &t.Events}, func() error {
		out = append(out, t)
		return nil
	}); err != nil {
		return nil, translate(err, nil)
	}
	return out, nil
}

// PutTag implements market.Store in one statement: an insert that
// renames the tag if it exists. xmax is 0 on a row version that the
// statement inserted and set on one it updated, which tells the two
// apart.
func (s *Store) PutTag(ctx context.Context, t *market.Tag) (bool, error) {
	var created bool
	err := s.pool.QueryRow(ctx, `WITH t AS (
			INSERT INTO tags (slug, name, name_ru, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name, name_ru = EXCLUDED.name_ru
			RETURNING slug, xmax = 0 AS created)
		SELECT t.created, `+sqlTagEvents+` FROM t`,
		t.Slug, t.Name, t.NameRu, now()).Scan(&created, &t.Events)
	if err != nil {
		return false, translate(err, nil)
	}
	return created, nil
}

// lockTags locks the tags slugs names against deletion until tx ends and
// returns a *market.UnknownTagError for the first that names none.
func lockTags(ctx context.Context, tx pgx.Tx, slugs []string) error {
	if len(slugs) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT slug FROM tags WHERE slug = ANY($1) FOR KEY SHARE`, slugs)
	if err != nil {
		return err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, slug := range slugs {
		if !slices.Contains(found, slug) {
			return &market.UnknownTagError{Slug: slug}
		}
	}
	return nil
}

// insertEventTags records that event eventID carries slugs, in order.
func insertEventTags(ctx context.Context, tx pgx.Tx, eventID int64, slugs []string) error {
	if len(slugs) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO event_tags (event_id, tag_slug, ordinal)
		SELECT $1, u.slug, u.ord FROM unnest($2::text[]) WITH ORDINALITY AS u(slug, ord)`, eventID, slugs)
	return err
}
