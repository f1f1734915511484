package changelog_test

import (
	"context"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

func seqs(es []changelog.Entry) []int64 {
	var s []int64
	for _, e := range es {
		s = append(s, e.Seq)
	}
	return s
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

	t.Run("entries get increasing sequence numbers in append order", func(t *testing.T) {
		m := changelog.NewMemory()
		m.Append(changelog.Entry{Type: changelog.Trade}, changelog.Entry{Type: changelog.Price})
		m.Append(changelog.Entry{Type: changelog.Balance, UserID: 7})
		es, _ := m.Changes(ctx, 0, 10)
		if got := seqs(es); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
			t.Fatalf("seqs = %v, want [1 2 3]", got)
		}
		if es[2].Type != changelog.Balance || es[2].UserID != 7 || es[2].At.IsZero() {
			t.Errorf("third entry = %+v", es[2])
		}
	})

	t.Run("a reader resumes after the last entry it saw, a page at a time", func(t *testing.T) {
		m := changelog.NewMemory()
		for range 5 {
			m.Append(changelog.Entry{Type: changelog.Trade})
		}
		es, _ := m.Changes(ctx, 2, 2)
		if got := seqs(es); len(got) != 2 || got[0] != 3 || got[1] != 4 {
			t.Fatalf("after 2, limit 2: %v, want [3 4]", got)
		}
		if es, _ := m.Changes(ctx, 5, 10); len(es) != 0 {
			t.Errorf("after the last: %v, want none", seqs(es))
		}
	})

	t.Run("pruning drops old entries and reports the gap to a reader behind it", func(t *testing.T) {
		m := changelog.NewMemory()
		for i := range 4 {
			m.Append(changelog.Entry{Type: changelog.Trade, At: t0.Add(time.Duration(i) * time.Minute)})
		}
		n, err := m.Prune(ctx, t0.Add(2*time.Minute))
		if err != nil || n != 2 {
			t.Fatalf("Prune = %d, %v; want 2 dropped", n, err)
		}
		b, _ := m.ChangeBounds(ctx)
		if b.Pruned != 2 || b.Last != 4 {
			t.Fatalf("bounds = %+v, want Pruned 2, Last 4", b)
		}
		if !b.Gap(1) || b.Gap(2) || b.Gap(4) {
			t.Errorf("Gap(1), Gap(2), Gap(4) = %v %v %v; want true false false", b.Gap(1), b.Gap(2), b.Gap(4))
		}
		if es, _ := m.Changes(ctx, 0, 10); len(seqs(es)) != 2 || es[0].Seq != 3 {
			t.Errorf("kept = %v, want [3 4]", seqs(es))
		}
	})

	t.Run("a waiter is woken by the next append", func(t *testing.T) {
		m := changelog.NewMemory()
		woken := m.Appended()
		select {
		case <-woken:
			t.Fatal("woken before anything was appended")
		default:
		}
		m.Append(changelog.Entry{Type: changelog.Comment})
		select {
		case <-woken:
		case <-time.After(5 * time.Second):
			t.Fatal("not woken by an append")
		}
	})
}
