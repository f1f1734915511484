package deposit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/wallet"
	"golang.org/x/crypto/bcrypt"
)

// rig is a watcher of a scripted chain, on the memory store, with one
// user whose address is addr(1).
type rig struct {
	t        *testing.T
	ctx      context.Context
	chain    *fakeChain
	store    *memory.Store
	accounts *account.Service
	user     *account.User
	book     book
	cfg      deposit.Config
}

func newRig(t *testing.T, chain string, confirmations int) *rig {
	t.Helper()
	store := memory.New()
	acc := account.NewService(store)
	acc.BcryptCost = bcrypt.MinCost
	ctx := context.Background()
	u, _, err := acc.Register(ctx, account.Registration{Email: "depositor@example.com", Password: "password123", Name: "Depositor"})
	if err != nil {
		t.Fatal(err)
	}
	family, _ := wallet.FamilyOf(chain)
	token := addr(0xee)
	r := &rig{t: t, ctx: ctx, chain: newFakeChain(t, token), store: store, accounts: acc, user: u,
		book: book{wallet.Format(family, addr(1)): u.ID}}
	r.cfg = deposit.Config{Chain: chain, Token: token, Decimals: 6, Confirmations: confirmations, KopecksPerToken: 9000,
		Poll: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Start: 1}
	return r
}

