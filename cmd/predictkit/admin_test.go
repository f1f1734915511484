package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

const testAdminToken = "admin-cli-test-token-0123456789"

// adminServer serves server.Build on the memory store at 127.0.0.1:0 and
// returns its base URL.
func adminServer(t *testing.T) string {
	t.Helper()
	return adminServerWith(t, func(*server.Config) {})
}

// adminServerWith is adminServer with the configuration changed by f.
func adminServerWith(t *testing.T, f func(*server.Config)) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Demo = false
	cfg.AdminToken = testAdminToken
	cfg.BcryptCost = 4
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	f(&cfg)
	app, err := server.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// api calls the server directly (what a user or browser would do).
func api(t *testing.T, base, method, path, token string, body any, header map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

// admin runs `predictkit admin` against base with the test token.
func admin(t *testing.T, base string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"admin", "-url", base, "-token", testAdminToken}, args...)
	code = run(context.Background(), full, &out, &errb)
	return code, out.String(), errb.String()
}

func mustAdmin(t *testing.T, base string, args ...string) string {
	t.Helper()
	code, out, errOut := admin(t, base, args...)
	if code != 0 {
		t.Fatalf("predictkit admin %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

func TestAdminCommands(t *testing.T) {
	base := adminServer(t)
	status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": "op@example.com", "password": "correct horse battery", "name": "Olga"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	userID := fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64)))

	var partnerID string
	t.Run("create-partner prints the key once, with a warning to keep it", func(t *testing.T) {
		out := mustAdmin(t, base, "create-partner", "-name", "Example Bookmaker")
		contains(t, "create-partner", out, "ID", "NAME", "KEY", "Example Bookmaker", "pk_", "shown this once")
		partnerID = strings.Fields(strings.Split(out, "\n")[1])[0]
		code, js, _ := admin(t, base, "-json", "create-partner", "-name", "Second")
		var p struct {
			ID  int64  `json:"id"`
			Key string `json:"key"`
		}
		if code != 0 || json.Unmarshal([]byte(js), &p) != nil || p.ID == 0 || !strings.HasPrefix(p.Key, "pk_") {
			t.Fatalf("-json create-partner: exit %d, %q", code, js)
		}
	})
	t.Run("fund-float adds to the float and partner shows it", func(t *testing.T) {
		out := mustAdmin(t, base, "fund-float", "-partner", partnerID, "-amount", "1000000")
		contains(t, "fund-float", out, "FLOAT_KOPECKS", "1000000", "10,000.00")
		out = mustAdmin(t, base, "partner", "-id", partnerID, "-json")
		var p struct {
			FloatKopecks int64 `json:"float_kopecks"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil || p.FloatKopecks != 1_000_000 {
			t.Errorf("partner -json: %q", out)
		}
		contains(t, "partner", mustAdmin(t, base, "partner", "-id", partnerID), "Example Bookmaker", "10,000.00")
	})
	t.Run("credit deposits to a balance or the bonus balance", func(t *testing.T) {
		out := mustAdmin(t, base, "credit", "-user", userID, "-amount", "250000")
		contains(t, "credit", out, "BALANCE_KOPECKS", "250000", "2,500.00")
		out = mustAdmin(t, base, "credit", "-user", userID, "-amount", "1000", "-bonus", "-json")
		var raw map[string]int64
		if err := json.Unmarshal([]byte(out), &raw); err != nil || raw["balance"] != 250_000 || raw["bonus_balance"] != 1000 || raw["total_balance"] != 251_000 {
			t.Errorf("credit -json: %q", out)
		}
	})
	t.Run("set-roles gives and takes roles", func(t *testing.T) {
		out := mustAdmin(t, base, "set-roles", "-user", userID, "-creator")
		contains(t, "set-roles", out, "CREATOR", "Olga", "yes")
		out = mustAdmin(t, base, "set-roles", "-user", userID, "-creator=false", "-stats-viewer=true", "-json")
		var r struct {
			User struct {
				IsCreator     bool `json:"is_creator"`
				IsStatsViewer bool `json:"is_stats_viewer"`
			} `json:"user"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.User.IsCreator || !r.User.IsStatsViewer {
			t.Errorf("set-roles -json: %q", out)
		}
	})
	var adID string
	t.Run("create-ad publishes an ad and moderate-ad hides and rejects it", func(t *testing.T) {
		out := mustAdmin(t, base, "create-ad", "-user", userID, "-type", "sell", "-currency", "RUB", "-rate", "101",
			"-min", "50000", "-max", "2000000", "-methods", "SBP, Sberbank", "-duration", "15", "-instructions", "Pay by SBP")
		contains(t, "create-ad", out, "sell", "RUB", "SBP,Sberbank", "approved", "yes")
		fields := strings.Fields(strings.Split(out, "\n")[1])
		adID = fields[0]
		status, ad, _ := api(t, base, http.MethodGet, "/api/v1/p2p/ads/"+adID, "", nil, nil)
		if status != http.StatusOK || ad["fiat_currency"] != "RUB" {
			t.Fatalf("the ad is not on the board: %d %v", status, ad)
		}
		out = mustAdmin(t, base, "moderate-ad", "-id", adID, "-active=false", "-status", "rejected")
		contains(t, "moderate-ad", out, "rejected", "no")
		if status, _, _ := api(t, base, http.MethodGet, "/api/v1/p2p/ads/"+adID, "", nil, nil); status != http.StatusNotFound {
			t.Errorf("a rejected ad still answers %d", status)
		}
	})
	t.Run("chats lists the sessions waiting for an operator", func(t *testing.T) {
		contains(t, "chats", mustAdmin(t, base, "chats"), "No chat is waiting")
		_, _, h := api(t, base, http.MethodPost, "/api/v1/chat/session", "", nil, nil)
		cookie := strings.Split(h.Get("Set-Cookie"), ";")[0]
		api(t, base, http.MethodPost, "/api/v1/chat/messages", "", map[string]any{"text": "My withdrawal is stuck"}, map[string]string{"Cookie": cookie})
		if status, body, _ := api(t, base, http.MethodPost, "/api/v1/chat/session/call-operator", "", nil, map[string]string{"Cookie": cookie}); status != http.StatusOK {
			t.Fatalf("call-operator: %d %v", status, body)
		}
		api(t, base, http.MethodPost, "/api/v1/chat/session", "", nil, nil) // another, not escalated
		out := mustAdmin(t, base, "chats")
		contains(t, "chats", out, "SESSION", "cs_", "anonymous", "open")
		if n := strings.Count(out, "cs_"); n != 1 {
			t.Errorf("chats lists %d sessions, want the 1 escalated:\n%s", n, out)
		}
		if n := strings.Count(mustAdmin(t, base, "chats", "-all"), "cs_"); n != 2 {
			t.Errorf("chats -all lists %d sessions, want 2", n)
		}
		var list struct {
			Sessions []struct {
				Escalated bool `json:"escalated"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(mustAdmin(t, base, "-json", "chats")), &list); err != nil || len(list.Sessions) != 1 || !list.Sessions[0].Escalated {
			t.Errorf("chats -json: %+v, %v", list, err)
		}
	})
	t.Run("audit runs the ledger check", func(t *testing.T) {
		out := mustAdmin(t, base, "audit")
		contains(t, "audit", out, "OK", "POSTINGS", "yes")
		var r struct {
			OK bool `json:"ok"`
		}
		if err := json.Unmarshal([]byte(mustAdmin(t, base, "audit", "-json")), &r); err != nil || !r.OK {
			t.Errorf("audit -json: %+v %v", r, err)
		}
	})
}

func TestAdminErrors(t *testing.T) {
	base := adminServer(t)
	cases := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"an unknown user is the server's 404 user_not_found", []string{"credit", "-user", "999", "-amount", "100"}, 1, []string{"404 user_not_found"}},
		{"an invalid field is the server's 400 with its detail", []string{"create-ad", "-user", "999", "-type", "rent", "-currency", "RUB", "-rate", "1", "-min", "1", "-max", "2", "-methods", "SBP", "-duration", "5"}, 1, []string{"400", "type"}},
		{"an unknown partner is 404 partner_not_found", []string{"fund-float", "-partner", "77", "-amount", "5"}, 1, []string{"404 partner_not_found"}},
		{"a wrong token is 401 unauthorized, with a hint", []string{"-token", "wrong-token-wrong-token", "audit"}, 1, []string{"401 unauthorized", "PREDICTKIT_ADMIN_TOKEN"}},
		{"no token is a usage error", []string{"-token", "", "audit"}, 2, []string{"no operator token"}},
		{"a missing flag is a usage error", []string{"credit", "-amount", "5"}, 2, []string{"-user"}},
		{"a missing role is a usage error", []string{"set-roles", "-user", "1"}, 2, []string{"-creator"}},
		{"an unknown command is a usage error", []string{"frobnicate"}, 2, []string{"unknown command", "create-partner"}},
		{"no command prints the commands", nil, 2, []string{"no command", "audit"}},
		{"a bad URL is a usage error", []string{"-url", "localhost:1", "audit"}, 2, []string{"-url"}},
		{"a user search over the largest page is the server's 400", []string{"users", "-limit", "500"}, 1, []string{"400 invalid_request", "limit"}},
		{"a made-up cursor is the server's 400", []string{"users", "-cursor", "made-up"}, 1, []string{"400 invalid_request", "cursor"}},
		{"a negative limit is a usage error", []string{"users", "-limit", "-3"}, 2, []string{"-limit"}},
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
	t.Run("an unreachable server exits 1 saying so", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		code, _, errOut := admin(t, "http://"+addr, "audit")
		if code != 1 || !strings.Contains(errOut, "cannot reach the server") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("the token and URL come from the environment", func(t *testing.T) {
		t.Setenv("PREDICTKIT_ADMIN_TOKEN", testAdminToken)
		t.Setenv("PREDICTKIT_URL", base)
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"admin", "audit"}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	})
	t.Run("help lists every command", func(t *testing.T) {
		var out bytes.Buffer
		if code := run(context.Background(), []string{"admin", "help"}, &out, &out); code != 0 {
			t.Fatalf("exit %d", code)
		}
		for _, c := range adminCommands {
			contains(t, "admin help", out.String(), c.name)
		}
	})
}

func TestAdminUsersAndPartnersCommands(t *testing.T) {
	base := adminServer(t)
	var ids []string
	for _, n := range []string{"Anna", "Boris", "Olga"} {
		status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": strings.ToLower(n) + "@example.com", "password": "correct horse battery", "name": n}, nil)
		if status != http.StatusCreated {
			t.Fatalf("register: %d %v", status, reg)
		}
		ids = append(ids, fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64))))
	}
	t.Run("users lists the users newest first", func(t *testing.T) {
		out := mustAdmin(t, base, "users")
		contains(t, "users", out, "ID", "EMAIL", "NAME", "NICKNAME", "CREATED_AT", "anna@example.com", "Boris", "Olga")
		if strings.Index(out, "Olga") > strings.Index(out, "Anna") {
			t.Errorf("users is not newest first:\n%s", out)
		}
		if strings.Contains(out, "-cursor") {
			t.Errorf("one page says there are more:\n%s", out)
		}
	})
	t.Run("users -query finds a user by part of the e-mail, name or id", func(t *testing.T) {
		for _, q := range []string{"BORIS@", "oris", ids[1]} {
			out := mustAdmin(t, base, "users", "-query", q)
			contains(t, "users -query "+q, out, "boris@example.com")
			if strings.Contains(out, "Anna") || strings.Contains(out, "Olga") {
				t.Errorf("users -query %s lists others:\n%s", q, out)
			}
		}
		contains(t, "users -query nobody", mustAdmin(t, base, "users", "-query", "nobody"), "No user matches.")
	})
	t.Run("users -limit prints a page and the command for the next", func(t *testing.T) {
		out := mustAdmin(t, base, "users", "-limit", "2")
		contains(t, "users -limit 2", out, "Olga", "Boris", "-cursor")
		if strings.Contains(out, "Anna") {
			t.Fatalf("a page of 2 shows a third user:\n%s", out)
		}
		fields := strings.Fields(out[strings.Index(out, "-cursor"):])
		out = mustAdmin(t, base, "users", "-limit", "2", "-cursor", fields[1])
		contains(t, "the next page", out, "Anna")
		if strings.Contains(out, "Olga") || strings.Contains(out, "-cursor") {
			t.Errorf("the last page:\n%s", out)
		}
		var page struct {
			Users      []map[string]any `json:"users"`
			NextCursor *string          `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(mustAdmin(t, base, "-json", "users", "-limit", "2")), &page); err != nil || len(page.Users) != 2 || page.NextCursor == nil {
			t.Errorf("users -json: %+v, %v", page, err)
		}
	})
	t.Run("partners lists every partner, never a key", func(t *testing.T) {
		contains(t, "partners", mustAdmin(t, base, "partners"), "No partners.")
		mustAdmin(t, base, "create-partner", "-name", "Alpha Bets")
		mustAdmin(t, base, "create-partner", "-name", "Beta Book")
		out := mustAdmin(t, base, "partners")
		contains(t, "partners", out, "ID", "NAME", "DISABLED", "CREATED_AT", "Alpha Bets", "Beta Book", "no")
		if strings.Contains(out, "pk_") || strings.Index(out, "Beta") < strings.Index(out, "Alpha") {
			t.Errorf("partners:\n%s", out)
		}
		var list struct {
			Partners []map[string]any `json:"partners"`
		}
		if err := json.Unmarshal([]byte(mustAdmin(t, base, "partners", "-json")), &list); err != nil || len(list.Partners) != 2 {
			t.Errorf("partners -json: %+v, %v", list, err)
		}
	})
}

func TestServeReportsEveryConfigurationProblem(t *testing.T) {
	t.Setenv("PREDICTKIT_BCRYPT_COST", "lots")
	t.Setenv("PREDICTKIT_LOG_LEVEL", "loud")
	t.Setenv("PREDICTKIT_ADMIN_TOKEN", "short")
	var out bytes.Buffer
	code := run(context.Background(), []string{"serve", "-read-timeout", "soon", "-trade-batch-wait", "5s"}, &out, &out)
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, out.String())
	}
	contains(t, "serve", out.String(), "5 problems", "PREDICTKIT_BCRYPT_COST", "PREDICTKIT_LOG_LEVEL", "PREDICTKIT_ADMIN_TOKEN",
		"PREDICTKIT_READ_TIMEOUT", "PREDICTKIT_TRADE_BATCH_WAIT", "predictkit serve -h")
}

func TestAdminResolve(t *testing.T) {
	base := adminServer(t)
	status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": "creator@example.com", "password": "correct horse battery", "name": "Cleo"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	token := reg["access_token"].(string)
	userID := fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64)))
	mustAdmin(t, base, "set-roles", "-user", userID, "-creator=true")
	status, ev, _ := api(t, base, http.MethodPost, "/api/v1/events", token, map[string]any{
		"name": "Cup final",
		"pools": []any{map[string]any{"name": "Winner", "margin": 0.02, "lmsr_b_kopecks": 10000,
			"markets": []any{map[string]any{"name": "Home", "probability": 0.5}, map[string]any{"name": "Away", "probability": 0.5}}}},
	}, nil)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("create event: %d %v", status, ev)
	}
	markets := ev["pools"].([]any)[0].(map[string]any)["markets"].([]any)
	first := fmt.Sprint(int64(markets[0].(map[string]any)["id"].(float64)))
	second := fmt.Sprint(int64(markets[1].(map[string]any)["id"].(float64)))

	t.Run("a usage error exits 2 and resolves nothing", func(t *testing.T) {
		for _, args := range [][]string{
			{"resolve", "-market", first, "-won", "maybe"},
			{"resolve", "-market", first},
			{"resolve", "-won", "YES"},
			{"resolve", "-market", "0", "-won", "YES"},
		} {
			if code, _, stderr := admin(t, base, args...); code != 2 || stderr == "" {
				t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, stderr)
			}
		}
		_, m, _ := api(t, base, http.MethodGet, "/api/v1/markets/"+first, "", nil, nil)
		if m["resolved"] != false {
			t.Fatalf("after usage errors the market is %v", m)
		}
	})
	t.Run("the operator voids a market and the table says so", func(t *testing.T) {
		out := mustAdmin(t, base, "resolve", "-market", first, "-won", "void")
		contains(t, "resolve", out, "MARKET", "OUTCOME", "RESOLVED_BY", first, "VOID", "operator")
		_, m, _ := api(t, base, http.MethodGet, "/api/v1/markets/"+first, "", nil, nil)
		if m["winning_outcome"] != "VOID" || m["resolved_by"] != "operator" || m["resolved_at"] == nil {
			t.Errorf("the market after the void: %v", m)
		}
	})
	t.Run("a second resolution exits 1 with the server's 409", func(t *testing.T) {
		code, _, stderr := admin(t, base, "resolve", "-market", first, "-won", "YES")
		if code != 1 || !strings.Contains(stderr, "409 market already resolved") {
			t.Errorf("exit %d, stderr %q; want 1 and the 409", code, stderr)
		}
	})
	t.Run("-json prints the resolved market", func(t *testing.T) {
		out := mustAdmin(t, base, "-json", "resolve", "-market", second, "-won", "NO")
		var m struct {
			ID             int64  `json:"id"`
			WinningOutcome string `json:"winning_outcome"`
			ResolvedBy     string `json:"resolved_by"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil || fmt.Sprint(m.ID) != second || m.WinningOutcome != "NO" || m.ResolvedBy != "operator" {
			t.Errorf("-json resolve: %q (%v)", out, err)
		}
	})
	t.Run("an unknown market exits 1 with the server's 404", func(t *testing.T) {
		code, _, stderr := admin(t, base, "resolve", "-market", "999999", "-won", "YES")
		if code != 1 || !strings.Contains(stderr, "404 market not found") {
			t.Errorf("exit %d, stderr %q; want 1 and the 404", code, stderr)
		}
	})
}

func TestEveryAdminCommandPrintsItsHelp(t *testing.T) {
	// A command whose own flag clashes with the admin's (-url, -token,
	// -json) panics when its flags are defined, whatever it is asked.
	for _, c := range adminCommands {
		t.Run(c.name+" -h prints its usage and exits 0", func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"admin", c.name, "-h"}, &out, &errb)
			if code != 0 || !strings.Contains(out.String()+errb.String(), c.name) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			}
		})
	}
}

func TestAdminWebhookCommands(t *testing.T) {
	base := adminServer(t)
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(mustAdmin(t, base, "-json", "create-partner", "-name", "Hook Bets")), &created); err != nil || created.ID == 0 {
		t.Fatalf("create-partner -json: %+v, %v", created, err)
	}
	id := fmt.Sprint(created.ID)
	t.Run("set-webhook refuses a loopback address the operator did not allow", func(t *testing.T) {
		code, out, errOut := admin(t, base, "set-webhook", "-partner", id, "-webhook-url", "http://127.0.0.1:9/hook")
		if code == 0 || !strings.Contains(out+errOut, "400") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
	t.Run("set-webhook without -webhook-url is a usage error", func(t *testing.T) {
		if code, _, errOut := admin(t, base, "set-webhook", "-partner", id); code != 2 || !strings.Contains(errOut, "-webhook-url") {
			t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
		}
	})
	t.Run("rotate-key prints the new key once", func(t *testing.T) {
		contains(t, "rotate-key", mustAdmin(t, base, "rotate-key", "-partner", id), "pk_")
	})
	t.Run("deliveries lists none for a partner without a webhook", func(t *testing.T) {
		mustAdmin(t, base, "deliveries", "-partner", id)
	})
}
