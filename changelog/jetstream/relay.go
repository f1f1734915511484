package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
)

// Log is a store's change log as the relay reads it: what it holds and a
// feed that follows it as it grows. *memory.Store and *postgres.Store are
// Logs.
type Log interface {
	changelog.Reader
	ChangeFeed() changelog.Feed
}

// LockFunc runs run while holding the lock called name, one holder at a
// time across every instance, and cancels run's context when the lock is
// lost (postgres.Store.Exclusive).
type LockFunc func(ctx context.Context, name string, run func(context.Context) error) error

// Names returns the stream and subject that carry the log of the database
// schema schema ("" for the default one): "PREDICTKIT_CHANGES" and
// "predictkit.changes", or "PREDICTKIT_<SCHEMA>_CHANGES" and
// "predictkit.<schema>.changes". Deployments sharing a NATS server keep
// apart by their schemas.
func Names(schema string) (stream, subject string) {
	if schema == "" {
		return "PREDICTKIT_CHANGES", "predictkit.changes"
	}
	return "PREDICTKIT_" + strings.ToUpper(schema) + "_CHANGES", "predictkit." + schema + ".changes"
}

// Options configure a Relay.
type Options struct {
	// Stream and Subject name the JetStream stream the relay writes and
	// its one subject; empty means Names("").
	Stream, Subject string
	// MaxAge is how long the stream keeps an entry: the log's retention
	// (the stream's PREDICTKIT_STREAM_RETENTION), so that a follower may
	// resume from NATS as far back as from the database. 0 means 24h.
	MaxAge time.Duration
	// Duplicates is the stream's duplicate window: for that long after
	// an entry was stored, the same entry published again is dropped.
	// 0 means 2 minutes.
	Duplicates time.Duration
	// Replicas of the stream in a NATS cluster; 0 means 1.
	Replicas int
	// Storage of the stream; the zero value is file storage.
	Storage natsjs.StorageType
	// Lock keeps relays of other instances from running at the same
	// time. nil means the log's own Exclusive method when it has one
	// (*postgres.Store), and none otherwise (the memory store: one
	// process).
	Lock LockFunc
	// OnError is told of every failure the relay recovers from by
	// starting over (NATS unreachable, the lock's connection lost); nil
	// drops them.
	OnError func(error)
	// AckTimeout bounds the wait for a batch's acknowledgements; 0
	// means 10 s.
	AckTimeout time.Duration
}

// A Relay publishes every entry of a store's change log to a JetStream
// stream, once, in order, with stream sequence number = log sequence
// number (see the package documentation).
type Relay struct {
	js   natsjs.JetStream
	log  Log
	opts Options

	last      atomic.Int64
	published atomic.Int64
}

// NewRelay returns a relay from log to the stream opts name, through js.
// It does nothing until Run.
//
// js's connection must not keep publishes while it reconnects
// (nats.ReconnectBufSize(-1)); NewRelay refuses one that does. When a
// NATS node dies, the publishes the relay had written to it are lost
// with it; the client would send those made after them, kept while it
// reconnected, to the next node, which would store them under the lost
// entries' numbers. Without the buffer those publishes fail, and the
// relay starts over from where the stream ends.
func NewRelay(js natsjs.JetStream, log Log, opts Options) (*Relay, error) {
	if js == nil || log == nil {
		return nil, errors.New("jetstream: a relay needs a JetStream context and a log")
	}
	if nc := js.Conn(); nc != nil && nc.Opts.ReconnectBufSize > 0 {
		return nil, errors.New("jetstream: the relay's NATS connection keeps publishes while it reconnects, which can store entries under wrong numbers after a node fails; connect with nats.ReconnectBufSize(-1)")
	}
	stream, subject := Names("")
	if opts.Stream == "" {
		opts.Stream = stream
	}
	if opts.Subject == "" {
		opts.Subject = subject
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = 24 * time.Hour
	}
	if opts.Duplicates == 0 {
		opts.Duplicates = 2 * time.Minute
	}
	opts.Duplicates = min(opts.Duplicates, opts.MaxAge)
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.AckTimeout == 0 {
		opts.AckTimeout = 10 * time.Second
	}
	if opts.MaxAge < 0 || opts.Duplicates < 0 || opts.Replicas < 0 || opts.AckTimeout < 0 {
		return nil, errors.New("jetstream: negative relay option")
	}
	if strings.ContainsAny(opts.Stream, ". *>\t\r\n/\\") {
		return nil, fmt.Errorf("jetstream: invalid stream name %q", opts.Stream)
	}
	if strings.ContainsAny(opts.Subject, " *>\t\r\n") || strings.HasPrefix(opts.Subject, ".") || strings.HasSuffix(opts.Subject, ".") || strings.Contains(opts.Subject, "..") {
		return nil, fmt.Errorf("jetstream: invalid subject %q (one literal subject)", opts.Subject)
	}
	if opts.Lock == nil {
		if l, ok := log.(interface {
			Exclusive(context.Context, string, func(context.Context) error) error
		}); ok {
			opts.Lock = l.Exclusive
		}
	}
	return &Relay{js: js, log: log, opts: opts}, nil
}

