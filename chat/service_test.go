package chat_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
)

// notes records notifications and fails while fail is set.
type notes struct {
	social.NotificationStore
	got  []social.Notification
	fail bool
}

func (n *notes) CreateNotification(_ context.Context, x *social.Notification) error {
	if n.fail {
		return errors.New("disk full")
	}
	n.got = append(n.got, *x)
	return nil
}

func newChat(t *testing.T) (*chat.Service, *memory.Store, *notes, func(name, lang string) *account.User) {
	t.Helper()
	store := memory.New()
	accounts := account.NewService(store)
	n := &notes{}
	responder, err := chat.LoadFAQResponder("")
	if err != nil {
		t.Fatal(err)
	}
	svc := chat.NewService(store, accounts, n, responder, chat.LogNotifier{})
	i := 0
	user := func(name, lang string) *account.User {
		i++
		u := &account.User{Name: name, Email: name + "@example.com", Language: lang}
		if err := store.CreateUser(context.Background(), u, "x"); err != nil {
			t.Fatal(err)
		}
		return u
	}
	return svc, store, n, user
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	t.Run("a new session has a secret and a public id that differ", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		s, secret, err := svc.Open(ctx, chat.Caller{}, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(secret) < 40 || !strings.HasPrefix(s.PublicID, "cs_") || strings.Contains(secret, s.PublicID[3:]) || s.Language != "en" || s.UserID != 0 {
			t.Fatalf("session %+v, secret %q", s, secret)
		}
	})
	t.Run("the secret of an open session returns it", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		s, secret, _ := svc.Open(ctx, chat.Caller{}, "ru")
		again, secret2, err := svc.Open(ctx, chat.Caller{Secret: secret}, "en")
		if err != nil || again.ID != s.ID || secret2 != secret || again.Language != "ru" {
			t.Fatalf("again %+v, %v", again, err)
		}
	})
	t.Run("an unknown secret opens a new session", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		s, secret, err := svc.Open(ctx, chat.Caller{Secret: "forged"}, "")
		if err != nil || secret == "forged" || s.ID == 0 {
			t.Fatalf("%+v %q %v", s, secret, err)
		}
	})
	t.Run("signing in claims the anonymous session", func(t *testing.T) {
		svc, _, _, user := newChat(t)
		ann := user("ann", "ru")
		_, secret, _ := svc.Open(ctx, chat.Caller{}, "en")
		s, _, err := svc.Open(ctx, chat.Caller{Secret: secret, User: ann}, "")
		if err != nil || s.UserID != ann.ID {
			t.Fatalf("%+v %v", s, err)
		}
	})
	t.Run("another user's session is not theirs to open or read", func(t *testing.T) {
		svc, _, _, user := newChat(t)
		ann, bob := user("ann", "en"), user("bob", "en")
		annS, secret, _ := svc.Open(ctx, chat.Caller{User: ann}, "")
		if _, err := svc.Send(ctx, chat.Caller{Secret: secret, User: ann}, "private"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.History(ctx, chat.Caller{Secret: secret, User: bob}); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("bob reads ann's history: %v", err)
		}
		bobS, _, err := svc.Open(ctx, chat.Caller{Secret: secret, User: bob}, "")
		if err != nil || bobS.ID == annS.ID || bobS.UserID != bob.ID {
			t.Fatalf("bob got %+v, %v", bobS, err)
		}
	})
	t.Run("a closed session's secret opens a new one, and its history stays readable", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		s, secret, _ := svc.Open(ctx, chat.Caller{}, "")
		if _, err := svc.Send(ctx, chat.Caller{Secret: secret}, "hi"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Close(ctx, s.PublicID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Send(ctx, chat.Caller{Secret: secret}, "still there?"); !errors.Is(err, chat.ErrSessionClosed) {
			t.Fatalf("send to a closed session: %v", err)
		}
		if _, err := svc.CallOperator(ctx, chat.Caller{Secret: secret}); !errors.Is(err, chat.ErrSessionClosed) {
			t.Fatalf("call from a closed session: %v", err)
		}
		if h, err := svc.History(ctx, chat.Caller{Secret: secret}); err != nil || len(h) != 2 {
			t.Fatalf("history of a closed session: %v, %v", h, err)
		}
		n, newSecret, err := svc.Open(ctx, chat.Caller{Secret: secret}, "")
		if err != nil || n.ID == s.ID || newSecret == secret {
			t.Fatalf("reopen: %+v, %v", n, err)
		}
	})
}

