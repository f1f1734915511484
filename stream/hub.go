// Package stream fans the change log out to live subscribers: the server's
// text/event-stream endpoint, or any program that embeds the packages.
//
// A Hub follows one changelog.Feed for the whole process and hands every
// entry to the subscribers whose topics it concerns. Each message is
// encoded once and its bytes are shared by every subscriber that gets
// it. A subscriber that resumes (it names the last id it saw) first reads
// what it missed from the changelog.Reader, a page at a time, then joins
// the live fan-out at the exact entry where its reading stopped: nothing
// is missing and nothing repeats. A subscriber whose last id the log has
// pruned gets a reset message first, then the live entries.
//
// Memory is bounded: each subscriber queues at most Options.Buffer
// messages; one that falls further behind is disconnected (it comes back
// with its last id and reads the rest from the log), so a slow client
// never slows the others nor makes the process grow.
//
// The hub has no goroutine per subscriber: a subscription is served by
// its caller's goroutine, woken when its queue has something: Serve
// pushes it to a Writer, or Reader lets an HTTP server pull it as an
// answer's body (the server's connection goroutine then waits in Read).
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

// EventStatus tells whether an event is active (listed): the trades topic
// carries only the trades of active events.
type EventStatus interface {
	// EventActive reports whether event id is active; an event that does
	// not exist is not.
	EventActive(ctx context.Context, id int64) (bool, error)
}

// Settlements tells the hub what a market's resolution means for the
// users who held a position in it: the log has one market_resolved entry
// per market, never one per holder.
type Settlements interface {
	// Settlement returns, for each of users who held a position in the
	// market that e (a market_resolved entry) resolved, the JSON object
	// that user's me topic shows for it (the user's settlement
	// notification). Users who held no position are absent.
	Settlement(ctx context.Context, e changelog.Entry, users []int64) (map[int64]json.RawMessage, error)
}

// Options configure a Hub.
type Options struct {
	// Feed is the live log the hub follows (the store's ChangeFeed, or
	// another transport's), Log the log a resuming subscriber reads its
	// backlog from. Both are required.
	Feed changelog.Feed
	Log  changelog.Reader
	// Events tells active events from hidden ones; nil counts every
	// event active.
	Events EventStatus
	// Settlements personalizes resolutions for the me topic; nil sends
	// none.
	Settlements Settlements
	// Buffer is the most messages queued for one subscriber (default
	// 1024); past it the subscriber is disconnected.
	Buffer int
	// Ping is how long a subscriber may go without a byte before it
	// gets a ": ping" comment (default 15 s).
	Ping time.Duration
	// Page is how many entries a resuming subscriber reads at a time
	// (default 500).
	Page int
	// ActiveTTL is how long an event's active flag is trusted before it is
	// read again, in the background (default 5 s).
	ActiveTTL time.Duration
	// Retry is the first pause after the feed fails (default 1 s; it
	// doubles up to 30 s while the feed keeps failing).
	Retry time.Duration
	// Coalesce is the least time between two writes to one subscriber
	// (0, the default: none). A message that comes after a quiet spell
	// goes out at once; those that follow it within Coalesce wait and go
	// out together. On a busy market that turns a write and a flush per
	// message into one per Coalesce for each subscriber, which is what
	// lets a server keep up with a thousand of them, for at most
	// Coalesce of delay.
	Coalesce time.Duration
	// Idle is how long the hub goes on following the feed after its
	// last subscriber left (0, the default: it follows it always). A hub
	// with no subscriber has nothing to hand out, yet following the feed
	// reads every commit's entries back from the log: on a server that
	// streams to nobody (an API-only instance, a quiet hour) that is a
	// read beside every trade for nothing. A paused hub reads nothing;
	// the next subscriber resumes it at the log's end.
	Idle time.Duration
	// Logger receives the hub's warnings; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Buffer <= 0 {
		o.Buffer = 1024
	}
	if o.Ping <= 0 {
		o.Ping = 15 * time.Second
	}
	if o.Page <= 0 {
		o.Page = 500
	}
	if o.ActiveTTL <= 0 {
		o.ActiveTTL = 5 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Errors of Open and Serve.
var (
	// ErrClosed: the hub is not running (not started yet, or closed).
	ErrClosed = errors.New("stream: the hub is closed")
	// ErrSlow: the subscriber fell more than Options.Buffer messages
	// behind and was disconnected.
	ErrSlow = errors.New("stream: the subscriber fell behind")
	// ErrDropped: the hub could not give the subscriber every entry
	// (the feed lost entries, or a settlement could not be read); the
	// subscriber resumes from the log with its last id.
	ErrDropped = errors.New("stream: the subscriber was dropped")
)

// FutureError is a last id larger than the log's last entry: no such id
// was ever sent.
type FutureError struct{ After, Last int64 }

func (e *FutureError) Error() string {
	return fmt.Sprintf("stream: last event id %d is after the log's last entry, %d", e.After, e.Last)
}

// Hub fans one feed out to many subscribers.
type Hub struct {
	o      Options
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   chan struct{} // closed at Close
	run    chan struct{} // closed when the feed's goroutine ends
	serves sync.WaitGroup

	active activeCache

	mu      sync.Mutex
	started bool
	closed  bool
	// pos is the last entry the fan-out handled: every registered
	// subscriber has been handed every entry up to pos it wants.
	pos  int64
	subs int // open subscriptions, registered or catching up
	idx  index
	// paused: the hub does not follow the feed (Options.Idle); resume
	// wakes the feed's goroutine when a subscriber comes. stopFollow ends
	// the feed's current Follow; idle pauses the hub once Idle has passed
	// with no subscriber.
	paused     bool
	resume     chan struct{}
	stopFollow context.CancelFunc
	idle       *time.Timer

	// Counters, for metrics and tests.
	slow, dropped atomic.Int64
}

// index finds the subscribers of an entry.
type index struct {
	trades map[*Subscription]struct{}
	market map[int64]map[*Subscription]struct{}
	pool   map[int64]map[*Subscription]struct{}
	event  map[int64]map[*Subscription]struct{}
	user   map[int64]map[*Subscription]struct{} // me
}

// New returns a hub; Start starts it.
func New(o Options) *Hub {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{o: o, ctx: ctx, cancel: cancel, done: make(chan struct{}), run: make(chan struct{}), resume: make(chan struct{}, 1)}
	h.active = activeCache{src: o.Events, ttl: o.ActiveTTL, log: o.Logger, ctx: ctx, m: map[int64]*activeFlag{}}
	h.idx = index{
		trades: map[*Subscription]struct{}{},
		market: map[int64]map[*Subscription]struct{}{},
		pool:   map[int64]map[*Subscription]struct{}{},
		event:  map[int64]map[*Subscription]struct{}{},
		user:   map[int64]map[*Subscription]struct{}{},
	}
	return h
}

// Start reads where the log ends and follows the feed from there, in the
// background, until Close.
func (h *Hub) Start(ctx context.Context) error {
	b, err := h.o.Log.ChangeBounds(ctx)
	if err != nil {
		return fmt.Errorf("stream: read the change log's bounds: %w", err)
	}
	h.mu.Lock()
	if h.started || h.closed {
		h.mu.Unlock()
		return errors.New("stream: the hub was started already")
	}
	h.started, h.pos = true, b.Last
	// With no subscriber yet, a hub that may pause starts paused.
	h.paused = h.o.Idle > 0
	h.mu.Unlock()
	go h.follow()
	return nil
}

// Close ends every subscription (each Serve writes a closing comment and
// returns ErrClosed) and refuses new ones, then waits, until ctx ends,
// for the Serve calls to return and the feed to stop.
func (h *Hub) Close(ctx context.Context) error {
	h.mu.Lock()
	wasStarted := h.started
	if !h.closed {
		h.closed = true
		close(h.done)
		h.cancel()
	}
	h.mu.Unlock()
	served := make(chan struct{})
	go func() {
		h.serves.Wait()
		if wasStarted {
			<-h.run
		}
		close(served)
	}()
	select {
	case <-served:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stream: subscriptions still writing at close: %w", ctx.Err())
	}
}

// Len is the number of open subscriptions.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs
}