// Stream is the name of the stream the relay writes.
func (r *Relay) Stream() string { return r.opts.Stream }

// Last is the sequence number of the last entry this relay knows to be in
// the stream (0 before it first ran): the log's last entry minus Last is
// how far the stream is behind.
func (r *Relay) Last() int64 { return r.last.Load() }

// Published is how many entries this relay has stored in the stream (a
// publish JetStream dropped as a duplicate is not counted).
func (r *Relay) Published() int64 { return r.published.Load() }

// Run relays until ctx is done, then returns nil. Under the lock (when
// there is one; instances without it wait for it) it makes sure the
// stream exists with the relay's settings, reads where the stream ends,
// and publishes the log's entries from there as they commit. After a
// failure (reported to OnError) it lets go of the lock and starts over,
// after a pause growing from 100 ms to 5 s.
func (r *Relay) Run(ctx context.Context) error {
	const maxWait = 5 * time.Second
	wait := 100 * time.Millisecond
	for {
		start := time.Now()
		var err error
		if r.opts.Lock != nil {
			err = r.opts.Lock(ctx, "changelog relay "+r.opts.Stream, r.relay)
		} else {
			err = r.relay(ctx)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			err = errors.New("jetstream: relay stopped")
		}
		if r.opts.OnError != nil {
			r.opts.OnError(err)
		}
		if time.Since(start) > time.Minute {
			wait = 100 * time.Millisecond // it ran well for a while
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, maxWait)
	}
}

// StreamConfig is the configuration the relay gives its stream.
func (r *Relay) StreamConfig() natsjs.StreamConfig {
	return natsjs.StreamConfig{
		Name:        r.opts.Stream,
		Description: "predictkit change log (written by one relay; stream sequence = log sequence)",
		Subjects:    []string{r.opts.Subject},
		Retention:   natsjs.LimitsPolicy,
		Discard:     natsjs.DiscardOld,
		MaxAge:      r.opts.MaxAge,
		Duplicates:  r.opts.Duplicates,
		Replicas:    r.opts.Replicas,
		Storage:     r.opts.Storage,
		MaxMsgs:     -1,
		MaxBytes:    -1,
	}
}

// relay is one run, under the lock.
func (r *Relay) relay(ctx context.Context) error {
	// Requests a NATS cluster loses are given up after a while, and the
	// relay starts over, rather than waiting for as long as ctx lasts.
	actx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	s, err := r.ensureStream(actx)
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", r.opts.Stream, err)
	}
	last, err := r.resume(actx, s)
	if err != nil {
		return err
	}
	b, err := r.log.ChangeBounds(ctx)
	if err != nil {
		return err
	}
	if last > b.Last {
		return fmt.Errorf("jetstream: stream %s ends at entry %d but the log at %d: it holds another log (another database or schema?); delete the stream or name another", r.opts.Stream, last, b.Last)
	}
	if last < b.Pruned {
		// The entries after last were pruned from the log before they
		// were published (the relay was down for longer than the
		// retention, or the stream is new). Move the stream's end to
		// the log's first entry, so that the next entry gets its own
		// number: what the stream held before it is older still, and a
		// follower there has missed entries either way.
		if err := s.Purge(actx, natsjs.WithPurgeSequence(uint64(b.Pruned)+1)); err != nil {
			return fmt.Errorf("jetstream: stream %s: move its start to %d: %w", r.opts.Stream, b.Pruned+1, err)
		}
		info, err := s.Info(actx)
		if err != nil {
			return fmt.Errorf("jetstream: stream %s: %w", r.opts.Stream, err)
		}
		if int64(info.State.LastSeq) != b.Pruned {
			return fmt.Errorf("jetstream: stream %s: purged up to %d, yet it ends at %d", r.opts.Stream, b.Pruned+1, info.State.LastSeq)
		}
		last = b.Pruned
	}
	r.last.Store(last)
	return r.stream(ctx, last)
}

// ensureStream returns the stream, created or updated to the relay's
// settings when it is missing or has others. It asks first: on a NATS
// cluster the stream's leader answers that, while creating or updating
// waits for the cluster's meta leader, which a dead node may have been.
func (r *Relay) ensureStream(ctx context.Context) (natsjs.Stream, error) {
	want := r.StreamConfig()
	s, err := r.js.Stream(ctx, want.Name)
	if err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
		return nil, err
	}
	if err == nil {
		have := s.CachedInfo().Config
		if have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
			have.Retention == want.Retention && have.Discard == want.Discard &&
			have.MaxAge == want.MaxAge && have.Duplicates == want.Duplicates &&
			have.Replicas == want.Replicas && have.Storage == want.Storage &&
			have.MaxMsgs == want.MaxMsgs && have.MaxBytes == want.MaxBytes {
			return s, nil
		}
	}
	return r.js.CreateOrUpdateStream(ctx, want)
}