func TestReplyNotifies(t *testing.T) {
	ctx := context.Background()
	t.Run("an answer to a signed-in user makes exactly one support_reply notification", func(t *testing.T) {
		svc, _, n, user := newChat(t)
		ann := user("ann", "en")
		s, _, _ := svc.Open(ctx, chat.Caller{User: ann}, "")
		long := strings.Repeat("Ответ оператора. ", 20)
		m, err := svc.Reply(ctx, s.PublicID, long)
		if err != nil || m.Sender != chat.SenderSupport {
			t.Fatalf("%+v %v", m, err)
		}
		if len(n.got) != 1 {
			t.Fatalf("%d notifications", len(n.got))
		}
		got := n.got[0]
		if got.UserID != ann.ID || got.Type != social.TypeSupportReply || got.RelatedType != social.RelatedChat || got.RelatedID != s.ID ||
			got.Data.Excerpt != string([]rune(strings.TrimSpace(long))[:140]) {
			t.Fatalf("notification %+v", got)
		}
	})
	t.Run("an answer to an anonymous session notifies nobody", func(t *testing.T) {
		svc, _, n, _ := newChat(t)
		s, _, _ := svc.Open(ctx, chat.Caller{}, "")
		if _, err := svc.Reply(ctx, s.PublicID, "hello"); err != nil {
			t.Fatal(err)
		}
		if len(n.got) != 0 {
			t.Fatalf("%d notifications", len(n.got))
		}
	})
	t.Run("a notification that cannot be written does not lose the answer", func(t *testing.T) {
		svc, store, n, user := newChat(t)
		n.fail = true
		s, _, _ := svc.Open(ctx, chat.Caller{User: user("ann", "en")}, "")
		if _, err := svc.Reply(ctx, s.PublicID, "hello"); err != nil {
			t.Fatal(err)
		}
		if ms, _ := store.ChatMessages(ctx, s.ID, 0); len(ms) != 1 {
			t.Fatalf("%d messages", len(ms))
		}
	})
	t.Run("an unknown session and an empty answer are refused", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		if _, err := svc.Reply(ctx, "cs_nobody", "hello"); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("got %v", err)
		}
		s, _, _ := svc.Open(ctx, chat.Caller{}, "")
		if _, err := svc.Reply(ctx, s.PublicID, "   "); !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestAutomaticAnswerLanguage(t *testing.T) {
	ctx := context.Background()
	t.Run("a signed-in user is answered in their profile language", func(t *testing.T) {
		svc, _, _, user := newChat(t)
		ivan := user("ivan", "ru")
		_, secret, _ := svc.Open(ctx, chat.Caller{User: ivan}, "en")
		sent, err := svc.Send(ctx, chat.Caller{Secret: secret, User: ivan}, "how do I deposit?")
		if err != nil || sent.Reply == nil || !strings.Contains(sent.Reply.Text, "пополнения") {
			t.Fatalf("%+v %v", sent, err)
		}
	})
	t.Run("an anonymous session is answered in its own language and offered the operator", func(t *testing.T) {
		svc, _, _, _ := newChat(t)
		_, secret, _ := svc.Open(ctx, chat.Caller{}, "ru")
		sent, err := svc.Send(ctx, chat.Caller{Secret: secret}, "что-то странное")
		if err != nil || sent.Reply == nil || !sent.OfferOperator || !strings.Contains(sent.Reply.Text, "оператора") {
			t.Fatalf("%+v %v", sent, err)
		}
	})
}

func TestChatBelongsToTheAccount(t *testing.T) {
	ctx := context.Background()
	t.Run("a signed-in user reaches their chat from any browser, with any secret or none", func(t *testing.T) {
		svc, _, _, user := newChat(t)
		ann := user("ann", "en")
		s, secret, err := svc.Open(ctx, chat.Caller{User: ann}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Send(ctx, chat.Caller{Secret: secret, User: ann}, "from the laptop"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Reply(ctx, s.PublicID, "an operator's answer"); err != nil {
			t.Fatal(err)
		}
		phone := chat.Caller{User: ann}
		again, kept, err := svc.Open(ctx, phone, "")
		if err != nil || again.ID != s.ID || kept != "" {
			t.Fatalf("the phone opened %+v (secret %q), %v; want session %d", again, kept, err, s.ID)
		}
		ms, err := svc.History(ctx, phone)
		if err != nil || len(ms) < 3 || ms[len(ms)-1].Text != "an operator's answer" {
			t.Fatalf("the phone's history: %v, %v", ms, err)
		}
	})
	t.Run("an anonymous chat is attached only when the account has no open chat", func(t *testing.T) {
		svc, _, _, user := newChat(t)
		ann := user("ann", "en")
		first, planted, _ := svc.Open(ctx, chat.Caller{}, "en")
		secret, err := svc.Claim(ctx, chat.Caller{Secret: planted, User: ann})
		if err != nil || secret == planted {
			t.Fatalf("the first anonymous chat was not attached: %q, %v", secret, err)
		}
		second, other, _ := svc.Open(ctx, chat.Caller{}, "en")
		if kept, err := svc.Claim(ctx, chat.Caller{Secret: other, User: ann}); err != nil || kept != other {
			t.Fatalf("the second anonymous chat was taken: %q, %v", kept, err)
		}
		if s, _, err := svc.Open(ctx, chat.Caller{Secret: other, User: ann}, ""); err != nil || s.ID != first.ID {
			t.Fatalf("signed in, the second browser opened %+v, %v; want the account's %d", s, err, first.ID)
		}
		if s, _, err := svc.Open(ctx, chat.Caller{Secret: other}, ""); err != nil || s.ID != second.ID || s.UserID != 0 {
			t.Fatalf("signed out, the second browser opened %+v, %v; want its anonymous %d", s, err, second.ID)
		}
	})
}
