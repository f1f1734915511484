package memory

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/social"
)

var _ deposit.Store = (*Store)(nil)

// depositState holds the deposits and each chain's cursor.
type depositState struct {
	byID    map[int64]*deposit.Deposit
	byKey   map[depositKey]int64
	byUser  map[int64][]int64 // in id order
	cursors map[string]*deposit.Cursor
}

type depositKey struct {
	chain, tx string
	log       int64
}

// depositTables returns the deposits' tables, made on first use. Callers
// hold s.mu.
func (s *Store) depositTables() *depositState {
	if s.deposits == nil {
		s.deposits = &depositState{byID: map[int64]*deposit.Deposit{}, byKey: map[depositKey]int64{},
			byUser: map[int64][]int64{}, cursors: map[string]*deposit.Cursor{}}
	}
	return s.deposits
}

// cursor returns chain's cursor, made on first use. Callers hold s.mu.
func (d *depositState) cursor(chain string) *deposit.Cursor {
	c, ok := d.cursors[chain]
	if !ok {
		c = &deposit.Cursor{Blocks: map[int64]string{}}
		d.cursors[strings.Clone(chain)] = c
	}
	return c
}

// copyDeposit is a copy of d with its confirmations at the chain's head.
// Callers hold s.mu.
func (d *depositState) copyDeposit(x *deposit.Deposit) deposit.Deposit {
	c := *x
	c.CreditedAt = clonePtr(x.CreditedAt)
	if cur, ok := d.cursors[x.Chain]; ok {
		c.Confirmations = max(cur.Head-x.BlockNumber+1, 0)
	}
	return c
}

// DepositCursor implements deposit.Store.
func (s *Store) DepositCursor(_ context.Context, chain string) (deposit.Cursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.depositTables().cursor(chain)
	return deposit.Cursor{Next: c.Next, Head: c.Head, Blocks: maps.Clone(c.Blocks)}, nil
}

// RecordScan implements deposit.Store.
func (s *Store) RecordScan(_ context.Context, chain string, sc deposit.Scan) ([]deposit.Deposit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.depositTables()
	c := d.cursor(chain)
	var news []deposit.Deposit
	for _, x := range sc.Deposits {
		k := depositKey{chain: x.Chain, tx: x.TxHash, log: x.LogIndex}
		if _, ok := d.byKey[k]; ok || x.Chain != chain {
			continue
		}
		x.ID = s.next("deposit")
		x.Chain, x.TxHash, x.BlockHash, x.Address, x.Units = strings.Clone(x.Chain), strings.Clone(x.TxHash),
			strings.Clone(x.BlockHash), strings.Clone(x.Address), strings.Clone(x.Units)
		x.Status, x.CreditedAt = deposit.StatusPending, nil
		x.CreatedAt = x.CreatedAt.UTC().Truncate(time.Microsecond)
		k.chain, k.tx = x.Chain, x.TxHash
		d.byID[x.ID], d.byKey[k] = &x, x.ID
		d.byUser[x.UserID] = append(d.byUser[x.UserID], x.ID)
		news = append(news, x)
	}
	for n, h := range sc.Blocks {
		c.Blocks[n] = strings.Clone(h)
	}
	for n := range c.Blocks {
		if n < sc.Keep {
			delete(c.Blocks, n)
		}
	}
	c.Next, c.Head = max(c.Next, sc.To+1), max(c.Head, sc.Head)
	for i := range news {
		news[i].Confirmations = max(c.Head-news[i].BlockNumber+1, 0)
		s.logChanges(deposit.Change(&news[i], news[i].CreatedAt))
	}
	return news, nil
}

// RewindDeposits implements deposit.Store.
func (s *Store) RewindDeposits(_ context.Context, chain string, block int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.depositTables()
	c := d.cursor(chain)
	for n := range c.Blocks {
		if n >= block {
			delete(c.Blocks, n)
		}
	}
	c.Next = min(c.Next, block)
	dropped := 0
	for id, x := range d.byID {
		if x.Chain != chain || x.BlockNumber < block || x.Status != deposit.StatusPending {
			continue
		}
		delete(d.byID, id)
		delete(d.byKey, depositKey{chain: x.Chain, tx: x.TxHash, log: x.LogIndex})
		d.byUser[x.UserID] = slices.DeleteFunc(d.byUser[x.UserID], func(v int64) bool { return v == id })
		dropped++
	}
	return dropped, nil
}

// PendingDeposits implements deposit.Store.
func (s *Store) PendingDeposits(_ context.Context, chain string, maxBlock int64) ([]deposit.Deposit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.depositTables()
	out := []deposit.Deposit{}
	for _, id := range slices.Sorted(maps.Keys(d.byID)) {
		x := d.byID[id]
		if x.Chain == chain && x.Status == deposit.StatusPending && x.BlockNumber <= maxBlock {
			out = append(out, d.copyDeposit(x))
		}
	}
	slices.SortStableFunc(out, func(a, b deposit.Deposit) int { return cmp.Compare(a.BlockNumber, b.BlockNumber) })
	return out, nil
}

// CreditDeposit implements deposit.Store.
func (s *Store) CreditDeposit(_ context.Context, id int64, at time.Time) (deposit.Deposit, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.depositTables()
	x, ok := d.byID[id]
	if !ok || x.Status != deposit.StatusPending {
		return deposit.Deposit{}, false, nil
	}
	at = at.UTC().Truncate(time.Microsecond)
	if x.AmountKopecks > 0 {
		ps := []account.Posting{deposit.Posting(x, at)}
		before := s.balancesOf(ps)
		if err := s.post(ps); err != nil {
			return deposit.Deposit{}, false, err
		}
		x.Status, x.CreditedAt = deposit.StatusCredited, &at
		c := d.copyDeposit(x)
		s.logChanges(deposit.Change(&c, at))
		s.logChanges(account.BalanceChanges(before, ps, deposit.Reason, at)...)
		n := s.addNotification(deposit.Notification(&c, at))
		s.logChanges(social.NotificationChange(n))
		return c, true, nil
	}
	x.Status, x.CreditedAt = deposit.StatusCredited, &at
	c := d.copyDeposit(x)
	s.logChanges(deposit.Change(&c, at))
	return c, true, nil
}

// UserDeposits implements deposit.Store.
func (s *Store) UserDeposits(_ context.Context, userID int64, limit int, before int64) ([]deposit.Deposit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.depositTables()
	ids := d.byUser[userID]
	out := []deposit.Deposit{}
	for i := len(ids) - 1; i >= 0 && len(out) < limit; i-- {
		if before > 0 && ids[i] >= before {
			continue
		}
		out = append(out, d.copyDeposit(d.byID[ids[i]]))
	}
	return out, nil
}
