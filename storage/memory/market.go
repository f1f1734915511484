package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// createEvent is CreateEvent; the caller holds s.mu. The subsidies are
// checked against the treasury (account.Apply: account.ErrBalanceLimit
// past its bound) before anything is written, so a refused event leaves
// nothing behind.
func (s *Store) createEvent(e *market.Event, subsidies []int64) error {
	n := 0
	for _, p := range e.Pools {
		n += len(p.Markets)
	}
	if len(subsidies) != n {
		return fmt.Errorf("memory: %d subsidies for %d markets", len(subsidies), n)
	}
	for _, sub := range subsidies {
		if sub < 0 {
			return fmt.Errorf("memory: create event: negative subsidy %d: %w", sub, account.ErrInvalidAmount)
		}
	}
	now := s.now()
	// Ids first, as PostgreSQL takes them from its sequences (a refused
	// event spends them too), then the postings, checked, then the rows.
	e.ID = s.next("event")
	e.CreatedAt = now
	var ps []account.Posting
	i := 0
	for _, p := range e.Pools {
		p.ID = s.next("pool")
		p.EventID = e.ID
		for _, m := range p.Markets {
			m.ID = s.next("market")
			m.PoolID, m.EventID = p.ID, e.ID
			m.CreatedAt = now
			if subsidies[i] > 0 {
				ps = append(ps, account.Posting{From: account.Treasury, To: account.EscrowAccount(m.ID), Amount: subsidies[i], Reason: "subsidy", At: now})
			}
			i++
		}
	}
	if err := s.check(ps); err != nil {
		return err
	}
	if e.Status == "" {
		e.Status = market.StatusApproved
	}
	ev := *e
	ev.Name, ev.NameRu, ev.Pools = strings.Clone(e.Name), strings.Clone(e.NameRu), nil
	ev.Status, ev.Proposal = strings.Clone(e.Status), cloneProposal(e.Proposal)
	s.events[e.ID] = &ev
	for _, p := range e.Pools {
		pc := *p
		pc.Name, pc.NameRu, pc.Rules, pc.RulesRu = strings.Clone(p.Name), strings.Clone(p.NameRu), strings.Clone(p.Rules), strings.Clone(p.RulesRu)
		pc.Markets, pc.WonSide = nil, nil
		s.pools[p.ID] = &pc
		s.poolIDs[e.ID] = append(s.poolIDs[e.ID], p.ID)
		for _, m := range p.Markets {
			mc := *m
			mc.Name, mc.NameRu, mc.YesName, mc.NoName = strings.Clone(m.Name), strings.Clone(m.NameRu), strings.Clone(m.YesName), strings.Clone(m.NoName)
			s.markets[m.ID] = &mc
			s.marketIDs[p.ID] = append(s.marketIDs[p.ID], m.ID)
		}
	}
	return s.post(ps) // checked above: cannot fail
}

func (s *Store) event(id int64) *market.Event {
	e := *s.events[id]
	e.Pools = nil
	e.Tags, e.Amendments = cloneStrings(e.Tags), append([]market.Amendment{}, s.amends[id]...)
	e.Proposal = cloneProposal(e.Proposal)
	for _, pid := range s.poolIDs[id] {
		e.Pools = append(e.Pools, s.pool(pid))
	}
	return &e
}

func (s *Store) pool(id int64) *market.Pool {
	p := *s.pools[id]
	p.WonSide = clonePtr(p.WonSide)
	p.Markets = nil
	for _, mid := range s.marketIDs[id] {
		p.Markets = append(p.Markets, s.market(mid))
	}
	return &p
}

func (s *Store) market(id int64) *market.Market {
	m := *s.markets[id]
	m.WinningOutcome = clonePtr(m.WinningOutcome)
	m.ResolvedAt = clonePtr(m.ResolvedAt)
	p := s.pools[m.PoolID]
	m.Margin, m.LiveAt, m.FinishAt, m.Exclusive = p.Margin, p.LiveAt, p.FinishAt, p.Exclusive
	return &m
}

