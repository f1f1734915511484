package changelog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

func TestPoller(t *testing.T) {
	t.Run("a follower gets every entry once, in order, as they are appended", func(t *testing.T) {
		log := changelog.NewMemory()
		log.Append(changelog.Entry{Type: changelog.Trade})
		p := &changelog.Poller{Log: log, Woken: log.Appended, Interval: time.Hour, Batch: 3}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go func() {
			for range 20 {
				log.Append(changelog.Entry{Type: changelog.Trade})
			}
		}()
		var got []int64
		err := p.Follow(ctx, 0, func(es []changelog.Entry) error {
			got = append(got, seqs(es)...)
			if len(got) >= 21 {
				return errDone
			}
			return nil
		})
		if !errors.Is(err, errDone) {
			t.Fatalf("Follow = %v", err)
		}
		for i, s := range got {
			if s != int64(i+1) {
				t.Fatalf("delivered %v, want 1…21 in order", got)
			}
		}
	})

	t.Run("a follower behind the pruned entries is told so", func(t *testing.T) {
		log := changelog.NewMemory()
		old := time.Now().Add(-time.Hour)
		log.Append(changelog.Entry{Type: changelog.Trade, At: old}, changelog.Entry{Type: changelog.Trade, At: old})
		log.Append(changelog.Entry{Type: changelog.Trade})
		if _, err := log.Prune(context.Background(), time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		p := &changelog.Poller{Log: log, Woken: log.Appended}
		err := p.Follow(context.Background(), 1, func([]changelog.Entry) error { return nil })
		var pe *changelog.PrunedError
		if !errors.Is(err, changelog.ErrPruned) || !errors.As(err, &pe) || pe.Pruned != 2 {
			t.Fatalf("Follow after 1 = %v, want pruned through 2", err)
		}
	})
}

var errDone = errors.New("done")
