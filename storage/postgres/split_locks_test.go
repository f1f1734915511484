package postgres_test

import (
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// TestPoolLockSeesAnAnswerAddedMeanwhile: a statement that waits for the
// locks of an answer being added does not see the market the answer
// inserts (it was not committed when the statement began). A settlement
// of the pool that waited there must read the pool again and settle the
// new market with the others.
func TestPoolLockSeesAnAnswerAddedMeanwhile(t *testing.T) {
	e := newEnv(t)
	c := e.user("creator", 0)
	yes := true
	c, err := e.accounts.SetRoles(e.ctx, c.ID, account.RolesPatch{IsCreator: &yes})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Final", Pools: []market.NewPool{{
		Name: "Winner", B: 10000, Exclusive: true,
		Markets: []market.NewMarket{{Name: "Ann", Probability: 0.5}, {Name: "Other", Probability: 0.5, Other: true}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.markets.SetActive(e.ctx, c.ID, ev.ID, &yes); err != nil {
		t.Fatal(err)
	}
	pool, ms := ev.Pools[0].ID, ev.Pools[0].Markets

	// The rows of a split, written under the pool's locks as
	// Store.AddAnswer writes them: the new market, and the pool's number
	// of markets on each.
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	var splitter int
	if err := tx.QueryRow(e.ctx, `SELECT pg_backend_pid()`).Scan(&splitter); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT id FROM markets WHERE pool_id = $1 ORDER BY id FOR NO KEY UPDATE`,
		`INSERT INTO markets (pool_id, event_id, outcome_index, name, name_ru, yes_name, no_name, b, q_yes, q_no, q0_yes, q0_no,
			volume, paused, resolved, created_at, finish_at, other, pool_markets)
		SELECT pool_id, event_id, 2, 'Cid', '', yes_name, no_name, b, q_yes - 1000, q_no, q0_yes - 1000, q0_no,
			0, false, false, created_at, finish_at, false, 3 FROM markets WHERE pool_id = $1 AND other`,
		`UPDATE markets SET pool_markets = 3 WHERE pool_id = $1`,
	} {
		if _, err := tx.Exec(e.ctx, q, pool); err != nil {
			t.Fatal(err)
		}
	}

	closed := make(chan error, 1)
	go func() { closed <- e.markets.Close(e.ctx, c.ID, ev.ID, pool, ms[0].ID, "YES") }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, splitter).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the close never waited for the split's locks")
		}
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	var open int
	if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM markets WHERE pool_id = $1 AND NOT resolved`, pool).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Fatalf("%d market(s) of the pool left unresolved: the settlement missed the answer added while it waited", open)
	}
}
