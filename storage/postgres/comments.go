package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

var _ social.CommentStore = (*Store)(nil)

// sqlComments reads comments with their authors and the reaction of the
// viewer ($1; 0 matches no user).
const sqlComments = `SELECT c.id, c.event_id, COALESCE(c.parent_id, 0), c.user_id, c.content,
	c.likes_count, c.dislikes_count, c.replies_count, c.created_at,
	u.name, COALESCE(u.nickname, ''), u.profile_hidden, COALESCE(u.avatar_url, ''), COALESCE(r.reaction, '')
FROM comments c
JOIN users u ON u.id = c.user_id
LEFT JOIN comment_reactions r ON r.comment_id = c.id AND r.user_id = $1
`

func scanComments(rows pgx.Rows) ([]*social.Comment, error) {
	defer rows.Close()
	out := []*social.Comment{}
	for rows.Next() {
		c := &social.Comment{}
		var reaction string
		if err := rows.Scan(&c.ID, &c.EventID, &c.ParentID, &c.UserID, &c.Content,
			&c.LikesCount, &c.DislikesCount, &c.RepliesCount, &c.CreatedAt,
			&c.Author.Name, &c.Author.Nickname, &c.Author.ProfileHidden, &c.Author.AvatarURL, &reaction); err != nil {
			return nil, err
		}
		c.Author.ID = c.UserID
		c.UserReaction = social.Reaction(reaction)
		c.CreatedAt = c.CreatedAt.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func readComment(ctx context.Context, q rowQuerier, id, viewerID int64) (*social.Comment, error) {
	rows, err := q.Query(ctx, sqlComments+`WHERE c.id = $2`, viewerID, id)
	if err != nil {
		return nil, err
	}
	cs, err := scanComments(rows)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, &decideError{social.ErrCommentNotFound}
	}
	return cs[0], nil
}

// commentErr is translate for the comment statements: a user that does
// not exist (a foreign key of a comment, a reaction or a reply's
// notification) is account.ErrUserNotFound.
func commentErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeForeignKeyViolation {
		switch pe.ConstraintName {
		case "comments_user_id_fkey", "comment_reactions_user_id_fkey", "notifications_user_id_fkey":
			return account.ErrUserNotFound
		}
	}
	return translate(err, nil)
}

// CreateComment implements social.CommentStore: in one transaction it
// checks the event, counts the reply on its parent (which locks the
// parent's row and checks it), inserts the comment and the notification.
func (s *Store) CreateComment(ctx context.Context, c *social.Comment, n *social.Notification) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	c.CreatedAt = dbTime(c.CreatedAt)
	var data []byte
	if n != nil {
		if n.CreatedAt.IsZero() {
			n.CreatedAt = c.CreatedAt
		}
		n.CreatedAt = dbTime(n.CreatedAt)
		var err error
		if data, err = json.Marshal(n.Data); err != nil {
			return fmt.Errorf("postgres: notification data: %w", err)
		}
	}
	var id, nid int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1)`, c.EventID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return &decideError{social.ErrEventNotFound}
		}
		var parent *int64
		if c.ParentID != 0 {
			var eventID int64
			var isReply bool
			err := tx.QueryRow(ctx, `UPDATE comments SET replies_count = replies_count + 1 WHERE id = $1
				RETURNING event_id, parent_id IS NOT NULL`, c.ParentID).Scan(&eventID, &isReply)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return &decideError{social.ErrCommentNotFound}
			case err != nil:
				return err
			case eventID != c.EventID:
				return &decideError{social.ErrParentOtherEvent}
			case isReply:
				return &decideError{social.ErrParentIsReply}
			}
			parent = &c.ParentID
		}
		if err := tx.QueryRow(ctx, `INSERT INTO comments (event_id, parent_id, user_id, content, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, c.EventID, parent, c.UserID, c.Content, c.CreatedAt).Scan(&id); err != nil {
			return err
		}
		// The comment as stored, with its author, for its entry.
		stored, err := readComment(ctx, tx, id, 0)
		if err != nil {
			return err
		}
		changes := []changelog.Entry{social.CommentChange(stored)}
		if n != nil {
			if err := tx.QueryRow(ctx, sqlInsertNotification, n.UserID, n.Type, n.RelatedID, n.RelatedType, string(data), n.CreatedAt).Scan(&nid); err != nil {
				return err
			}
			note := *n
			note.ID = nid
			changes = append(changes, social.NotificationChange(&note))
		}
		return s.appendChanges(ctx, tx, changes)
	})
	if err != nil {
		return commentErr(err)
	}
	c.ID = id
	if n != nil {
		n.ID = nid
	}
	return nil
}

