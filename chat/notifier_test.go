package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/chat"
)

func TestWebhookNotifier(t *testing.T) {
	at := time.Date(2025, 5, 6, 7, 8, 9, 123456000, time.UTC)
	esc := chat.Escalation{SessionID: "cs_abc", UserID: 42, Language: "ru", EscalatedAt: at,
		LastMessages: []*chat.Message{{ID: 7, Sender: "user", Text: "help", CreatedAt: at.Add(-time.Second)}}}

	t.Run("a 2xx answer is success and the body is the documented JSON", func(t *testing.T) {
		var got chat.WebhookPayload
		var raw map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &got)
			_ = json.Unmarshal(b, &raw)
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		defer srv.Close()
		n, err := chat.NewWebhookNotifier(srv.URL, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.NotifyOperator(context.Background(), esc); err != nil {
			t.Fatal(err)
		}
		if got.SessionID != "cs_abc" || got.UserID == nil || *got.UserID != 42 || !got.EscalatedAt.Equal(at) || got.Language != "ru" ||
			len(got.LastMessages) != 1 || got.LastMessages[0].Text != "help" || got.LastMessages[0].CreatedAt != at.Add(-time.Second).UnixMilli() {
			t.Fatalf("payload %+v", got)
		}
		for _, k := range []string{"session_id", "user_id", "escalated_at", "last_messages"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("the payload has no %q", k)
			}
		}
	})
	t.Run("an anonymous session sends user_id null", func(t *testing.T) {
		var raw map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &raw)
		}))
		defer srv.Close()
		anon := esc
		anon.UserID = 0
		if err := (&chat.WebhookNotifier{URL: srv.URL}).NotifyOperator(context.Background(), anon); err != nil {
			t.Fatal(err)
		}
		if v, ok := raw["user_id"]; !ok || v != nil {
			t.Fatalf("user_id = %v, %v", v, ok)
		}
	})
	failures := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
	}{
		{"a 500 is a failure", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, time.Second},
		{"a 404 is a failure", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }, time.Second},
		{"a 304 is a failure", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotModified) }, time.Second},
		{"an answer later than the timeout is a failure", func(http.ResponseWriter, *http.Request) {
			time.Sleep(300 * time.Millisecond)
		}, 50 * time.Millisecond},
	}
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			if err := (&chat.WebhookNotifier{URL: srv.URL, Timeout: c.timeout}).NotifyOperator(context.Background(), esc); err == nil {
				t.Fatal("succeeded")
			}
		})
	}
	t.Run("a closed port is a failure", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		if err := (&chat.WebhookNotifier{URL: url, Timeout: time.Second}).NotifyOperator(context.Background(), esc); err == nil {
			t.Fatal("succeeded")
		}
	})
	for _, u := range []string{"", "ftp://example.com/x", "/relative", "http://"} {
		t.Run("the URL "+u+" is refused", func(t *testing.T) {
			if _, err := chat.NewWebhookNotifier(u, 0); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestLogNotifierWritesOneStructuredLine(t *testing.T) {
	var buf bytes.Buffer
	n := chat.LogNotifier{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}
	if err := n.NotifyOperator(context.Background(), chat.Escalation{SessionID: "cs_1", UserID: 5, EscalatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var rec map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec["session_id"] != "cs_1" || rec["user_id"] != float64(5) {
		t.Fatalf("log %q", buf.String())
	}
}
