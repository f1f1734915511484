package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Escalation is what an operator is told when a session asks for a
// person.
type Escalation struct {
	// SessionID is the session's public id (what the operator routes take).
	SessionID string
	// UserID is the signed-in user, 0 when anonymous.
	UserID      int64
	Language    string
	EscalatedAt time.Time
	// LastMessages are the session's latest messages (at most
	// EscalationMessages), oldest first.
	LastMessages []*Message
}

// OperatorNotifier tells the support team that a session asks for a
// person. An error means nobody was told: the session stays unescalated
// and the user may call again.
type OperatorNotifier interface {
	NotifyOperator(ctx context.Context, e Escalation) error
}

// LogNotifier writes each escalation as one structured log line (level
// WARN, message "chat: operator requested"), for deployments whose
// operators watch the logs or alert on them. It never fails.
type LogNotifier struct {
	Logger *slog.Logger
}

// NotifyOperator implements OperatorNotifier.
func (n LogNotifier) NotifyOperator(ctx context.Context, e Escalation) error {
	log := n.Logger
	if log == nil {
		log = slog.Default()
	}
	attrs := []slog.Attr{
		slog.String("session_id", e.SessionID),
		slog.Time("escalated_at", e.EscalatedAt),
		slog.Int("messages", len(e.LastMessages)),
	}
	if e.UserID != 0 {
		attrs = append(attrs, slog.Int64("user_id", e.UserID))
	}
	log.LogAttrs(ctx, slog.LevelWarn, "chat: operator requested", attrs...)
	return nil
}

// DefaultWebhookTimeout bounds one webhook call.
const DefaultWebhookTimeout = 5 * time.Second

// WebhookNotifier POSTs each escalation as JSON to URL:
//
//	{"session_id": "cs_…", "user_id": 42 (null when anonymous),
//	 "escalated_at": "2025-01-02T15:04:05.123456Z",
//	 "language": "en",
//	 "last_messages": [{"id": 7, "sender": "user", "text": "…", "created_at": 1735830245123}]}
//
// (created_at in Unix milliseconds, as in the chat API). Any 2xx answer is
// success; any other status, a network error or the Timeout passing is a
// failure.
type WebhookNotifier struct {
	URL string
	// Timeout bounds one call; 0 means DefaultWebhookTimeout.
	Timeout time.Duration
	// Client sends the request; nil means http.DefaultClient.
	Client *http.Client
}

// NewWebhookNotifier checks that rawURL is an absolute http or https URL.
func NewWebhookNotifier(rawURL string, timeout time.Duration) (*WebhookNotifier, error) {
	if err := CheckWebhookURL(rawURL); err != nil {
		return nil, err
	}
	return &WebhookNotifier{URL: rawURL, Timeout: timeout}, nil
}

// CheckWebhookURL reports whether rawURL can be a webhook: an absolute
// http or https URL with a host.
func CheckWebhookURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("chat: webhook URL must be an absolute http or https URL")
	}
	return nil
}

// WebhookPayload is the JSON body a WebhookNotifier sends.
type WebhookPayload struct {
	SessionID    string           `json:"session_id"`
	UserID       *int64           `json:"user_id"`
	EscalatedAt  time.Time        `json:"escalated_at"`
	Language     string           `json:"language"`
	LastMessages []WebhookMessage `json:"last_messages"`
}

// WebhookMessage is a message of a WebhookPayload.
type WebhookMessage struct {
	ID        int64  `json:"id"`
	Sender    string `json:"sender"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"created_at"` // Unix milliseconds
}

// NotifyOperator implements OperatorNotifier.
func (n *WebhookNotifier) NotifyOperator(ctx context.Context, e Escalation) error {
	p := WebhookPayload{SessionID: e.SessionID, EscalatedAt: e.EscalatedAt.UTC(), Language: e.Language, LastMessages: []WebhookMessage{}}
	if e.UserID != 0 {
		id := e.UserID
		p.UserID = &id
	}
	for _, m := range e.LastMessages {
		p.LastMessages = append(p.LastMessages, WebhookMessage{ID: m.ID, Sender: m.Sender, Text: m.Text, CreatedAt: m.CreatedAt.UnixMilli()})
	}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("chat: webhook: %w", err)
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("chat: webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "predictkit-chat-webhook")
	client := n.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		// The URL may hold a token: say only what failed.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("chat: webhook: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("chat: webhook answered %d", res.StatusCode)
	}
	return nil
}
