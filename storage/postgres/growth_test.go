package postgres_test

import (
	"testing"
	"time"

	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
)

// TestLevelUpReachesTheAuthCache: a level raised by the growth consumer
// is a change of the users row, which the auth feed announces, so that a
// server that caches authentications shows the new level at once rather
// than after its cache's TTL.
func TestLevelUpReachesTheAuthCache(t *testing.T) {
	e := newEnv(t)
	e.accounts.CacheAuth(time.Hour)
	f := watch(t, e.store)
	if err := wait(t, f.live, "report that it listens"); err != nil {
		t.Fatal(err)
	}
	go func() {
		for inv := range f.changes {
			e.accounts.Invalidate(inv)
		}
	}()
	rules := growth.Rules{Levels: []int64{0, 20_000}, QualifyKopecks: 50_000, RewardKopecks: 10_000}
	if _, err := e.store.ApplyGrowth(e.ctx, rules, 100); err != nil {
		t.Fatal(err)
	}
	ev, _ := e.event(0.02, 100_000, 0.5)
	u := e.user("trader", 100_000)
	_, tok, err := e.accounts.Login(e.ctx, u.Email, "password123")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.accounts.Authenticate(e.ctx, tok); err != nil || got.Level != 1 {
		t.Fatalf("before trading: level %v (%v)", got, err)
	}
	if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 30_000); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := e.store.ApplyGrowth(e.ctx, rules, 100)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := e.accounts.Authenticate(e.ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		if got.Level == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the level-up the cached authentication still says level %d", got.Level)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMigrationMakesReferralCodesUnique: codes that repeat (told apart
// case-insensitively) before migration 00040 get fresh ones, the first
// holder keeping theirs, so that the migration's unique index can be made.
func TestMigrationMakesReferralCodesUnique(t *testing.T) {
	e := newEnv(t)
	for {
		v, err := e.store.MigrationVersion(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 40 {
			break
		}
		if _, err := e.store.MigrateDown(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	var first int64
	if err := e.store.DB().QueryRow(e.ctx, `WITH u AS (INSERT INTO users (name, referral_code, created_at) VALUES
		('a', 'SAMECODE', now()), ('b', 'samecode', now()), ('c', 'SameCode', now()), ('d', '', now()), ('e', '', now())
		RETURNING id) SELECT min(id) FROM u`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.MigrateUp(e.ctx); err != nil {
		t.Fatal(err)
	}
	var keeps string
	var distinct, empty int
	if err := e.store.DB().QueryRow(e.ctx, `SELECT (SELECT referral_code FROM users WHERE id = $1),
		(SELECT count(DISTINCT upper(referral_code)) FROM users WHERE name IN ('a', 'b', 'c')),
		(SELECT count(*) FROM users WHERE name IN ('d', 'e') AND referral_code = '')`, first).Scan(&keeps, &distinct, &empty); err != nil {
		t.Fatal(err)
	}
	if keeps != "SAMECODE" || distinct != 3 || empty != 2 {
		t.Fatalf("after the migration the first holder has %q, %d distinct codes of 3, %d empty codes of 2", keeps, distinct, empty)
	}
}
