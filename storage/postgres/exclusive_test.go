package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// storesOn returns n stores on one fresh schema, as n server instances
// sharing a database would have.
func storesOn(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	schema := pgtest.Schema(t)
	var ss []*postgres.Store
	for range n {
		s, err := postgres.New(context.Background(), pgtest.URL(t), postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		ss = append(ss, s)
	}
	return ss
}

func TestExclusive(t *testing.T) {
	t.Run("instances take turns: never two runs at once, every run happens", func(t *testing.T) {
		ss := storesOn(t, 3)
		var inside, most, runs atomic.Int32
		var wg sync.WaitGroup
		for i := range 9 {
			wg.Go(func() {
				err := ss[i%len(ss)].Exclusive(context.Background(), "job", func(context.Context) error {
					n := inside.Add(1)
					for {
						m := most.Load()
						if n <= m || most.CompareAndSwap(m, n) {
							break
						}
					}
					time.Sleep(20 * time.Millisecond) // long enough for an overlap to show
					inside.Add(-1)
					runs.Add(1)
					return nil
				})
				if err != nil {
					t.Errorf("Exclusive = %v", err)
				}
			})
		}
		wg.Wait()
		if most.Load() != 1 || runs.Load() != 9 {
			t.Fatalf("at most %d runs at once over %d runs; want 1 over 9", most.Load(), runs.Load())
		}
	})

	t.Run("run's error is returned and the lock is free afterwards", func(t *testing.T) {
		ss := storesOn(t, 1)
		boom := errors.New("boom")
		if err := ss[0].Exclusive(context.Background(), "job", func(context.Context) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Exclusive = %v, want run's error", err)
		}
		if err := ss[0].Exclusive(context.Background(), "job", func(context.Context) error { return nil }); err != nil {
			t.Fatalf("second Exclusive = %v", err)
		}
	})

	t.Run("other names and other schemas are other locks", func(t *testing.T) {
		a := storesOn(t, 1)[0]
		b := storesOn(t, 1)[0]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		held := make(chan struct{})
		release := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- a.Exclusive(ctx, "job", func(context.Context) error {
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		for _, c := range []struct {
			s    *postgres.Store
			name string
		}{{a, "other job"}, {b, "job"}} {
			if err := c.s.Exclusive(ctx, c.name, func(context.Context) error { return nil }); err != nil {
				t.Fatalf("Exclusive(%q) while another lock is held = %v", c.name, err)
			}
		}
		close(release)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a waiter gives up when its context ends", func(t *testing.T) {
		ss := storesOn(t, 2)
		held := make(chan struct{})
		release := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- ss[0].Exclusive(context.Background(), "job", func(context.Context) error {
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		ran := false
		err := ss[1].Exclusive(ctx, "job", func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, context.DeadlineExceeded) || ran {
			t.Fatalf("Exclusive while held elsewhere = %v (ran %v), want the context's error and no run", err, ran)
		}
		close(release)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a dead connection cancels run, reports the loss and frees the lock", func(t *testing.T) {
		ss := storesOn(t, 2)
		held := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			errc <- ss[0].Exclusive(context.Background(), "doomed job", func(ctx context.Context) error {
				close(held)
				<-ctx.Done()
				return ctx.Err()
			})
		}()
		<-held
		killSession(t, "predictkit exclusive doomed job")
		select {
		case err := <-errc:
			if !errors.Is(err, postgres.ErrExclusiveLost) {
				t.Fatalf("Exclusive = %v, want ErrExclusiveLost", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("run was not stopped within 30s of its connection's death")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ss[1].Exclusive(ctx, "doomed job", func(context.Context) error { return nil }); err != nil {
			t.Fatalf("Exclusive after the holder died = %v", err)
		}
	})
}

// killSession ends the server sessions named app, as a crash or a network
// failure would.
func killSession(t *testing.T, app string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("terminated %d sessions named %q, want 1", n, app)
	}
}
