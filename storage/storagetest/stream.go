package storagetest

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// StreamStore is what the live stream reads of a store besides its
// change log.
type StreamStore interface {
	// SettlementNotifications returns the market_resolved notifications
	// about event eventID made at at (the resolution's time) for any of
	// users.
	SettlementNotifications(ctx context.Context, eventID int64, at time.Time, users []int64) ([]*social.Notification, error)
	// BalancesOf returns the balances of users (zero for a user with no
	// postings).
	BalancesOf(ctx context.Context, users []int64) (map[int64]account.Balances, error)
	// CreateStreamTicket stores a stream ticket's hash for userID until
	// expiresAt.
	CreateStreamTicket(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error
	// UseStreamTicket takes the ticket with hash: its user and true once,
	// if it has not expired at now; false ever after.
	UseStreamTicket(ctx context.Context, hash []byte, now time.Time) (int64, bool, error)
}

// RunStream runs the suite of StreamStore; the Accounts store of
// newStores' Stores must implement it.
func RunStream(t *testing.T, newStores func(t *testing.T) Stores) {
	store := func(e *env) StreamStore {
		s, ok := e.stores.Accounts.(StreamStore)
		if !ok {
			t.Fatalf("%T is no StreamStore", e.stores.Accounts)
		}
		return s
	}
	t.Run("a resolution's notifications are found by its time, for the users asked about", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.3)
		m := ev.Pools[0].Markets[1]
		yes, no, bystander := e.user("yes", 10000, 0), e.user("no", 10000, 0), e.user("by", 10000, 0)
		if _, err := e.buy(yes, m, market.Yes, 4000); err != nil {
			t.Fatal(err)
		}
		if _, err := e.buy(no, m, market.No, 3000); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		got := e.market(m.ID)
		ns, err := store(e).SettlementNotifications(e.ctx, ev.ID, *got.ResolvedAt, []int64{yes.ID, bystander.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 1 || ns[0].UserID != yes.ID || ns[0].Type != social.TypeMarketResolved || ns[0].Data.MarketName != m.Name ||
			ns[0].Data.Won != "YES" || ns[0].Data.Amount <= 0 || ns[0].ID == 0 {
			t.Fatalf("found %+v, want the winner's notification alone", ns)
		}
		ns, err = store(e).SettlementNotifications(e.ctx, ev.ID, got.ResolvedAt.Add(time.Second), []int64{yes.ID, no.ID})
		if err != nil || len(ns) != 0 {
			t.Fatalf("at another time: %+v, %v; want none", ns, err)
		}
		ns, err = store(e).SettlementNotifications(e.ctx, ev.ID, *got.ResolvedAt, []int64{no.ID})
		if err != nil || len(ns) != 1 || ns[0].Data.Amount != 0 {
			t.Fatalf("the loser's: %+v, %v", ns, err)
		}
	})
	t.Run("balances are read for several users at once", func(t *testing.T) {
		e := newEnv(t, newStores)
		a, b := e.user("a", 500, 70), e.user("b", 0, 0)
		got, err := store(e).BalancesOf(e.ctx, []int64{a.ID, b.ID, 987654})
		if err != nil {
			t.Fatal(err)
		}
		if got[a.ID] != (account.Balances{Balance: 500, Bonus: 70}) || got[b.ID] != (account.Balances{}) || len(got) != 3 {
			t.Fatalf("BalancesOf = %+v", got)
		}
	})
	testTicketRevocations(t, newStores, store)
	t.Run("a ticket opens once, and not after it expires", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("t", 0, 0)
		s := store(e)
		now := time.Now()
		h1, h2 := sha256.Sum256([]byte("one")), sha256.Sum256([]byte("two"))
		if err := s.CreateStreamTicket(e.ctx, h1[:], u.ID, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateStreamTicket(e.ctx, h2[:], u.ID, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if id, ok, err := s.UseStreamTicket(e.ctx, h1[:], now); err != nil || !ok || id != u.ID {
			t.Fatalf("first use = %d, %v, %v", id, ok, err)
		}
		if _, ok, err := s.UseStreamTicket(e.ctx, h1[:], now); err != nil || ok {
			t.Fatalf("second use = %v, %v; want refused", ok, err)
		}
		if _, ok, err := s.UseStreamTicket(e.ctx, h2[:], now.Add(2*time.Minute)); err != nil || ok {
			t.Fatalf("use after expiry = %v, %v; want refused", ok, err)
		}
		unknown := sha256.Sum256([]byte("never"))
		if _, ok, err := s.UseStreamTicket(e.ctx, unknown[:], now); err != nil || ok {
			t.Fatalf("unknown ticket = %v, %v", ok, err)
		}
	})
	t.Run("of concurrent uses of one ticket, one succeeds", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("c", 0, 0)
		s := store(e)
		h := sha256.Sum256([]byte("contended"))
		if err := s.CreateStreamTicket(e.ctx, h[:], u.ID, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ok, err := s.UseStreamTicket(e.ctx, h[:], time.Now())
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d uses succeeded, want 1", wins)
		}
	})
}
