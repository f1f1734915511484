package partner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
)

// countingStore counts the partner look-ups that reach the store, and
// runs during, if set, while one is under way.
type countingStore struct {
	*memory.Store
	lookups int
	during  func()
}

func (s *countingStore) PartnerByKey(ctx context.Context, hash []byte) (*partner.Partner, error) {
	s.lookups++
	if s.during != nil {
		s.during()
	}
	return s.Store.PartnerByKey(ctx, hash)
}

func TestKeyCache(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T, ttl time.Duration) (*partner.Service, *countingStore, *partner.Partner, string, *time.Time) {
		t.Helper()
		mem := memory.New()
		store := &countingStore{Store: mem}
		svc := partner.NewService(store, mem, market.NewService(mem, account.NewService(mem)))
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		svc.Now = func() time.Time { return now }
		p, key, err := svc.CreatePartner(ctx, "Bookmaker")
		if err != nil {
			t.Fatal(err)
		}
		svc.CacheKeys(ttl)
		return svc, store, p, key, &now
	}
	auth := func(t *testing.T, svc *partner.Service, key string) (*partner.Partner, error) {
		t.Helper()
		return svc.Authenticate(ctx, key)
	}

	t.Run("with the cache off every request asks the store", func(t *testing.T) {
		svc, store, _, key, _ := setup(t, 0)
		for range 3 {
			if _, err := auth(t, svc, key); err != nil {
				t.Fatal(err)
			}
		}
		if store.lookups != 3 {
			t.Fatalf("%d look-ups for 3 requests", store.lookups)
		}
	})
	t.Run("with the cache on a key is looked up once within the TTL and again after it", func(t *testing.T) {
		svc, store, p, key, now := setup(t, 5*time.Second)
		for range 3 {
			got, err := auth(t, svc, key)
			if err != nil || got.ID != p.ID || got.Name != "Bookmaker" {
				t.Fatalf("got %+v, %v", got, err)
			}
		}
		if store.lookups != 1 {
			t.Fatalf("%d look-ups within the TTL, want 1", store.lookups)
		}
		*now = now.Add(5 * time.Second)
		if _, err := auth(t, svc, key); err != nil || store.lookups != 2 {
			t.Fatalf("after the TTL: %d look-ups, %v", store.lookups, err)
		}
	})
	t.Run("a cached partner handed out cannot change the cache", func(t *testing.T) {
		svc, _, _, key, _ := setup(t, time.Minute)
		got, _ := auth(t, svc, key)
		got.Disabled, got.Name = true, "changed"
		again, err := auth(t, svc, key)
		if err != nil || again.Name != "Bookmaker" {
			t.Fatalf("got %+v, %v", again, err)
		}
	})
	t.Run("a partner disabled through the service is refused at once", func(t *testing.T) {
		svc, _, p, key, _ := setup(t, time.Hour)
		if _, err := auth(t, svc, key); err != nil {
			t.Fatal(err)
		}
		if err := svc.SetDisabled(ctx, p.ID, true); err != nil {
			t.Fatal(err)
		}
		if _, err := auth(t, svc, key); !errors.Is(err, partner.ErrDisabled) {
			t.Fatalf("got %v, want ErrDisabled", err)
		}
		if err := svc.SetDisabled(ctx, p.ID, false); err != nil {
			t.Fatal(err)
		}
		if _, err := auth(t, svc, key); err != nil {
			t.Fatalf("re-enabled: %v", err)
		}
	})
	t.Run("a partner disabled elsewhere is trusted until it is invalidated", func(t *testing.T) {
		for _, id := range []string{"by its id", "with everything"} {
			t.Run(id, func(t *testing.T) {
				svc, store, p, key, _ := setup(t, time.Hour)
				if _, err := auth(t, svc, key); err != nil {
					t.Fatal(err)
				}
				// Another process disables it: only an announcement tells.
				if err := store.SetPartnerDisabled(ctx, p.ID, true); err != nil {
					t.Fatal(err)
				}
				if _, err := auth(t, svc, key); err != nil {
					t.Fatalf("before the announcement: %v (the cache should still trust it)", err)
				}
				if id == "by its id" {
					svc.Invalidate(p.ID + 1) // another partner: changes nothing
					if _, err := auth(t, svc, key); err != nil {
						t.Fatalf("after another partner's announcement: %v", err)
					}
					svc.Invalidate(p.ID)
				} else {
					svc.Invalidate(0)
				}
				if _, err := auth(t, svc, key); !errors.Is(err, partner.ErrDisabled) {
					t.Fatalf("got %v, want ErrDisabled", err)
				}
			})
		}
	})
	t.Run("a look-up that an invalidation overtook is not cached", func(t *testing.T) {
		svc, store, p, key, _ := setup(t, time.Hour)
		store.during = func() { svc.Invalidate(p.ID) }
		if _, err := auth(t, svc, key); err != nil {
			t.Fatal(err)
		}
		store.during = nil
		if _, err := auth(t, svc, key); err != nil || store.lookups != 2 {
			t.Fatalf("%d look-ups, %v: the raced result was cached", store.lookups, err)
		}
	})
	t.Run("an unknown key is never cached", func(t *testing.T) {
		svc, store, _, _, _ := setup(t, time.Hour)
		for range 3 {
			if _, err := auth(t, svc, partner.KeyPrefix+"unknown"); !errors.Is(err, partner.ErrUnauthorized) {
				t.Fatalf("got %v, want ErrUnauthorized", err)
			}
		}
		if store.lookups != 3 {
			t.Fatalf("%d look-ups for 3 unknown keys, want 3", store.lookups)
		}
	})
	t.Run("turning the cache off empties it", func(t *testing.T) {
		svc, store, p, key, _ := setup(t, time.Hour)
		auth(t, svc, key)
		store.SetPartnerDisabled(ctx, p.ID, true)
		svc.CacheKeys(0)
		if _, err := auth(t, svc, key); !errors.Is(err, partner.ErrDisabled) {
			t.Fatalf("got %v, want ErrDisabled", err)
		}
	})
}
