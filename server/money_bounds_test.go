package server_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/market"
)

// TestMoneyPastTheLedgerBoundsIsRefused: a creator who keeps creating
// events with the largest subsidies, an operator who keeps crediting, and
// one who keeps funding a float are answered 400 invalid_request with a
// detail once the platform's account would pass its bound, before
// anything is written; the platform still creates normal events, and the
// audit stays sound. The store is filled directly with large amounts so
// that the test runs fast.
func TestMoneyPastTheLedgerBoundsIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		creator, saver := h.register(t, "creator"), h.register(t, "saver")
		h.makeCreator(t, creator.id)

		fillLedger(t, "the treasury", func(amount int64) error {
			return h.store.CreateEvent(ctx, oneMarketEvent(creator.id), []int64{amount})
		})
		huge := map[string]any{"name": "Huge", "pools": []any{map[string]any{"name": "P", "margin": 0, "lmsr_b_kopecks": market.MaxLiquidity,
			"markets": []any{map[string]any{"name": "M", "probability": market.MinProbability}}}}}
		var refused *response
		for i := 0; refused == nil; i++ {
			if i == 100 {
				t.Fatal("100 events of b = 10^12 were accepted after the treasury was full")
			}
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: creator.token, body: huge})
			if r.status != http.StatusCreated {
				refused = r
			}
		}
		t.Run("the creator's next huge event is 400 invalid_request saying why", func(t *testing.T) {
			expect(t, refused, http.StatusBadRequest, "invalid_request")
			if d := refused.errorDetail(t); !strings.Contains(d, "treasury") {
				t.Fatalf("detail %q", d)
			}
		})
		t.Run("a normal event still opens", func(t *testing.T) {
			h.createEvent(t, creator.token, twoPoolEvent("Normal"))
		})

		fillLedger(t, "the outside world", func(amount int64) error {
			return h.store.Transfer(ctx, []account.Posting{{From: account.External, To: account.UserAccount(creator.id), Amount: amount, Reason: "deposit", At: time.Now()}})
		})
		t.Run("a credit past the outside world's bound is 400 invalid_request", func(t *testing.T) {
			for i := 0; ; i++ {
				if i == 100 {
					t.Fatal("100 credits of 10^13 were accepted after the outside world was full")
				}
				r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/credit", saver.id), token: adminToken,
					body: map[string]any{"amount_kopecks": account.MaxCredit}})
				if r.status == http.StatusOK {
					continue
				}
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if d := r.errorDetail(t); !strings.HasPrefix(d, "amount_kopecks: ") {
					t.Fatalf("detail %q", d)
				}
				return
			}
		})
		t.Run("a float funding past the outside world's bound is 400 invalid_request", func(t *testing.T) {
			p := h.createPartner(t, "Bookie", 0)
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), token: adminToken,
				body: map[string]any{"amount_kopecks": account.MaxCredit}})
			expect(t, r, http.StatusBadRequest, "invalid_request")
			if f := h.partner(t, p.ID).FloatKopecks; f != 0 {
				t.Fatalf("float %d", f)
			}
		})
		t.Run("the audit is sound", func(t *testing.T) {
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the ledger is not sound: %v", problems)
			}
		})
	})
}

// fillLedger posts amounts until refused, halving the amount on each
// refusal down to 10^14 kopecks; it fails the test if the accepted
// amounts pass int64.
func fillLedger(t *testing.T, what string, post func(amount int64) error) {
	t.Helper()
	total := new(big.Int)
	for amount := int64(1 << 61); amount >= 1e14; {
		err := post(amount)
		if err == nil {
			if total.Add(total, big.NewInt(amount)); !total.IsInt64() {
				t.Fatalf("%s took %s kopecks, past int64, without a refusal", what, total)
			}
			continue
		}
		if !ledgerBoundRefusal(err) {
			t.Fatalf("%s refused %d kopecks with %v, want account.ErrBalanceLimit", what, amount, err)
		}
		amount /= 2
	}
}

func ledgerBoundRefusal(err error) bool { return errors.Is(err, account.ErrBalanceLimit) }

// oneMarketEvent is an event of one market as the service builds it, for
// calling the store directly.
func oneMarketEvent(creatorID int64) *market.Event {
	now := time.Now().UTC().Truncate(time.Microsecond)
	qy, qn, _ := lmsr.InitialQ(10000, 0.5)
	m := &market.Market{Name: "M", YesName: "Yes", NoName: "No", B: 10000, QYes: qy, QNo: qn, Q0Yes: qy, Q0No: qn, CreatedAt: now}
	p := &market.Pool{Name: "P", B: 10000, LiveAt: now, FinishAt: now.AddDate(0, 1, 0), Markets: []*market.Market{m}}
	return &market.Event{Name: "Raw", CreatorID: creatorID, CreatedAt: now, Pools: []*market.Pool{p}}
}
