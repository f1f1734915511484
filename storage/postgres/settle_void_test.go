package postgres_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// balanceOf is the balance of ledger account r.
func balanceOf(e *env, r account.Ref) int64 {
	e.t.Helper()
	b, err := e.store.Balance(e.ctx, r)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// TestSettleVoid voids a market whose escrow and fees cannot cover the
// refunds: the escrow, then the fee account, then the treasury pay them,
// the treasury's balance moves by what it paid, and every holder is
// refunded and told once.
func TestSettleVoid(t *testing.T) {
	t.Run("every holder gets its net cost back and the treasury pays what the escrow and fees lack", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.01, 1000, 0.5)
		m := ev.Pools[0].Markets[0]
		hs := seedHoldings(e, m, 7)
		// Two rounds of a trader buying cheap, another pushing the
		// price and the first selling out at a profit: the pushers'
		// refunds are thousands over what the escrow and fees hold.
		side := market.Yes
		var users []*account.User
		for _, h := range hs {
			users = append(users, h.u)
		}
		for range 2 {
			a, b := e.user("seller", 100_000), e.user("pusher", 100_000)
			ra, err := e.buy(a, m, side, 2000)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.buy(b, m, side, 5000); err != nil {
				t.Fatal(err)
			}
			if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: a.ID, Side: side, Action: market.ActionSell, Shares: ra.Trade.Shares}); err != nil {
				t.Fatal(err)
			}
			users = append(users, a, b)
			side = 1 - side
		}
		due := map[int64]int64{}
		before := map[int64]int64{}
		var total int64
		for _, u := range users {
			ps, err := e.store.OpenPositions(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				due[u.ID] += max(p.Spent-p.Returned, 0)
			}
			total += due[u.ID]
			b, _ := e.accounts.Balances(e.ctx, u.ID)
			before[u.ID] = b.Balance
		}
		escrow, fees, treasury := balanceOf(e, account.EscrowAccount(m.ID)), balanceOf(e, account.FeeAccount(m.ID)), balanceOf(e, account.Treasury)
		short := total - escrow
		if short <= fees {
			t.Fatalf("the scenario went wrong: refunds %d, escrow %d, fees %d", total, escrow, fees)
		}

		if err := e.store.Settle(e.ctx, m.ID, market.Settlement{Void: true, By: market.ResolvedByOperator}); err != nil {
			t.Fatal(err)
		}

		for _, u := range users {
			b, _ := e.accounts.Balances(e.ctx, u.ID)
			if b.Balance != before[u.ID]+due[u.ID] {
				t.Errorf("user %d: balance %d, want %d + %d", u.ID, b.Balance, before[u.ID], due[u.ID])
			}
			// A seller sold out before the void: it held nothing.
			notes := resolvedNotes(e, u)
			if u.Name == "seller" && len(notes) != 0 {
				t.Errorf("seller %d: notifications %+v", u.ID, notes)
			} else if u.Name != "seller" && (len(notes) != 1 || notes[0].Data.Won != "VOID" || notes[0].Data.Amount != due[u.ID]) {
				t.Errorf("user %d: notifications %+v, want one refunding %d", u.ID, notes, due[u.ID])
			}
		}
		if got := balanceOf(e, account.EscrowAccount(m.ID)); got != 0 {
			t.Errorf("escrow %d", got)
		}
		if got := balanceOf(e, account.FeeAccount(m.ID)); got != 0 {
			t.Errorf("fees %d, want all %d spent on refunds", got, fees)
		}
		if got, want := balanceOf(e, account.Treasury), treasury-(short-fees); got != want {
			t.Errorf("treasury %d, want %d", got, want)
		}
		got, err := e.store.Market(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Voided || got.WinningOutcome != nil || got.ResolvedBy != market.ResolvedByOperator {
			t.Errorf("market %+v", got)
		}
		e.audit()
	})
}