// Position is the last entry the hub has handed out.
func (h *Hub) Position() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pos
}

// Slow and Dropped count the subscribers disconnected for falling behind
// and for entries the hub could not give them.
func (h *Hub) Slow() int64    { return h.slow.Load() }
func (h *Hub) Dropped() int64 { return h.dropped.Load() }

// follow runs the feed until Close, starting again (after a pause) when
// it fails, and resting while the hub is paused.
func (h *Hub) follow() {
	defer close(h.run)
	delay := h.o.Retry
	for {
		if !h.awaitSubscriber() {
			return
		}
		fctx, stop := context.WithCancel(h.ctx)
		h.mu.Lock()
		if h.paused {
			h.mu.Unlock()
			stop()
			continue
		}
		h.stopFollow = stop
		from := h.pos
		h.mu.Unlock()
		err := h.o.Feed.Follow(fctx, from, func(es []changelog.Entry) error {
			delay = h.o.Retry
			h.deliver(es)
			return nil
		})
		paused := fctx.Err() != nil // stopped by pauseIfIdle, or Close
		stop()
		if h.ctx.Err() != nil {
			return
		}
		if paused {
			continue // no one to hand entries to
		}
		if errors.Is(err, changelog.ErrPruned) {
			// The hub itself fell behind the log's retention: its
			// subscribers missed entries. Each comes back with its last
			// id and reads a reset.
			b, berr := h.o.Log.ChangeBounds(h.ctx)
			if berr == nil {
				h.o.Logger.Warn("stream: the feed lost entries; every subscriber is dropped", "after", from, "pruned", b.Pruned)
				h.dropAll(b.Last)
				continue
			}
			err = berr
		}
		h.o.Logger.Warn("stream: the change feed failed; following it again", "after", from, "error", err, "in", delay)
		select {
		case <-h.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// awaitSubscriber waits while the hub is paused; false means it closed.
func (h *Hub) awaitSubscriber() bool {
	for {
		h.mu.Lock()
		paused := h.paused
		h.mu.Unlock()
		if !paused {
			return true
		}
		select {
		case <-h.ctx.Done():
			return false
		case <-h.resume:
		}
	}
}

// pauseIfIdle pauses the hub if it still has no subscriber.
func (h *Hub) pauseIfIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs > 0 || h.paused || h.closed {
		return
	}
	h.paused = true
	if h.stopFollow != nil {
		h.stopFollow()
	}
}

// Paused reports whether the hub has stopped following the feed for want
// of subscribers (Options.Idle).
func (h *Hub) Paused() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.paused
}

// dropAll disconnects every registered subscriber and moves the hub to
// pos.
func (h *Hub) dropAll(pos int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.idx.trades {
		h.dropLocked(s, stateDropped)
	}
	for _, byID := range []map[int64]map[*Subscription]struct{}{h.idx.market, h.idx.pool, h.idx.event, h.idx.user} {
		for _, m := range byID {
			for s := range m {
				h.dropLocked(s, stateDropped)
			}
		}
	}
	h.pos = max(h.pos, pos)
}

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
	case changelog.Trade, changelog.Price, changelog.MarketResolved, changelog.Comment:
		return true
	}
	return false
}

func isPersonal(t changelog.Type) bool {
	return t == changelog.Notification || t == changelog.Balance
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
