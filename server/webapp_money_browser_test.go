package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/predictkit/predictkit/wallet"
)

// testAddresses are an EIP-55 address, the same with one letter's case
// changed (its checksum broken), and a TRON address.
func testAddresses() (evm, evmBad, tron string) {
	var a [20]byte
	for i := range a {
		a[i] = byte(0xa0 + i*7)
	}
	evm = wallet.Format(wallet.EVM, a)
	b := []rune(evm)
	for i := 2; i < len(b); i++ {
		if unicode.IsLetter(b[i]) {
			if unicode.IsUpper(b[i]) {
				b[i] = unicode.ToLower(b[i])
			} else {
				b[i] = unicode.ToUpper(b[i])
			}
			break
		}
	}
	return evm, string(b), wallet.Format(wallet.Tron, a)
}

// withdrawalsInEveryState gives u one withdrawal of each state: paid,
// rejected, cancelled and pending.
func (h *harness) withdrawalsInEveryState(t *testing.T, u apiUser, evm, tron string) {
	t.Helper()
	h.credit(t, u.id, 100_000, false)
	paid := h.withdraw(t, u.token, wallet.TRON, tron, 10_000, http.StatusCreated, "")
	h.decideWithdrawal(t, paid.ID, "approve", map[string]any{"tx_hash": fmt.Sprintf("%064x", paid.ID)}, http.StatusOK, "")
	rejected := h.withdraw(t, u.token, wallet.Polygon, evm, 12_345, http.StatusCreated, "")
	h.decideWithdrawal(t, rejected.ID, "reject", map[string]any{"reason": "This address belongs to an exchange that refuses such deposits; give your own wallet's address"}, http.StatusOK, "")
	cancelled := h.withdraw(t, u.token, wallet.BSC, evm, 5_000, http.StatusCreated, "")
	h.cancelWithdrawal(t, u.token, cancelled.ID, http.StatusOK, "")
	h.withdraw(t, u.token, wallet.Ethereum, evm, 7_777, http.StatusCreated, "")
}

