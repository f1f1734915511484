package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
)

// FeedOptions configure a Feed.
type FeedOptions struct {
	// Stream is the stream a Relay writes; empty means Names("")'s.
	Stream string
	// Batch is the most entries delivered at once; 0 means 1000.
	Batch int
	// OnError is told of every failure the feed recovers from by itself
	// (the stream not created yet, NATS unreachable); nil drops them.
	OnError func(error)
	// Heartbeat is how often the NATS server tells an idle consumer it is
	// still there; two missed heartbeats make the consumer start over
	// (on a NATS cluster, when the node that held it died). 0 means 1 s,
	// the client's default being 5 s.
	Heartbeat time.Duration
}

// Feed is a changelog.Feed that follows the stream a Relay writes,
// instead of the database: many instances follow one NATS stream, and the
// database serves only the relay.
type Feed struct {
	js   natsjs.JetStream
	opts FeedOptions
}

var _ changelog.Feed = (*Feed)(nil)

// NewFeed returns a feed of the stream opts name, through js.
func NewFeed(js natsjs.JetStream, opts FeedOptions) *Feed {
	if opts.Stream == "" {
		opts.Stream, _ = Names("")
	}
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = time.Second
	}
	return &Feed{js: js, opts: opts}
}

// errFatal marks a failure that starting over does not mend.
type errFatal struct{ error }

func (e errFatal) Unwrap() error { return e.error }

// Follow implements changelog.Feed. It follows the stream with an ordered
// consumer that starts at stream sequence after+1, which is entry after+1
// since the relay keeps the two numbers equal. A message whose number is
// not the next one means entries are missing from the stream (aged out,
// purged, deleted): Follow returns a changelog.PrunedError. An entry at or
// before one already delivered is dropped, so nothing is delivered twice.
// When NATS cannot be reached, or the stream does not exist yet, Follow
// waits and tries again (telling OnError) rather than returning.
func (f *Feed) Follow(ctx context.Context, after int64, deliver func([]changelog.Entry) error) error {
	const maxWait = 5 * time.Second
	wait := 100 * time.Millisecond
	for {
		progressed := after
		err := f.follow(ctx, &after, deliver)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fatal errFatal
		if errors.As(err, &fatal) {
			return fatal.error
		}
		if f.opts.OnError != nil {
			f.opts.OnError(err)
		}
		if after > progressed {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxWait)
	}
}

// apiTimeout bounds a request to the JetStream API (the client's own
// default when the context has no deadline).
const apiTimeout = 5 * time.Second

// next is what the iterator hands over.
type next struct {
	m   natsjs.Msg
	err error
}

