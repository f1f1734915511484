package postgres_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// userReads is everything a user reads of its positions, realizations
// and notifications.
type userReads struct {
	open, closed []market.Position
	count, best  int64
	pnl          []market.PnLEvent
	notes        []string
}

func readsOf(t *testing.T, e *env, u int64) userReads {
	t.Helper()
	var r userReads
	open, err := e.store.OpenPositions(e.ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range open {
		r.open = append(r.open, utcPosition(p.Position))
	}
	closed, err := e.store.ClosedPositions(e.ctx, u, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range closed {
		r.closed = append(r.closed, utcPosition(p.Position))
	}
	if r.count, r.best, err = e.store.ClosedStats(e.ctx, u); err != nil {
		t.Fatal(err)
	}
	if r.pnl, err = e.store.PnLEvents(e.ctx, u); err != nil {
		t.Fatal(err)
	}
	for i := range r.pnl {
		r.pnl[i].At = r.pnl[i].At.UTC()
	}
	ns, err := e.store.Notifications(e.ctx, u, false, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		r.notes = append(r.notes, fmt.Sprintf("%d %s %d %s %+v %v %s", n.ID, n.Type, n.RelatedID, n.RelatedType, n.Data, n.Read, n.CreatedAt.UTC()))
	}
	return r
}

func utcPosition(p market.Position) market.Position {
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	if p.ClosedAt != nil {
		c := p.ClosedAt.UTC()
		p.ClosedAt = &c
	}
	return p
}

// TestMigrationDownWritesSettlementsOut settles markets (a resolution, a
// void, an exclusive pool), marks one settlement's notification read, and
// migrates down past 00015: the older schema gets every settled position
// closed in its row and every notification written, as the older code
// wrote them, and migrating up again reads all of it exactly as before.
func TestMigrationDownWritesSettlementsOut(t *testing.T) {
	e := newEnv(t)
	ev, creator := e.event(0.02, 50_000, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	pool := e.exclusiveEvent(20_000, 0.5, 0.3, 0.2)
	if err := e.markets.SetActive(e.ctx, pool.CreatorID, pool.ID, ptrTo(true)); err != nil {
		t.Fatal(err)
	}
	pms := pool.Pools[0].Markets
	var users []*account.User
	for i := range 6 {
		u := e.user(fmt.Sprintf("u%d", i), 1_000_000)
		users = append(users, u)
		for j, m := range append(append([]*market.Market{}, ms...), pms...) {
			r, err := e.buy(u, m, market.Side((i+j)%2), int64(1000+100*i+37*j))
			if err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: r.Trade.Side, Action: market.ActionSell, Shares: r.Trade.Shares / 3}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, c := range []struct {
		m   *market.Market
		won string
	}{{ms[0], "YES"}, {ms[1], "VOID"}, {pms[1], "YES"}} {
		cid := creator.ID
		if c.m.PoolID == pms[0].PoolID {
			cid = pool.CreatorID
		}
		if err := e.markets.Close(e.ctx, cid, c.m.EventID, c.m.PoolID, c.m.ID, c.won); err != nil {
			t.Fatal(err)
		}
	}
	// One settlement notification written by being read.
	first := readsOf(t, e, users[1].ID)
	ns, _ := e.store.Notifications(e.ctx, users[1].ID, true, 1, 0)
	if len(ns) != 1 || ns[0].Type != "market_resolved" {
		t.Fatalf("newest unread %+v", ns)
	}
	if err := e.store.MarkRead(e.ctx, users[1].ID, ns[0].ID); err != nil {
		t.Fatal(err)
	}
	before := map[int64]userReads{}
	for _, u := range users {
		before[u.ID] = readsOf(t, e, u.ID)
	}
	if reflect.DeepEqual(first, before[users[1].ID]) {
		t.Fatal("marking a notification read changed nothing")
	}

	// Down to the schema before 00015, through any later migrations.
	for {
		v, err := e.store.MigrationVersion(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 15 {
			break
		}
		if _, err := e.store.MigrateDown(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	var open, notes, derivedIDs int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT
		(SELECT count(*) FROM positions x JOIN markets m ON m.id = x.market_id WHERE x.closed_at IS NULL AND m.resolved),
		(SELECT count(*) FROM notifications WHERE type = 'market_resolved'),
		(SELECT count(*) FROM notifications WHERE id >= 4503599627370496)`).Scan(&open, &notes, &derivedIDs); err != nil {
		t.Fatal(err)
	}
	// Six holders of three settled markets and of the pool's other two.
	if open != 0 || notes != 6*5 || derivedIDs != notes {
		t.Fatalf("after going down: %d settled positions open, %d settlement notifications (%d with their ids), want 0, 30, 30", open, notes, derivedIDs)
	}
	var pnlRows int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM positions WHERE settle_pnl IS NOT NULL`).Scan(&pnlRows); err != nil || pnlRows == 0 {
		t.Fatalf("%d positions with their settlement's realization (%v)", pnlRows, err)
	}

	if err := e.store.Migrate(e.ctx); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if got := readsOf(t, e, u.ID); !reflect.DeepEqual(got, before[u.ID]) {
			t.Errorf("user %d reads, before going down:\n%+v\nafter going down and up:\n%+v", u.ID, before[u.ID], got)
		}
	}
	e.audit()
}
