package storagetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// testAPIKeys: personal API keys are kept by hash, listed without their
// secret, authenticate as their user until revoked, and only their owner
// revokes them.
func testAPIKeys(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a key authenticates as its user with its scopes until it is revoked", func(t *testing.T) {
		e := newEnv(t, newStores)
		ann := e.user("ann", 0, 0)
		k, secret, err := e.accounts.CreateAPIKey(e.ctx, ann.ID, "  trading bot ", []string{"trade", "read"})
		if err != nil {
			t.Fatal(err)
		}
		if !account.IsAPIKey(secret) || len(secret) != len(account.APIKeyPrefix)+43 {
			t.Errorf("key %q: want pak_ and 43 characters", secret)
		}
		if k.ID == 0 || k.Name != "trading bot" || !slices.Equal(k.Scopes, []account.Scope{account.ScopeRead, account.ScopeTrade}) || k.LastUsedAt != nil {
			t.Errorf("created key = %+v", k)
		}
		cr, err := e.accounts.Credential(e.ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if cr.User.ID != ann.ID || cr.Key == nil || cr.Key.ID != k.ID || !cr.Key.Allows(account.ScopeTrade) {
			t.Errorf("credential = %+v, key %+v", cr.User, cr.Key)
		}
		u, hash, err := e.stores.Accounts.UserByAPIKey(e.ctx, account.HashToken(secret))
		if err != nil || u.ID != ann.ID || hash.ID != k.ID {
			t.Fatalf("UserByAPIKey = %v, %v, %v", u, hash, err)
		}
		if err := e.accounts.RevokeAPIKey(e.ctx, ann.ID, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.accounts.Credential(e.ctx, secret); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("a revoked key authenticates: %v", err)
		}
		if err := e.accounts.RevokeAPIKey(e.ctx, ann.ID, k.ID); !errors.Is(err, account.ErrAPIKeyNotFound) {
			t.Fatalf("revoking twice: %v, want ErrAPIKeyNotFound", err)
		}
	})

	t.Run("a session token is no key, and a made-up key authenticates nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		_, tok, err := e.accounts.Register(e.ctx, account.Registration{Email: "bo@example.com", Password: "password123", Name: "Bo"})
		if err != nil {
			t.Fatal(err)
		}
		cr, err := e.accounts.Credential(e.ctx, tok)
		if err != nil || cr.Key != nil {
			t.Fatalf("a session token: %+v, %v", cr, err)
		}
		if _, err := e.accounts.Credential(e.ctx, account.APIKeyPrefix+account.NewSecret()); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("a made-up key: %v", err)
		}
	})

	t.Run("only the owner revokes a key, and the list shows only the owner's keys, newest first", func(t *testing.T) {
		e := newEnv(t, newStores)
		ann, bob := e.user("ann", 0, 0), e.user("bob", 0, 0)
		k1, _, err := e.accounts.CreateAPIKey(e.ctx, ann.ID, "one", []string{"read"})
		if err != nil {
			t.Fatal(err)
		}
		k2, s2, err := e.accounts.CreateAPIKey(e.ctx, ann.ID, "two", []string{"trade"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.accounts.CreateAPIKey(e.ctx, bob.ID, "bob's", []string{"read"}); err != nil {
			t.Fatal(err)
		}
		if err := e.accounts.RevokeAPIKey(e.ctx, bob.ID, k2.ID); !errors.Is(err, account.ErrAPIKeyNotFound) {
			t.Fatalf("bob revoking ann's key: %v, want ErrAPIKeyNotFound", err)
		}
		if _, err := e.accounts.Credential(e.ctx, s2); err != nil {
			t.Fatalf("ann's key after bob's attempt: %v", err)
		}
		ks, err := e.accounts.APIKeys(e.ctx, ann.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) != 2 || ks[0].ID != k2.ID || ks[1].ID != k1.ID || ks[0].Name != "two" || !slices.Equal(ks[1].Scopes, []account.Scope{account.ScopeRead}) {
			t.Fatalf("ann's keys = %+v", ks)
		}
		if !within(ks[1].CreatedAt, k1.CreatedAt) {
			t.Errorf("created_at %v, was %v", ks[1].CreatedAt, k1.CreatedAt)
		}
		none, err := e.accounts.APIKeys(e.ctx, e.user("cy", 0, 0).ID)
		if err != nil || none == nil || len(none) != 0 {
			t.Fatalf("a user without keys: %v, %v (want an empty list)", none, err)
		}
	})

	t.Run("names and scopes are checked", func(t *testing.T) {
		e := newEnv(t, newStores)
		ann := e.user("ann", 0, 0)
		cases := []struct {
			name, key string
			scopes    []string
		}{
			{"an empty name", " ", []string{"read"}},
			{"a name too long", string(slices.Repeat([]byte("x"), account.MaxAPIKeyName+1)), []string{"read"}},
			{"a name with a control character", "bot\x00", []string{"read"}},
			{"no scopes", "bot", nil},
			{"an unknown scope", "bot", []string{"read", "admin"}},
			{"a scope twice", "bot", []string{"trade", "trade"}},
		}
		for _, c := range cases {
			t.Run(c.name+" is refused", func(t *testing.T) {
				if _, _, err := e.accounts.CreateAPIKey(e.ctx, ann.ID, c.key, c.scopes); !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("err = %v, want invalid input", err)
				}
			})
		}
		if ks, _ := e.accounts.APIKeys(e.ctx, ann.ID); len(ks) != 0 {
			t.Fatalf("refused keys were stored: %+v", ks)
		}
	})

	t.Run("a user holds at most MaxAPIKeys keys, even when created concurrently", func(t *testing.T) {
		e := newEnv(t, newStores)
		ann := e.user("ann", 0, 0)
		var wg sync.WaitGroup
		errs := make([]error, account.MaxAPIKeys+5)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = e.accounts.CreateAPIKey(e.ctx, ann.ID, "bot", []string{"read"})
			}()
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			switch {
			case errors.Is(err, account.ErrTooManyAPIKeys):
				refused++
			case err != nil:
				t.Fatal(err)
			}
		}
		ks, err := e.accounts.APIKeys(e.ctx, ann.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) != account.MaxAPIKeys || refused != 5 {
			t.Fatalf("%d keys stored, %d refused; want %d and 5", len(ks), refused, account.MaxAPIKeys)
		}
		if _, _, err := e.accounts.CreateAPIKey(e.ctx, 1<<40, "nobody's", []string{"read"}); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("a key for no user: %v, want ErrUserNotFound", err)
		}
	})

	t.Run("a key's use is recorded at most once a minute", func(t *testing.T) {
		e := newEnv(t, newStores)
		now := time.Now().UTC().Truncate(time.Second)
		e.accounts.Now = func() time.Time { return now }
		ann := e.user("ann", 0, 0)
		k, secret, err := e.accounts.CreateAPIKey(e.ctx, ann.ID, "bot", []string{"read"})
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			ks, err := e.accounts.APIKeys(e.ctx, ann.ID)
			if err != nil || len(ks) != 1 || ks[0].ID != k.ID {
				t.Fatalf("keys = %v, %v", ks, err)
			}
			return ks[0].LastUsedAt
		}
		use := func(at time.Time) {
			t.Helper()
			now = at
			if _, err := e.accounts.Credential(e.ctx, secret); err != nil {
				t.Fatal(err)
			}
		}
		if lastUsed() != nil {
			t.Fatal("an unused key has a last use")
		}
		start := now
		use(start)
		if lu := lastUsed(); lu == nil || !within(*lu, start) {
			t.Fatalf("last used %v, want %v", lu, start)
		}
		use(start.Add(30 * time.Second))
		if lu := lastUsed(); !within(*lu, start) {
			t.Fatalf("a use within the minute was written: last used %v, want %v", lu, start)
		}
		use(start.Add(61 * time.Second))
		if lu := lastUsed(); !within(*lu, start.Add(61*time.Second)) {
			t.Fatalf("a use a minute later: last used %v, want %v", lu, start.Add(61*time.Second))
		}
		// A touch never goes back in time.
		if err := e.stores.Accounts.TouchAPIKey(e.ctx, k.ID, start); err != nil {
			t.Fatal(err)
		}
		if lu := lastUsed(); !within(*lu, start.Add(61*time.Second)) {
			t.Fatalf("an older touch moved last used back to %v", lu)
		}
		if err := e.stores.Accounts.TouchAPIKey(e.ctx, k.ID+1000, start); err != nil {
			t.Fatalf("touching an unknown key: %v", err)
		}
	})
}