// watcher is a new watcher of the rig's chain, as a restarted server
// makes.
func (r *rig) watcher() *deposit.Watcher {
	r.t.Helper()
	node, err := deposit.Dial(r.ctx, r.chain.srv.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(node.Close)
	w, err := deposit.New(r.cfg, node, r.store, r.book)
	if err != nil {
		r.t.Fatal(err)
	}
	return w
}

// step makes passes until the watcher has caught up.
func (r *rig) step(w *deposit.Watcher) {
	r.t.Helper()
	for range 100 {
		done, err := w.Step(r.ctx)
		if err != nil {
			r.t.Fatalf("step: %v", err)
		}
		if done {
			return
		}
	}
	r.t.Fatal("the watcher never caught up")
}

func (r *rig) deposits() []deposit.Deposit {
	r.t.Helper()
	ds, err := r.store.UserDeposits(r.ctx, r.user.ID, 100, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return ds
}

func (r *rig) balance() int64 {
	r.t.Helper()
	b, err := r.accounts.Balances(r.ctx, r.user.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return b.Balance
}

func (r *rig) audit() {
	r.t.Helper()
	rep, err := r.accounts.Audit(r.ctx)
	if err != nil || !rep.OK {
		r.t.Fatalf("audit: %+v, %v", rep, err)
	}
}

func TestWatcherCreditsOnceAfterConfirmations(t *testing.T) {
	r := newRig(t, wallet.BSC, 3)
	w := r.watcher()
	r.chain.mine(4)
	r.step(w)
	// 12.5 tokens at 90 RUB: 1125 RUB.
	block := r.chain.mine(1, fakeLog{to: addr(1), units: tokens("12.5", 6)})
	r.step(w)
	ds := r.deposits()
	if len(ds) != 1 || ds[0].Status != deposit.StatusPending || ds[0].Confirmations != 1 || ds[0].BlockNumber != block {
		t.Fatalf("seen at head %d: %+v; want one pending deposit with 1 confirmation", block, ds)
	}
	r.chain.mine(1)
	r.step(w)
	if ds := r.deposits(); ds[0].Status != deposit.StatusPending || r.balance() != 0 {
		t.Fatalf("at 2 of 3 confirmations: %+v, balance %d; want nothing credited", ds, r.balance())
	}
	r.chain.mine(1)
	r.step(w)
	ds = r.deposits()
	if len(ds) != 1 || ds[0].Status != deposit.StatusCredited || ds[0].AmountKopecks != 112500 || ds[0].TokenAmount() != "12.5" {
		t.Fatalf("at 3 confirmations: %+v; want credited 112500 kopecks", ds)
	}
	for range 3 {
		r.chain.mine(1)
		r.step(w)
	}
	if b := r.balance(); b != 112500 {
		t.Fatalf("balance %d; want 112500 once", b)
	}
	if st := w.Status(); !st.OK || st.Credited != 1 || st.Lag != 0 || st.Head != block+5 {
		t.Fatalf("status %+v", st)
	}
	r.audit()
}

func TestWatcherIgnoresOtherAddresses(t *testing.T) {
	r := newRig(t, wallet.Ethereum, 1)
	w := r.watcher()
	r.chain.mine(2, fakeLog{to: addr(2), units: tokens("5", 6)}, fakeLog{to: addr(1), units: tokens("1", 6)})
	r.step(w)
	ds := r.deposits()
	if len(ds) != 1 || ds[0].Address != wallet.Format(wallet.EVM, addr(1)) || ds[0].AmountKopecks != 9000 {
		t.Fatalf("%+v; want only the user's transfer", ds)
	}
	if b := r.balance(); b != 9000 {
		t.Fatalf("balance %d", b)
	}
	r.audit()
}

func TestWatcherCountsALogDeliveredTwiceOnce(t *testing.T) {
	r := newRig(t, wallet.Polygon, 2)
	r.chain.set(func(c *fakeChain) { c.twice = true })
	w := r.watcher()
	r.chain.mine(3, fakeLog{to: addr(1), units: tokens("2", 6)})
	r.step(w)
	if ds := r.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusCredited {
		t.Fatalf("%+v; want one credited deposit", ds)
	}
	if b := r.balance(); b != 18000 {
		t.Fatalf("balance %d; want 18000", b)
	}
}

func TestWatcherRestartedBetweenSeeingAndCrediting(t *testing.T) {
	r := newRig(t, wallet.BSC, 4)
	first := r.watcher()
	r.chain.mine(2, fakeLog{to: addr(1), units: tokens("3", 6)})
	r.step(first)
	if ds := r.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusPending {
		t.Fatalf("%+v; want pending", ds)
	}
	// The first server is gone; another starts on the same store.
	r.chain.mine(5)
	second := r.watcher()
	r.step(second)
	if ds := r.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusCredited {
		t.Fatalf("%+v; want credited by the second", ds)
	}
	r.step(first) // the first one back: nothing twice
	if b := r.balance(); b != 27000 {
		t.Fatalf("balance %d; want 27000", b)
	}
	r.audit()
}

func TestWatcherDropsATransferAReorganisationRemoved(t *testing.T) {
	r := newRig(t, wallet.BSC, 3)
	w := r.watcher()
	r.chain.mine(3)
	r.step(w)
	block := r.chain.mine(2, fakeLog{to: addr(1), units: tokens("7", 6)})
	r.step(w)
	if ds := r.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusPending {
		t.Fatalf("%+v; want pending", ds)
	}
	r.chain.reorg(block)
	r.chain.mine(3)
	r.step(w)
	if ds := r.deposits(); len(ds) != 0 {
		t.Fatalf("%+v; want the removed transfer gone", ds)
	}
	// Re-included later, it is a deposit again, credited once.
	again := r.chain.mine(3, fakeLog{to: addr(1), units: tokens("7", 6)})
	r.step(w)
	ds := r.deposits()
	if len(ds) != 1 || ds[0].BlockNumber != again || ds[0].Status != deposit.StatusCredited || r.balance() != 63000 {
		t.Fatalf("%+v, balance %d", ds, r.balance())
	}
	r.audit()
}

func TestWatcherNeverCreditsOnABadNode(t *testing.T) {
	for _, tc := range []struct {
		name, garbage string
		down          bool
		want          string
	}{
		{name: "a node that is down", down: true, want: "503"},
		{name: "a head that goes back", garbage: "head back", want: "went back"},
		{name: "a log whose block hash is not the block's", garbage: "wrong hash", want: "block hash"},
		{name: "a Transfer log with short data", garbage: "short data", want: "malformed"},
	} {
		t.Run(tc.name+" is reported, and nothing is credited until it answers well", func(t *testing.T) {
			r := newRig(t, wallet.BSC, 2)
			w := r.watcher()
			r.chain.mine(2)
			r.step(w)
			r.chain.mine(4, fakeLog{to: addr(1), units: tokens("1", 6)})
			r.chain.set(func(c *fakeChain) { c.down, c.garbage = tc.down, tc.garbage })
			for range 3 {
				_, err := w.Step(r.ctx)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("step: %v; want an error with %q", err, tc.want)
				}
				if tc.garbage != "" && tc.garbage != "head back" && !errors.Is(err, deposit.ErrGarbage) {
					t.Fatalf("%v is not ErrGarbage", err)
				}
			}
			st := w.Status()
			if st.OK || st.Failures != 3 || !strings.Contains(st.Error, tc.want) {
				t.Fatalf("status %+v", st)
			}
			if ds := r.deposits(); len(ds) != 0 || r.balance() != 0 {
				t.Fatalf("%+v recorded on a bad answer", ds)
			}
			r.chain.set(func(c *fakeChain) { c.down, c.garbage = false, "" })
			r.step(w)
			if ds := r.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusCredited || !w.Status().OK {
				t.Fatalf("%+v, %+v; want credited once the node answers well", ds, w.Status())
			}
		})
	}
}

func TestWatcherRunBacksOffAndStops(t *testing.T) {
	r := newRig(t, wallet.BSC, 1)
	r.chain.set(func(c *fakeChain) { c.down = true })
	w := r.watcher()
	ctx, cancel := context.WithTimeout(r.ctx, 100*time.Millisecond)
	defer cancel()
	if err := w.Run(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run: %v", err)
	}
	// Backing off from 1 ms to at most 5 ms: far fewer than one call a
	// millisecond, yet retried.
	if n := r.chain.count("eth_blockNumber"); n < 3 || n > 60 {
		t.Fatalf("%d calls in 100 ms; want a capped backoff", n)
	}
}

func TestWatcherReadsTRONAddresses(t *testing.T) {
	r := newRig(t, wallet.TRON, 1)
	w := r.watcher()
	r.chain.mine(1, fakeLog{to: addr(1), units: tokens("0.5", 6)})
	r.step(w)
	ds := r.deposits()
	if len(ds) != 1 || !strings.HasPrefix(ds[0].Address, "T") || ds[0].Address != wallet.Format(wallet.Tron, addr(1)) {
		t.Fatalf("%+v; want the TRON base58 address", ds)
	}
	if strings.HasPrefix(ds[0].TxHash, "0x") || len(ds[0].TxHash) != 64 {
		t.Fatalf("tx hash %q; want TRON's 64 hex digits", ds[0].TxHash)
	}
	if ds[0].AmountKopecks != 4500 || ds[0].Status != deposit.StatusCredited {
		t.Fatalf("%+v", ds[0])
	}
}

func TestWatcherReadsInBoundedRanges(t *testing.T) {
	r := newRig(t, wallet.BSC, 1)
	r.cfg.MaxRange = 10
	r.chain.mine(95)
	r.chain.mine(1, fakeLog{to: addr(1), units: tokens("1", 6)})
	w := r.watcher()
	r.step(w)
	if n := r.chain.count("eth_getLogs"); n != 10 {
		t.Fatalf("%d eth_getLogs for 96 blocks; want 10 of at most 10 blocks", n)
	}
	if b := r.balance(); b != 9000 {
		t.Fatalf("balance %d", b)
	}
}
