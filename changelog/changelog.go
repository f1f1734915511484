// Package changelog is the durable log of committed changes: every trade,
// price change, resolution, new comment, notification and balance change,
// each with a sequence number in commit order.
//
// An entry is written in the same transaction as the change it tells of
// (the transactional-outbox pattern): a change that rolls back leaves no
// entry, and a committed one always has its entry. Whatever reacts to a
// commit (live streams, webhooks, other server instances) reads the log
// instead of being told by the code that made the change, so nothing
// reacts to an uncommitted change and nothing committed is missed: a
// reader that stopped at sequence n resumes with the entries after n.
//
// The stores (storage/memory, storage/postgres) write entries; Memory is
// the log of the memory store, usable on its own.
package changelog

import (
	"encoding/json"
	"time"
)

// Type says what an entry tells of. The names are those of the stream's
// messages.
type Type string

// The types of entries.
const (
	// Trade is an executed buy or sell.
	Trade Type = "trade"
	// Price is a market's YES probability after a change.
	Price Type = "price"
	// MarketResolved is a market resolved YES or NO, or voided.
	MarketResolved Type = "market_resolved"
	// AnswerAdded is an answer added to an exclusive pool, taking part of
	// its Other answer's probability (the new market's; a price entry
	// follows for every market of the pool).
	AnswerAdded Type = "answer_added"
	// Comment is a new comment or reply on an event.
	Comment Type = "comment"
	// Notification is a notification for one user.
	Notification Type = "notification"
	// Balance is a change of one user's balances.
	Balance Type = "balance"
	// Withdrawal is one user's withdrawal requested, paid, rejected or
	// cancelled: its new state.
	Withdrawal Type = "withdrawal"
)

// Entry is one committed change.
type Entry struct {
	// Seq is the entry's position in commit order: an entry committed
	// after another has a larger Seq. Stores set it when they write the
	// entry; it is positive and never reused.
	Seq  int64
	Type Type
	// EventID, PoolID and MarketID place the change; 0 where it has no such
	// place (a balance change, a comment has no pool or market).
	EventID, PoolID, MarketID int64
	// UserID, when not 0, is the one user the entry is for (Notification,
	// Balance): it is nobody else's to see. Public entries have 0.
	UserID int64
	// Data is the message's JSON object, as readers send it on.
	Data json.RawMessage
	// At is when the change was made.
	At time.Time
}

// Bounds tell which part of the log a store still holds.
type Bounds struct {
	// Pruned is the largest sequence number whose entry (if there was one)
	// has been pruned, 0 if none ever was. A reader that last saw an entry
	// before Pruned has missed entries it cannot get back.
	Pruned int64
	// Last is the largest sequence number committed, 0 for an empty log.
	Last int64
}

// Gap reports whether a reader that has seen every entry up to after
// (inclusive) has missed pruned entries.
func (b Bounds) Gap(after int64) bool { return after < b.Pruned }
