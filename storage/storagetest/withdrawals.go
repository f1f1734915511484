package storagetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/wallet"
	"github.com/predictkit/predictkit/withdrawal"
)

const (
	wdAddress = "0x52908400098527886E0F7030069857D2E4169EE7" // EIP-55's example
	wdLimit   = 100_000
)

// payoutHash is a payout transaction's hash of its own for withdrawal
// id: one transaction pays one withdrawal.
func payoutHash(id int64) string { return fmt.Sprintf("0x%064x", id) }

// wdEnv is an env with a withdrawal service of limit wdLimit on a clock
// the test moves.
type wdEnv struct {
	*env
	wd  *withdrawal.Service
	now time.Time
	mu  sync.Mutex
}

func newWdEnv(t *testing.T, newStores func(*testing.T) Stores) *wdEnv {
	e := &wdEnv{env: newEnv(t, newStores), now: time.Now().UTC().Truncate(time.Microsecond)}
	if e.stores.Withdrawals == nil {
		t.Skip("no withdrawal store")
	}
	e.wd = withdrawal.NewService(e.stores.Withdrawals, e.stores.Accounts)
	e.wd.DailyLimit = wdLimit
	e.wd.Now = func() time.Time {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.now
	}
	return e
}

func (e *wdEnv) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

func (e *wdEnv) request(u *account.User, amount int64) (*withdrawal.Withdrawal, error) {
	return e.wd.Request(e.ctx, withdrawal.Request{UserID: u.ID, Chain: wallet.Ethereum, Address: wdAddress, Amount: amount})
}

func (e *wdEnv) mustRequest(u *account.User, amount int64) *withdrawal.Withdrawal {
	e.t.Helper()
	w, err := e.request(u, amount)
	if err != nil {
		e.t.Fatalf("request %d: %v", amount, err)
	}
	return w
}

