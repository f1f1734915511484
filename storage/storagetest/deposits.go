package storagetest

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/wallet"
)

// testDeposits: the deposits' store (deposit.Store): a recorded transfer
// is one deposit however often it is recorded, a reorganisation drops
// pending deposits but no credited one, a deposit is credited exactly
// once however many calls race, with one posting, its change-log
// entries and its notification, and the ledger stays balanced.
func testDeposits(t *testing.T, newStores func(*testing.T) Stores) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	pending := func(u *account.User, tx string, block int64, kopecks int64) deposit.Deposit {
		return deposit.Deposit{UserID: u.ID, Chain: wallet.BSC, TxHash: tx, LogIndex: 3, BlockNumber: block,
			BlockHash: fmt.Sprintf("0x%064x", block), Address: "0x0000000000000000000000000000000000000001",
			Units: "12500000000000000000", Decimals: 18, AmountKopecks: kopecks, ConfirmationsRequired: 3,
			Status: deposit.StatusPending, CreatedAt: at}
	}
	scan := func(from, to, head int64, ds ...deposit.Deposit) deposit.Scan {
		s := deposit.Scan{From: from, To: to, Head: head, Blocks: map[int64]string{}, Keep: to - 2, Deposits: ds}
		for n := from; n <= to; n++ {
			s.Blocks[n] = fmt.Sprintf("0x%064x", n)
		}
		return s
	}
	setup := func(t *testing.T) (*env, deposit.Store) {
		e := newEnv(t, newStores)
		if e.stores.Deposits == nil || e.stores.Changes == nil {
			t.Skip("no deposits store or change log")
		}
		return e, e.stores.Deposits
	}
	entries := func(e *env, after int64, user int64) map[changelog.Type]int {
		e.t.Helper()
		es, err := e.stores.Changes.Changes(e.ctx, after, 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		out := map[changelog.Type]int{}
		for _, en := range es {
			if en.UserID == user {
				out[en.Type]++
			}
		}
		return out
	}
	last := func(e *env) int64 {
		b, err := e.stores.Changes.ChangeBounds(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		return b.Last
	}

	t.Run("a transfer recorded twice is one pending deposit, announced once, and the cursor moves on", func(t *testing.T) {
		e, s := setup(t)
		u := e.user("depositor", 0, 0)
		before := last(e)
		news, err := s.RecordScan(e.ctx, wallet.BSC, scan(10, 12, 12, pending(u, "0xaa", 11, 1250)))
		if err != nil || len(news) != 1 || news[0].ID == 0 || news[0].Confirmations != 2 || news[0].Status != deposit.StatusPending {
			t.Fatalf("first record: %+v, %v", news, err)
		}
		again, err := s.RecordScan(e.ctx, wallet.BSC, scan(11, 13, 13, pending(u, "0xaa", 11, 1250)))
		if err != nil || len(again) != 0 {
			t.Fatalf("the same transfer recorded again: %+v, %v", again, err)
		}
		c, err := s.DepositCursor(e.ctx, wallet.BSC)
		if err != nil || c.Next != 14 || c.Head != 13 || c.Blocks[13] == "" || c.Blocks[10] != "" {
			t.Fatalf("cursor %+v, %v; want next 14, head 13, blocks 11-13 kept", c, err)
		}
		ds, err := s.UserDeposits(e.ctx, u.ID, 10, 0)
		if err != nil || len(ds) != 1 || ds[0].TokenAmount() != "12.5" || ds[0].Confirmations != 3 {
			t.Fatalf("user's deposits %+v, %v", ds, err)
		}
		if got := entries(e, before, u.ID); got[changelog.Deposit] != 1 || got[changelog.Balance] != 0 {
			t.Fatalf("entries %v; want one deposit entry and no balance", got)
		}
		if other, _ := s.DepositCursor(e.ctx, wallet.Polygon); other.Next != 0 || len(other.Blocks) != 0 {
			t.Fatalf("another chain's cursor moved: %+v", other)
		}
	})

	t.Run("a reorganisation drops the pending deposits from the fork on and keeps credited ones", func(t *testing.T) {
		e, s := setup(t)
		u := e.user("depositor", 0, 0)
		if _, err := s.RecordScan(e.ctx, wallet.BSC, scan(1, 20, 20, pending(u, "0x01", 5, 100), pending(u, "0x02", 18, 200))); err != nil {
			t.Fatal(err)
		}
		old, _ := s.PendingDeposits(e.ctx, wallet.BSC, 18)
		if len(old) != 2 || old[0].BlockNumber != 5 {
			t.Fatalf("pending oldest first: %+v", old)
		}
		if _, ok, err := s.CreditDeposit(e.ctx, old[0].ID, at); !ok || err != nil {
			t.Fatalf("credit: %v %v", ok, err)
		}
		n, err := s.RewindDeposits(e.ctx, wallet.BSC, 4)
		if err != nil || n != 1 {
			t.Fatalf("rewind dropped %d, %v; want the one pending deposit", n, err)
		}
		c, _ := s.DepositCursor(e.ctx, wallet.BSC)
		if c.Next != 4 || len(c.Blocks) != 0 {
			t.Fatalf("cursor after rewind %+v", c)
		}
		ds, _ := s.UserDeposits(e.ctx, u.ID, 10, 0)
		if len(ds) != 1 || ds[0].Status != deposit.StatusCredited {
			t.Fatalf("after rewind %+v; want the credited deposit only", ds)
		}
		// Read again, the replaced block's transfer is a new deposit.
		news, err := s.RecordScan(e.ctx, wallet.BSC, scan(4, 21, 21, pending(u, "0x02", 19, 200)))
		if err != nil || len(news) != 1 || news[0].BlockNumber != 19 {
			t.Fatalf("read again: %+v, %v", news, err)
		}
		e.audit()
	})

	t.Run("a deposit is credited exactly once by racing calls, with one posting, its entries and notification", func(t *testing.T) {
		e, s := setup(t)
		u := e.user("depositor", 500, 0)
		news, err := s.RecordScan(e.ctx, wallet.BSC, scan(1, 5, 5, pending(u, "0xcc", 2, 123456)))
		if err != nil || len(news) != 1 {
			t.Fatal(news, err)
		}
		before := last(e)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 8 {
			wg.Go(func() {
				_, ok, err := s.CreditDeposit(e.ctx, news[0].ID, at)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d calls credited the deposit; want exactly 1", wins)
		}
		if b := e.balances(u); b.Balance != 500+123456 {
			t.Fatalf("balance %d; want %d", b.Balance, 500+123456)
		}
		got, err := e.stores.Accounts.Balance(e.ctx, account.DepositsAccount(wallet.Number(wallet.BSC)))
		if err != nil || got != -123456 {
			t.Fatalf("the chain's deposits account holds %d, %v; want -123456", got, err)
		}
		if got := entries(e, before, u.ID); got[changelog.Deposit] != 1 || got[changelog.Balance] != 1 || got[changelog.Notification] != 1 {
			t.Fatalf("entries %v; want one each of deposit, balance and notification", got)
		}
		es, _ := e.stores.Changes.Changes(e.ctx, before, 100)
		for _, en := range es {
			if en.Type == changelog.Deposit {
				var v deposit.View
				if err := json.Unmarshal(en.Data, &v); err != nil || v.Status != deposit.StatusCredited || v.CreditedAt == nil || v.AmountKopecks != 123456 || v.TokenAmount != "12.5" {
					t.Fatalf("deposit entry %s, %v", en.Data, err)
				}
			}
		}
		ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, false, 10, 0)
		if err != nil || len(ns) != 1 || ns[0].Type != social.TypeDepositCredited || ns[0].Data.Amount != 123456 || ns[0].Link() != "/deposit" {
			t.Fatalf("notifications %+v, %v", ns, err)
		}
		if p, _ := s.PendingDeposits(e.ctx, wallet.BSC, 100); len(p) != 0 {
			t.Fatalf("still pending: %+v", p)
		}
		e.audit()
	})

	t.Run("a deposit worth no kopeck is credited with no posting and no notification", func(t *testing.T) {
		e, s := setup(t)
		u := e.user("depositor", 0, 0)
		d := pending(u, "0xdd", 2, 0)
		d.Units = "1"
		news, _ := s.RecordScan(e.ctx, wallet.BSC, scan(1, 5, 5, d))
		before := last(e)
		c, ok, err := s.CreditDeposit(e.ctx, news[0].ID, at)
		if err != nil || !ok || c.Status != deposit.StatusCredited || c.AmountKopecks != 0 {
			t.Fatalf("%+v %v %v", c, ok, err)
		}
		if got := entries(e, before, u.ID); got[changelog.Deposit] != 1 || got[changelog.Balance] != 0 || got[changelog.Notification] != 0 {
			t.Fatalf("entries %v", got)
		}
		if b := e.balances(u); b.Balance != 0 {
			t.Fatalf("balance %d", b.Balance)
		}
		e.audit()
	})

	t.Run("a user's deposits are listed newest first in pages, and nobody else's", func(t *testing.T) {
		e, s := setup(t)
		u, other := e.user("depositor", 0, 0), e.user("other", 0, 0)
		var ds []deposit.Deposit
		for i := range 5 {
			ds = append(ds, pending(u, fmt.Sprintf("0x%02d", i), int64(i+1), 10))
		}
		ds = append(ds, pending(other, "0xff", 3, 10))
		if _, err := s.RecordScan(e.ctx, wallet.BSC, scan(1, 6, 6, ds...)); err != nil {
			t.Fatal(err)
		}
		first, _ := s.UserDeposits(e.ctx, u.ID, 3, 0)
		if len(first) != 3 || first[0].ID < first[1].ID || first[0].BlockNumber != 5 {
			t.Fatalf("first page %+v", first)
		}
		if big, err := s.UserDeposits(e.ctx, u.ID, 3, math.MaxInt64); err != nil || len(big) != 3 || big[0].ID != first[0].ID {
			t.Fatalf("a page before the largest id: %+v, %v", big, err)
		}
		rest, _ := s.UserDeposits(e.ctx, u.ID, 3, first[2].ID)
		if len(rest) != 2 || rest[1].BlockNumber != 1 {
			t.Fatalf("second page %+v", rest)
		}
		if none, err := s.UserDeposits(e.ctx, 999999, 3, 0); err != nil || none == nil || len(none) != 0 {
			t.Fatalf("a user without deposits: %+v, %v", none, err)
		}
	})
}
