package postgres_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// seedRandomPositions gives market m open positions of holders new users,
// with random shares, cost basis, spent and returned (as trades and
// sales would have left them), some holders on both sides, and funds m's
// escrow with escrow and its fee account with fees from the outside
// world, so that the ledger balances. It returns the holders.
func seedRandomPositions(tb testing.TB, e *env, rng *rand.Rand, m *market.Market, holders int, escrow, fees int64) []int64 {
	tb.Helper()
	users, sides, shares, basis, spent, returned := []int64{}, []int16{}, []int64{}, []int64{}, []int64{}, []int64{}
	var ids []int64
	for range holders {
		u := e.user("holder", 0)
		ids = append(ids, u.ID)
		both := rng.IntN(3) == 0
		for s := range 2 {
			if !both && s != rng.IntN(2) {
				continue
			}
			sp := rng.Int64N(5000)
			users, sides = append(users, u.ID), append(sides, int16(s)) // 1 YES, 0 NO
			shares, basis = append(shares, 1+rng.Int64N(9000)), append(basis, rng.Int64N(sp+1))
			spent, returned = append(spent, sp), append(returned, rng.Int64N(6000)*int64(rng.IntN(2)))
		}
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
		SELECT u.user_id, $1, u.side, u.shares, u.basis, u.shares, u.spent, u.returned, $8, $8
		FROM unnest($2::bigint[], $3::smallint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[]) AS u(user_id, side, shares, basis, spent, returned)
		ORDER BY md5(u.user_id::text || u.side::text)`, m.ID, users, sides, shares, basis, spent, returned, at); err != nil {
		tb.Fatal(err)
	}
	for _, f := range []struct {
		to     account.Ref
		amount int64
	}{{account.EscrowAccount(m.ID), escrow}, {account.FeeAccount(m.ID), fees}} {
		if f.amount == 0 {
			continue
		}
		if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.Ref{Kind: account.KindExternal}, To: f.to, Amount: f.amount, Reason: "deposit"}}); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// openPositionsOf are market m's open positions as the database holds
// them, holder by holder, and the balances a settlement of m reads: the
// escrow and fees of every market of ms, the treasury, every holder's.
func settleStateOf(tb testing.TB, e *env, ms []*market.Market) ([][]*market.Position, map[account.Ref]int64) {
	tb.Helper()
	balances := map[account.Ref]int64{account.Treasury: balanceOf(e, account.Treasury)}
	out := make([][]*market.Position, len(ms))
	for i, m := range ms {
		balances[account.EscrowAccount(m.ID)] = balanceOf(e, account.EscrowAccount(m.ID))
		balances[account.FeeAccount(m.ID)] = balanceOf(e, account.FeeAccount(m.ID))
		rows, err := e.store.DB().Query(e.ctx, `SELECT id, user_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at
			FROM positions WHERE market_id = $1 AND closed_at IS NULL ORDER BY user_id, id`, m.ID)
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			p := &market.Position{MarketID: m.ID}
			var side int16
			if err := rows.Scan(&p.ID, &p.UserID, &side, &p.Shares, &p.CostBasis, &p.Bought, &p.Spent, &p.Returned, &p.CreatedAt, &p.UpdatedAt); err != nil {
				tb.Fatal(err)
			}
			p.Side = market.No
			if side == 1 {
				p.Side = market.Yes
			}
			p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
			out[i] = append(out[i], p)
			balances[account.UserAccount(p.UserID)] = 0
		}
		if err := rows.Err(); err != nil {
			tb.Fatal(err)
		}
	}
	for r := range balances {
		if r.Kind == account.KindUser {
			balances[r] = balanceOf(e, r)
		}
	}
	return out, balances
}

// postingsSince are the postings after id from, as refs, sorted.
func postingsSince(tb testing.TB, e *env, from int64) []account.Posting {
	tb.Helper()
	rows, err := e.store.DB().Query(e.ctx, `SELECT f.kind, f.owner, t.kind, t.owner, p.amount, p.reason
		FROM postings p JOIN ledger_accounts f ON f.id = p.from_account JOIN ledger_accounts t ON t.id = p.to_account
		WHERE p.id > $1`, from)
	if err != nil {
		tb.Fatal(err)
	}
	var out []account.Posting
	for rows.Next() {
		var p account.Posting
		var fk, tk string
		if err := rows.Scan(&fk, &p.From.Owner, &tk, &p.To.Owner, &p.Amount, &p.Reason); err != nil {
			tb.Fatal(err)
		}
		p.From.Kind, p.To.Kind = account.Kind(fk), account.Kind(tk)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return sortPostings(out)
}

func sortPostings(ps []account.Posting) []account.Posting {
	out := make([]account.Posting, len(ps))
	for i, p := range ps {
		out[i] = account.Posting{From: p.From, To: p.To, Amount: p.Amount, Reason: p.Reason}
	}
	slices.SortFunc(out, func(a, b account.Posting) int {
		return cmp.Or(cmp.Compare(a.To.Kind, b.To.Kind), cmp.Compare(a.To.Owner, b.To.Owner),
			cmp.Compare(a.From.Kind, b.From.Kind), cmp.Compare(a.From.Owner, b.From.Owner), cmp.Compare(a.Amount, b.Amount))
	})
	return out
}

func maxPostingID(tb testing.TB, e *env) int64 {
	tb.Helper()
	var id int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT COALESCE(max(id), 0) FROM postings`).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

// checkSettledAsDecided compares what the store wrote and reads back for
// the settlement of ms with effs, what the market package decides on the
// same positions and balances: the postings, every balance, each holder's
// closed positions, realizations and market_resolved notification.
func checkSettledAsDecided(t *testing.T, e *env, ms []*market.Market, holders []int64, balances map[account.Ref]int64, effs []*market.Effects, postedFrom int64) {
	t.Helper()
	var want []account.Posting
	for _, eff := range effs {
		want = append(want, eff.Postings...)
	}
	if got := postingsSince(t, e, postedFrom); !slices.Equal(got, sortPostings(want)) {
		t.Errorf("postings differ from the market package's:\nstore %v\ngo    %v", got, sortPostings(want))
	}
	after := cloneBalances(balances)
	for _, eff := range effs {
		if err := account.Apply(after, eff.Postings); err != nil {
			t.Fatal(err)
		}
	}
	for r, v := range after {
		if got := balanceOf(e, r); got != v {
			t.Errorf("%s: balance %d, the market package says %d", r, got, v)
		}
	}
	wantPos := map[int64]*market.Position{}
	wantPnL := map[int64]market.PnLEntry{}
	wantNotes := map[[2]int64]social.Notification{}
	for i, eff := range effs {
		for _, p := range eff.Positions {
			wantPos[p.ID] = p
		}
		for _, pe := range eff.PnL {
			wantPnL[pe.Position.ID] = pe
		}
		for _, n := range eff.Notifications {
			wantNotes[[2]int64{n.UserID, ms[i].ID}] = n
		}
	}
	seen := 0
	for _, u := range holders {
		closed, err := e.store.ClosedPositions(e.ctx, u, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range closed {
			w := wantPos[p.ID]
			if w == nil {
				continue
			}
			seen++
			got := p.Position
			got.CreatedAt, got.UpdatedAt = got.CreatedAt.UTC(), got.UpdatedAt.UTC()
			if got.ClosedAt == nil || w.ClosedAt == nil || !got.ClosedAt.Equal(*w.ClosedAt) || !got.UpdatedAt.Equal(w.UpdatedAt) ||
				got.Returned != w.Returned || got.CostBasis != w.CostBasis || *got.WonSide != *w.WonSide ||
				got.Shares != w.Shares || got.Spent != w.Spent || got.Side != w.Side || got.PnL() != w.PnL() {
				t.Errorf("position %d reads %+v, the market package closes it as %+v", p.ID, got, *w)
			}
		}
		if open, err := e.store.OpenPositions(e.ctx, u); err != nil || len(open) != 0 {
			t.Errorf("holder %d: open positions %v, %v", u, open, err)
		}
		evs, err := e.store.PnLEvents(e.ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			w, ok := wantPnL[ev.PositionID]
			if !ok {
				continue
			}
			if ev.Delta != w.Delta || !ev.At.Equal(w.At) || ev.UserID != u {
				t.Errorf("realization of position %d: %+v, the market package says %d at %v", ev.PositionID, ev, w.Delta, w.At)
			}
			delete(wantPnL, ev.PositionID)
		}
		for _, n := range resolvedNotes(e, &account.User{ID: u}) {
			var mid int64
			for _, m := range ms {
				if m.Name == n.Data.MarketName {
					mid = m.ID
				}
			}
			w, ok := wantNotes[[2]int64{u, mid}]
			if !ok || n.Data != w.Data || !n.CreatedAt.Equal(w.CreatedAt) || n.RelatedID != w.RelatedID || n.RelatedType != w.RelatedType || n.Read {
				t.Errorf("holder %d: notification %+v, the market package says %+v", u, n, w)
			}
			delete(wantNotes, [2]int64{u, mid})
		}
	}
	if seen != len(wantPos) {
		t.Errorf("%d of %d settled positions read closed", seen, len(wantPos))
	}
	if len(wantPnL) > 0 || len(wantNotes) > 0 {
		t.Errorf("realizations %v and notifications %v were not read", wantPnL, wantNotes)
	}
}

func cloneBalances(m map[account.Ref]int64) map[account.Ref]int64 {
	out := make(map[account.Ref]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestSettlementFollowsTheMarketRule settles markets of random positions
// in SQL and checks every effect against market.DecideSettlement (and
// DecidePoolSettlement) on the same positions and balances: the store's
// payout rule and its split of a void's refunds over the escrow, the fee
// account and the treasury are the market package's, and so are the
// closed positions, realizations and notifications it reads back.
func TestSettlementFollowsTheMarketRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		st     market.Settlement
		escrow func(owed int64) int64
		fees   int64
	}{
		{"YES, the escrow covers the winners with room to spare", market.Settlement{Won: market.Yes}, func(o int64) int64 { return o + 12_345 }, 500},
		{"NO, the escrow holds exactly what the winners are owed", market.Settlement{Won: market.No}, func(o int64) int64 { return o }, 0},
		{"VOID, the escrow covers every refund", market.Settlement{Void: true}, func(o int64) int64 { return o + 999 }, 300},
		{"VOID, the fee account tops up a short escrow", market.Settlement{Void: true}, func(o int64) int64 { return o - 700 }, 2000},
		{"VOID, the treasury pays what the escrow and fees lack", market.Settlement{Void: true, By: market.ResolvedByOperator}, func(o int64) int64 { return o / 3 }, 1500},
		{"VOID, an empty escrow and fee account leave it all to the treasury", market.Settlement{Void: true}, func(int64) int64 { return 0 }, 0},
	} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s (seed %d)", c.name, seed), func(t *testing.T) {
				e := newEnv(t)
				rng := rand.New(rand.NewPCG(seed, 77))
				ev, _ := e.event(0, 1000, 0.5)
				m := ev.Pools[0].Markets[0]
				// The subsidy goes back to the treasury, so that the
				// escrow holds exactly what the case says.
				sub := balanceOf(e, account.EscrowAccount(m.ID))
				if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.EscrowAccount(m.ID), To: account.Treasury, Amount: sub, Reason: "test"}}); err != nil {
					t.Fatal(err)
				}
				holders := seedRandomPositions(t, e, rng, m, 40, 0, 0)
				pos, _ := settleStateOf(t, e, []*market.Market{m})
				var owed int64
				for _, p := range pos[0] {
					owed += c.st.Payout(p)
				}
				if esc := c.escrow(owed); esc > 0 {
					if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.Ref{Kind: account.KindExternal}, To: account.EscrowAccount(m.ID), Amount: esc, Reason: "deposit"}}); err != nil {
						t.Fatal(err)
					}
				}
				if c.fees > 0 {
					if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.Ref{Kind: account.KindExternal}, To: account.FeeAccount(m.ID), Amount: c.fees, Reason: "deposit"}}); err != nil {
						t.Fatal(err)
					}
				}
				pos, balances := settleStateOf(t, e, []*market.Market{m})
				locked, err := e.store.Market(e.ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				from := maxPostingID(t, e)

				if err := e.store.Settle(e.ctx, m.ID, c.st); err != nil {
					t.Fatal(err)
				}

				settled, err := e.store.Market(e.ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				eff, err := market.DecideSettlement(&market.State{Market: locked, Positions: pos[0], Balances: cloneBalances(balances), Now: *settled.ResolvedAt}, c.st)
				if err != nil {
					t.Fatal(err)
				}
				if settled.Outcome() != eff.Market.Outcome() || settled.ResolvedBy != eff.Market.ResolvedBy || !settled.Resolved {
					t.Errorf("market %+v, the market package says %+v", settled, eff.Market)
				}
				checkSettledAsDecided(t, e, []*market.Market{m}, holders, balances, []*market.Effects{eff}, from)
				e.ledgerAudit()
			})
		}
	}
	t.Run("a resolution whose escrow cannot pay the winners is refused and writes nothing", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0, 1000, 0.5)
		m := ev.Pools[0].Markets[0]
		sub := balanceOf(e, account.EscrowAccount(m.ID))
		if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.EscrowAccount(m.ID), To: account.Treasury, Amount: sub, Reason: "test"}}); err != nil {
			t.Fatal(err)
		}
		seedRandomPositions(t, e, rand.New(rand.NewPCG(1, 2)), m, 10, 0, 0)
		from := maxPostingID(t, e)
		if err := e.store.Settle(e.ctx, m.ID, market.Settlement{Won: market.Yes}); err == nil {
			t.Fatal("an empty escrow paid the winners")
		}
		if got, _ := e.store.Market(e.ctx, m.ID); got.Resolved {
			t.Fatal("the refused settlement resolved the market")
		}
		if ps := postingsSince(t, e, from); len(ps) != 0 {
			t.Fatalf("the refused settlement posted %v", ps)
		}
	})
	for _, c := range []struct {
		name string
		ps   func(ms []*market.Market) market.PoolSettlement
	}{
		{"an exclusive pool resolved YES on its second market", func(ms []*market.Market) market.PoolSettlement {
			return market.PoolSettlement{Winner: ms[1].ID}
		}},
		{"an exclusive pool voided with a short escrow", func([]*market.Market) market.PoolSettlement {
			return market.PoolSettlement{Void: true, By: market.ResolvedByOperator}
		}},
	} {
		t.Run(c.name+" settles as the market package decides", func(t *testing.T) {
			e := newEnv(t)
			rng := rand.New(rand.NewPCG(5, 6))
			ev := e.exclusiveEvent(1000, 0.5, 0.3, 0.2)
			ms := ev.Pools[0].Markets
			slices.SortFunc(ms, func(a, b *market.Market) int { return cmp.Compare(a.ID, b.ID) })
			var holders []int64
			for _, m := range ms {
				holders = append(holders, seedRandomPositions(t, e, rng, m, 15, 0, 700)...)
			}
			// Enough for a resolution's winners, short of a void's refunds.
			pos, _ := settleStateOf(t, e, ms)
			var most int64
			for _, p := range slices.Concat(pos...) {
				most += p.Shares
			}
			if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.Ref{Kind: account.KindExternal}, To: account.EscrowAccount(ms[0].ID), Amount: most / 2, Reason: "deposit"}}); err != nil {
				t.Fatal(err)
			}
			pos, balances := settleStateOf(t, e, ms)
			sts := make([]*market.State, len(ms))
			for i, m := range ms {
				locked, err := e.store.Market(e.ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				sts[i] = &market.State{Market: locked, Positions: pos[i], Balances: balances}
			}
			from := maxPostingID(t, e)
			ps := c.ps(ms)

			if err := e.store.SettlePool(e.ctx, ms[0].PoolID, ps); err != nil {
				t.Fatal(err)
			}

			settled, err := e.store.Market(e.ctx, ms[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sts {
				st.Now = *settled.ResolvedAt
			}
			effs, err := market.DecidePoolSettlement(sts, ps)
			if err != nil {
				t.Fatal(err)
			}
			checkSettledAsDecided(t, e, ms, holders, balances, effs, from)
			e.ledgerAudit()
		})
	}
}

// ledgerAudit fails the test unless the ledger checks out.
func (e *env) ledgerAudit() {
	e.t.Helper()
	r, err := e.accounts.Audit(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if !r.OK {
		e.t.Fatalf("ledger audit: %v", r.Problems)
	}
}

// exclusiveEvent creates an active event whose one pool is exclusive,
// with a market per probability.
func (e *env) exclusiveEvent(b int64, probs ...float64) *market.Event {
	e.t.Helper()
	c := e.user("creator", 0)
	yes := true
	c, err := e.accounts.SetRoles(e.ctx, c.ID, account.RolesPatch{IsCreator: &yes})
	if err != nil {
		e.t.Fatal(err)
	}
	np := market.NewPool{Name: "Winner", B: b, Exclusive: true}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: fmt.Sprintf("Outcome %d", i), Probability: p})
	}
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Final", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	return ev
}