// TestWithdrawInBrowser: the Withdraw page and the operator console's
// withdrawal queue (testdata/webapp/money.js), against the real routes:
// the rules and the figures, every refusal shown with nothing taken,
// asking, cancelling, the operator's approval with a transaction hash and
// rejection with a reason reaching the user's open page live, the
// console's answer when the user cancelled first, the status filter; in
// Russian; on a phone; axe-core clean in both themes. It needs what
// TestWebAppInBrowser needs, and skips without it.
func TestWithdrawInBrowser(t *testing.T) {
	const limit = 50_000
	cfg := testConfig(memoryStore())
	cfg.Web = true
	cfg.WithdrawalDailyLimitKopecks = limit
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	evm, evmBad, tron := testAddresses()

	t.Run("a credited user withdraws, cancels, is refused and sees the operator's payment and rejection live", func(t *testing.T) {
		u := h.register(t, "withdrawer")
		h.credit(t, u.id, 50_000, true) // bonus: never withdrawable
		tronTx, evmTx := strings.Repeat("0123456789abcdef", 4), "0x"+strings.Repeat("fedcba9876543210", 4)
		reason := "The address is on a sanctions list"
		var got struct {
			Summary, Rules      string
			Chains              []string
			Nav                 string
			PageTextHasNull     bool   `json:"page_text_has_null"`
			TooMuch             string `json:"too_much"`
			BadAddress          string `json:"bad_address"`
			BadAddressInvalid   string `json:"bad_address_invalid"`
			NotAnAmount         string `json:"not_an_amount"`
			AfterRefusals       int64  `json:"after_refusals"`
			HeaderAfterRefusals int64  `json:"header_after_refusals"`
			FirstID             int64  `json:"first_id"`
			FirstRow            string `json:"first_row"`
			AfterFirst          int64  `json:"after_first"`
			CancelledRow        string `json:"cancelled_row"`
			AfterCancel         int64  `json:"after_cancel"`
			TronID              int64  `json:"tron_id"`
			OverLimit           string `json:"over_limit"`
			PolyID              int64  `json:"poly_id"`
			AvailableAfterThird int64  `json:"available_after_third"`
			Queue               []int64
			QueueTronRow        string `json:"queue_tron_row"`
			Copied              string
			BadHash             string `json:"bad_hash"`
			Approved            string
			PaidRow             string `json:"paid_row"`
			UnreadAfterPaid     string `json:"unread_after_paid"`
			NoReasonMissing     bool   `json:"no_reason_missing"`
			NoReasonOpen        bool   `json:"no_reason_open"`
			Rejected            string
			RejectedRow         string  `json:"rejected_row"`
			AfterDecisions      int64   `json:"after_decisions"`
			QueueAfter          []int64 `json:"queue_after"`
			QueueEmptyText      string  `json:"queue_empty_text"`
			LateID              int64   `json:"late_id"`
			DecidedElsewhere    string  `json:"decided_elsewhere"`
			QueueAfterLate      []int64 `json:"queue_after_late"`
			PaidList            []int64 `json:"paid_list"`
			PaidListText        string  `json:"paid_list_text"`
			RejectedList        []int64 `json:"rejected_list"`
			RejectedListText    string  `json:"rejected_list_text"`
			CancelledList       []int64 `json:"cancelled_list"`
			AllList             []int64 `json:"all_list"`
			Reloaded            string
			Notifications       string
			NotificationLinks   []string `json:"notification_links"`
			AxeWithdraw         []string `json:"axe_withdraw"`
			AxeQueue            []string `json:"axe_queue"`
			AxeQueuePending     []string `json:"axe_queue_pending"`
			AxeRejectDialog     []string `json:"axe_reject_dialog"`
		}
		d.run(t, "money", map[string]any{"part": "withdraw", "user": asBrowserUser(u),
			"credit": "400", "credit_kopecks": 40_000, "limit_kopecks": limit,
			"too_much": "450", "first": "250.29", "first_kopecks": 25_029, "second": "300", "second_kopecks": 30_000,
			"second_credit_kopecks": 30_000, "over_limit": "250", "third": "150", "third_kopecks": 15_000, "late": "50",
			"evm_good": evm, "evm_bad": evmBad, "tron_good": tron, "tron_tx": tronTx, "evm_tx": evmTx, "reason": reason}, &got)

		t.Run("the page shows the figures and the rules", func(t *testing.T) {
			for _, want := range []string{"Withdrawable balance\n₽400.00", "Bonus (cannot be withdrawn)\n₽500.00", "Daily limit\n₽500.00", "Available now\n₽400.00"} {
				if !strings.Contains(got.Summary, want) {
					t.Errorf("the figures lack %q: %q", want, got.Summary)
				}
			}
			for _, want := range []string{"Bonus money cannot be withdrawn", "At most ₽500.00 in any 24 hours", "₽500.00 is left now", "approves every withdrawal", "outside wallet", "EIP-55", "TRON address is base58"} {
				if !strings.Contains(got.Rules, want) {
					t.Errorf("the rules lack %q: %q", want, got.Rules)
				}
			}
			if !slices.Equal(got.Chains, wallet.Chains) {
				t.Errorf("the networks offered are %q, want %q", got.Chains, wallet.Chains)
			}
			if got.Nav != "page" || got.PageTextHasNull {
				t.Errorf("the header's Withdraw link is aria-current=%q; a stray null: %v", got.Nav, got.PageTextHasNull)
			}
		})
		t.Run("each refusal is shown and takes nothing", func(t *testing.T) {
			for _, c := range []struct{ what, text, want string }{
				{"more than the balance (the bonus does not count)", got.TooMuch, "more than your withdrawable balance of ₽400.00"},
				{"a wrongly checksummed address", got.BadAddress, "not a valid Ethereum address"},
				{"an amount that is no number", got.NotAnAmount, "Enter an amount greater than zero"},
				{"past the daily limit", got.OverLimit, "past the daily limit of ₽500.00: ₽200.00 is left"},
			} {
				if !strings.Contains(c.text, c.want) {
					t.Errorf("%s: the form says %q, want %q", c.what, c.text, c.want)
				}
			}
			if got.BadAddressInvalid != "true" {
				t.Errorf("the address field is aria-invalid=%q after a bad address", got.BadAddressInvalid)
			}
			if got.AfterRefusals != 40_000 || got.HeaderAfterRefusals != 90_000 {
				t.Errorf("after the refusals the page shows %d withdrawable and the header %d in all, want 40000 and 90000", got.AfterRefusals, got.HeaderAfterRefusals)
			}
		})
		t.Run("a request takes the amount in exact kopecks and a cancel gives it back", func(t *testing.T) {
			if !strings.Contains(got.FirstRow, "₽250.29") || !strings.Contains(got.FirstRow, "Pending") || !strings.Contains(got.FirstRow, evm) {
				t.Errorf("the new row reads %q", got.FirstRow)
			}
			if got.AfterFirst != 40_000-25_029 || got.AfterCancel != 40_000 {
				t.Errorf("withdrawable %d after asking, %d after cancelling", got.AfterFirst, got.AfterCancel)
			}
			if !strings.Contains(got.CancelledRow, "Cancelled") || strings.Contains(got.CancelledRow, "Cancel\n") {
				t.Errorf("the cancelled row reads %q", got.CancelledRow)
			}
			if got.AvailableAfterThird != limit-30_000-15_000 {
				t.Errorf("available after two pending withdrawals: %d", got.AvailableAfterThird)
			}
		})
		t.Run("the operator's queue lists the pending ones oldest first and copies an address", func(t *testing.T) {
			if !slices.Equal(got.Queue, []int64{got.TronID, got.PolyID}) {
				t.Errorf("the queue is %v, want %v", got.Queue, []int64{got.TronID, got.PolyID})
			}
			for _, want := range []string{u.email, "TRON", tron, "₽300.00", "just now"} {
				if !strings.Contains(got.QueueTronRow, want) {
					t.Errorf("the queue's row lacks %q: %q", want, got.QueueTronRow)
				}
			}
			if got.Copied != tron {
				t.Errorf("Copy put %q on the clipboard, want %q", got.Copied, tron)
			}
		})
		t.Run("the operator approves with a transaction hash and rejects with a reason, and the user's page follows live", func(t *testing.T) {
			if !strings.Contains(got.BadHash, "not a transaction hash of TRON") {
				t.Errorf("a bad hash: %q", got.BadHash)
			}
			if !strings.Contains(got.Approved, "is paid") || !strings.Contains(got.PaidRow, "Paid") || !strings.Contains(got.PaidRow, tronTx) {
				t.Errorf("approved: the console says %q, the user's row %q", got.Approved, got.PaidRow)
			}
			if !strings.Contains(got.UnreadAfterPaid, "unread") {
				t.Errorf("the header's notifications link reads %q", got.UnreadAfterPaid)
			}
			if !got.NoReasonMissing || !got.NoReasonOpen {
				t.Errorf("a rejection without a reason: the field's value missing %v, the dialog open %v", got.NoReasonMissing, got.NoReasonOpen)
			}
			if !strings.Contains(got.Rejected, "is rejected") || !strings.Contains(got.RejectedRow, "Rejected") || !strings.Contains(got.RejectedRow, reason) {
				t.Errorf("rejected: the console says %q, the user's row %q", got.Rejected, got.RejectedRow)
			}
			if got.AfterDecisions != 40_000 {
				t.Errorf("withdrawable after the payment, the credit and the refund: %d, want 40000", got.AfterDecisions)
			}
			if len(got.QueueAfter) != 0 || !strings.Contains(got.QueueEmptyText, "No withdrawal") {
				t.Errorf("the queue after both decisions: %v %q", got.QueueAfter, got.QueueEmptyText)
			}
		})
		t.Run("approving what the user cancelled first says so", func(t *testing.T) {
			if !strings.Contains(got.DecidedElsewhere, "decided meanwhile") || slices.Contains(got.QueueAfterLate, got.LateID) {
				t.Errorf("the console says %q and lists %v", got.DecidedElsewhere, got.QueueAfterLate)
			}
		})
		t.Run("the filter shows each state", func(t *testing.T) {
			if !slices.Equal(got.PaidList, []int64{got.TronID}) || !strings.Contains(got.PaidListText, tronTx) {
				t.Errorf("paid: %v %q", got.PaidList, got.PaidListText)
			}
			if !slices.Equal(got.RejectedList, []int64{got.PolyID}) || !strings.Contains(got.RejectedListText, reason) {
				t.Errorf("rejected: %v %q", got.RejectedList, got.RejectedListText)
			}
			slices.Sort(got.CancelledList)
			if !slices.Equal(got.CancelledList, []int64{got.FirstID, got.LateID}) || len(got.AllList) != 4 {
				t.Errorf("cancelled: %v, all: %v", got.CancelledList, got.AllList)
			}
		})
		t.Run("after a reload the page shows the same, and the notifications link to it", func(t *testing.T) {
			for _, want := range []string{"Paid", "Rejected", "Cancelled", tronTx, reason} {
				if !strings.Contains(got.Reloaded, want) {
					t.Errorf("the reloaded list lacks %q: %q", want, got.Reloaded)
				}
			}
			n := 0
			for _, l := range got.NotificationLinks {
				if strings.HasPrefix(l, "/withdraw ") {
					n++
				}
			}
			if n < 2 {
				t.Errorf("the notifications link to /withdraw %d times: %q", n, got.NotificationLinks)
			}
		})
		t.Run("the server holds what the page showed, and the ledger balances", func(t *testing.T) {
			byID := map[int64]apiWithdrawal{}
			for _, w := range h.myWithdrawals(t, u.token, "?limit=100").Withdrawals {
				byID[w.ID] = w
			}
			for _, c := range []struct {
				id     int64
				status string
				amount int64
			}{{got.FirstID, "cancelled", 25_029}, {got.TronID, "paid", 30_000}, {got.PolyID, "rejected", 15_000}, {got.LateID, "cancelled", 5_000}} {
				w := byID[c.id]
				if w.Status != c.status || w.AmountKopecks != c.amount {
					t.Errorf("withdrawal %d: %s of %d, want %s of %d", c.id, w.Status, w.AmountKopecks, c.status, c.amount)
				}
			}
			if w := byID[got.TronID]; w.TxHash == nil || *w.TxHash != tronTx {
				t.Errorf("the paid one's hash: %v", w.TxHash)
			}
			if w := byID[got.PolyID]; w.Reason == nil || *w.Reason != reason {
				t.Errorf("the rejected one's reason: %v", w.Reason)
			}
			pending := int64(0)
			for _, w := range byID {
				if w.Status == "pending" {
					pending += w.AmountKopecks
				}
			}
			me := h.me(t, u.token)
			if me.Balance+pending != 40_000 || me.BonusBalance != 50_000 {
				t.Errorf("balance %d (+%d pending), bonus %d: want 40000 and 50000", me.Balance, pending, me.BonusBalance)
			}
			h.sound(t)
		})
		t.Run("axe-core finds nothing on the page, the queue and its dialog, in both themes", func(t *testing.T) {
			if got.AxeWithdraw == nil {
				t.Skip("no axe-core (PREDICTKIT_AXE_CORE)")
			}
			for _, v := range slices.Concat(got.AxeWithdraw, got.AxeQueue, got.AxeQueuePending, got.AxeRejectDialog) {
				t.Errorf("axe-core: %s", v)
			}
		})
	})

	t.Run("in Russian the Withdraw page shows none of its English strings", func(t *testing.T) {
		u := h.register(t, "vyvod")
		h.withdrawalsInEveryState(t, u, evm, tron)
		h.setProfile(t, u.token, map[string]any{"language": "ru"})
		var got struct {
			Leaks   []string
			Checked int
			Text    string
		}
		d.run(t, "money", map[string]any{"part": "russian", "user": asBrowserUser(u)}, &got)
		if got.Checked < 40 {
			t.Errorf("only %d English strings checked", got.Checked)
		}
		for _, l := range got.Leaks {
			t.Errorf("English on the Russian page: %s", l)
		}
		for _, want := range []string{"Вывод средств", "Выплачен", "Отклонён", "Отменён", "Ожидает"} {
			if !strings.Contains(got.Text, want) {
				t.Errorf("the Russian page lacks %q", want)
			}
		}
	})

	t.Run("the Withdraw page and the queue, with withdrawals in them, fit a phone", func(t *testing.T) {
		u := h.register(t, "phoner")
		h.withdrawalsInEveryState(t, u, evm, tron)
		var got []phonePage
		d.run(t, "money", map[string]any{"part": "phone", "user": asBrowserUser(u)}, &got)
		if len(got) != 2 {
			t.Fatalf("the phone part measured %d pages", len(got))
		}
		for _, p := range got {
			if p.Width != 390 || p.ScrollWidth > p.Width {
				t.Errorf("%s: %d pixels wide, scrolls to %d", p.Name, p.Width, p.ScrollWidth)
			}
			for _, o := range p.Offenders {
				t.Errorf("%s: %s", p.Name, o)
			}
		}
	})
}
