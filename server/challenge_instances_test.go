package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestChallengeWindowAcrossInstancesAndRestarts runs the challenge
// window's worker on several servers over one PostgreSQL database: two
// instances at once settle every due proposal exactly once between them,
// and a proposal made on a server that stops before its deadline is
// settled by the server started after it, from the deadline kept in the
// database. Every holder is paid exactly what the trade log says, once.
func TestChallengeWindowAcrossInstancesAndRestarts(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.DatabaseURL = postgresURL(t)
	cfg.ResolutionChallenge = time.Second

	t.Run("two instances settle each due proposal once between them", func(t *testing.T) {
		a, _ := startServer(t, cfg)
		b, _ := startServer(t, cfg)
		w := newWorld(t, a)
		markets := []struct {
			id, pool int64
			won      string
		}{{w.a1.ID, w.poolA.ID, "YES"}, {w.a2.ID, w.poolA.ID, "NO"}, {w.b1.ID, w.poolB.ID, "YES"}}
		var aliceWins, bobWins int64
		for _, m := range markets {
			y := a.buy(t, w.alice.token, m.id, "YES", 20_000)
			n := b.buy(t, w.bob.token, m.id, "NO", 20_000)
			if m.won == "YES" {
				aliceWins += y.Shares
			} else {
				bobWins += n.Shares
			}
		}
		alice, bob := a.me(t, w.alice.token).Balance, a.me(t, w.bob.token).Balance
		for i, m := range markets {
			via := []*harness{a, b}[i%2]
			expect(t, via.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, m.pool, m.id), token: w.creator.token, body: map[string]any{"won_side": m.won}}), http.StatusOK, "")
		}
		for i, m := range markets {
			got := []*harness{a, b}[i%2].waitResolved(t, m.id)
			if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != m.won {
				t.Fatalf("market %d after its deadline: %+v", m.id, got)
			}
		}
		if got := b.me(t, w.alice.token).Balance - alice; got != aliceWins {
			t.Fatalf("alice was paid %d, want %d", got, aliceWins)
		}
		if got := a.me(t, w.bob.token).Balance - bob; got != bobWins {
			t.Fatalf("bob was paid %d, want %d", got, bobWins)
		}
		a.checkAudit(t, "two instances settled")
		b.checkAudit(t, "two instances settled")
	})

	t.Run("a server started after the one that proposed settles at the deadline", func(t *testing.T) {
		first, app := startServer(t, cfg)
		w := newWorld(t, first)
		y := first.buy(t, w.alice.token, w.a1.ID, "YES", 30_000)
		alice := first.me(t, w.alice.token).Balance
		expect(t, first.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		second, _ := startServer(t, cfg)
		got := second.waitResolved(t, w.a1.ID)
		if !got.Resolved || got.ResolvedBy == nil || *got.ResolvedBy != "creator" {
			t.Fatalf("after the restart: %+v", got)
		}
		if paid := second.me(t, w.alice.token).Balance - alice; paid != y.Shares {
			t.Fatalf("alice was paid %d, want %d", paid, y.Shares)
		}
		second.checkAudit(t, fmt.Sprintf("the restart (market %d)", w.a1.ID))
	})
}
