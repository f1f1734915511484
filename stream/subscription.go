package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

// A subscription's state.
const (
	stateLive uint8 = iota
	stateSlow
	stateDropped
)

// Request says what a subscriber follows.
type Request struct {
	Topics []Topic
	// UserID is the authenticated user, required by the Me topic.
	UserID int64
	// Resume: the subscriber saw every entry up to After and wants those
	// after it. Without it the subscription starts at the live entries.
	Resume bool
	After  int64
}

// Subscription is one subscriber, from Open until Serve returns.
type Subscription struct {
	h      *Hub
	user   int64
	me     bool
	trades bool
	// The ids of the Market, Pool and Event topics: a few each.
	markets, pools, events []int64
	resume                 bool
	after                  int64
	// start is the log's last entry when a subscription that does not
	// resume opened: it gets the entries after it.
	start int64

	wake chan struct{}

	// The serving side's state (serve.go), used by one goroutine at a
	// time: Serve's, or the Reader's.
	phase   uint8
	checked bool  // the catch-up has read the log's bounds
	cur     int64 // the catch-up's position
	empty   int   // consecutive empty reads of the catch-up
	timer   *time.Timer
	sent    time.Time // when live last returned messages
	batch   []*frame
	out     [][]byte
	ended   error

	mu    sync.Mutex
	queue []*frame
	state uint8

	// Guarded by h.mu.
	registered bool
	removed    bool
	// last is the last entry handed to this subscriber: the fan-out skips
	// entries up to it, which the subscriber read from the log.
	last int64
}

// Open checks r and reserves a subscription; Serve runs it, Cancel gives
// it up unserved. A last id after the log's last entry is a
// *FutureError; a Me topic needs r.UserID.
func (h *Hub) Open(ctx context.Context, r Request) (*Subscription, error) {
	s := &Subscription{h: h, user: r.UserID, resume: r.Resume, after: r.After, wake: make(chan struct{}, 1)}
	for _, t := range r.Topics {
		switch t.Kind {
		case Trades:
			s.trades = true
		case Me:
			if r.UserID <= 0 {
				return nil, errors.New("stream: the me topic needs a user")
			}
			s.me = true
		case Market:
			s.markets = append(s.markets, t.ID)
		case Pool:
			s.pools = append(s.pools, t.ID)
		case Event:
			s.events = append(s.events, t.ID)
		default:
			return nil, fmt.Errorf("stream: unknown topic kind %d", t.Kind)
		}
	}
	if r.Resume && r.After < 0 {
		return nil, &FutureError{After: r.After}
	}
	b, err := h.o.Log.ChangeBounds(ctx)
	if err != nil {
		return nil, err
	}
	if r.Resume && r.After > b.Last {
		return nil, &FutureError{After: r.After, Last: b.Last}
	}
	s.start = b.Last
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started || h.closed {
		return nil, ErrClosed
	}
	if h.subs == 0 {
		// No one is subscribed, so no one misses what the fan-out has
		// not handed out: it may start at the log's end. A paused hub
		// must, having read nothing meanwhile.
		h.pos = max(h.pos, b.Last)
		if h.idle != nil {
			h.idle.Stop()
		}
		if h.paused {
			h.paused = false
			select {
			case h.resume <- struct{}{}:
			default:
			}
		}
	}
	h.subs++
	h.serves.Add(1)
	return s, nil
}

// Cancel gives up a subscription that will not be served.
func (s *Subscription) Cancel() { s.h.remove(s) }

// register adds s to the fan-out after entry at, or after the fan-out's
// position if that is later, and returns the entry it was registered
// after.
func (h *Hub) register(s *Subscription, at int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = max(at, h.pos)
	h.addLocked(s, at)
	return at
}

// tryRegister adds s to the fan-out if it has read at least up to the
// fan-out's position: from then on the fan-out hands it every entry after
// cur. Otherwise the fan-out has gone past entries s has not read yet,
// and s must read more first.
func (h *Hub) tryRegister(s *Subscription, cur int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur < h.pos {
		return false
	}
	h.addLocked(s, cur)
	return true
}

func (h *Hub) addLocked(s *Subscription, at int64) {
	if s.removed || s.registered {
		return
	}
	s.registered, s.last = true, at
	if s.trades {
		h.idx.trades[s] = struct{}{}
	}
	for _, id := range s.markets {
		addTo(h.idx.market, id, s)
	}
	for _, id := range s.pools {
		addTo(h.idx.pool, id, s)
	}
	for _, id := range s.events {
		addTo(h.idx.event, id, s)
	}
	if s.me {
		addTo(h.idx.user, s.user, s)
	}
}

func addTo(m map[int64]map[*Subscription]struct{}, id int64, s *Subscription) {
	set := m[id]
	if set == nil {
		set = map[*Subscription]struct{}{}
		m[id] = set
	}
	set[s] = struct{}{}
}

func removeFrom(m map[int64]map[*Subscription]struct{}, id int64, s *Subscription) {
	if set := m[id]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(m, id)
		}
	}
}

// unindexLocked takes s out of the fan-out.
func (h *Hub) unindexLocked(s *Subscription) {
	if !s.registered {
		return
	}
	s.registered = false
	delete(h.idx.trades, s)
	for _, id := range s.markets {
		removeFrom(h.idx.market, id, s)
	}
	for _, id := range s.pools {
		removeFrom(h.idx.pool, id, s)
	}
	for _, id := range s.events {
		removeFrom(h.idx.event, id, s)
	}
	if s.me {
		removeFrom(h.idx.user, s.user, s)
	}
}

