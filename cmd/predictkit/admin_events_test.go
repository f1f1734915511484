package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// exampleEvent is the event file the operator guide runs.
const exampleEvent = "../../examples/events/event.json"

func TestAdminCreateEvent(t *testing.T) {
	base := adminServer(t)
	register := func(email string) string {
		status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": email, "password": "correct horse battery", "name": "N"}, nil)
		if status != http.StatusCreated {
			t.Fatalf("register: %d %v", status, reg)
		}
		return fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64)))
	}
	creator, user := register("creator@example.com"), register("user@example.com")
	mustAdmin(t, base, "set-roles", "-user", creator, "-creator=true")
	inFeed := func(id int64) bool {
		_, feed, _ := api(t, base, http.MethodGet, "/api/v1/events", "", nil, nil)
		for _, e := range feed["events"].([]any) {
			if int64(e.(map[string]any)["id"].(float64)) == id {
				return true
			}
		}
		return false
	}
	eventJSON := func(out string) (id int64, active bool, markets int) {
		var e struct {
			ID       int64 `json:"id"`
			IsActive bool  `json:"is_active"`
			Pools    []struct {
				Markets []struct{} `json:"markets"`
			} `json:"pools"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil || e.ID == 0 {
			t.Fatalf("-json create-event printed %q (%v)", out, err)
		}
		for _, p := range e.Pools {
			markets += len(p.Markets)
		}
		return e.ID, e.IsActive, markets
	}

	t.Run("a file creates a hidden event and prints its pools and markets", func(t *testing.T) {
		out := mustAdmin(t, base, "create-event", "-f", exampleEvent, "-creator", creator)
		contains(t, "create-event", out, "Moscow weather next weekend", "owned by user "+creator, "hidden from the feed",
			"POOL", "MARKET", "YES_PROBABILITY", "Snow on Saturday", "-5 °C to 0 °C", "0.5000")
		id, _, markets := eventJSON(mustAdmin(t, base, "-json", "create-event", "-f", exampleEvent, "-creator", creator))
		if markets != 4 {
			t.Errorf("the example event has %d markets, want 4", markets)
		}
		if inFeed(id) {
			t.Error("an event created without -activate is in the feed")
		}
	})
	t.Run("standard input works as a file", func(t *testing.T) {
		b, err := os.ReadFile(exampleEvent)
		if err != nil {
			t.Fatal(err)
		}
		adminStdin = strings.NewReader(string(b))
		t.Cleanup(func() { adminStdin = os.Stdin })
		id, _, _ := eventJSON(mustAdmin(t, base, "-json", "create-event", "-f", "-", "-creator", creator))
		if id == 0 {
			t.Fatal("no event from standard input")
		}
	})
	t.Run("-activate puts the event in the feed", func(t *testing.T) {
		id, active, _ := eventJSON(mustAdmin(t, base, "-json", "create-event", "-f", exampleEvent, "-creator", creator, "-activate"))
		if !active || !inFeed(id) {
			t.Errorf("event %d: active %v, in the feed %v; want both", id, active, inFeed(id))
		}
		contains(t, "create-event -activate", mustAdmin(t, base, "create-event", "-f", exampleEvent, "-creator", creator, "-activate"), "active, in the feed")
	})

	refused := []struct {
		name       string
		args       []string
		code       int
		wantStderr []string
	}{
		{"a file that is not JSON shows the server's 400", []string{"-f", "testdata/event-not-json.txt", "-creator", creator}, 1,
			[]string{"400 invalid_request"}},
		{"an unknown field shows the server's 400 naming it", []string{"-f", "testdata/event-unknown-field.json", "-creator", creator}, 1,
			[]string{"400 invalid_request", "colour"}},
		{"an owner who is not a creator shows the server's 400", []string{"-f", exampleEvent, "-creator", user}, 1,
			[]string{"400 invalid_request", "not a creator"}},
		{"an unknown owner shows user_not_found", []string{"-f", exampleEvent, "-creator", "999999"}, 1,
			[]string{"404 user_not_found"}},
		{"a missing file is a usage error", []string{"-f", "testdata/no-such-event.json", "-creator", creator}, 2,
			[]string{"no-such-event.json"}},
		{"no -f is a usage error", []string{"-creator", creator}, 2, []string{"-f FILE"}},
		{"no -creator is a usage error", []string{"-f", exampleEvent}, 2, []string{"-creator"}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := admin(t, base, append([]string{"create-event"}, c.args...)...)
			if code != c.code || out != "" {
				t.Fatalf("exit %d, stdout %q; want exit %d and nothing printed", code, out, c.code)
			}
			contains(t, "stderr", errOut, c.wantStderr...)
		})
	}
	t.Run("the audit passes after the events", func(t *testing.T) {
		mustAdmin(t, base, "audit")
	})
}
