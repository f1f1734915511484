package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// env is a fresh store with the services on top of it.
type env struct {
	t        testing.TB
	ctx      context.Context
	store    *postgres.Store
	accounts *account.Service
	markets  *market.Service
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := pgtest.New(t)
	acc := account.NewService(s)
	acc.BcryptCost = bcrypt.MinCost
	return &env{t: t, ctx: context.Background(), store: s, accounts: acc, markets: market.NewService(s, acc)}
}

var seq atomic.Int64

func (e *env) user(name string, balance int64) *account.User {
	e.t.Helper()
	u, _, err := e.accounts.Register(e.ctx, account.Registration{
		Email: fmt.Sprintf("%s-%d@example.com", name, seq.Add(1)), Password: "password123", Name: name})
	if err != nil {
		e.t.Fatalf("register %s: %v", name, err)
	}
	if balance > 0 {
		if _, err := e.accounts.Credit(e.ctx, u.ID, balance, false); err != nil {
			e.t.Fatalf("credit %s: %v", name, err)
		}
	}
	return u
}

// event creates an active event whose one pool holds a market per
// probability.
func (e *env) event(margin float64, b int64, probs ...float64) (*market.Event, *account.User) {
	e.t.Helper()
	c := e.user("creator", 0)
	yes := true
	c, err := e.accounts.SetRoles(e.ctx, c.ID, account.RolesPatch{IsCreator: &yes})
	if err != nil {
		e.t.Fatal(err)
	}
	np := market.NewPool{Name: "Winner", Margin: margin, B: b}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: fmt.Sprintf("Outcome %d", i), Probability: p})
	}
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Final", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	if err := e.markets.SetActive(e.ctx, c.ID, ev.ID, &yes); err != nil {
		e.t.Fatal(err)
	}
	return ev, c
}

func (e *env) buy(u *account.User, m *market.Market, side market.Side, amount int64) (*market.Result, error) {
	return e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: amount})
}

// audit fails the test unless the ledger and every escrow check out.
func (e *env) audit() {
	e.t.Helper()
	r, err := e.accounts.Audit(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if !r.OK {
		e.t.Fatalf("ledger audit: %v", r.Problems)
	}
	problems, err := e.markets.AuditEscrows(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(problems) > 0 {
		e.t.Fatalf("escrow audit: %v", problems)
	}
}