// remove ends s: out of the fan-out, no longer counted.
func (h *Hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.removed {
		return
	}
	s.removed = true
	h.unindexLocked(s)
	h.subs--
	if h.subs == 0 && h.o.Idle > 0 {
		if h.idle == nil {
			h.idle = time.AfterFunc(h.o.Idle, h.pauseIfIdle)
		} else {
			h.idle.Reset(h.o.Idle)
		}
	}
	h.serves.Done()
	s.mu.Lock()
	s.queue = nil
	s.mu.Unlock()
}

// dropLocked disconnects s: its queue is freed at once and its Serve
// returns at its next wake-up.
func (h *Hub) dropLocked(s *Subscription, state uint8) {
	h.unindexLocked(s)
	s.mu.Lock()
	if s.state == stateLive {
		s.state = state
	}
	s.queue = nil
	s.mu.Unlock()
	if state == stateSlow {
		h.slow.Add(1)
	} else {
		h.dropped.Add(1)
	}
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// push queues f for s, unless s has it already; h.mu is held.
func (h *Hub) push(s *Subscription, f *frame) {
	if s.last >= f.seq || !s.registered {
		return
	}
	s.last = f.seq
	s.mu.Lock()
	if len(s.queue) >= h.o.Buffer {
		s.mu.Unlock()
		h.dropLocked(s, stateSlow)
		return
	}
	s.queue = append(s.queue, f)
	s.mu.Unlock()
	s.signal()
}

// public reports whether e is a public entry that s's topics ask for;
// active is whether e's event is active.
func (s *Subscription) public(e *changelog.Entry, active bool) bool {
	if e.UserID != 0 || !isPublic(e.Type) {
		return false
	}
	return s.trades && e.Type == changelog.Trade && active ||
		e.MarketID != 0 && slices.Contains(s.markets, e.MarketID) ||
		e.PoolID != 0 && slices.Contains(s.pools, e.PoolID) ||
		e.EventID != 0 && slices.Contains(s.events, e.EventID)
}

func isPublic(t changelog.Type) bool {
	switch t {
	case changelog.Trade, changelog.Price, changelog.MarketResolved, changelog.Comment, changelog.AnswerAdded:
		return true
	}
	return false
}

func isPersonal(t changelog.Type) bool {
	return t == changelog.Notification || t == changelog.Balance || t == changelog.Withdrawal
}

// backlog is the message s gets for e, read from the log, or nil.
func (s *Subscription) backlog(e *changelog.Entry) ([]byte, error) {
	h := s.h
	if e.UserID != 0 {
		if s.me && e.UserID == s.user && isPersonal(e.Type) {
			return encodeOrSkip(e, h.o.Logger), nil
		}
		return nil, nil
	}
	active := true
	if s.trades && e.Type == changelog.Trade && e.EventID != 0 {
		active = h.active.get(h.ctx, e.EventID)
	}
	pub := s.public(e, active)
	if e.Type == changelog.MarketResolved && s.me {
		return s.resolved(h.ctx, e, pub)
	}
	if pub {
		return encodeOrSkip(e, h.o.Logger), nil
	}
	return nil, nil
}

// resolved is the message s gets for e, a market_resolved entry, when s
// follows the me topic: the user's settlement notification (inside the
// public message when pub, s following the market's topics too), the
// public message alone when the user held no position, or nil.
func (s *Subscription) resolved(ctx context.Context, e *changelog.Entry, pub bool) ([]byte, error) {
	h := s.h
	var note json.RawMessage
	if h.o.Settlements != nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		notes, err := h.o.Settlements.Settlement(ctx, *e, []int64{s.user})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("stream: settlement of entry %d for user %d: %w", e.Seq, s.user, err)
		}
		note = notes[s.user]
	}
	return personalFrame(e, note, pub, h.o.Logger), nil
}

// personalFrame is the message of e, a market_resolved entry, for a user
// whose settlement notification is note (nil: none); pub says whether the
// subscriber follows the market's public topics.
func personalFrame(e *changelog.Entry, note json.RawMessage, pub bool, log *slog.Logger) []byte {
	switch {
	case note != nil && pub:
		data, err := withNotification(e.Data, note)
		if err == nil {
			b, err := encode(e.Seq, string(changelog.MarketResolved), data)
			if err == nil {
				return b
			}
		}
		log.Warn("stream: a settlement notification cannot be sent", "seq", e.Seq, "error", err)
		return encodeOrSkip(e, log)
	case note != nil:
		b, err := encode(e.Seq, string(changelog.Notification), note)
		if err != nil {
			log.Warn("stream: a settlement notification cannot be sent", "seq", e.Seq, "error", err)
			return nil
		}
		return b
	case pub:
		return encodeOrSkip(e, log)
	}
	return nil
}

// encodeOrSkip is e's message, or nil (logged) when its data cannot be
// sent: a bad entry must not end every stream.
func encodeOrSkip(e *changelog.Entry, log *slog.Logger) []byte {
	b, err := encode(e.Seq, string(e.Type), e.Data)
	if err != nil {
		log.Warn("stream: an entry cannot be sent", "seq", e.Seq, "type", e.Type, "error", err)
		return nil
	}
	return b
}
