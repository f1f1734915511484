package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAdminWithdrawalCommands(t *testing.T) {
	base := adminServer(t)
	status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": "payee@example.com", "password": "correct horse battery", "name": "Payee"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	token := reg["access_token"].(string)
	user := fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64)))
	mustAdmin(t, base, "credit", "-user", user, "-amount", "100000")
	request := func(chain, address string, amount int64) string {
		t.Helper()
		status, w, _ := api(t, base, http.MethodPost, "/api/v1/users/me/withdrawals", token,
			map[string]any{"chain": chain, "address": address, "amount_kopecks": amount}, nil)
		if status != http.StatusCreated {
			t.Fatalf("request: %d %v", status, w)
		}
		return fmt.Sprint(int64(w["id"].(float64)))
	}
	balance := func() int64 {
		t.Helper()
		_, me, _ := api(t, base, http.MethodGet, "/api/v1/auth/me", token, nil, nil)
		return int64(me["user"].(map[string]any)["balance"].(float64))
	}
	evm := request("ethereum", "0x52908400098527886E0F7030069857D2E4169EE7", 30_000)
	tron := request("tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", 20_000)
	hash := "0x" + strings.Repeat("ab", 32)

	t.Run("the queue lists the pending ones, oldest first, with their users", func(t *testing.T) {
		out := mustAdmin(t, base, "withdrawals")
		contains(t, "withdrawals", out, "payee@example.com", "0x52908400098527886E0F7030069857D2E4169EE7", "30000", "pending")
		if strings.Index(out, "0x5290") > strings.Index(out, "TR7NH") {
			t.Errorf("the queue is not oldest first:\n%s", out)
		}
	})
	t.Run("approve records the payout's hash", func(t *testing.T) {
		out := mustAdmin(t, base, "withdrawals", "approve", evm, "-tx", hash)
		contains(t, "approve", out, "paid", hash)
		if b := balance(); b != 50_000 {
			t.Errorf("balance %d after the payout, want 50000", b)
		}
	})
	t.Run("reject refunds, with the reason", func(t *testing.T) {
		var w struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		}
		out := mustAdmin(t, base, "-json", "withdrawals", "reject", tron, "-reason", "Not a wallet of yours")
		if err := json.Unmarshal([]byte(out), &w); err != nil || w.Status != "rejected" || w.Reason != "Not a wallet of yours" {
			t.Fatalf("-json reject printed %q (%v)", out, err)
		}
		if b := balance(); b != 70_000 {
			t.Errorf("balance %d after the refund, want 70000", b)
		}
	})
	t.Run("-status lists the decided ones", func(t *testing.T) {
		contains(t, "withdrawals -status paid", mustAdmin(t, base, "withdrawals", "-status", "paid"), hash)
		contains(t, "withdrawals -status all", mustAdmin(t, base, "withdrawals", "-status", "all"), "paid", "rejected")
		contains(t, "the empty queue", mustAdmin(t, base, "withdrawals"), "No pending withdrawals.")
	})
	t.Run("the audit stays sound", func(t *testing.T) {
		mustAdmin(t, base, "audit")
	})

	cases := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"approving twice is the server's 409 invalid_state", []string{"withdrawals", "approve", evm, "-tx", hash}, 1, []string{"409 invalid_state"}},
		{"rejecting a paid one is the server's 409 invalid_state", []string{"withdrawals", "reject", evm, "-reason", "late"}, 1, []string{"409 invalid_state"}},
		{"an unknown withdrawal is 404 withdrawal_not_found", []string{"withdrawals", "approve", "999", "-tx", hash}, 1, []string{"404 withdrawal_not_found"}},
		{"a malformed hash is the server's 400", []string{"withdrawals", "approve", tron, "-tx", "0x12"}, 1, []string{"400 invalid_request", "tx_hash"}},
		{"approve without -tx is a usage error", []string{"withdrawals", "approve", evm}, 2, []string{"-tx"}},
		{"reject without -reason is a usage error", []string{"withdrawals", "reject", evm}, 2, []string{"-reason"}},
		{"approve without an id is a usage error", []string{"withdrawals", "approve"}, 2, []string{"withdrawal id"}},
		{"an id that is not a number is a usage error", []string{"withdrawals", "reject", "first", "-reason", "x"}, 2, []string{"not a withdrawal id"}},
		{"an unknown status is a usage error", []string{"withdrawals", "-status", "lost"}, 2, []string{"-status"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := admin(t, base, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			contains(t, "stderr", errOut, c.says...)
		})
	}
	if b := balance(); b != 70_000 {
		t.Errorf("balance %d after the refusals, want 70000", b)
	}
}