// Event implements market.Store.
func (s *Store) Event(_ context.Context, id int64) (*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.events[id]; !ok {
		return nil, market.ErrEventNotFound
	}
	return s.event(id), nil
}

// ActiveEvents implements market.Store.
func (s *Store) ActiveEvents(_ context.Context, limit, offset int) ([]*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, e := range s.events {
		if e.IsActive {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b int64) int {
		ea, eb := s.events[a], s.events[b]
		if c := eb.CreatedAt.Compare(ea.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	out := []*market.Event{}
	for _, id := range page(ids, limit, offset) {
		out = append(out, s.event(id))
	}
	return out, nil
}

func page[T any](xs []T, limit, offset int) []T {
	if offset >= len(xs) {
		return nil
	}
	xs = xs[offset:]
	if limit >= 0 && limit < len(xs) {
		xs = xs[:limit]
	}
	return xs
}

// SetEventActive implements market.Store.
func (s *Store) SetEventActive(_ context.Context, id int64, active bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[id]
	if !ok {
		return market.ErrEventNotFound
	}
	e.IsActive = active
	return nil
}

// Pool implements market.Store.
func (s *Store) Pool(_ context.Context, id int64) (*market.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pools[id]; !ok {
		return nil, market.ErrPoolNotFound
	}
	return s.pool(id), nil
}

// Market implements market.Store.
func (s *Store) Market(_ context.Context, id int64) (*market.Market, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.markets[id]; !ok {
		return nil, market.ErrMarketNotFound
	}
	return s.market(id), nil
}

// MoveFinish implements market.Store. The store's one mutex is the lock;
// a market's window is its pool's (see market), so only the pool changes.
func (s *Store) MoveFinish(_ context.Context, id int64, move market.FinishMove) (*market.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pools[id]
	if !ok {
		return nil, market.ErrPoolNotFound
	}
	if err := move.Decide(s.pool(id)); err != nil {
		return nil, err
	}
	p.FinishAt = move.At
	return s.pool(id), nil
}

// Exec implements market.Store. The store's one mutex is the lock.
func (s *Store) Exec(_ context.Context, lock market.Lock, decide func(*market.State) (*market.Effects, error)) (*market.Effects, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.markets[lock.MarketID]; !ok {
		return nil, market.ErrMarketNotFound
	}
	effs, err := s.exec([]market.Lock{lock}, func(sts []*market.State) ([]*market.Effects, error) {
		eff, err := decide(sts[0])
		return []*market.Effects{eff}, err
	})
	if err != nil {
		return nil, err
	}
	return effs[0], nil
}

// ExecMarkets implements market.Store.
func (s *Store) ExecMarkets(_ context.Context, locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	seen := map[int64]bool{}
	for _, l := range locks {
		if seen[l.MarketID] {
			return nil, fmt.Errorf("memory: ExecMarkets takes distinct markets")
		}
		seen[l.MarketID] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exec(locks, decide)
}

// exec loads a State per lock (sharing one Balances map), decides, and
// writes every Effects or none. Callers hold s.mu.
func (s *Store) exec(locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	now := s.now()
	balances := map[account.Ref]int64{}
	existing := map[market.Key]*market.Trade{}
	subAccounts := map[market.SubAccount]int64{}
	// created is made on the first sub-account the call creates, and
	// shared by every State below.
	var created map[int64]bool
	sts := make([]*market.State, len(locks))
	for i, lock := range locks {
		st := &market.State{Balances: balances, Existing: existing, SubAccounts: subAccounts, Now: now}
		sts[i] = st
		if _, ok := s.markets[lock.MarketID]; !ok {
			continue
		}
		st.Market = s.market(lock.MarketID)
		if lock.Pool != nil {
			st.Pool = make([]*market.Market, 0, len(lock.Pool))
			for _, id := range lock.Pool {
				if _, ok := s.markets[id]; !ok {
					return nil, fmt.Errorf("memory: lock names market %d of a pool, which does not exist", id)
				}
				st.Pool = append(st.Pool, s.market(id))
			}
		}
		refs := append(slices.Clone(lock.Accounts), account.EscrowAccount(lock.MarketID), account.FeeAccount(lock.MarketID))
		users := slices.Clone(lock.Users)
		for _, k := range lock.Keys {
			if t, ok := s.byKey[k]; ok {
				c := *t
				existing[k] = &c
			}
		}
		for _, sa := range lock.SubAccounts {
			id, ok := subAccounts[sa]
			if !ok {
				if id, ok = s.subs[sa]; !ok {
					id = s.createSubAccount(sa, now)
					if created == nil {
						created = map[int64]bool{}
					}
					created[id] = true
				}
				subAccounts[sa] = id
			}
			users = append(users, id)
			refs = append(refs, account.UserAccount(id), account.BonusAccount(id))
		}
		slices.Sort(users)
		for _, u := range slices.Compact(users) {
			for _, side := range []market.Side{market.Yes, market.No} {
				if id, ok := s.open[openKey{u, lock.MarketID, side}]; ok {
					p := *s.positions[id]
					st.Positions = append(st.Positions, &p)
				}
			}
		}
		slices.SortFunc(st.Positions, byHolder)
		for _, r := range refs {
			balances[r] = s.balance(r)
		}
	}
	for _, st := range sts {
		st.NewSubAccounts = created
	}
	effs, err := decide(sts)
	if err == nil && len(effs) != len(sts) {
		err = fmt.Errorf("memory: decide returned %d effects for %d states", len(effs), len(sts))
	}
	if err == nil {
		err = s.writeAll(sts, effs)
	}
	if err != nil {
		// Nothing was written: the sub-accounts made for the call go too.
		for id := range created {
			s.deleteSubAccount(id)
		}
		return nil, err
	}
	s.logChanges(market.ExecChanges(effs, balances, now)...)
	return effs, nil
}

// writeAll checks the postings of every Effects together, then writes
// them all, so a failure writes nothing.
func (s *Store) writeAll(sts []*market.State, effs []*market.Effects) error {
	var all []account.Posting
	for i, eff := range effs {
		if eff == nil {
			continue
		}
		if sts[i].Market == nil {
			return fmt.Errorf("memory: effects for a market that does not exist")
		}
		all = append(all, postingsOf(eff)...)
	}
	touched := map[account.Ref]int64{}
	for _, p := range all {
		touched[p.From], touched[p.To] = s.balance(p.From), s.balance(p.To)
	}
	if err := account.Apply(touched, all); err != nil {
		return err
	}
	for i, eff := range effs {
		if eff == nil {
			continue
		}
		for _, id := range eff.DropSubAccounts {
			if !sts[i].NewSubAccounts[id] {
				return fmt.Errorf("memory: decision dropped sub-account %d, which the call did not create", id)
			}
		}
	}
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		if err := s.write(eff); err != nil {
			return err
		}
	}
	return nil
}

func postingsOf(eff *market.Effects) []account.Posting {
	var all []account.Posting
	for _, te := range eff.Trades {
		all = append(all, te.Postings...)
	}
	return append(all, eff.Postings...)
}

// createSubAccount makes the user behind a partner's external id: no
// credentials, hidden from public feeds.
func (s *Store) createSubAccount(sa market.SubAccount, now time.Time) int64 {
	id := s.next("user")
	s.users[id] = &userRec{u: account.User{ID: id, Name: "Partner user", Language: "en", Theme: "light", Level: 1,
		ProfileHidden: true, PartnerID: sa.PartnerID, ExternalID: strings.Clone(sa.ExternalID), CreatedAt: now}}
	s.subs[market.SubAccount{PartnerID: sa.PartnerID, ExternalID: strings.Clone(sa.ExternalID)}] = id
	return id
}

func (s *Store) deleteSubAccount(id int64) {
	u := s.users[id].u
	delete(s.subs, market.SubAccount{PartnerID: u.PartnerID, ExternalID: u.ExternalID})
	delete(s.users, id)
}

// write applies eff, whose postings writeAll has checked.
func (s *Store) write(eff *market.Effects) error {
	s.countStats(eff)
	for _, p := range eff.Positions {
		if p.ID == 0 {
			p.ID = s.next("position")
			s.byUser[p.UserID] = append(s.byUser[p.UserID], p.ID)
		}
		c := *p
		c.ClosedAt, c.WonSide = clonePtr(p.ClosedAt), clonePtr(p.WonSide)
		s.positions[p.ID] = &c
		k := openKey{p.UserID, p.MarketID, p.Side}
		if c.Open() {
			s.open[k] = p.ID
		} else if s.open[k] == p.ID {
			delete(s.open, k)
		}
	}
	for _, te := range eff.Trades {
		te.Trade.ID = s.next("trade")
		t := *te.Trade
		t.ClientBetID = strings.Clone(t.ClientBetID)
		t.RequestHash = strings.Clone(t.RequestHash)
		s.trades = append(s.trades, &t)
		if k, ok := t.IdempotencyKey(); ok {
			s.byKey[k] = &t
		}
		s.tradesOf[t.MarketID] = append(s.tradesOf[t.MarketID], &t)
		s.tradesBy[t.UserID] = append(s.tradesBy[t.UserID], &t)
		for i := range te.Postings {
			te.Postings[i].TradeID = t.ID
		}
		te.Price.TradeID = t.ID
		s.prices[t.MarketID] = append(s.prices[t.MarketID], te.Price)
		for i := range te.PoolPrices {
			pp := &te.PoolPrices[i]
			pp.TradeID = t.ID
			s.prices[pp.MarketID] = append(s.prices[pp.MarketID], *pp)
		}
	}
	s.rollUp(eff.Trades)
	// After the trades have their ids, which their postings carry.
	if err := s.post(postingsOf(eff)); err != nil {
		return err // cannot happen: writeAll checked them
	}
	for _, e := range eff.PnL {
		s.pnl[e.Position.UserID] = append(s.pnl[e.Position.UserID], market.PnLEvent{UserID: e.Position.UserID, PositionID: e.Position.ID, At: e.At, Delta: e.Delta})
	}
	s.countBoard(eff)
	for i := range eff.Notifications {
		eff.Notifications[i].ID = s.addNotification(eff.Notifications[i]).ID
	}
	for _, pm := range eff.Pool {
		m := *pm
		m.Price = 0
		m.WinningOutcome, m.ResolvedAt = clonePtr(m.WinningOutcome), clonePtr(m.ResolvedAt)
		s.markets[m.ID] = &m
	}
	if eff.Market != nil {
		m := *eff.Market
		m.Price = 0
		m.WinningOutcome, m.ResolvedAt = clonePtr(m.WinningOutcome), clonePtr(m.ResolvedAt)
		s.markets[m.ID] = &m
	}
	if eff.PoolWonSide != nil && eff.Market != nil {
		if p := s.pools[eff.Market.PoolID]; p.WonSide == nil {
			p.WonSide = clonePtr(eff.PoolWonSide)
		}
	}
	for _, id := range eff.DropSubAccounts {
		s.deleteSubAccount(id)
	}
	return nil
}

// Settle implements market.Store, in one chunk: the store's mutex is the
// lock, and every open position of the market is in memory already.
func (s *Store) Settle(_ context.Context, marketID int64, st market.Settlement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.markets[marketID]; !ok {
		return market.ErrMarketNotFound
	}
	state := &market.State{Market: s.market(marketID), Now: s.now(), Balances: map[account.Ref]int64{}}
	refs := []account.Ref{account.EscrowAccount(marketID), account.FeeAccount(marketID), account.Treasury}
	for k, id := range s.open {
		if k.market == marketID {
			p := *s.positions[id]
			state.Positions = append(state.Positions, &p)
			refs = append(refs, account.UserAccount(k.user), account.BonusAccount(k.user))
		}
	}
	slices.SortFunc(state.Positions, byHolder)
	for _, r := range refs {
		state.Balances[r] = s.balance(r)
	}
	eff, err := market.DecideSettlement(state, st)
	if err != nil {
		return err
	}
	if err := s.writeAll([]*market.State{state}, []*market.Effects{eff}); err != nil {
		return err
	}
	s.notifyFollowers([]*market.Effects{eff})
	s.logChanges(market.ResolvedChange(eff.Market))
	s.queueWebhooks([]*market.State{state}, []*market.Effects{eff})
	return nil
}

// byHolder orders a market's positions holder by holder (ascending user
// id), each holder's by id: a settlement pays its holders in the order
// they come, and the PostgreSQL store pays them in ascending user id, so
// that both draw a void's refunds from the same accounts for the same
// holders.
func byHolder(a, b *market.Position) int {
	return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.ID, b.ID))
}

// SettlePool implements market.Store, in one chunk per market under the
// store's mutex.
func (s *Store) SettlePool(_ context.Context, poolID int64, ps market.PoolSettlement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pools[poolID]; !ok {
		return market.ErrPoolNotFound
	}
	ids := slices.Sorted(slices.Values(s.marketIDs[poolID]))
	if len(ids) == 0 {
		return market.ErrPoolNotFound
	}
	now := s.now()
	balances := map[account.Ref]int64{}
	refs := []account.Ref{account.EscrowAccount(ids[0]), account.Treasury}
	sts := make([]*market.State, len(ids))
	for i, id := range ids {
		refs = append(refs, account.FeeAccount(id)) // a void's refunds
		st := &market.State{Market: s.market(id), Now: now, Balances: balances}
		for k, pid := range s.open {
			if k.market == id {
				p := *s.positions[pid]
				st.Positions = append(st.Positions, &p)
				refs = append(refs, account.UserAccount(k.user), account.BonusAccount(k.user))
			}
		}
		slices.SortFunc(st.Positions, byHolder)
		sts[i] = st
	}
	for _, r := range refs {
		balances[r] = s.balance(r)
	}
	effs, err := market.DecidePoolSettlement(sts, ps)
	if err != nil {
		return err
	}
	if err := s.writeAll(sts, effs); err != nil {
		return err
	}
	s.notifyFollowers(effs)
	for _, eff := range effs {
		s.logChanges(market.ResolvedChange(eff.Market))
	}
	s.queueWebhooks(sts, effs)
	return nil
}

func (s *Store) detail(p *market.Position) *market.PositionDetail {
	m := s.market(p.MarketID)
	pool := s.pools[m.PoolID]
	ev := s.events[m.EventID]
	c := *p
	c.ClosedAt, c.WonSide = clonePtr(p.ClosedAt), clonePtr(p.WonSide)
	return &market.PositionDetail{Position: c, EventID: ev.ID, EventName: ev.Name, PoolID: pool.ID, PoolName: pool.Name, MarketName: m.Name, Market: m}
}

// OpenPositions implements market.Store.
func (s *Store) OpenPositions(_ context.Context, userID int64) ([]*market.PositionDetail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []*market.Position
	for _, id := range s.byUser[userID] {
		if p := s.positions[id]; p.Open() {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *market.Position) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	out := []*market.PositionDetail{}
	for _, p := range ps {
		out = append(out, s.detail(p))
	}
	return out, nil
}

func (s *Store) closed(userID int64) []*market.Position {
	var ps []*market.Position
	for _, id := range s.byUser[userID] {
		if p := s.positions[id]; !p.Open() {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *market.Position) int {
		if c := b.ClosedAt.Compare(*a.ClosedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return ps
}

// ClosedPositions implements market.Store.
func (s *Store) ClosedPositions(_ context.Context, userID int64, limit, offset int) ([]*market.PositionDetail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*market.PositionDetail{}
	for _, p := range page(s.closed(userID), limit, offset) {
		out = append(out, s.detail(p))
	}
	return out, nil
}

// ClosedStats implements market.Store.
func (s *Store) ClosedStats(_ context.Context, userID int64) (int64, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.closed(userID)
	var best int64
	for _, p := range ps {
		best = max(best, p.PnL())
	}
	return int64(len(ps)), best, nil
}

// PnLEvents implements market.Store.
func (s *Store) PnLEvents(_ context.Context, userID int64) ([]market.PnLEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pnl[userID]), nil
}
