package p2p

import (
	"context"
	"time"
)

// Store keeps ads and users' P2P records. Implementations: storage/memory
// and storage/postgres; both pass storage/storagetest.
type Store interface {
	// CreateP2PAd stores ad (its Owner is ignored) and sets ad.ID; a zero
	// CreatedAt or UpdatedAt is set to now. ErrUserNotFound when
	// ad.UserID names no user.
	CreateP2PAd(ctx context.Context, ad *Ad) error
	// P2PAd returns ad id with its owner, whatever its state. ErrNotFound.
	P2PAd(ctx context.Context, id int64) (*Ad, error)
	// ModerateP2PAd applies m to ad id, sets its UpdatedAt to at and returns
	// it with its owner. ErrNotFound.
	ModerateP2PAd(ctx context.Context, id int64, m Moderation, at time.Time) (*Ad, error)
	// P2PAds returns the approved ads q selects, in q's order, paged by q,
	// each with its owner. The store filters, sorts and pages itself (a
	// database in its query, with indexes): it never loads every ad.
	// q has been checked by ParseQuery or Query.Check.
	P2PAds(ctx context.Context, q Query) ([]*Ad, error)
	// SetP2PStats replaces user st.UserID's P2P record. ErrUserNotFound.
	SetP2PStats(ctx context.Context, st UserStats) error
	// P2PStats returns user id's P2P record (zero for a user who has
	// none). ErrUserNotFound.
	P2PStats(ctx context.Context, userID int64) (UserStats, error)
}
