package stream

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

// deliver hands a batch of entries from the feed to the subscribers. What
// needs the store (events' active flags, settlements) is read first,
// without the lock; then the whole batch is queued under it, so that a
// subscriber that registers sees either all of the batch or none of it.
func (h *Hub) deliver(es []changelog.Entry) {
	if len(es) == 0 {
		return
	}
	// The active flag of every event a trade concerns.
	active := map[int64]bool{}
	for i := range es {
		e := &es[i]
		if e.Type == changelog.Trade && e.UserID == 0 && e.EventID != 0 {
			if _, ok := active[e.EventID]; !ok {
				active[e.EventID] = h.active.get(h.ctx, e.EventID)
			}
		}
	}
	// Settlements: what each resolution means for the users of the me
	// topic connected now. A user who registers meanwhile is asked for
	// by its own subscription, when it writes the message.
	var asked map[int64]bool
	notes := map[int64]map[int64]json.RawMessage{} // by entry, by user
	failed := false
	for i := range es {
		e := &es[i]
		if e.Type != changelog.MarketResolved || e.UserID != 0 || h.o.Settlements == nil {
			continue
		}
		if asked == nil {
			asked = h.meUsers()
		}
		if len(asked) == 0 {
			break
		}
		users := make([]int64, 0, len(asked))
		for u := range asked {
			users = append(users, u)
		}
		ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
		n, err := h.o.Settlements.Settlement(ctx, *e, users)
		cancel()
		if err != nil {
			// Those users resume from the log, which asks again.
			h.o.Logger.Warn("stream: a settlement cannot be read; its users' subscriptions are dropped", "seq", e.Seq, "error", err)
			failed = true
			break
		}
		notes[e.Seq] = n
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if failed {
		for u := range asked {
			for s := range h.idx.user[u] {
				h.dropLocked(s, stateDropped)
			}
		}
	}
	for i := range es {
		e := &es[i]
		if e.Seq <= h.pos {
			continue // a feed that starts over hands out entries again
		}
		h.fanOut(e, active[e.EventID] || e.EventID == 0, asked, notes[e.Seq])
		h.pos = e.Seq
	}
}

// meUsers is the set of users with a registered me subscription.
func (h *Hub) meUsers() map[int64]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	users := make(map[int64]bool, len(h.idx.user))
	for u := range h.idx.user {
		users[u] = true
	}
	return users
}

// fanOut queues e for its subscribers; h.mu is held. active is whether
// e's event is active; asked are the users whose settlements notes holds
// (when e is a market_resolved entry).
func (h *Hub) fanOut(e *changelog.Entry, active bool, asked map[int64]bool, notes map[int64]json.RawMessage) {
	var pub *frame // encoded once, when someone gets it
	public := func() *frame {
		if pub == nil {
			pub = &frame{seq: e.Seq, b: encodeOrSkip(e, h.o.Logger)}
		}
		return pub
	}
	if e.UserID != 0 {
		if isPersonal(e.Type) {
			for s := range h.idx.user[e.UserID] {
				if f := public(); f.b != nil {
					h.push(s, f)
				}
			}
		}
		return
	}
	if !isPublic(e.Type) {
		return
	}
	if e.Type == changelog.MarketResolved && len(h.idx.user) > 0 && h.o.Settlements != nil {
		h.fanOutSettlement(e, active, asked, notes, public)
	}
	if public().b == nil {
		return
	}
	if e.Type == changelog.Trade && active {
		for s := range h.idx.trades {
			h.push(s, pub)
		}
	}
	if e.MarketID != 0 {
		for s := range h.idx.market[e.MarketID] {
			h.push(s, pub)
		}
	}
	if e.PoolID != 0 {
		for s := range h.idx.pool[e.PoolID] {
			h.push(s, pub)
		}
	}
	if e.EventID != 0 {
		for s := range h.idx.event[e.EventID] {
			h.push(s, pub)
		}
	}
}

// fanOutSettlement queues the personal messages of e, a market_resolved
// entry, for the me subscribers: a holder's notification (inside the
// public message for a subscriber that follows the market's topics too);
// a subscriber whose user was not asked about gets a frame it resolves
// itself. Subscribers that get nothing personal are left to the public
// fan-out, which follows.
func (h *Hub) fanOutSettlement(e *changelog.Entry, active bool, asked map[int64]bool, notes map[int64]json.RawMessage, public func() *frame) {
	for user, subs := range h.idx.user {
		var alone, inside *frame // the user's two messages, encoded once
		for s := range subs {
			if s.last >= e.Seq {
				continue
			}
			pub := s.public(e, active)
			if !asked[user] {
				f := &frame{seq: e.Seq, resolve: e}
				if pub {
					f.b = public().b
				}
				h.push(s, f)
				continue
			}
			note, ok := notes[user]
			if !ok {
				continue
			}
			f := &alone
			if pub {
				f = &inside
			}
			if *f == nil {
				*f = &frame{seq: e.Seq, b: personalFrame(e, note, pub, h.o.Logger)}
			}
			if (*f).b != nil {
				h.push(s, *f)
			}
		}
	}
}

// activeCache keeps events' active flags: the trades topic asks for one
// with every trade. A flag older than ttl is still used while it is read
// again in the background.
type activeCache struct {
	src EventStatus
	ttl time.Duration
	log *slog.Logger
	ctx context.Context

	mu sync.Mutex
	m  map[int64]*activeFlag
}

type activeFlag struct {
	active     bool
	at         time.Time
	refreshing bool
}

// maxActiveFlags bounds the cache; past it, the flags not read for a
// while are dropped.
const maxActiveFlags = 100_000

// get is whether event id is active. When the store cannot tell (it
// fails), the event counts as active: a hidden event is unlisted, not
// secret, so showing its trade is the lesser harm than losing a listed
// event's.
func (c *activeCache) get(ctx context.Context, id int64) bool {
	if c.src == nil {
		return true
	}
	now := time.Now()
	c.mu.Lock()
	if f, ok := c.m[id]; ok {
		if now.Sub(f.at) > c.ttl && !f.refreshing {
			f.refreshing = true
			go c.refresh(id)
		}
		a := f.active
		c.mu.Unlock()
		return a
	}
	c.mu.Unlock()
	return c.read(ctx, id)
}

// read asks the store and keeps the answer.
func (c *activeCache) read(ctx context.Context, id int64) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a, err := c.src.EventActive(ctx, id)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if f, ok := c.m[id]; ok {
			f.refreshing = false
			return f.active
		}
		c.log.Warn("stream: an event's active flag cannot be read; its trades go out", "event_id", id, "error", err)
		return true
	}
	if len(c.m) >= maxActiveFlags {
		for k, f := range c.m {
			if now.Sub(f.at) > 2*c.ttl && !f.refreshing {
				delete(c.m, k)
			}
		}
	}
	c.m[id] = &activeFlag{active: a, at: now}
	return a
}

func (c *activeCache) refresh(id int64) { c.read(c.ctx, id) }
