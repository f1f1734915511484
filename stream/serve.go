package stream

import (
	"fmt"
	"io"
	"time"
)

// The serving side of a subscription: what it sends, in order. next
// produces it a piece at a time; Serve pushes the pieces to a Writer,
// Reader lets a reader pull them (an HTTP server that reads an answer's
// body from an io.Reader, with no goroutine of its own).

// The phases of a subscription.
const (
	phaseOpen uint8 = iota
	phaseCatchUp
	phaseLive
)

// Writer is where Serve writes: Flush sends what was written.
type Writer interface {
	Write(p []byte) (int, error)
	Flush() error
}

// Serve writes the subscription's messages to w until the client goes
// away (w fails), the subscriber falls behind (ErrSlow) or is dropped
// (ErrDropped), or the hub closes (ErrClosed). It first writes what a
// resuming subscriber missed, or a reset message when the log no longer
// holds it.
func (s *Subscription) Serve(w Writer) error {
	defer s.finish()
	for {
		bufs, err := s.next()
		if err != nil {
			return err
		}
		for _, b := range bufs {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// Reader returns the subscription as the bytes of its stream, for an
// HTTP server that reads its answer's body from an io.Reader: Read
// blocks until there is something to send, calls sending (when not nil)
// before it returns it, and ends (io.EOF) where Serve would return; Err
// then says why. Close ends the subscription; the reader must be closed.
func (s *Subscription) Reader(sending func()) *Reader {
	return &Reader{s: s, sending: sending}
}

// Reader is a subscription read as a byte stream (see
// Subscription.Reader).
type Reader struct {
	s       *Subscription
	sending func()
	pending [][]byte
	off     int
	err     error
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, io.EOF
	}
	for len(r.pending) == 0 {
		bufs, err := r.s.next()
		if err != nil {
			r.err = err
			return 0, io.EOF
		}
		r.pending, r.off = bufs, 0
	}
	n := 0
	for n < len(p) && len(r.pending) > 0 {
		c := copy(p[n:], r.pending[0][r.off:])
		n += c
		r.off += c
		if r.off == len(r.pending[0]) {
			r.pending, r.off = r.pending[1:], 0
		}
	}
	if r.sending != nil {
		r.sending()
	}
	return n, nil
}

// Close implements io.Closer: the subscription ends.
func (r *Reader) Close() error {
	if r.err == nil {
		r.err = io.ErrClosedPipe
	}
	r.s.finish()
	return nil
}

// Err is why the stream ended: ErrSlow, ErrDropped, ErrClosed, a read of
// the log that failed, or io.ErrClosedPipe when it was closed first.
func (r *Reader) Err() error { return r.err }

// finish ends s, once.
func (s *Subscription) finish() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.out, s.batch = nil, nil
	s.h.remove(s)
}

// next returns what s sends next, blocking until there is something: the
// opening comment, a page of what a resuming subscriber missed (or a
// reset), then the live messages and pings. It returns the closing
// comment when the hub closes, and after it, or when the subscriber falls
// behind or is dropped, an error. The slices are s's until the next call.
func (s *Subscription) next() ([][]byte, error) {
	if s.ended != nil {
		return nil, s.ended
	}
	h := s.h
	s.out = s.out[:0]
	switch s.phase {
	case phaseOpen:
		s.phase = phaseCatchUp
		if !s.resume {
			// The fan-out may not have reached what committed before
			// the subscriber connected: it skips that.
			h.register(s, s.start)
			s.phase = phaseLive
		}
		return append(s.out, openBytes), nil
	case phaseCatchUp:
		out, err := s.catchUp()
		if err != nil || len(out) > 0 {
			if err != nil {
				s.ended = err
			}
			return out, err
		}
	}
	return s.live()
}

// catchUp reads the next page of what a resuming subscriber missed and
// returns its messages for the subscriber, or, once it has read up to the
// fan-out's position, registers it with the fan-out and returns nothing.
func (s *Subscription) catchUp() ([][]byte, error) {
	h := s.h
	if !s.checked {
		s.checked = true
		s.cur = s.after
		b, err := h.o.Log.ChangeBounds(h.ctx)
		if err != nil {
			return nil, err
		}
		if b.Gap(s.after) {
			pos := h.register(s, -1)
			s.phase = phaseLive
			return append(s.out, encodeReset(pos, b.Pruned)), nil
		}
	}
	for !h.tryRegister(s, s.cur) {
		select {
		case <-h.done:
			return nil, ErrClosed
		default:
		}
		es, err := h.o.Log.Changes(h.ctx, s.cur, h.o.Page)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			// The fan-out has handed out entries this reader cannot see
			// yet (a feed ahead of the log it reads): wait for them.
			if s.empty++; s.empty > 100 {
				return nil, fmt.Errorf("stream: the log holds nothing after %d, the feed is at %d", s.cur, h.Position())
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.empty = 0
		if es[0].Seq != s.cur+1 {
			if b, err := h.o.Log.ChangeBounds(h.ctx); err == nil && b.Gap(s.cur) {
				// Pruned under the reader's feet.
				pos := h.register(s, -1)
				s.phase = phaseLive
				return append(s.out, encodeReset(pos, b.Pruned)), nil
			}
		}
		for i := range es {
			msg, err := s.backlog(&es[i])
			if err != nil {
				return nil, err
			}
			if msg != nil {
				s.out = append(s.out, msg)
			}
			s.cur = es[i].Seq
		}
		if len(s.out) > 0 {
			return s.out, nil
		}
	}
	s.phase = phaseLive
	return nil, nil
}

// live waits for the fan-out to queue something for s, and returns it; or
// a ping after Options.Ping of silence.
func (s *Subscription) live() ([][]byte, error) {
	h := s.h
	if s.timer == nil {
		s.timer = time.NewTimer(h.o.Ping)
	}
	for {
		select {
		case <-s.wake:
		case <-s.timer.C:
			s.timer.Reset(h.o.Ping)
			return append(s.out, pingBytes), nil
		case <-h.done:
			s.ended = ErrClosed
			return append(s.out, closingBytes), nil
		}
		if wait := h.o.Coalesce - time.Since(s.sent); h.o.Coalesce > 0 && wait > 0 {
			// Messages came right after the last write: let those that
			// follow within Coalesce join them.
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-h.done:
				t.Stop()
				s.ended = ErrClosed
				return append(s.out, closingBytes), nil
			}
		}
		s.mu.Lock()
		batch := s.queue
		s.queue = s.batch[:0]
		state := s.state
		s.mu.Unlock()
		switch state {
		case stateSlow:
			s.ended = ErrSlow
			return nil, ErrSlow
		case stateDropped:
			s.ended = ErrDropped
			return nil, ErrDropped
		}
		for i, f := range batch {
			b := f.b
			if f.resolve != nil {
				var err error
				if b, err = s.resolved(h.ctx, f.resolve, f.b != nil); err != nil {
					s.ended = err
					return nil, err
				}
			}
			if b != nil {
				s.out = append(s.out, b)
			}
			batch[i] = nil
		}
		// The drained slice is the next spare, unless a burst grew it.
		s.batch = batch[:0]
		if cap(batch) > 64 {
			s.batch = nil
		}
		if len(s.out) > 0 {
			s.timer.Reset(h.o.Ping)
			s.sent = time.Now()
			return s.out, nil
		}
	}
}