// Comment implements social.CommentStore.
func (s *Store) Comment(ctx context.Context, id, viewerID int64) (*social.Comment, error) {
	c, err := readComment(ctx, s.pool, id, viewerID)
	if err != nil {
		return nil, translate(err, nil)
	}
	return c, nil
}

// EventComments implements social.CommentStore. An empty page asks
// whether the event exists.
func (s *Store) EventComments(ctx context.Context, eventID, viewerID int64, limit, offset int) ([]*social.Comment, error) {
	rows, err := s.pool.Query(ctx, sqlComments+`WHERE c.event_id = $2 AND c.parent_id IS NULL
ORDER BY c.created_at DESC, c.id DESC LIMIT $3 OFFSET $4`, viewerID, eventID, limit, offset)
	if err != nil {
		return nil, translate(err, nil)
	}
	cs, err := scanComments(rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(cs) == 0 {
		var exists bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1)`, eventID).Scan(&exists); err != nil {
			return nil, translate(err, nil)
		}
		if !exists {
			return nil, social.ErrEventNotFound
		}
	}
	return cs, nil
}

// Replies implements social.CommentStore. An empty page asks whether the
// comment exists.
func (s *Store) Replies(ctx context.Context, id, viewerID int64, limit, offset int) ([]*social.Comment, error) {
	rows, err := s.pool.Query(ctx, sqlComments+`WHERE c.parent_id = $2
ORDER BY c.created_at, c.id LIMIT $3 OFFSET $4`, viewerID, id, limit, offset)
	if err != nil {
		return nil, translate(err, nil)
	}
	cs, err := scanComments(rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(cs) == 0 {
		var exists bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM comments WHERE id = $1)`, id).Scan(&exists); err != nil {
			return nil, translate(err, nil)
		}
		if !exists {
			return nil, social.ErrCommentNotFound
		}
	}
	return cs, nil
}

// sqlReact changes user $2's reaction to comment $1 to $3 (the empty string removes it)
// and moves the comment's counts by the difference. It runs after the
// comment's row is locked: every change of the comment's reactions holds
// that lock, so the old reaction it reads is current and the counts stay
// equal to the rows.
const sqlReact = `WITH old AS (
	SELECT COALESCE((SELECT reaction FROM comment_reactions WHERE comment_id = $1::bigint AND user_id = $2::bigint), '') AS r
), del AS (
	DELETE FROM comment_reactions WHERE comment_id = $1 AND user_id = $2 AND $3::text = ''
), up AS (
	INSERT INTO comment_reactions (comment_id, user_id, reaction, created_at)
	SELECT $1::bigint, $2::bigint, $3::text, $4::timestamptz WHERE $3::text <> ''
	ON CONFLICT (comment_id, user_id) DO UPDATE SET reaction = EXCLUDED.reaction, created_at = EXCLUDED.created_at
)
UPDATE comments c SET
	likes_count = c.likes_count + (CASE WHEN $3 = 'like' THEN 1 ELSE 0 END) - (CASE WHEN old.r = 'like' THEN 1 ELSE 0 END),
	dislikes_count = c.dislikes_count + (CASE WHEN $3 = 'dislike' THEN 1 ELSE 0 END) - (CASE WHEN old.r = 'dislike' THEN 1 ELSE 0 END)
FROM old WHERE c.id = $1`

// SetReaction implements social.CommentStore: one transaction locks the
// comment's row, changes the reaction and the counts, and reads the
// comment back.
func (s *Store) SetReaction(ctx context.Context, id, userID int64, r social.Reaction) (*social.Comment, error) {
	if r != social.ReactionLike && r != social.ReactionDislike && r != social.ReactionNone {
		return nil, &input.Error{Field: "reaction", Reason: "must be like, dislike or none"}
	}
	var c *social.Comment
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var locked int64
		err := tx.QueryRow(ctx, `SELECT id FROM comments WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&locked)
		if errors.Is(err, pgx.ErrNoRows) {
			return &decideError{social.ErrCommentNotFound}
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlReact, id, userID, string(r), now()); err != nil {
			return err
		}
		c, err = readComment(ctx, tx, id, userID)
		return err
	})
	if err != nil {
		return nil, commentErr(err)
	}
	return c, nil
}

// ReactionCounts returns how many likes and dislikes of comment id are
// stored, counted from the reaction rows rather than read from the
// comment's counts (for tests and audits).
func (s *Store) ReactionCounts(ctx context.Context, id int64) (likes, dislikes int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE reaction = 'like'), count(*) FILTER (WHERE reaction = 'dislike')
		FROM comment_reactions WHERE comment_id = $1`, id).Scan(&likes, &dislikes)
	return likes, dislikes, translate(err, nil)
}
