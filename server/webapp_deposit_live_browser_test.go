package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/evmtest"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/wallet"
)

// TestDepositLiveInBrowser: a deposit on a real test chain, followed on
// the Deposit page without a reload. A user registers in Chromium and
// opens /deposit on a server watching BSC (3 confirmations, 90 RUB a
// token); the page shows the address the profile has, with its QR code,
// and no deposits. Tokens minted to that address show as pending with
// their confirmations, which grow with the blocks mined, then as
// credited; the header's balance and the unread notifications follow.
// The ledger stays balanced and the balance is the tokens at the rate,
// exactly; axe-core finds nothing with a pending or a credited deposit.
// It runs on each store (PostgreSQL when PREDICTKIT_TEST_DATABASE_URL is
// set, where the watcher runs under the chain's lock), and skips like
// TestWebAppInBrowser.
func TestDepositLiveInBrowser(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) { depositLive(t, sc.new(t)) })
	}
}

func depositLive(t *testing.T, store server.Store) {
	chain := evmtest.Start(t, evmtest.Options{ChainID: wallet.Number(wallet.BSC)})
	token := chain.DeployToken(t, 18)
	chain.Commit(t)

	cfg := testConfig(store)
	cfg.Web = true
	cfg.StreamPing = time.Second
	cfg.WalletEVMXPub = evmXPub
	cfg.Chains = []string{wallet.BSC}
	cfg.ChainSettings.BSC = chainSettings(chain.URL, wallet.Format(wallet.EVM, token))
	h, _ := startServer(t, cfg)
	steps := chainSteps(t, chain, token)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())

	type item struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
		Text   string `json:"text"`
		Block  uint64 `json:"block"`
	}
	var got struct {
		UserID        int64    `json:"user_id"`
		ProfileBSC    string   `json:"profile_bsc"`
		Address       string   `json:"address"`
		QRSrc         string   `json:"qr_src"`
		Empty         string   `json:"empty"`
		BalanceBefore int64    `json:"balance_before"`
		Pending       item     `json:"pending"`
		Second        item     `json:"second"`
		Credited      item     `json:"credited"`
		BalanceAfter  int64    `json:"balance_after"`
		Unread        string   `json:"unread"`
		Live          bool     `json:"live"`
		Axe           []string `json:"axe"`
		Notification  struct {
			Notifications []struct {
				Type string `json:"type"`
				Link string `json:"link"`
			} `json:"notifications"`
		} `json:"notification"`
	}
	user := browserUser{Name: "Dmitri", Email: fmt.Sprintf("dmitri-%d@test.predictkit", emailSeq.Add(1)), Password: "password-dmitri"}
	d.run(t, "deposit_live", map[string]any{"user": user, "chain": steps.URL}, &got)

	want := derive(t, wallet.EVM, evmXPub, got.UserID)
	if got.Address != want || got.ProfileBSC != want {
		t.Errorf("the page shows address %q, the profile %q; want %q", got.Address, got.ProfileBSC, want)
	}
	if !strings.HasPrefix(got.QRSrc, "data:image/svg+xml;base64,") {
		t.Errorf("the QR code's src %q", got.QRSrc)
	}
	if !strings.Contains(got.Empty, "No deposits yet.") {
		t.Errorf("before any transfer the list shows %q", got.Empty)
	}
	if got.Pending.Status != "pending" || !strings.Contains(got.Pending.Text, "12.5") || !strings.Contains(got.Pending.Text, "BNB Smart Chain") {
		t.Errorf("the pending deposit shows %+v", got.Pending)
	}
	if got.Second.ID != got.Pending.ID || got.Second.Status != "pending" {
		t.Errorf("after a block the deposit shows %+v", got.Second)
	}
	const kopecks = 112_500 // 12.5 tokens at 9,000 kopecks a token
	if got.Credited.ID != got.Pending.ID || got.Credited.Status != "credited" || !strings.Contains(got.Credited.Text, "Credited ₽1,125.00") {
		t.Errorf("the credited deposit shows %+v", got.Credited)
	}
	if got.BalanceBefore != 0 || got.BalanceAfter != kopecks {
		t.Errorf("the header's balance went from %d to %d; want 0 to %d", got.BalanceBefore, got.BalanceAfter, kopecks)
	}
	if got.Unread != "1" {
		t.Errorf("the header shows %q unread notifications; want 1", got.Unread)
	}
	if n := got.Notification.Notifications; len(n) == 0 || n[0].Type != "deposit_credited" || n[0].Link != "/deposit" {
		t.Errorf("notifications %+v; want deposit_credited linking to /deposit", n)
	}
	if !got.Live {
		t.Error("the page was reloaded: the deposit did not arrive live")
	}
	if b := h.balanceOf(t, account.UserAccount(got.UserID)); b != kopecks {
		t.Errorf("the user's balance is %d; want %d", b, kopecks)
	}
	if b := h.balanceOf(t, account.DepositsAccount(wallet.Number(wallet.BSC))); b != -kopecks {
		t.Errorf("the bsc deposits account holds %d; want %d", b, -kopecks)
	}
	h.mustAudit(t)
	if got.Axe == nil {
		t.Log("no axe-core: the page was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("axe-core: %s", v)
	}
}

// chainSteps serves the browser flow's requests to act on chain: POST
// /mint {"address"} mints 12.5 tokens of token to the address and commits
// a block; POST /mine {"n"} mines n empty blocks. Each answers
// {"block": the head}; a failure answers 500 with its message, which
// fails the flow.
func chainSteps(t *testing.T, chain *evmtest.Chain, token common.Address) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var body struct {
			Address string `json:"address"`
			N       int    `json:"n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tb := &stepTB{TB: t}
		head, failed := tb.do(func() uint64 {
			switch r.URL.Path {
			case "/mint":
				to, err := wallet.Parse(wallet.BSC, body.Address)
				if err != nil {
					tb.Fatalf("address %q: %v", body.Address, err)
				}
				units := evmtest.Units(125, 17) // 12.5 tokens of 18 decimals
				chain.Mint(tb, token, common.Address(to), units)
				chain.Commit(tb)
			case "/mine":
				chain.Mine(tb, body.N)
			default:
				tb.Fatalf("no step %s", r.URL.Path)
			}
			return chain.Head(tb)
		})
		if failed != "" {
			http.Error(w, failed, http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"block":%d}`, head)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// stepTB is t for the chain's helpers called from a request's goroutine,
// where t.Fatal may not be called: a failure stops the step and is
// answered instead.
type stepTB struct {
	testing.TB
	failed string
}

type stepFailed struct{}

func (s *stepTB) Fatal(args ...any) { s.failed = fmt.Sprint(args...); panic(stepFailed{}) }
func (s *stepTB) Fatalf(format string, args ...any) {
	s.failed = fmt.Sprintf(format, args...)
	panic(stepFailed{})
}
func (s *stepTB) FailNow()                          { s.Fatal("FailNow") }
func (s *stepTB) Error(args ...any)                 { s.Fatal(args...) }
func (s *stepTB) Errorf(format string, args ...any) { s.Fatalf(format, args...) }

// do runs step, returning its result or the failure that stopped it.
func (s *stepTB) do(step func() uint64) (v uint64, failed string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stepFailed); !ok {
				panic(r)
			}
			failed = s.failed
		}
	}()
	return step(), ""
}