// inFlight is the most publishes awaiting their acknowledgement: enough
// to keep the connection busy, well under the client's own limit of
// pending asynchronous publishes (4000 by default).
const inFlight = 1024

// stream publishes the log's entries after last as they commit. The
// publishes are pipelined: a goroutine awaits their acknowledgements, in
// order, while the next entries are sent; JetStream stores the messages
// of one connection in the order they were sent.
func (r *Relay) stream(ctx context.Context, last int64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	acks := make(chan natsjs.PubAckFuture, inFlight)
	acked := make(chan error, 1)
	awaiting := make(chan struct{}) // closed when await returns
	go func() {
		defer close(awaiting)
		err := r.await(ctx, acks)
		if err != nil {
			cancel(err)
		}
		acked <- err
	}()
	sent := last
	err := r.log.ChangeFeed().Follow(ctx, last, func(es []changelog.Entry) error {
		for _, e := range es {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if e.Seq <= sent {
				continue // already in the stream
			}
			if e.Seq != sent+1 {
				// The store's numbers have no holes; a hole here is a
				// pruning the feed did not report.
				return fmt.Errorf("jetstream: the log skips from entry %d to %d", sent, e.Seq)
			}
			m, err := encode(r.opts.Subject, e)
			if err != nil {
				return err
			}
			f, err := r.js.PublishMsgAsync(m, natsjs.WithExpectStream(r.opts.Stream))
			if err != nil {
				return fmt.Errorf("jetstream: publish entry %d: %w", e.Seq, err)
			}
			// What was sent is awaited, even when ctx has ended
			// meanwhile, so that a relay stopped in good order knows
			// what it stored; only an await that gave up drops it.
			select {
			case acks <- f:
			case <-awaiting:
				return context.Cause(ctx)
			}
			sent = e.Seq
		}
		return nil
	})
	close(acks)
	if aerr := <-acked; aerr != nil {
		return aerr // the cause: Follow only saw the cancellation
	}
	return err
}

// stopGrace is how long a relay whose context ended still awaits the
// acknowledgements of what it sent.
const stopGrace = 2 * time.Second

// await takes the acknowledgements of the publishes sent on acks, in
// order, until acks is closed or one fails. When ctx ends it still awaits
// them for a moment, so that a relay stopped in good order knows (and
// counts) what it stored.
func (r *Relay) await(ctx context.Context, acks <-chan natsjs.PubAckFuture) error {
	stopping, grace := ctx.Done(), (<-chan time.Time)(nil)
	timeout := time.NewTimer(r.opts.AckTimeout)
	defer timeout.Stop()
	for f := range acks {
		seq, _ := headerSeq(f.Msg().Header)
		timeout.Reset(r.opts.AckTimeout)
	wait:
		for {
			select {
			case ack := <-f.Ok():
				// Stream sequence = log sequence: anything else means
				// the stream has messages the relay did not write, and
				// every follower would be misled.
				if int64(ack.Sequence) != seq {
					return fmt.Errorf("jetstream: stream %s stored entry %d as message %d: the stream is out of step with the log; delete it and the relay rebuilds it", r.opts.Stream, seq, ack.Sequence)
				}
				if !ack.Duplicate {
					r.published.Add(1)
				}
				r.last.Store(seq)
				break wait
			case err := <-f.Err():
				return fmt.Errorf("jetstream: publish entry %d: %w", seq, err)
			case <-timeout.C:
				return fmt.Errorf("jetstream: publish entry %d: no acknowledgement within %s", seq, r.opts.AckTimeout)
			case <-stopping:
				stopping, grace = nil, time.After(stopGrace)
			case <-grace:
				return nil // stopping; the rest is unknown
			}
		}
	}
	return nil
}

// resume returns the log sequence number of the stream's last entry. It
// is the stream's last sequence number; the last message's SeqHeader
// confirms it, when the message is still there (messages older than
// MaxAge are gone, the numbers stay).
func (r *Relay) resume(ctx context.Context, s natsjs.Stream) (int64, error) {
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("jetstream: stream %s: %w", r.opts.Stream, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return int64(last), nil
	}
	m, err := s.GetMsg(ctx, last)
	if errors.Is(err, natsjs.ErrMsgNotFound) {
		return int64(last), nil // aged out since Info
	}
	if err != nil {
		return 0, fmt.Errorf("jetstream: stream %s: last message: %w", r.opts.Stream, err)
	}
	seq, err := headerSeq(m.Header)
	if err != nil {
		return 0, fmt.Errorf("jetstream: stream %s: message %d: %w", r.opts.Stream, last, err)
	}
	if uint64(seq) != last {
		return 0, fmt.Errorf("jetstream: stream %s: message %d holds entry %d: the stream is out of step with the log (written by something else than a relay?); delete it and the relay rebuilds it", r.opts.Stream, last, seq)
	}
	return seq, nil
}
