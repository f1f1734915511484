// Package telegramtest is a Telegram Bot API server in process, for
// tests: it answers the methods predictkit's bot uses (getMe,
// sendMessage, setWebhook) as Telegram does ({"ok":true,"result":...}),
// records the messages sent, and delivers updates to the webhook the
// bot set, with the secret header, as Telegram would. A test points the
// server's PREDICTKIT_TELEGRAM_API_URL at URL(); nothing else differs
// from production.
package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
)

// Username is the fake bot's username.
const Username = "predictkit_test_bot"

// Message is a message the bot sent.
type Message struct {
	ChatID int64
	Text   string
}

// Doer sends a request: an *http.Client, or a Fiber app's Test.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Server is a fake Bot API for one bot token.
type Server struct {
	srv   *httptest.Server
	token string

	// Client delivers updates (http.DefaultClient when nil).
	Client Doer

	mu       sync.Mutex
	sent     []Message
	calls    map[string]int
	blocked  map[int64]bool
	down     bool
	tooMany  int
	hookURL  string
	hookKey  string
	updateID int64
	msgID    int
	changed  chan struct{}
}

// New starts a fake Bot API for the bot with token; it stops at Close.
func New(token string) *Server {
	s := &Server{token: token, calls: map[string]int{}, blocked: map[int64]bool{}, updateID: 100000, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the Bot API's base URL (PREDICTKIT_TELEGRAM_API_URL).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Block makes every message to chatID fail as Telegram answers a chat
// that blocked the bot: 403 "Forbidden: bot was blocked by the user".
func (s *Server) Block(chatID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocked[chatID] = true
}

// RateLimit makes the next n sendMessage calls fail as Telegram answers
// a bot past its rate limit: 429 with retry_after 1 (second).
func (s *Server) RateLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tooMany = n
}

// SetDown makes every method fail with a 502 that is not the Bot API's
// answer (down), as a proxy in front of a Bot API that is down would,
// or answer again (!down).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Sent returns the messages sent so far, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// SentTo returns the messages sent to chatID so far, in order.
func (s *Server) SentTo(chatID int64) []Message {
	var out []Message
	for _, m := range s.Sent() {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

// Calls is how many times method was called (with the right token).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Webhook is what the last setWebhook set: the URL and secret token.
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hookURL, s.hookKey
}

// SetWebhook sets the webhook as the bot's setWebhook would, for tests
// whose server has no public URL to set it with.
func (s *Server) SetWebhook(url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookURL, s.hookKey = url, secret
}

// WaitSent waits until chatID has been sent at least n messages, or
// timeout passes, and returns the messages to chatID.
func (s *Server) WaitSent(chatID int64, n int, timeout time.Duration) ([]Message, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if ms := s.SentTo(chatID); len(ms) >= n {
			return ms, nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			ms := s.SentTo(chatID)
			return ms, fmt.Errorf("telegramtest: %d messages to chat %d after %v, want %d: %v", len(ms), chatID, timeout, n, ms)
		}
	}
}

// Start is the update of a person (Telegram user chatID, whose private
// chat with the bot has the same id) sending text to the bot, with
// language the app's language ("en", "ru"). Each has a new update_id.
func (s *Server) Start(chatID int64, language, text string) models.Update {
	s.mu.Lock()
	s.updateID++
	s.msgID++
	id, msg := s.updateID, s.msgID
	s.mu.Unlock()
	return models.Update{ID: id, Message: &models.Message{
		ID:   msg,
		Date: int(time.Now().Unix()),
		Chat: models.Chat{ID: chatID, Type: models.ChatTypePrivate, FirstName: "Test"},
		From: &models.User{ID: chatID, FirstName: "Test", LanguageCode: language},
		Text: text,
	}}
}

// Deliver posts u to the webhook as Telegram does (JSON, the secret in
// X-Telegram-Bot-Api-Secret-Token) and returns the answer's status and
// body. The webhook must have been set.
func (s *Server) Deliver(ctx context.Context, u models.Update) (int, []byte, error) {
	url, secret := s.Webhook()
	if url == "" {
		return 0, nil, errors.New("telegramtest: no webhook is set")
	}
	return s.DeliverTo(ctx, url, secret, u)
}

// DeliverTo posts u to url with secret in the header, as Deliver.
func (s *Server) DeliverTo(ctx context.Context, url, secret string, u models.Update) (int, []byte, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	var c Doer = http.DefaultClient
	if s.Client != nil {
		c = s.Client
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ControlPath is where a test that cannot call Deliver (a browser flow
// in another process) asks the fake to deliver a message as Telegram
// would: POST {"chat_id": 42, "language": "en", "text": "/start …"}; the
// answer is {"status": <the webhook's status>, "body": "<its body>"}.
const ControlPath = "/control/deliver"

// serve answers /bot<token>/<method>, and ControlPath.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ControlPath && r.Method == http.MethodPost {
		s.control(w, r)
		return
	}
	rest, found := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, found2 := strings.Cut(rest, "/")
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	switch {
	case down:
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case !found || !found2:
		fail(w, http.StatusNotFound, "Not Found")
		return
	case token != s.token:
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	params, err := readParams(r)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	switch method {
	case "getMe":
		id, _ := strconv.ParseInt(strings.Split(s.token, ":")[0], 10, 64)
		ok(w, models.User{ID: id, IsBot: true, FirstName: "predictkit", Username: Username})
	case "setWebhook":
		if params["url"] == "" {
			fail(w, http.StatusBadRequest, "Bad Request: bad webhook: URL must be set")
			return
		}
		s.hookURL, s.hookKey = params["url"], params["secret_token"]
		ok(w, true)
	case "sendMessage":
		chat, err := strconv.ParseInt(params["chat_id"], 10, 64)
		switch {
		case err != nil:
			fail(w, http.StatusBadRequest, "Bad Request: chat not found")
		case params["text"] == "":
			fail(w, http.StatusBadRequest, "Bad Request: message text is empty")
		case s.blocked[chat]:
			fail(w, http.StatusForbidden, "Forbidden: bot was blocked by the user")
		case s.tooMany > 0:
			s.tooMany--
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": 429,
				"description": "Too Many Requests: retry after 1", "parameters": map[string]any{"retry_after": 1}})
		default:
			s.msgID++
			s.sent = append(s.sent, Message{ChatID: chat, Text: params["text"]})
			close(s.changed)
			s.changed = make(chan struct{})
			ok(w, models.Message{ID: s.msgID, Date: int(time.Now().Unix()), Chat: models.Chat{ID: chat, Type: models.ChatTypePrivate}, Text: params["text"]})
		}
	default:
		fail(w, http.StatusNotFound, "Not Found: method not found")
	}
}

func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	var c struct {
		ChatID   int64  `json:"chat_id"`
		Language string `json:"language"`
		Text     string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.ChatID == 0 {
		http.Error(w, "want {chat_id, language, text}", http.StatusBadRequest)
		return
	}
	status, body, err := s.Deliver(r.Context(), s.Start(c.ChatID, c.Language, c.Text))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "body": string(body)})
}

// readParams reads a method's parameters, sent as Telegram accepts
// them: multipart or URL-encoded forms, JSON, or the query.
func readParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		var v map[string]any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			return nil, err
		}
		for k, x := range v {
			switch x := x.(type) {
			case string:
				out[k] = x
			default:
				b, _ := json.Marshal(x)
				out[k] = string(b)
			}
		}
		return out, nil
	case "multipart/form-data":
		// A method without parameters comes as an empty body, which
		// Telegram takes as no parameters.
		if err := r.ParseMultipartForm(1 << 20); err != nil && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
			return nil, err
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
	}
	for k, v := range r.Form {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	if r.MultipartForm != nil {
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				out[k] = v[0]
			}
		}
	}
	return out, nil
}

func ok(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, status int, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error_code": status, "description": description})
}