// testUserTrades: a user's own trades come newest first, a keyset page at
// a time, whatever market, and never another user's.
func testUserTrades(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a user's trades come newest first in keyset pages", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 100_000, 0.5, 0.3)
		m1, m2 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		ann, bob := e.user("ann", 1_000_000, 0), e.user("bob", 1_000_000, 0)
		var want []int64 // ann's trade ids, oldest first
		for i := range 7 {
			m := m1
			if i%2 == 1 {
				m = m2
			}
			r, err := e.buy(ann, m, market.Yes, int64(1000+i*100))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, r.Trade.ID)
			if _, err := e.buy(bob, m, market.No, 500); err != nil {
				t.Fatal(err)
			}
		}
		r, err := e.sell(ann, m1, market.Yes, 100)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Trade.ID)
		slices.Reverse(want)

		var got []int64
		cursor := ""
		for pages := 0; ; pages++ {
			p, err := e.markets.UserTrades(e.ctx, ann.ID, 3, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Trades) > 3 {
				t.Fatalf("a page of %d trades, limit 3", len(p.Trades))
			}
			for _, tr := range p.Trades {
				if tr.UserID != ann.ID {
					t.Fatalf("ann's history holds trade %d of user %d", tr.ID, tr.UserID)
				}
				got = append(got, tr.ID)
			}
			if p.Next == "" {
				break
			}
			cursor = p.Next
			if pages > 10 {
				t.Fatal("the pages never end")
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trade ids %v, want %v", got, want)
		}
		first, _ := e.markets.UserTrades(e.ctx, ann.ID, 100, "")
		last := first.Trades[0]
		if last.Action != market.ActionSell || last.MarketID != m1.ID || last.Shares != 100 || last.Amount <= 0 || last.Fee <= 0 || last.CreatedAt.IsZero() {
			t.Errorf("the newest trade = %+v", last)
		}
		if first.Next != "" {
			t.Errorf("a page holding every trade has a next cursor %q", first.Next)
		}
	})

	t.Run("a trade made after the first page never moves the later pages", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 100_000, 0.5)
		m := ev.Pools[0].Markets[0]
		ann := e.user("ann", 1_000_000, 0)
		for range 6 {
			if _, err := e.buy(ann, m, market.Yes, 1000); err != nil {
				t.Fatal(err)
			}
		}
		p1, err := e.markets.UserTrades(e.ctx, ann.ID, 2, "")
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.markets.UserTrades(e.ctx, ann.ID, 2, p1.Next)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.buy(ann, m, market.Yes, 1000); err != nil {
			t.Fatal(err)
		}
		after, err := e.markets.UserTrades(e.ctx, ann.ID, 2, p1.Next)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(before.Trades, after.Trades, func(a, b *market.Trade) bool { return a.ID == b.ID }) || before.Next != after.Next {
			t.Fatalf("the second page moved with a new trade: %v then %v", tradeIDs(before.Trades), tradeIDs(after.Trades))
		}
	})

	t.Run("a user with no trades has an empty page", func(t *testing.T) {
		e := newEnv(t, newStores)
		p, err := e.markets.UserTrades(e.ctx, e.user("cy", 0, 0).ID, 0, "")
		if err != nil || p.Trades == nil || len(p.Trades) != 0 || p.Next != "" {
			t.Fatalf("page = %+v, %v", p, err)
		}
	})

	t.Run("a bad limit or cursor is refused", func(t *testing.T) {
		e := newEnv(t, newStores)
		for _, c := range []struct {
			name   string
			limit  int
			cursor string
		}{
			{"a negative limit", -1, ""},
			{"a limit over the maximum", market.MaxTradesLimit + 1, ""},
			{"a cursor that is not base64", 10, "!!"},
			{"a cursor of another list", 10, "MTA"}, // the user search's "10"
			{"a cursor of a negative id", 10, "dC0x"},
			{"a cursor of id zero", 10, "dDA"},
		} {
			t.Run(c.name, func(t *testing.T) {
				if _, err := e.markets.UserTrades(e.ctx, 1, c.limit, c.cursor); !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("err = %v, want invalid input", err)
				}
			})
		}
	})
}

func tradeIDs(ts []*market.Trade) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