// sound fails the test unless the ledger, the escrows and the pending
// accounts check out.
func (e *wdEnv) sound() {
	e.t.Helper()
	e.audit()
	problems, err := e.wd.Audit(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(problems) > 0 {
		e.t.Fatalf("withdrawal audit: %v", problems)
	}
}

// testWithdrawals: a request moves the amount into its pending account
// under the user's lock, so that concurrent requests never pass the
// balance or the daily limit together; a decision changes a pending
// withdrawal once, posting exactly once; the change log tells the user.
func testWithdrawals(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a request holds the amount; payment moves it to the chain's account, once", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u := e.user("payee", 50_000, 30_000)
		w := e.mustRequest(u, 20_000)
		if w.ID == 0 || w.Status != withdrawal.StatusPending {
			t.Fatalf("request %+v", w)
		}
		if b := e.balances(u); b.Balance != 30_000 || b.Bonus != 30_000 || e.accountBalance(w.PendingAccount()) != 20_000 {
			t.Fatalf("balances %+v, pending %d", b, e.accountBalance(w.PendingAccount()))
		}
		e.sound()
		wdHash := payoutHash(w.ID)
		paid, err := e.wd.Approve(e.ctx, w.ID, wdHash)
		if err != nil || paid.Status != withdrawal.StatusPaid || paid.TxHash != wdHash || paid.DecidedAt == nil {
			t.Fatalf("approve: %+v, %v", paid, err)
		}
		if _, err := e.wd.Approve(e.ctx, w.ID, wdHash); !errors.Is(err, withdrawal.ErrInvalidState) {
			t.Fatalf("approving twice: %v", err)
		}
		if _, err := e.wd.Cancel(e.ctx, u.ID, w.ID); !errors.Is(err, withdrawal.ErrInvalidState) {
			t.Fatalf("cancelling a paid one: %v", err)
		}
		if out := e.accountBalance(account.WithdrawalsAccount(wallet.Number(wallet.Ethereum))); out != 20_000 || e.accountBalance(w.PendingAccount()) != 0 {
			t.Fatalf("paid out %d", out)
		}
		if b := e.balances(u); b.Balance != 30_000 {
			t.Fatalf("balance %d", b.Balance)
		}
		ws, err := e.stores.Withdrawals.Withdrawals(e.ctx, withdrawal.Query{UserID: u.ID, Limit: 10})
		if err != nil || len(ws) != 1 || ws[0].Status != withdrawal.StatusPaid || ws[0].TxHash != wdHash || ws[0].DecidedAt == nil ||
			!ws[0].CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("read back %+v, %v", ws, err)
		}
		e.sound()
	})

	t.Run("rejection and cancellation refund exactly", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u := e.user("refunded", 50_000, 0)
		a, b := e.mustRequest(u, 12_345), e.mustRequest(u, 1)
		if _, err := e.wd.Reject(e.ctx, a.ID, "not your address"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.wd.Cancel(e.ctx, u.ID+1, b.ID); !errors.Is(err, withdrawal.ErrNotFound) {
			t.Fatalf("another user's cancellation: %v", err)
		}
		if _, err := e.wd.Cancel(e.ctx, u.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		if got := e.balances(u).Balance; got != 50_000 {
			t.Fatalf("balance %d after the refunds", got)
		}
		for _, w := range []*withdrawal.Withdrawal{a, b} {
			if _, err := e.wd.Reject(e.ctx, w.ID, "again"); !errors.Is(err, withdrawal.ErrInvalidState) {
				t.Fatalf("deciding %d again: %v", w.ID, err)
			}
		}
		if got := e.balances(u).Balance; got != 50_000 {
			t.Fatalf("balance %d", got)
		}
		e.sound()
	})

	t.Run("the limit looks back 24 hours and counts pending and paid only", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u := e.user("daily", 1_000_000, 0)
		e.mustRequest(u, 70_000)
		if _, err := e.request(u, 30_001); !errors.Is(err, withdrawal.ErrLimit) {
			t.Fatalf("past the limit: %v", err)
		}
		c := e.mustRequest(u, 30_000)
		if _, err := e.wd.Cancel(e.ctx, u.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		e.advance(withdrawal.Window - time.Second)
		if _, err := e.request(u, 30_001); !errors.Is(err, withdrawal.ErrLimit) {
			t.Fatalf("a second before the window ends: %v", err)
		}
		e.advance(time.Second + time.Microsecond)
		e.mustRequest(u, wdLimit)
		s, err := e.wd.Summary(e.ctx, u.ID)
		if err != nil || s.Withdrawn != wdLimit || s.Available != 0 || s.DailyLimit != wdLimit {
			t.Fatalf("summary %+v, %v", s, err)
		}
		e.sound()
	})

	t.Run("concurrent requests never pass the balance or the limit together", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		poor, rich := e.user("poor", 50_000, 1_000_000), e.user("rich", 1_000_000, 0)
		var (
			wg                 sync.WaitGroup
			mu                 sync.Mutex
			created, noFunds   int
			richOK, richLimits int
		)
		for range 10 {
			wg.Go(func() {
				_, err := e.request(poor, 10_000)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case errors.Is(err, account.ErrInsufficientFunds):
					noFunds++
				default:
					t.Errorf("poor: %v", err)
				}
			})
			wg.Go(func() {
				_, err := e.request(rich, 30_000)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					richOK++
				case errors.Is(err, withdrawal.ErrLimit):
					richLimits++
				default:
					t.Errorf("rich: %v", err)
				}
			})
		}
		wg.Wait()
		if created != 5 || noFunds != 5 || richOK != 3 || richLimits != 7 {
			t.Fatalf("poor: %d created, %d refused; rich: %d created, %d past the limit", created, noFunds, richOK, richLimits)
		}
		if b := e.balances(poor); b.Balance != 0 || b.Bonus != 1_000_000 {
			t.Fatalf("poor's balances %+v", b)
		}
		e.sound()
	})

	t.Run("a payout's transaction pays one withdrawal: given again, it is refused and nothing moves", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u := e.user("twice", 50_000, 0)
		first, second := e.mustRequest(u, 10_000), e.mustRequest(u, 5_000)
		hash := payoutHash(first.ID)
		if _, err := e.wd.Approve(e.ctx, first.ID, hash); err != nil {
			t.Fatal(err)
		}
		if _, err := e.wd.Approve(e.ctx, second.ID, hash); !errors.Is(err, withdrawal.ErrTxHashUsed) {
			t.Fatalf("the same hash for another withdrawal: %v", err)
		}
		ws, err := e.stores.Withdrawals.Withdrawals(e.ctx, withdrawal.Query{UserID: u.ID, Limit: 10})
		if err != nil || len(ws) != 2 {
			t.Fatalf("read back %+v, %v", ws, err)
		}
		for _, w := range ws {
			if w.ID == second.ID && (w.Status != withdrawal.StatusPending || w.TxHash != "") {
				t.Fatalf("the refused one changed: %+v", w)
			}
		}
		if e.accountBalance(second.PendingAccount()) != 5_000 {
			t.Fatalf("pending %d", e.accountBalance(second.PendingAccount()))
		}
		if _, err := e.wd.Approve(e.ctx, second.ID, payoutHash(second.ID)); err != nil {
			t.Fatalf("its own hash: %v", err)
		}
		e.sound()
	})

	t.Run("an approval and a cancellation racing: exactly one wins", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u := e.user("racer", 100_000, 0)
		var paid int64
		for range 8 {
			w := e.mustRequest(u, 1_000)
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				wins []string
			)
			for i := range 4 {
				wg.Go(func() {
					var err error
					what := "approve"
					if i%2 == 0 {
						_, err = e.wd.Approve(e.ctx, w.ID, payoutHash(w.ID))
					} else {
						what = "cancel"
						_, err = e.wd.Cancel(e.ctx, u.ID, w.ID)
					}
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins = append(wins, what)
					case !errors.Is(err, withdrawal.ErrInvalidState):
						t.Errorf("%s: %v", what, err)
					}
				})
			}
			wg.Wait()
			if len(wins) != 1 {
				t.Fatalf("winners %v", wins)
			}
			if wins[0] == "approve" {
				paid += 1_000
			}
		}
		if got := e.balances(u).Balance; got != 100_000-paid {
			t.Fatalf("balance %d with %d paid", got, paid)
		}
		if out := e.accountBalance(account.WithdrawalsAccount(wallet.Number(wallet.Ethereum))); out != paid {
			t.Fatalf("paid out %d, want %d", out, paid)
		}
		e.sound()
	})

	t.Run("the operator's lists page by id in their order", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		u, v := e.user("lister", 100_000, 0), e.user("other", 100_000, 0)
		var ids []int64
		for i := range 5 {
			who := u
			if i%2 == 1 {
				who = v
			}
			ids = append(ids, e.mustRequest(who, 100).ID)
		}
		if _, err := e.wd.Approve(e.ctx, ids[0], payoutHash(ids[0])); err != nil {
			t.Fatal(err)
		}
		var got []int64
		cursor := ""
		for {
			p, err := e.wd.AdminList(e.ctx, "", 2, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.Withdrawals {
				got = append(got, w.ID)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if want := ids[1:]; !slices.Equal(got, want) {
			t.Fatalf("queue %v, want %v (pending, oldest first)", got, want)
		}
		p, err := e.wd.List(e.ctx, u.ID, 10, "")
		if err != nil || len(p.Withdrawals) != 3 || p.Withdrawals[0].ID != ids[4] || p.Withdrawals[2].ID != ids[0] {
			t.Fatalf("u's list %+v, %v", p, err)
		}
		all, err := e.wd.AdminList(e.ctx, "all", 10, "")
		if err != nil || len(all.Withdrawals) != 5 || all.Withdrawals[0].ID != ids[4] {
			t.Fatalf("all %+v, %v", all, err)
		}
	})

	t.Run("every step tells the user in the change log", func(t *testing.T) {
		e := newWdEnv(t, newStores)
		if e.stores.Changes == nil {
			t.Skip("no change log")
		}
		u := e.user("watched", 50_000, 0)
		from := e.last()
		w := e.mustRequest(u, 5_000)
		if _, err := e.wd.Reject(e.ctx, w.ID, "no"); err != nil {
			t.Fatal(err)
		}
		es := e.since(from)
		want := []changelog.Type{changelog.Withdrawal, changelog.Balance, changelog.Withdrawal, changelog.Balance, changelog.Notification}
		if got := types(es); !slices.Equal(got, want) {
			t.Fatalf("entries %v, want %v", got, want)
		}
		for _, en := range es {
			if en.UserID != u.ID {
				t.Fatalf("entry %v is for user %d", en.Type, en.UserID)
			}
		}
		var first, second withdrawal.JSON
		if err := json.Unmarshal(es[0].Data, &first); err != nil || first.Status != withdrawal.StatusPending || first.ID != w.ID || first.AmountKopecks != 5_000 {
			t.Fatalf("request entry %s", es[0].Data)
		}
		if err := json.Unmarshal(es[2].Data, &second); err != nil || second.Status != withdrawal.StatusRejected || second.Reason == nil || *second.Reason != "no" {
			t.Fatalf("rejection entry %s", es[2].Data)
		}
		var bal struct {
			Balance int64 `json:"balance"`
		}
		if err := json.Unmarshal(es[1].Data, &bal); err != nil || bal.Balance != 45_000 {
			t.Fatalf("balance entry %s", es[1].Data)
		}
	})
}
