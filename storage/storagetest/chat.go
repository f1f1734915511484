package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
)

// chatNotifier records escalations and fails while fail is set.
type chatNotifier struct {
	mu    sync.Mutex
	fail  bool
	calls []chat.Escalation
}

func (n *chatNotifier) NotifyOperator(_ context.Context, e chat.Escalation) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail {
		return errors.New("support desk unreachable")
	}
	n.calls = append(n.calls, e)
	return nil
}

// gateNotifier holds the first notification until release is closed,
// having closed entered; the later ones pass at once. It counts them all.
type gateNotifier struct {
	mu      sync.Mutex
	calls   int
	entered chan struct{}
	release chan struct{}
}

func (n *gateNotifier) NotifyOperator(context.Context, chat.Escalation) error {
	n.mu.Lock()
	n.calls++
	first := n.calls == 1
	n.mu.Unlock()
	if first {
		close(n.entered)
		<-n.release
	}
	return nil
}

func (n *gateNotifier) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls
}

// chatEcho answers every message with "re: <text>".
type chatEcho struct{}

func (chatEcho) Respond(_ context.Context, q chat.Question) (chat.Answer, error) {
	return chat.Answer{Text: q.Language + ": re: " + q.Text}, nil
}

func testChat(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Chat == nil {
		t.Skip("this store has no chat store")
	}
	setup := func(t *testing.T) (*env, chat.Store, *chat.Service, *chatNotifier) {
		e := newEnv(t, newStores)
		n := &chatNotifier{}
		return e, e.stores.Chat, chat.NewService(e.stores.Chat, e.accounts, nil, chatEcho{}, n), n
	}
	session := func(t *testing.T, e *env, st chat.Store, userID int64, secret string) *chat.Session {
		t.Helper()
		s := &chat.Session{PublicID: "cs_" + secret, UserID: userID, Language: "en"}
		if err := st.CreateChatSession(e.ctx, s, account.HashToken(secret)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	add := func(t *testing.T, e *env, st chat.Store, sessionID int64, sender, text string, at time.Time) *chat.Message {
		t.Helper()
		m := &chat.Message{SessionID: sessionID, Sender: sender, Text: text, CreatedAt: at}
		if err := st.AddChatMessage(e.ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Messages are dated after the sessions were opened.
	base := time.Now().UTC().Truncate(time.Second).Add(time.Hour)

	t.Run("a session is found by its secret's hash and by its public id, nothing else", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "secret-a")
		if s.ID == 0 || s.CreatedAt.IsZero() || !s.LastMessageAt.Equal(s.CreatedAt) {
			t.Fatalf("created %+v", s)
		}
		got, err := st.ChatSessionBySecret(e.ctx, account.HashToken("secret-a"))
		if err != nil || got.ID != s.ID || got.PublicID != "cs_secret-a" || got.UserID != 0 || got.Escalated || !got.Open() || got.Language != "en" {
			t.Fatalf("by secret: %+v, %v", got, err)
		}
		if got, err := st.ChatSessionByPublicID(e.ctx, "cs_secret-a"); err != nil || got.ID != s.ID {
			t.Fatalf("by public id: %+v, %v", got, err)
		}
		if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken("cs_secret-a")); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("the public id opens the session: %v", err)
		}
		if _, err := st.ChatSessionByPublicID(e.ctx, "secret-a"); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("the secret is a public id: %v", err)
		}
		if err := st.CreateChatSession(e.ctx, &chat.Session{PublicID: "cs_x", UserID: 999999, Language: "en"}, account.HashToken("x")); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("a session of nobody: %v", err)
		}
	})

	t.Run("two sessions never see each other's messages", func(t *testing.T) {
		e, st, _, _ := setup(t)
		a, b := session(t, e, st, 0, "a"), session(t, e, st, 0, "b")
		for i := range 3 {
			add(t, e, st, a.ID, chat.SenderUser, fmt.Sprintf("a%d", i), base.Add(time.Duration(i)*time.Second))
			add(t, e, st, b.ID, chat.SenderSupport, fmt.Sprintf("b%d", i), base.Add(time.Duration(i)*time.Second))
		}
		texts := func(ms []*chat.Message) []string {
			var out []string
			for _, m := range ms {
				out = append(out, m.Text)
			}
			return out
		}
		ma, err := st.ChatMessages(e.ctx, a.ID, 0)
		if err != nil || !slices.Equal(texts(ma), []string{"a0", "a1", "a2"}) {
			t.Fatalf("session a: %v, %v", texts(ma), err)
		}
		mb, _ := st.ChatMessages(e.ctx, b.ID, 0)
		if !slices.Equal(texts(mb), []string{"b0", "b1", "b2"}) {
			t.Fatalf("session b: %v", texts(mb))
		}
		if ma[0].SessionID != a.ID || ma[0].Sender != chat.SenderUser || !ma[2].CreatedAt.Equal(base.Add(2*time.Second)) || ma[1].ID <= ma[0].ID {
			t.Fatalf("message %+v", ma[0])
		}
		last, _ := st.ChatMessages(e.ctx, a.ID, 2)
		if !slices.Equal(texts(last), []string{"a1", "a2"}) {
			t.Fatalf("the last two: %v", texts(last))
		}
		if none, err := st.ChatMessages(e.ctx, 999999, 0); err != nil || len(none) != 0 {
			t.Fatalf("messages of no session: %v, %v", none, err)
		}
		if err := st.AddChatMessage(e.ctx, &chat.Message{SessionID: 999999, Sender: chat.SenderUser, Text: "x"}); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("a message to no session: %v", err)
		}
		got, _ := st.ChatSessionByPublicID(e.ctx, a.PublicID)
		if got.MessageCount != 3 || !got.LastMessageAt.Equal(base.Add(2*time.Second)) {
			t.Fatalf("session after messages: %+v", got)
		}
	})

	t.Run("escalating and closing happen once and are remembered", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "s")
		if changed, err := st.EscalateChatSession(e.ctx, s.ID, base); err != nil || !changed {
			t.Fatalf("escalate: %v, %v", changed, err)
		}
		if changed, err := st.EscalateChatSession(e.ctx, s.ID, base.Add(time.Hour)); err != nil || changed {
			t.Fatalf("escalate again: %v, %v", changed, err)
		}
		if err := st.CloseChatSession(e.ctx, s.ID, base.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := st.CloseChatSession(e.ctx, s.ID, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _ := st.ChatSessionBySecret(e.ctx, account.HashToken("s"))
		if !got.Escalated || !got.EscalatedAt.Equal(base) || got.Open() || !got.ClosedAt.Equal(base.Add(time.Minute)) {
			t.Fatalf("session %+v", got)
		}
		if _, err := st.EscalateChatSession(e.ctx, 999999, base); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("escalate nothing: %v", err)
		}
		if err := st.CloseChatSession(e.ctx, 999999, base); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("close nothing: %v", err)
		}
	})

	t.Run("an anonymous session is claimed once, and its old secret then opens nothing", func(t *testing.T) {
		e, st, _, _ := setup(t)
		u, v := e.user("ann", 0, 0), e.user("bob", 0, 0)
		s := session(t, e, st, 0, "anon")
		if err := st.ClaimChatSession(e.ctx, s.ID, u.ID, account.HashToken("anon"), account.HashToken("ann's")); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken("anon")); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("the old secret still opens the session: %v", err)
		}
		if got, err := st.ChatSessionBySecret(e.ctx, account.HashToken("ann's")); err != nil || got.ID != s.ID || got.UserID != u.ID {
			t.Fatalf("by the new secret: %+v, %v", got, err)
		}
		// A second claim, with either secret, changes nothing.
		for _, old := range []string{"anon", "ann's"} {
			if err := st.ClaimChatSession(e.ctx, s.ID, v.ID, account.HashToken(old), account.HashToken("bob's")); !errors.Is(err, chat.ErrSessionNotFound) {
				t.Fatalf("claimed again with %q: %v", old, err)
			}
		}
		if got, _ := st.ChatSessionByPublicID(e.ctx, s.PublicID); got.UserID != u.ID {
			t.Fatalf("owner %d, want %d", got.UserID, u.ID)
		}
		if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken("bob's")); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("a refused claim set its secret: %v", err)
		}
		if err := st.ClaimChatSession(e.ctx, 999999, u.ID, account.HashToken("anon"), account.HashToken("x")); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("claim nothing: %v", err)
		}
		other := session(t, e, st, 0, "other")
		if err := st.ClaimChatSession(e.ctx, other.ID, u.ID, account.HashToken("wrong"), account.HashToken("y")); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("claim with another secret: %v", err)
		}
		if err := st.ClaimChatSession(e.ctx, other.ID, 999999, account.HashToken("other"), account.HashToken("z")); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("claim for nobody: %v", err)
		}
		if got, err := st.ChatSessionBySecret(e.ctx, account.HashToken("other")); err != nil || got.UserID != 0 {
			t.Fatalf("a refused claim changed the session: %+v, %v", got, err)
		}
	})

	t.Run("concurrent claims of one session: one wins, the others change nothing", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "contested")
		const n = 8
		users := make([]*account.User, n)
		for i := range n {
			users[i] = e.user(fmt.Sprint("claimer", i), 0, 0)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.ClaimChatSession(e.ctx, s.ID, users[i].ID, account.HashToken("contested"), account.HashToken(fmt.Sprint("new", i)))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner < 0:
				winner = i
			case err == nil:
				t.Fatalf("claims %d and %d both won", winner, i)
			case !errors.Is(err, chat.ErrSessionNotFound):
				t.Fatal(err)
			}
		}
		if winner < 0 {
			t.Fatal("no claim won")
		}
		for i := range n {
			got, err := st.ChatSessionBySecret(e.ctx, account.HashToken(fmt.Sprint("new", i)))
			if i == winner && (err != nil || got.UserID != users[i].ID) || i != winner && !errors.Is(err, chat.ErrSessionNotFound) {
				t.Fatalf("secret %d: %+v, %v", i, got, err)
			}
		}
	})

	t.Run("revoking a user's secrets closes the door of each of their sessions and nothing else", func(t *testing.T) {
		e, st, _, _ := setup(t)
		u, v := e.user("ann", 0, 0), e.user("bob", 0, 0)
		a1, a2 := session(t, e, st, u.ID, "ann-1"), session(t, e, st, u.ID, "ann-2")
		session(t, e, st, v.ID, "bob-1")
		session(t, e, st, 0, "anon-1")
		add(t, e, st, a1.ID, chat.SenderUser, "kept", base)
		if _, err := st.EscalateChatSession(e.ctx, a2.ID, base); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := st.RevokeChatSecrets(e.ctx, u.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, secret := range []string{"ann-1", "ann-2"} {
			if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken(secret)); !errors.Is(err, chat.ErrSessionNotFound) {
				t.Fatalf("%s still opens its session: %v", secret, err)
			}
		}
		for _, secret := range []string{"bob-1", "anon-1"} {
			if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken(secret)); err != nil {
				t.Fatalf("%s was revoked too: %v", secret, err)
			}
		}
		got, err := st.ChatSessionByPublicID(e.ctx, a1.PublicID)
		if err != nil || got.UserID != u.ID || !got.Open() || got.MessageCount != 1 {
			t.Fatalf("the session after revoking: %+v, %v", got, err)
		}
		if ms, _ := st.ChatMessages(e.ctx, a1.ID, 0); len(ms) != 1 {
			t.Fatalf("history after revoking: %d messages", len(ms))
		}
		if got, _ := st.ChatSessionByPublicID(e.ctx, a2.PublicID); !got.Escalated {
			t.Fatal("revoking unescalated the session")
		}
		if err := st.RevokeChatSecrets(e.ctx, 999999); err != nil {
			t.Fatalf("revoke for nobody: %v", err)
		}
		// A new session of the user is not touched by an earlier revocation.
		session(t, e, st, u.ID, "ann-3")
		if _, err := st.ChatSessionBySecret(e.ctx, account.HashToken("ann-3")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an escalation is held by one call until it ends, is cancelled, or is done", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "hold")
		until := base.Add(time.Minute)
		if ok, err := st.BeginChatEscalation(e.ctx, s.ID, base, until); err != nil || !ok {
			t.Fatalf("begin: %v, %v", ok, err)
		}
		if ok, err := st.BeginChatEscalation(e.ctx, s.ID, base.Add(59*time.Second), base.Add(2*time.Minute)); err != nil || ok {
			t.Fatalf("begin while held: %v, %v", ok, err)
		}
		// Cancelling another hold than the current one leaves it.
		if err := st.CancelChatEscalation(e.ctx, s.ID, base.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if ok, _ := st.BeginChatEscalation(e.ctx, s.ID, base.Add(30*time.Second), base.Add(3*time.Minute)); ok {
			t.Fatal("a stale cancel released the hold")
		}
		if err := st.CancelChatEscalation(e.ctx, s.ID, until); err != nil {
			t.Fatal(err)
		}
		until = base.Add(time.Hour)
		if ok, err := st.BeginChatEscalation(e.ctx, s.ID, base.Add(time.Second), until); err != nil || !ok {
			t.Fatalf("begin after cancel: %v, %v", ok, err)
		}
		// A hold that was never released ends by itself.
		if ok, err := st.BeginChatEscalation(e.ctx, s.ID, until, until.Add(time.Minute)); err != nil || !ok {
			t.Fatalf("begin once the hold ended: %v, %v", ok, err)
		}
		if changed, err := st.EscalateChatSession(e.ctx, s.ID, until); err != nil || !changed {
			t.Fatalf("escalate: %v, %v", changed, err)
		}
		if ok, err := st.BeginChatEscalation(e.ctx, s.ID, until.Add(time.Hour), until.Add(2*time.Hour)); err != nil || ok {
			t.Fatalf("begin once escalated: %v, %v", ok, err)
		}
		if _, err := st.BeginChatEscalation(e.ctx, 999999, base, until); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("begin nothing: %v", err)
		}
		if err := st.CancelChatEscalation(e.ctx, 999999, until); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("cancel nothing: %v", err)
		}
	})

	t.Run("concurrent holds of one escalation: exactly one is granted", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "race")
		const n = 16
		var wg sync.WaitGroup
		granted := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				granted[i], errs[i] = st.BeginChatEscalation(e.ctx, s.ID, base, base.Add(time.Minute))
			}()
		}
		wg.Wait()
		count := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if granted[i] {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("%d holds granted, want 1", count)
		}
	})

	t.Run("a user's chat is their open session with the highest id, else their latest one", func(t *testing.T) {
		e, st, _, _ := setup(t)
		u, v := e.user("ann", 0, 0), e.user("bob", 0, 0)
		if _, err := st.UserChatSession(e.ctx, u.ID); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("a user without a chat: %v", err)
		}
		session(t, e, st, 0, "anonymous")
		first := session(t, e, st, u.ID, "first")
		second := session(t, e, st, u.ID, "second")
		session(t, e, st, v.ID, "bobs")
		if got, err := st.UserChatSession(e.ctx, u.ID); err != nil || got.ID != second.ID || got.UserID != u.ID {
			t.Fatalf("two open sessions: %+v, %v; want the later %d", got, err, second.ID)
		}
		if err := st.CloseChatSession(e.ctx, second.ID, base); err != nil {
			t.Fatal(err)
		}
		if got, err := st.UserChatSession(e.ctx, u.ID); err != nil || got.ID != first.ID {
			t.Fatalf("the later one closed: %+v, %v; want the open %d", got, err, first.ID)
		}
		if err := st.CloseChatSession(e.ctx, first.ID, base); err != nil {
			t.Fatal(err)
		}
		if got, err := st.UserChatSession(e.ctx, u.ID); err != nil || got.ID != second.ID || got.Open() {
			t.Fatalf("both closed: %+v, %v; want the latest %d", got, err, second.ID)
		}
		if err := st.RevokeChatSecrets(e.ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := st.UserChatSession(e.ctx, u.ID); err != nil || got.ID != second.ID {
			t.Fatalf("after revoking the secrets the account still finds its chat: %+v, %v", got, err)
		}
		if _, err := st.UserChatSession(e.ctx, 0); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("user 0 names the anonymous sessions: %v", err)
		}
	})

	t.Run("the service: a user's session answers only that user, and claiming gives it a new secret", func(t *testing.T) {
		e, _, svc, _ := setup(t)
		u, v := e.user("ann", 0, 0), e.user("bob", 0, 0)
		anon, planted, err := svc.Open(e.ctx, chat.Caller{}, "en")
		if err != nil {
			t.Fatal(err)
		}
		// Sending as the signed-in user before claiming names no session.
		if _, err := svc.Send(e.ctx, chat.Caller{Secret: planted, User: u}, "hi"); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("a signed-in send to an unclaimed session: %v", err)
		}
		secret, err := svc.Claim(e.ctx, chat.Caller{Secret: planted, User: u})
		if err != nil || secret == planted || secret == "" {
			t.Fatalf("claim: %q, %v", secret, err)
		}
		if again, err := svc.Claim(e.ctx, chat.Caller{Secret: secret, User: u}); err != nil || again != secret {
			t.Fatalf("claiming one's own session: %q, %v", again, err)
		}
		if same, err := svc.Claim(e.ctx, chat.Caller{Secret: planted, User: v}); err != nil || same != planted {
			t.Fatalf("claiming with a dead secret: %q, %v", same, err)
		}
		if _, err := svc.Send(e.ctx, chat.Caller{Secret: secret, User: u}, "private"); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]chat.Caller{
			"the old secret alone": {Secret: planted},
			"the new secret alone": {Secret: secret}, "the new secret and another user": {Secret: secret, User: v},
		} {
			if _, err := svc.History(e.ctx, c); !errors.Is(err, chat.ErrSessionNotFound) {
				t.Errorf("history with %s: %v", name, err)
			}
			if _, err := svc.Send(e.ctx, c, "x"); !errors.Is(err, chat.ErrSessionNotFound) {
				t.Errorf("send with %s: %v", name, err)
			}
			if _, err := svc.CallOperator(e.ctx, c); !errors.Is(err, chat.ErrSessionNotFound) {
				t.Errorf("call with %s: %v", name, err)
			}
			if s, _, err := svc.Open(e.ctx, c, ""); err != nil || s.ID == anon.ID {
				t.Errorf("open with %s: %+v, %v", name, s, err)
			}
		}
		if ms, err := svc.History(e.ctx, chat.Caller{Secret: secret, User: u}); err != nil || len(ms) != 2 {
			t.Fatalf("the owner's history: %d messages, %v", len(ms), err)
		}
		// The chat belongs to the account: the user reaches it with any
		// secret, or none (another browser).
		for name, c := range map[string]chat.Caller{"no secret": {User: u}, "the old secret": {Secret: planted, User: u}} {
			if ms, err := svc.History(e.ctx, c); err != nil || len(ms) != 2 {
				t.Errorf("the owner's history with %s: %d messages, %v", name, len(ms), err)
			}
			if s, _, err := svc.Open(e.ctx, c, ""); err != nil || s.ID != anon.ID {
				t.Errorf("the owner opens with %s: %+v, %v", name, s, err)
			}
		}
		if err := svc.SignOut(e.ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.History(e.ctx, chat.Caller{Secret: secret}); !errors.Is(err, chat.ErrSessionNotFound) {
			t.Fatalf("history with the secret alone after signing out: %v", err)
		}
		if ms, err := svc.History(e.ctx, chat.Caller{User: u}); err != nil || len(ms) != 2 {
			t.Fatalf("signed in again: %d messages, %v", len(ms), err)
		}
	})

	t.Run("the operator's list puts open escalated sessions first, then the latest activity", func(t *testing.T) {
		e, st, _, _ := setup(t)
		var ss []*chat.Session
		for i := range 5 {
			ss = append(ss, session(t, e, st, 0, fmt.Sprintf("q%d", i)))
		}
		add(t, e, st, ss[0].ID, chat.SenderUser, "old", base)
		add(t, e, st, ss[1].ID, chat.SenderUser, "newest", base.Add(3*time.Hour))
		add(t, e, st, ss[2].ID, chat.SenderUser, "escalated", base.Add(time.Hour))
		add(t, e, st, ss[3].ID, chat.SenderUser, "escalated, closed", base.Add(2*time.Hour))
		add(t, e, st, ss[4].ID, chat.SenderUser, "escalated too", base.Add(30*time.Minute))
		for _, i := range []int{2, 3, 4} {
			if _, err := st.EscalateChatSession(e.ctx, ss[i].ID, base.Add(4*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.CloseChatSession(e.ctx, ss[3].ID, base.Add(5*time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := st.ChatSessions(e.ctx, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, s := range list {
			got = append(got, s.ID)
		}
		want := []int64{ss[2].ID, ss[4].ID, ss[1].ID, ss[3].ID, ss[0].ID}
		if !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
		page, _ := st.ChatSessions(e.ctx, 2, 3)
		if len(page) != 2 || page[0].ID != ss[3].ID || page[1].ID != ss[0].ID {
			t.Fatalf("page %v", page)
		}
		if past, err := st.ChatSessions(e.ctx, 10, 10); err != nil || len(past) != 0 {
			t.Fatalf("past the end: %v, %v", past, err)
		}
	})

	t.Run("concurrent messages to one session are all kept and counted", func(t *testing.T) {
		e, st, _, _ := setup(t)
		s := session(t, e, st, 0, "busy")
		const n = 40
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.AddChatMessage(e.ctx, &chat.Message{SessionID: s.ID, Sender: chat.SenderUser, Text: fmt.Sprint(i)})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		ms, _ := st.ChatMessages(e.ctx, s.ID, 0)
		got, _ := st.ChatSessionByPublicID(e.ctx, s.PublicID)
		if len(ms) != n || got.MessageCount != n {
			t.Fatalf("%d messages, count %d, want %d", len(ms), got.MessageCount, n)
		}
	})

	t.Run("concurrent calls for an operator notify once", func(t *testing.T) {
		e, st, _, _ := setup(t)
		n := &gateNotifier{entered: make(chan struct{}), release: make(chan struct{})}
		svc := chat.NewService(st, e.accounts, nil, chatEcho{}, n)
		s, secret, err := svc.Open(e.ctx, chat.Caller{}, "en")
		if err != nil {
			t.Fatal(err)
		}
		// The first call is held inside its notification while the others
		// arrive: none of them may notify again.
		first := make(chan error, 1)
		go func() {
			_, err := svc.CallOperator(e.ctx, chat.Caller{Secret: secret})
			first <- err
		}()
		<-n.entered
		const others = 8
		var wg sync.WaitGroup
		called := make([]*chat.Called, others)
		errs := make([]error, others)
		for i := range others {
			wg.Add(1)
			go func() {
				defer wg.Done()
				called[i], errs[i] = svc.CallOperator(e.ctx, chat.Caller{Secret: secret})
			}()
		}
		wg.Wait()
		close(n.release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for i := range others {
			if errs[i] != nil || !called[i].Already {
				t.Fatalf("a call during the first: %+v, %v", called[i], errs[i])
			}
		}
		if got := n.count(); got != 1 {
			t.Fatalf("%d notifications, want 1", got)
		}
		if got, _ := st.ChatSessionByPublicID(e.ctx, s.PublicID); !got.Escalated {
			t.Fatal("not escalated")
		}
		if again, err := svc.CallOperator(e.ctx, chat.Caller{Secret: secret}); err != nil || !again.Already || n.count() != 1 {
			t.Fatalf("calling once escalated: %+v, %v, %d notifications", again, err, n.count())
		}
	})

	t.Run("the service escalates only after the operator was told", func(t *testing.T) {
		e, st, svc, n := setup(t)
		s, secret, err := svc.Open(e.ctx, chat.Caller{}, "ru")
		if err != nil {
			t.Fatal(err)
		}
		sent, err := svc.Send(e.ctx, chat.Caller{Secret: secret}, "  привет  ")
		if err != nil || sent.Message.Text != "привет" || sent.Reply == nil || sent.Reply.Text != "ru: re: привет" || sent.Reply.Sender != chat.SenderSupport {
			t.Fatalf("send: %+v, %v", sent, err)
		}
		n.fail = true
		if _, err := svc.CallOperator(e.ctx, chat.Caller{Secret: secret}); !errors.Is(err, chat.ErrNotifyFailed) {
			t.Fatalf("call with the desk down: %v", err)
		}
		if got, _ := st.ChatSessionByPublicID(e.ctx, s.PublicID); got.Escalated {
			t.Fatal("escalated although nobody was told")
		}
		n.fail = false
		called, err := svc.CallOperator(e.ctx, chat.Caller{Secret: secret})
		if err != nil || called.Already || called.Message == "" || len(n.calls) != 1 {
			t.Fatalf("call: %+v, %v, %d calls", called, err, len(n.calls))
		}
		esc := n.calls[0]
		if esc.SessionID != s.PublicID || esc.UserID != 0 || esc.Language != "ru" || len(esc.LastMessages) != 2 || esc.LastMessages[0].Text != "привет" {
			t.Fatalf("escalation %+v", esc)
		}
		if got, _ := st.ChatSessionByPublicID(e.ctx, s.PublicID); !got.Escalated {
			t.Fatal("not escalated")
		}
		again, err := svc.CallOperator(e.ctx, chat.Caller{Secret: secret})
		if err != nil || !again.Already || len(n.calls) != 1 {
			t.Fatalf("calling again: %+v, %v, %d calls", again, err, len(n.calls))
		}
		sent, err = svc.Send(e.ctx, chat.Caller{Secret: secret}, "hello?")
		if err != nil || sent.Reply != nil {
			t.Fatalf("an escalated session got an automatic answer: %+v, %v", sent, err)
		}
	})
}
