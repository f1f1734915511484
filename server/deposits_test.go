package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/evmtest"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/wallet"
)

type apiDeposit struct {
	ID                    int64   `json:"id"`
	Chain                 string  `json:"chain"`
	TxHash                string  `json:"tx_hash"`
	BlockNumber           int64   `json:"block_number"`
	Address               string  `json:"address"`
	TokenAmount           string  `json:"token_amount"`
	AmountKopecks         int64   `json:"amount_kopecks"`
	Confirmations         int64   `json:"confirmations"`
	ConfirmationsRequired int     `json:"confirmations_required"`
	Status                string  `json:"status"`
	CreditedAt            *string `json:"credited_at"`
}

func myDeposits(t *testing.T, h *harness, token, query string) ([]apiDeposit, *string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/deposits" + query, token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Deposits   []apiDeposit `json:"deposits"`
		NextCursor *string      `json:"next_cursor"`
	}
	r.decode(t, &out)
	return out.Deposits, out.NextCursor
}

// TestDepositsOverHTTP runs a server watching a real test chain: a
// transfer to a user's deposit address is listed pending, credited once
// it has the confirmations, announced on the me stream and notified;
// /readyz and the metrics report the watcher, and a node that is down is
// reported without the server failing readiness.
func TestDepositsOverHTTP(t *testing.T) {
	t.Run("a transfer is listed pending, credited at its confirmations, streamed and notified", func(t *testing.T) {
		chain := evmtest.Start(t, evmtest.Options{ChainID: wallet.Number(wallet.BSC)})
		token := chain.DeployToken(t, 18)
		payer := chain.Accounts[0]
		chain.Mint(t, token, payer.Address, evmtest.Units(100, 18))
		chain.Commit(t)

		store := memory.New()
		cfg := testConfig(store)
		cfg.WalletEVMXPub = evmXPub
		cfg.Chains = []string{wallet.BSC}
		cfg.ChainSettings.BSC = chainSettings(chain.URL, wallet.Format(wallet.EVM, token))
		h, _ := startServer(t, cfg)
		u := h.register(t, "depositor")
		d, err := wallet.NewDeriver(wallet.EVM, evmXPub)
		if err != nil {
			t.Fatal(err)
		}
		to, err := d.Bytes(u.id)
		if err != nil {
			t.Fatal(err)
		}
		// The address book may already hold it; recording it again is
		// harmless.
		if err := store.SetDepositAddresses(context.Background(), []account.DepositAddress{{Family: wallet.EVM,
			Address: wallet.Format(wallet.EVM, to), UserID: u.id, Fingerprint: d.Fingerprint(), CreatedAt: time.Now()}}); err != nil {
			t.Fatal(err)
		}
		if ds, next := myDeposits(t, h, u.token, ""); len(ds) != 0 || next != nil {
			t.Fatalf("before any transfer: %+v", ds)
		}
		chain.Transfer(t, token, payer, to, evmtest.Units(12, 18))
		chain.Commit(t)
		block := int64(chain.Head(t))

		var ds []apiDeposit
		waitFor(t, "the pending deposit", func() bool { ds, _ = myDeposits(t, h, u.token, ""); return len(ds) == 1 })
		if ds[0].Status != "pending" || ds[0].BlockNumber != block || ds[0].TokenAmount != "12" || ds[0].AmountKopecks != 108000 ||
			ds[0].ConfirmationsRequired != 3 || ds[0].CreditedAt != nil || ds[0].Address != wallet.Format(wallet.EVM, to) {
			t.Fatalf("pending deposit %+v", ds[0])
		}
		if b := h.me(t, u.token).Balance; b != 0 {
			t.Fatalf("balance %d before the confirmations", b)
		}
		r := h.do(t, req{method: http.MethodGet, path: "/readyz"})
		expect(t, r, http.StatusOK, "")
		if !strings.Contains(string(r.body), `"chain":"bsc"`) || !strings.Contains(string(r.body), `"ok":true`) {
			t.Fatalf("/readyz %s; want the bsc watcher, ok", r.body)
		}

		chain.Mine(t, 2)
		waitFor(t, "the credit", func() bool { ds, _ = myDeposits(t, h, u.token, ""); return ds[0].Status == "credited" })
		if ds[0].AmountKopecks != 108000 || ds[0].CreditedAt == nil || ds[0].Confirmations < 3 {
			t.Fatalf("credited deposit %+v", ds[0])
		}
		if b := h.me(t, u.token).Balance; b != 108000 {
			t.Fatalf("balance %d; want 108000", b)
		}
		r = h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: u.token})
		if !strings.Contains(string(r.body), `"type":"deposit_credited"`) || !strings.Contains(string(r.body), `"link":"/deposit"`) {
			t.Fatalf("notifications %s", r.body)
		}
		c := openStream(t, h, "topics=me&last_event_id=0", map[string]string{"Authorization": "Bearer " + u.token})
		defer c.close()
		var statuses []string
		for len(statuses) < 2 {
			m := c.message(t)
			if m.event == "deposit" {
				var v apiDeposit
				m.decode(t, &v)
				statuses = append(statuses, v.Status)
			}
		}
		if statuses[0] != "pending" || statuses[1] != "credited" {
			t.Fatalf("the me stream's deposits %v; want pending then credited", statuses)
		}
		res, err := http.Get("http://" + h.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, want := range []string{`predictkit_deposits_credited_total{chain="bsc"} 1`, `predictkit_deposit_watcher_up{chain="bsc"} 1`, `predictkit_deposit_lag_blocks{chain="bsc"} 0`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})

	t.Run("a node that is down is reported on /readyz and in the metrics, and the server stays ready", func(t *testing.T) {
		store := memory.New()
		cfg := testConfig(store)
		cfg.WalletEVMXPub = evmXPub
		cfg.Chains = []string{wallet.Polygon}
		cfg.ChainSettings.Polygon = chainSettings("http://127.0.0.1:1", "0xdAC17F958D2ee523a2206206994597C13D831ec7")
		h, _ := startServer(t, cfg)
		var body string
		waitFor(t, "the failure reported", func() bool {
			r := h.do(t, req{method: http.MethodGet, path: "/readyz"})
			expect(t, r, http.StatusOK, "")
			body = string(r.body)
			return strings.Contains(body, `"ok":false`) && strings.Contains(body, `"error"`)
		})
		if !strings.Contains(body, `"chain":"polygon"`) {
			t.Fatalf("/readyz %s", body)
		}
		res, err := http.Get("http://" + h.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), `predictkit_deposit_watcher_up{chain="polygon"} 0`) {
			t.Fatalf("/metrics does not report the polygon watcher down")
		}
	})
}

// server_chain is a chain's settings: the node, the token (18
// decimals), 3 confirmations and 90 RUB a token.
func chainSettings(url, token string) server.ChainConfig {
	return server.ChainConfig{RPCURL: url, Token: token, Decimals: 18, Confirmations: 3, KopecksPerToken: 9000}
}
