package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/wallet"
)

// Addresses of the withdrawal tests: EIP-55's own example, and a TRON
// address.
const (
	evmAddress  = "0x52908400098527886E0F7030069857D2E4169EE7"
	tronAddress = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	testLimit   = 100_000
)

var (
	evmHash  = "0x" + strings.Repeat("ab", 32)
	tronHash = strings.Repeat("cd", 32)
)

// eachStoreWithdrawing runs f once per store with a daily limit of
// testLimit and no rate limits (the concurrent requests would meet the
// trade budget).
// payoutHash is a payout transaction's hash of its own for withdrawal
// id: one transaction pays one withdrawal.
func payoutHash(id int64) string { return fmt.Sprintf("0x%064x", id) }

func eachStoreWithdrawing(t *testing.T, f func(t *testing.T, h *harness)) {
	t.Helper()
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			f(t, newHarness(t, sc.new(t), withConfig(func(c *server.Config) {
				noRateLimits(c)
				c.WithdrawalDailyLimitKopecks = testLimit
			})))
		})
	}
}

// apiWithdrawal is a withdrawal as the API answers it.
type apiWithdrawal struct {
	ID            int64   `json:"id"`
	UserID        int64   `json:"user_id"`
	Chain         string  `json:"chain"`
	Address       string  `json:"address"`
	AmountKopecks int64   `json:"amount_kopecks"`
	Status        string  `json:"status"`
	TxHash        *string `json:"tx_hash"`
	Reason        *string `json:"reason"`
	CreatedAt     string  `json:"created_at"`
	DecidedAt     *string `json:"decided_at"`
	User          *struct {
		ID    int64  `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
}

type apiWithdrawals struct {
	Withdrawals []apiWithdrawal `json:"withdrawals"`
	NextCursor  *string         `json:"next_cursor"`
	DailyLimit  int64           `json:"daily_limit_kopecks"`
	Withdrawn   int64           `json:"withdrawn_24h_kopecks"`
	Available   int64           `json:"available_kopecks"`
	Chains      []string        `json:"chains"`
}

func (h *harness) withdraw(t *testing.T, token, chain, address string, amount int64, status int, code string) apiWithdrawal {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/users/me/withdrawals", token: token,
		body: map[string]any{"chain": chain, "address": address, "amount_kopecks": amount}})
	expect(t, r, status, code)
	var w apiWithdrawal
	if status == http.StatusCreated {
		r.decode(t, &w)
	}
	return w
}

// decideWithdrawal posts the operator's approve or reject of id.
func (h *harness) decideWithdrawal(t *testing.T, id int64, what string, body any, status int, code string) apiWithdrawal {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/withdrawals/%d/%s", id, what), token: adminToken, body: body})
	expect(t, r, status, code)
	var w apiWithdrawal
	if status == http.StatusOK {
		r.decode(t, &w)
	}
	return w
}

func (h *harness) cancelWithdrawal(t *testing.T, token string, id int64, status int, code string) apiWithdrawal {
	t.Helper()
	r := h.do(t, req{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/users/me/withdrawals/%d", id), token: token})
	expect(t, r, status, code)
	var w apiWithdrawal
	if status == http.StatusOK {
		r.decode(t, &w)
	}
	return w
}

func (h *harness) myWithdrawals(t *testing.T, token, query string) apiWithdrawals {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/withdrawals" + query, token: token})
	expect(t, r, http.StatusOK, "")
	var out apiWithdrawals
	r.decode(t, &out)
	return out
}

func (h *harness) adminWithdrawals(t *testing.T, query string) apiWithdrawals {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/withdrawals" + query, token: adminToken})
	expect(t, r, http.StatusOK, "")
	var out apiWithdrawals
	r.decode(t, &out)
	return out
}

// sound fails the test unless the audit is clean.
func (h *harness) sound(t *testing.T) {
	t.Helper()
	if ok, _, problems := h.audit(t); !ok {
		t.Fatalf("audit: %v", problems)
	}
}

// pending is what withdrawal id's pending account holds.
func (h *harness) pending(t *testing.T, id int64) int64 {
	t.Helper()
	return h.ledger(t, account.WithdrawalPendingAccount(id))
}

func TestWithdrawalRefusals(t *testing.T) {
	eachStoreWithdrawing(t, func(t *testing.T, h *harness) {
		u := h.register(t, "refused")
		h.credit(t, u.id, 50_000, false)
		h.credit(t, u.id, 70_000, true)
		// Lower case letters where EIP-55 has upper case: the checksum fails.
		badCase := "0x52908400098527886e0F7030069857D2E4169EE7"
		// The last character changed: the base58check checksum fails.
		badTron := tronAddress[:len(tronAddress)-1] + "u"
		cases := []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"a malformed address is invalid_address", map[string]any{"chain": "ethereum", "address": "0x1234", "amount_kopecks": 100}, 400, "invalid_address"},
			{"a wrongly checksummed EVM address is invalid_address", map[string]any{"chain": "bsc", "address": badCase, "amount_kopecks": 100}, 400, "invalid_address"},
			{"an all-lower-case EVM address is invalid_address", map[string]any{"chain": "polygon", "address": strings.ToLower(evmAddress), "amount_kopecks": 100}, 400, "invalid_address"},
			{"a TRON address with a wrong checksum is invalid_address", map[string]any{"chain": "tron", "address": badTron, "amount_kopecks": 100}, 400, "invalid_address"},
			{"a TRON address on an EVM chain is invalid_address", map[string]any{"chain": "ethereum", "address": tronAddress, "amount_kopecks": 100}, 400, "invalid_address"},
			{"an EVM address on TRON is invalid_address", map[string]any{"chain": "tron", "address": evmAddress, "amount_kopecks": 100}, 400, "invalid_address"},
			{"an unknown chain is invalid_request", map[string]any{"chain": "solana", "address": evmAddress, "amount_kopecks": 100}, 400, "invalid_request"},
			{"an amount of 0 is invalid_request", map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": 0}, 400, "invalid_request"},
			{"a negative amount is invalid_request", map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": -5}, 400, "invalid_request"},
			{"an amount past the bound is invalid_request", map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": account.MaxCredit + 1}, 400, "invalid_request"},
			{"an unknown field is invalid_request", map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": 100, "bonus": true}, 400, "invalid_request"},
			{"more than the balance is insufficient_funds", map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": 50_001}, 400, "insufficient_funds"},
			{"the bonus balance never counts", map[string]any{"chain": "tron", "address": tronAddress, "amount_kopecks": 60_000}, 400, "insufficient_funds"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/users/me/withdrawals", token: u.token, body: c.body})
				expect(t, r, c.status, c.code)
			})
		}
		t.Run("nothing changed", func(t *testing.T) {
			if me := h.me(t, u.token); me.Balance != 50_000 || me.BonusBalance != 70_000 {
				t.Fatalf("balances %d and %d", me.Balance, me.BonusBalance)
			}
			if l := h.myWithdrawals(t, u.token, ""); len(l.Withdrawals) != 0 || l.Withdrawn != 0 {
				t.Fatalf("withdrawals: %+v", l)
			}
			h.sound(t)
		})
		t.Run("a user with bonus money only may withdraw nothing", func(t *testing.T) {
			b := h.register(t, "bonus-only")
			h.credit(t, b.id, 100_000, true)
			h.withdraw(t, b.token, "ethereum", evmAddress, 1, 400, "insufficient_funds")
			if l := h.myWithdrawals(t, b.token, ""); l.Available != 0 {
				t.Fatalf("available %d with bonus money only", l.Available)
			}
		})
		t.Run("unknown withdrawals are not found", func(t *testing.T) {
			h.cancelWithdrawal(t, u.token, 987654, 404, "withdrawal_not_found")
			h.decideWithdrawal(t, 987654, "approve", map[string]any{"tx_hash": evmHash}, 404, "withdrawal_not_found")
			h.decideWithdrawal(t, 987654, "reject", map[string]any{"reason": "no"}, 404, "withdrawal_not_found")
		})
	})
}

func TestWithdrawalPaid(t *testing.T) {
	eachStoreWithdrawing(t, func(t *testing.T, h *harness) {
		u := h.register(t, "payee")
		h.credit(t, u.id, 80_000, false)
		w := h.withdraw(t, u.token, "ethereum", evmAddress, 30_000, 201, "")
		t.Run("the request takes the amount from the balance at once", func(t *testing.T) {
			if w.Status != "pending" || w.UserID != u.id || w.Address != evmAddress || w.AmountKopecks != 30_000 || w.TxHash != nil || w.DecidedAt != nil {
				t.Fatalf("withdrawal %+v", w)
			}
			if me := h.me(t, u.token); me.Balance != 50_000 {
				t.Fatalf("balance %d, want 50000", me.Balance)
			}
			if got := h.pending(t, w.ID); got != 30_000 {
				t.Fatalf("pending account holds %d", got)
			}
			h.sound(t)
		})
		t.Run("the operator's queue shows it with its user", func(t *testing.T) {
			q := h.adminWithdrawals(t, "")
			if len(q.Withdrawals) != 1 || q.Withdrawals[0].ID != w.ID || q.Withdrawals[0].User == nil || q.Withdrawals[0].User.ID != u.id {
				t.Fatalf("queue %+v", q)
			}
		})
		t.Run("a hash not of the chain's form is refused", func(t *testing.T) {
			for _, bad := range []string{"", "abc", tronHash, strings.ToUpper(evmHash[2:]), "0x" + strings.Repeat("zz", 32), evmHash + "00"} {
				h.decideWithdrawal(t, w.ID, "approve", map[string]any{"tx_hash": bad}, 400, "invalid_request")
			}
		})
		// Stored in lower case, whatever case the operator pasted.
		paid := h.decideWithdrawal(t, w.ID, "approve", map[string]any{"tx_hash": "0x" + strings.ToUpper(evmHash[2:])}, 200, "")
		t.Run("approval marks it paid with the hash and moves the money out", func(t *testing.T) {
			if paid.Status != "paid" || paid.TxHash == nil || *paid.TxHash != evmHash || paid.DecidedAt == nil {
				t.Fatalf("paid %+v", paid)
			}
			if me := h.me(t, u.token); me.Balance != 50_000 {
				t.Fatalf("balance %d after payment", me.Balance)
			}
			if p, out := h.pending(t, w.ID), h.ledger(t, account.WithdrawalsAccount(wallet.Number("ethereum"))); p != 0 || out != 30_000 {
				t.Fatalf("pending %d, paid out %d", p, out)
			}
			h.sound(t)
		})
		t.Run("the user is told, with a link to the Withdraw page", func(t *testing.T) {
			types, msgs := h.notificationTypes(t, u.token)
			if len(types) == 0 || types[0] != "withdrawal_paid" || !strings.Contains(msgs[0], evmHash) {
				t.Fatalf("notifications %v %v", types, msgs)
			}
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: u.token})
			if !strings.Contains(string(r.body), `"link":"/withdraw"`) {
				t.Fatalf("no link to /withdraw: %s", r.body)
			}
		})
		t.Run("approving twice, rejecting or cancelling a paid one is invalid_state", func(t *testing.T) {
			h.decideWithdrawal(t, w.ID, "approve", map[string]any{"tx_hash": evmHash}, 409, "invalid_state")
			h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": "late"}, 409, "invalid_state")
			h.cancelWithdrawal(t, u.token, w.ID, 409, "invalid_state")
			if me := h.me(t, u.token); me.Balance != 50_000 {
				t.Fatalf("balance %d", me.Balance)
			}
			if out := h.ledger(t, account.WithdrawalsAccount(wallet.Number("ethereum"))); out != 30_000 {
				t.Fatalf("paid out %d", out)
			}
			h.sound(t)
		})
		t.Run("the paid one's transaction given for another withdrawal is 409 tx_hash_used, and it stays pending", func(t *testing.T) {
			other := h.withdraw(t, u.token, "ethereum", evmAddress, 2_000, 201, "")
			h.decideWithdrawal(t, other.ID, "approve", map[string]any{"tx_hash": evmHash}, 409, "tx_hash_used")
			if h.pending(t, other.ID) != 2_000 {
				t.Fatalf("pending %d", h.pending(t, other.ID))
			}
			l := h.myWithdrawals(t, u.token, "")
			for _, x := range l.Withdrawals {
				if x.ID == other.ID && (x.Status != "pending" || x.TxHash != nil) {
					t.Fatalf("the refused one: %+v", x)
				}
			}
			h.cancelWithdrawal(t, u.token, other.ID, 200, "")
			h.sound(t)
		})
		t.Run("a TRON hash takes no 0x", func(t *testing.T) {
			tw := h.withdraw(t, u.token, "tron", tronAddress, 1_000, 201, "")
			got := h.decideWithdrawal(t, tw.ID, "approve", map[string]any{"tx_hash": "0x" + tronHash}, 200, "")
			if got.TxHash == nil || *got.TxHash != tronHash {
				t.Fatalf("tron hash %v", got.TxHash)
			}
			h.sound(t)
		})
	})
}

func TestWithdrawalRejectedAndCancelled(t *testing.T) {
	eachStoreWithdrawing(t, func(t *testing.T, h *harness) {
		u := h.register(t, "refunded")
		other := h.register(t, "other")
		h.credit(t, u.id, 80_000, false)
		t.Run("a rejection refunds exactly and says why", func(t *testing.T) {
			w := h.withdraw(t, u.token, "polygon", evmAddress, 12_345, 201, "")
			h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": "   "}, 400, "invalid_request")
			h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": strings.Repeat("x", 501)}, 400, "invalid_request")
			h.decideWithdrawal(t, w.ID, "reject", map[string]any{}, 400, "invalid_request")
			got := h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": "The address is a contract"}, 200, "")
			if got.Status != "rejected" || got.Reason == nil || *got.Reason != "The address is a contract" || got.TxHash != nil {
				t.Fatalf("rejected %+v", got)
			}
			if me := h.me(t, u.token); me.Balance != 80_000 {
				t.Fatalf("balance %d after the refund", me.Balance)
			}
			if p := h.pending(t, w.ID); p != 0 {
				t.Fatalf("pending %d", p)
			}
			types, msgs := h.notificationTypes(t, u.token)
			if len(types) == 0 || types[0] != "withdrawal_rejected" || !strings.Contains(msgs[0], "The address is a contract") {
				t.Fatalf("notifications %v %v", types, msgs)
			}
			h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": "again"}, 409, "invalid_state")
			h.decideWithdrawal(t, w.ID, "approve", map[string]any{"tx_hash": evmHash}, 409, "invalid_state")
			h.cancelWithdrawal(t, u.token, w.ID, 409, "invalid_state")
			h.sound(t)
		})
		t.Run("a cancellation refunds exactly, once, and only the owner's", func(t *testing.T) {
			w := h.withdraw(t, u.token, "bsc", evmAddress, 7_777, 201, "")
			h.cancelWithdrawal(t, other.token, w.ID, 404, "withdrawal_not_found")
			got := h.cancelWithdrawal(t, u.token, w.ID, 200, "")
			if got.Status != "cancelled" || got.DecidedAt == nil {
				t.Fatalf("cancelled %+v", got)
			}
			if me := h.me(t, u.token); me.Balance != 80_000 {
				t.Fatalf("balance %d after the cancellation", me.Balance)
			}
			h.cancelWithdrawal(t, u.token, w.ID, 409, "invalid_state")
			h.decideWithdrawal(t, w.ID, "approve", map[string]any{"tx_hash": evmHash}, 409, "invalid_state")
			if me := h.me(t, u.token); me.Balance != 80_000 {
				t.Fatalf("balance %d", me.Balance)
			}
			h.sound(t)
		})
		t.Run("the operator lists each status, the user their own newest first", func(t *testing.T) {
			if q := h.adminWithdrawals(t, "?status=rejected"); len(q.Withdrawals) != 1 || q.Withdrawals[0].Status != "rejected" {
				t.Fatalf("rejected: %+v", q)
			}
			if q := h.adminWithdrawals(t, "?status=cancelled"); len(q.Withdrawals) != 1 {
				t.Fatalf("cancelled: %+v", q)
			}
			if q := h.adminWithdrawals(t, "?status=all"); len(q.Withdrawals) != 2 || q.Withdrawals[0].ID < q.Withdrawals[1].ID {
				t.Fatalf("all: %+v", q)
			}
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/withdrawals?status=lost", token: adminToken})
			expect(t, r, 400, "invalid_request")
			l := h.myWithdrawals(t, u.token, "?limit=1")
			if len(l.Withdrawals) != 1 || l.NextCursor == nil || l.Withdrawals[0].Status != "cancelled" {
				t.Fatalf("first page %+v", l)
			}
			next := h.myWithdrawals(t, u.token, "?limit=1&cursor="+*l.NextCursor)
			if len(next.Withdrawals) != 1 || next.NextCursor != nil || next.Withdrawals[0].Status != "rejected" {
				t.Fatalf("second page %+v", next)
			}
			if o := h.myWithdrawals(t, other.token, ""); len(o.Withdrawals) != 0 {
				t.Fatalf("another user sees %+v", o)
			}
		})
	})
}

func TestWithdrawalDailyLimit(t *testing.T) {
	eachStoreWithdrawing(t, func(t *testing.T, h *harness) {
		u := h.register(t, "limited")
		h.credit(t, u.id, 1_000_000, false)
		a := h.withdraw(t, u.token, "ethereum", evmAddress, 60_000, 201, "")
		t.Run("one kopeck past the limit is withdrawal_limit", func(t *testing.T) {
			h.withdraw(t, u.token, "ethereum", evmAddress, testLimit-60_000+1, 409, "withdrawal_limit")
		})
		b := h.withdraw(t, u.token, "tron", tronAddress, testLimit-60_000, 201, "")
		t.Run("exactly at the limit is allowed, and then nothing more", func(t *testing.T) {
			h.withdraw(t, u.token, "ethereum", evmAddress, 1, 409, "withdrawal_limit")
			l := h.myWithdrawals(t, u.token, "")
			if l.DailyLimit != testLimit || l.Withdrawn != testLimit || l.Available != 0 || len(l.Chains) != 4 {
				t.Fatalf("summary %+v", l)
			}
		})
		t.Run("a paid withdrawal still counts", func(t *testing.T) {
			h.decideWithdrawal(t, a.ID, "approve", map[string]any{"tx_hash": payoutHash(a.ID)}, 200, "")
			h.withdraw(t, u.token, "ethereum", evmAddress, 1, 409, "withdrawal_limit")
		})
		t.Run("cancelled and rejected ones give their room back", func(t *testing.T) {
			h.cancelWithdrawal(t, u.token, b.ID, 200, "")
			if l := h.myWithdrawals(t, u.token, ""); l.Withdrawn != 60_000 || l.Available != testLimit-60_000 {
				t.Fatalf("summary %+v", l)
			}
			c := h.withdraw(t, u.token, "tron", tronAddress, testLimit-60_000, 201, "")
			h.decideWithdrawal(t, c.ID, "reject", map[string]any{"reason": "no"}, 200, "")
			h.withdraw(t, u.token, "tron", tronAddress, testLimit-60_000, 201, "")
		})
		if me := h.me(t, u.token); me.Balance != 1_000_000-testLimit {
			t.Fatalf("balance %d", me.Balance)
		}
		h.sound(t)
	})
}

// TestConcurrentWithdrawals: requests sent at once never pass the
// balance or the limit together, and of an approval and a cancellation
// of one withdrawal exactly one wins.
func TestConcurrentWithdrawals(t *testing.T) {
	eachStoreWithdrawing(t, func(t *testing.T, h *harness) {
		run := func(n int, f func(i int) int) map[int]int {
			var mu sync.Mutex
			got := map[int]int{}
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					s := f(i)
					mu.Lock()
					got[s]++
					mu.Unlock()
				})
			}
			wg.Wait()
			return got
		}
		send := func(token string, amount int64) func(int) int {
			return func(int) int {
				return h.do(t, req{method: http.MethodPost, path: "/api/v1/users/me/withdrawals", token: token,
					body: map[string]any{"chain": "ethereum", "address": evmAddress, "amount_kopecks": amount}}).status
			}
		}
		t.Run("the balance is never overdrawn", func(t *testing.T) {
			u := h.register(t, "poor")
			h.credit(t, u.id, 50_000, false)
			got := run(12, send(u.token, 10_000))
			if got[201] != 5 || got[400] != 7 {
				t.Fatalf("answers %v, want 5 created and 7 refused", got)
			}
			if me := h.me(t, u.token); me.Balance != 0 {
				t.Fatalf("balance %d", me.Balance)
			}
			h.sound(t)
		})
		t.Run("the limit is never passed", func(t *testing.T) {
			u := h.register(t, "rich")
			h.credit(t, u.id, 1_000_000, false)
			got := run(12, send(u.token, 30_000))
			if got[201] != 3 || got[409] != 9 {
				t.Fatalf("answers %v, want 3 created and 9 past the limit", got)
			}
			if me := h.me(t, u.token); me.Balance != 1_000_000-90_000 {
				t.Fatalf("balance %d", me.Balance)
			}
			h.sound(t)
		})
		t.Run("an approval and a cancellation: exactly one wins", func(t *testing.T) {
			u := h.register(t, "racer")
			h.credit(t, u.id, 50_000, false)
			for range 5 {
				w := h.withdraw(t, u.token, "ethereum", evmAddress, 1_000, 201, "")
				got := run(4, func(i int) int {
					if i%2 == 0 {
						return h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/withdrawals/%d/approve", w.ID), token: adminToken,
							body: map[string]any{"tx_hash": payoutHash(w.ID)}}).status
					}
					return h.do(t, req{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/users/me/withdrawals/%d", w.ID), token: u.token}).status
				})
				if got[200] != 1 || got[409] != 3 {
					t.Fatalf("answers %v, want one 200 and three 409", got)
				}
			}
			l := h.myWithdrawals(t, u.token, "")
			var paid int64
			for _, w := range l.Withdrawals {
				if w.Status == "paid" {
					paid += w.AmountKopecks
				}
			}
			if me := h.me(t, u.token); me.Balance != 50_000-paid {
				t.Fatalf("balance %d with %d paid", me.Balance, paid)
			}
			h.sound(t)
		})
	})
}

// TestWithdrawalsOnTheStream: the owner's stream (me) tells each change
// of a withdrawal, with the balance after it; nobody else's does.
func TestWithdrawalsOnTheStream(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		u, other := h.register(t, "streamed"), h.register(t, "onlooker")
		h.credit(t, u.id, 40_000, false)
		c := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + u.token})
		defer c.close()
		o := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + other.token})
		defer o.close()
		w := h.withdraw(t, u.token, "tron", tronAddress, 15_000, 201, "")
		h.decideWithdrawal(t, w.ID, "reject", map[string]any{"reason": "Not a wallet"}, 200, "")
		ms := c.messages(t, 5)
		events := make([]string, len(ms))
		for i, m := range ms {
			events[i] = m.event
		}
		if strings.Join(events, ",") != "withdrawal,balance,withdrawal,balance,notification" {
			t.Fatalf("messages %v", events)
		}
		var first, second apiWithdrawal
		ms[0].decode(t, &first)
		ms[2].decode(t, &second)
		var b struct {
			Balance int64 `json:"balance"`
		}
		ms[1].decode(t, &b)
		if first.ID != w.ID || first.Status != "pending" || second.Status != "rejected" || b.Balance != 25_000 {
			t.Fatalf("first %+v, second %+v, balance %d", first, second, b.Balance)
		}
		o.quiet(t, 300*time.Millisecond)
	})
}