// follow is one consumer's life. *after advances with every delivery.
// Errors that starting over cannot mend come back as errFatal.
func (f *Feed) follow(ctx context.Context, after *int64, deliver func([]changelog.Entry) error) error {
	// A request a NATS cluster loses (its node died, a leader is being
	// elected) is given up after a while, and tried again, rather than
	// awaited for as long as ctx lasts.
	actx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	s, err := f.js.Stream(actx, f.opts.Stream)
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", f.opts.Stream, err)
	}
	// The stream's first number tells what it no longer holds; checking
	// it first reports a gap now rather than at the next message.
	st := s.CachedInfo().State
	if st.FirstSeq > 1 && *after < int64(st.FirstSeq)-1 {
		return errFatal{&changelog.PrunedError{After: *after, Pruned: int64(st.FirstSeq) - 1}}
	}
	c, err := s.OrderedConsumer(actx, natsjs.OrderedConsumerConfig{
		DeliverPolicy: natsjs.DeliverByStartSequencePolicy,
		OptStartSeq:   uint64(*after) + 1,
	})
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: consumer: %w", f.opts.Stream, err)
	}
	it, err := c.Messages(natsjs.PullMaxMessages(f.opts.Batch), natsjs.PullHeartbeat(f.opts.Heartbeat))
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: consumer: %w", f.opts.Stream, err)
	}
	// The ordered consumer recreates itself after a failure, resuming
	// after the last message it returned; a goroutine keeps reading it,
	// so that what already arrived is delivered in one batch.
	msgs := make(chan next, f.opts.Batch)
	stop := make(chan struct{})
	done := make(chan struct{})
	defer func() {
		close(stop)
		it.Stop()
		<-done
	}()
	go func() {
		defer close(done)
		for {
			m, err := it.Next()
			select {
			case msgs <- next{m, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var pending *next // a message not handled yet, after a delivery
	for {
		var n next
		if pending != nil {
			n, pending = *pending, nil
		} else {
			quiet := time.NewTimer(stallCheck)
			select {
			case <-ctx.Done():
				quiet.Stop()
				return ctx.Err()
			case n = <-msgs:
				quiet.Stop()
			case <-quiet.C:
				if err := f.stalled(ctx, s, *after); err != nil {
					return err
				}
				continue
			}
		}
		// Gather what has arrived, up to a batch. A failure ends the
		// batch; it is handled once what came before it is delivered.
		// A new slice each time: deliver may keep it.
		var es []changelog.Entry
	gather:
		for {
			if n.err != nil {
				if len(es) == 0 {
					return fmt.Errorf("jetstream: stream %s: %w", f.opts.Stream, n.err)
				}
				pending = &n
				break
			}
			e, ok, err := f.entry(n.m, *after, es)
			if err != nil {
				if len(es) == 0 {
					return errFatal{err}
				}
				pending = &n
				break
			}
			if ok {
				es = append(es, e)
			}
			if len(es) == f.opts.Batch {
				break
			}
			select {
			case n = <-msgs:
			default:
				break gather
			}
		}
		if len(es) == 0 {
			continue
		}
		if err := deliver(es); err != nil {
			return errFatal{err}
		}
		*after = es[len(es)-1].Seq
	}
}

// stallCheck is how long a quiet consumer goes before the feed asks the
// stream whether it has entries the consumer has not brought.
const stallCheck = 3 * time.Second

// stalled reports an error when the stream holds entries after after,
// which the consumer should have brought: on a NATS cluster, a consumer
// whose node died may try to recreate itself for long, without telling;
// starting over with a new one is quicker.
func (f *Feed) stalled(ctx context.Context, s natsjs.Stream, after int64) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("jetstream: stream %s: %w", f.opts.Stream, err)
	}
	if int64(info.State.LastSeq) > after {
		return fmt.Errorf("jetstream: stream %s: the consumer brought nothing for %s while the stream holds entries %d to %d; starting a new one", f.opts.Stream, stallCheck, after+1, info.State.LastSeq)
	}
	return nil
}

// entry decodes m, which follows after and the entries in batch. ok is
// false for an entry delivered already.
func (f *Feed) entry(m natsjs.Msg, after int64, batch []changelog.Entry) (changelog.Entry, bool, error) {
	if len(batch) > 0 {
		after = batch[len(batch)-1].Seq
	}
	md, err := m.Metadata()
	if err != nil {
		return changelog.Entry{}, false, fmt.Errorf("jetstream: stream %s: %w", f.opts.Stream, err)
	}
	seq := int64(md.Sequence.Stream)
	if seq <= after {
		return changelog.Entry{}, false, nil
	}
	if seq != after+1 {
		return changelog.Entry{}, false, &changelog.PrunedError{After: after, Pruned: seq - 1}
	}
	e, err := decode(m.Headers(), m.Data())
	if err != nil {
		return changelog.Entry{}, false, fmt.Errorf("jetstream: stream %s: message %d: %w", f.opts.Stream, seq, err)
	}
	if e.Seq != seq {
		return changelog.Entry{}, false, fmt.Errorf("jetstream: stream %s: message %d holds entry %d: the stream is out of step with the log", f.opts.Stream, seq, e.Seq)
	}
	return e, true, nil
}