// TestSettleThousandsOfPositions settles markets of 5,000 open positions,
// resolved and voided: every position reads closed, every holder is paid
// and told once, and the ledger stays whole.
func TestSettleThousandsOfPositions(t *testing.T) {
	const n, holders = 5000, 3750 // seedOpenPositions: three holders per four positions
	for _, c := range []struct {
		name string
		st   market.Settlement
		won  int
	}{
		{"resolved YES", market.Settlement{Won: market.Yes}, market.WonSideYes},
		{"voided", market.Settlement{Void: true}, market.WonSideVoid},
	} {
		t.Run(c.name+", every position closes and every holder is paid and told once", func(t *testing.T) {
			e := newEnv(t)
			ev, _ := e.event(0, 100_000_000, 0.5)
			m := ev.Pools[0].Markets[0]
			seedOpenPositions(t, e, m, n)
			var owed, paidHolders int64
			query := `SELECT COALESCE(sum(shares) FILTER (WHERE side = 1), 0)::bigint, count(DISTINCT user_id) FILTER (WHERE side = 1)
				FROM positions WHERE market_id = $1 AND closed_at IS NULL`
			if c.st.Void {
				query = `SELECT sum(GREATEST(spent - returned, 0))::bigint, count(DISTINCT user_id) FROM positions WHERE market_id = $1 AND closed_at IS NULL`
			}
			if err := e.store.DB().QueryRow(e.ctx, query, m.ID).Scan(&owed, &paidHolders); err != nil {
				t.Fatal(err)
			}
			var users []int64
			rows, err := e.store.DB().Query(e.ctx, `SELECT DISTINCT user_id FROM positions WHERE market_id = $1 ORDER BY 1`, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var u int64
				if err := rows.Scan(&u); err != nil {
					t.Fatal(err)
				}
				users = append(users, u)
			}
			if len(users) != holders {
				t.Fatalf("%d holders, want %d", len(users), holders)
			}
			before := ledgerCounts(e)

			if err := e.store.Settle(e.ctx, m.ID, c.st); err != nil {
				t.Fatal(err)
			}

			var credited, credits int64
			if err := e.store.DB().QueryRow(e.ctx, `SELECT
				(SELECT count(*) FROM ledger_accounts WHERE kind = 'user' AND balance > 0),
				(SELECT COALESCE(sum(balance), 0)::bigint FROM ledger_accounts WHERE kind = 'user')`).Scan(&credited, &credits); err != nil {
				t.Fatal(err)
			}
			if credited != paidHolders || credits != owed {
				t.Fatalf("%d holders hold %d; want %d, %d", credited, credits, paidHolders, owed)
			}
			// Every 25th holder, through the reads a user makes.
			var closed, notified int
			for i := 0; i < len(users); i += 25 {
				u := users[i]
				ps, err := e.store.ClosedPositions(e.ctx, u, -1, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					if p.MarketID != m.ID || p.WonSide == nil || *p.WonSide != c.won {
						t.Fatalf("holder %d: closed position %+v", u, p.Position)
					}
					closed++
				}
				if open, err := e.store.OpenPositions(e.ctx, u); err != nil || len(open) != 0 {
					t.Fatalf("holder %d: open positions %v, %v", u, open, err)
				}
				b, _ := e.accounts.Balances(e.ctx, u)
				notes := resolvedNotes(e, &account.User{ID: u})
				if len(notes) != 1 || notes[0].Data.Amount != b.Balance {
					t.Fatalf("holder %d (balance %d): notifications %+v", u, b.Balance, notes)
				}
				notified++
			}
			if notified != (holders+24)/25 || closed < notified {
				t.Errorf("%d holders notified, %d positions closed", notified, closed)
			}
			// One posting per paid holder, and the escrow's leftover.
			after := ledgerCounts(e)
			if after != [4]int64{before[0] + paidHolders + 1, before[1], before[2], before[3]} {
				t.Errorf("rows %v after, %v before; want %d more postings and nothing else", after, before, paidHolders+1)
			}
			e.audit()
		})
	}
}

// TestSettlementsShareAConnection settles three markets one after the
// other on a store of one connection: each settlement makes and drops
// its own table of credits, and the statements prepared for the first
// work for the next.
func TestSettlementsShareAConnection(t *testing.T) {
	e := &env{t: t, ctx: context.Background(), store: pgtest.New(t, postgres.WithMaxConns(1))}
	e.accounts = account.NewService(e.store)
	e.accounts.BcryptCost = bcrypt.MinCost
	e.markets = market.NewService(e.store, e.accounts)
	ev, c := e.event(0.02, 100_000, 0.5, 0.5, 0.5)
	u := e.user("holder", 1_000_000)
	for i, won := range []string{"YES", "VOID", "NO"} {
		m := ev.Pools[0].Markets[i]
		if _, err := e.buy(u, m, market.No, 3000); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, won); err != nil {
			t.Fatalf("settlement %d (%s): %v", i+1, won, err)
		}
	}
	e.audit()
}
