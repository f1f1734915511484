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
