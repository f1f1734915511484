package stream_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

func TestEndUser(t *testing.T) {
	t.Run("ends the user's me streams, not the user's other streams nor another user's", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		me := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7})
		meAndMarket := subscribe(t, h, stream.Request{Topics: topics(t, "me,market:1"), UserID: 7})
		market := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), UserID: 7})
		other := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 8})

		if n := h.EndUser(7); n != 2 {
			t.Fatalf("EndUser ended %d streams, want 2", n)
		}
		for name, c := range map[string]*client{"me": me, "me and a market": meAndMarket} {
			if err := c.ended(t); !errors.Is(err, stream.ErrDropped) {
				t.Fatalf("the user's %s stream ended with %v, want ErrDropped", name, err)
			}
		}
		log.Append(trade(1, 1, 1))
		log.Append(personal(changelog.Balance, 8))
		market.until(t, 1)
		other.until(t, 2)
		if h.Dropped() != 0 {
			t.Errorf("Dropped() = %d: an ended stream is no dropped one", h.Dropped())
		}
		if n := h.EndUser(7); n != 0 {
			t.Fatalf("a second EndUser ended %d streams", n)
		}
	})
}
