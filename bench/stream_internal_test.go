package bench

import (
	"fmt"
	"testing"
	"time"
)

func TestDeliveryLatencyCountsFromTheAnswerAndClampsAtZero(t *testing.T) {
	t0 := time.Now()
	ms := time.Millisecond
	trade := func(id, trade int64, created time.Time) sseEvent {
		return sseEvent{ID: fmt.Sprint(id), HasID: true, Type: "trade",
			Data: fmt.Appendf(nil, `{"trade_id":%d,"market_id":7,"created_at":"%s"}`, trade, created.UTC().Format(time.RFC3339Nano))}
	}
	cases := []struct {
		name string
		// answered is when trade 1's answer was read (zero: after the
		// delivery); measured whether it counts.
		answered    time.Time
		measured    bool
		deliveredAt time.Time
		createdAt   time.Time
		fromAnswer  time.Duration // the one latency recorded, -1 for none
		fromCreated time.Duration
	}{
		{"a message after the answer counts from the answer", t0, true, t0.Add(5 * ms), t0.Add(-2 * ms), 5 * ms, 7 * ms},
		{"a message before the answer was recorded counts 0", time.Time{}, true, t0, t0.Add(-1 * ms), 0, 1 * ms},
		{"a message of a warm-up trade is not timed", t0, false, t0.Add(5 * ms), t0, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			book := newAnswerBook()
			run := newStreamRun(7, book)
			s := &subscriber{}
			if !c.answered.IsZero() {
				book.add(1, answer{at: c.answered, measured: c.measured})
			}
			run.event(s, trade(10, 1, c.createdAt), c.deliveredAt)
			if c.answered.IsZero() {
				if len(s.pending) != 1 {
					t.Fatalf("%d deliveries pending, want 1", len(s.pending))
				}
				// The answer is read after the message: t0 + 3ms.
				book.add(1, answer{at: t0.Add(3 * ms), measured: c.measured})
				run.settle(s)
			}
			fa, fc := run.latencies()
			if c.fromAnswer < 0 {
				if fa.Count() != 0 || fc.Count() != 0 {
					t.Fatalf("%d and %d latencies recorded, want none", fa.Count(), fc.Count())
				}
				return
			}
			if fa.Count() != 1 || fa.Max() != c.fromAnswer {
				t.Errorf("from the answer: %d recorded, max %v; want one of %v", fa.Count(), fa.Max(), c.fromAnswer)
			}
			if fc.Count() != 1 || fc.Max() != c.fromCreated {
				t.Errorf("from created_at: %d recorded, max %v; want one of %v", fc.Count(), fc.Max(), c.fromCreated)
			}
			if s.distinct.Load() != 1 || s.t.trades.len() != 1 {
				t.Errorf("the delivery was not tallied")
			}
		})
	}
}

func TestMessagesInTheMeasuredWindowAreCounted(t *testing.T) {
	run := newStreamRun(7, newAnswerBook())
	run.noLatency = true
	s := &subscriber{}
	from, to := run.epoch.Add(time.Second), run.epoch.Add(2*time.Second)
	run.winFrom.Store(int64(from.Sub(run.epoch)))
	run.winTo.Store(int64(to.Sub(run.epoch)))
	ev := func(id int64) sseEvent {
		return sseEvent{ID: fmt.Sprint(id), HasID: true, Type: "trade", Data: fmt.Appendf(nil, `{"trade_id":%d,"market_id":7,"created_at":"x"}`, id)}
	}
	for i, at := range []time.Time{from.Add(-time.Millisecond), from, to.Add(-time.Millisecond), to} {
		run.event(s, ev(int64(i+1)), at)
	}
	if s.inWindow != 2 || s.distinct.Load() != 4 {
		t.Errorf("%d in the window of 4 trades (%d distinct), want 2", s.inWindow, s.distinct.Load())
	}
}
