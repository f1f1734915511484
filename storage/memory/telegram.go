package memory

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/telegram"
)

var _ telegram.Store = (*Store)(nil)

// telegramUpdateTTL is how long an update's id is remembered: Telegram
// stops redelivering an update after a day.
const telegramUpdateTTL = 48 * time.Hour

// telegramState is the Telegram links (migration 00042's, in memory).
// The user's flags (TelegramVerified, TelegramNotifications) are on its
// record; the chat is here.
type telegramState struct {
	tokens  map[string]telegramToken // by hash
	chats   map[int64]int64          // chat → user
	chatOf  map[int64]int64          // user → chat
	updates map[int64]time.Time      // update id → received

	// send is held by the one DeliverTelegram running, across its
	// messages, without holding the store's lock.
	send sync.Mutex
}

type telegramToken struct {
	user    int64
	expires time.Time
}

// telegram returns the state, made on first use. Callers hold s.mu.
func (s *Store) telegram() *telegramState {
	if s.tg == nil {
		s.tg = &telegramState{tokens: map[string]telegramToken{}, chats: map[int64]int64{}, chatOf: map[int64]int64{}, updates: map[int64]time.Time{}}
	}
	return s.tg
}

// CreateTelegramLinkToken implements telegram.Store.
func (s *Store) CreateTelegramLinkToken(_ context.Context, userID int64, hash []byte, now, expiresAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return account.ErrUserNotFound
	}
	st := s.telegram()
	for h, t := range st.tokens {
		if t.user == userID || !now.Before(t.expires) {
			delete(st.tokens, h)
		}
	}
	st.tokens[string(hash)] = telegramToken{user: userID, expires: expiresAt}
	return nil
}

// markUpdate records update id and reports whether it is new, forgetting
// the ids of long ago. Callers hold s.mu.
func (st *telegramState) markUpdate(id int64, now time.Time) bool {
	if _, seen := st.updates[id]; seen {
		return false
	}
	for u, at := range st.updates {
		if now.Sub(at) > telegramUpdateTTL {
			delete(st.updates, u)
		}
	}
	st.updates[id] = now
	return true
}

// MarkTelegramUpdate implements telegram.Store.
func (s *Store) MarkTelegramUpdate(_ context.Context, updateID int64, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.telegram().markUpdate(updateID, now), nil
}

// LinkTelegram implements telegram.Store.
func (s *Store) LinkTelegram(_ context.Context, updateID int64, hash []byte, chatID int64, now time.Time) (*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.telegram()
	if !st.markUpdate(updateID, now) {
		return nil, telegram.ErrUpdateSeen
	}
	t, ok := st.tokens[string(hash)]
	delete(st.tokens, string(hash))
	rec := s.users[t.user]
	if !ok || !now.Before(t.expires) || rec == nil {
		return nil, telegram.ErrInvalidLinkToken
	}
	if other, ok := st.chats[chatID]; ok && other != t.user {
		s.unlinkTelegram(other)
	}
	if old, ok := st.chatOf[t.user]; ok {
		delete(st.chats, old)
	}
	st.chats[chatID], st.chatOf[t.user] = t.user, chatID
	rec.u.TelegramVerified, rec.u.TelegramNotifications = true, true
	u := cloneUser(rec.u)
	return &u, nil
}

// unlinkTelegram unlinks user id. Callers hold s.mu.
func (s *Store) unlinkTelegram(id int64) {
	st := s.telegram()
	if chat, ok := st.chatOf[id]; ok {
		delete(st.chats, chat)
		delete(st.chatOf, id)
	}
	for h, t := range st.tokens {
		if t.user == id {
			delete(st.tokens, h)
		}
	}
	if rec := s.users[id]; rec != nil {
		rec.u.TelegramVerified, rec.u.TelegramNotifications = false, false
	}
}

// UnlinkTelegram implements telegram.Store.
func (s *Store) UnlinkTelegram(_ context.Context, userID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return account.ErrUserNotFound
	}
	s.unlinkTelegram(userID)
	return nil
}

// telegramRecipient is user id's chat and language, when its
// notifications go to Telegram.
func (s *Store) telegramRecipient(id int64) (chat int64, lang string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.users[id]
	if rec == nil || !rec.u.TelegramNotifications {
		return 0, "", false
	}
	chat, ok = s.telegram().chatOf[id]
	return chat, rec.u.Language, ok
}

// telegramRecipients are the users whose notifications go to a chat.
func (s *Store) telegramRecipients() map[int64]telegram.Recipient {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int64]telegram.Recipient{}
	for id, chat := range s.telegram().chatOf {
		if rec := s.users[id]; rec != nil && rec.u.TelegramNotifications {
			out[id] = telegram.Recipient{ChatID: chat, Language: rec.u.Language}
		}
	}
	return out
}

// marketName is market id's name.
func (s *Store) marketName(ctx context.Context, id int64) (string, error) {
	m, err := s.Market(ctx, id)
	if err != nil {
		return "", err
	}
	return m.Name, nil
}

// telegramBlocked turns user id's notifications off if chat is still
// its chat.
func (s *Store) telegramBlocked(id, chat int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.users[id]; rec != nil && s.telegram().chatOf[id] == chat {
		rec.u.TelegramNotifications = false
	}
}

// DeliverTelegram implements telegram.Store. The cursor is the change
// log's (so pruning keeps what the sender has not read), in memory like
// the log.
func (s *Store) DeliverTelegram(ctx context.Context, limit int, send func(context.Context, telegram.Delivery) error) (int, error) {
	s.mu.Lock()
	st := s.telegram()
	s.mu.Unlock()
	st.send.Lock()
	defer st.send.Unlock()
	after, ok := s.changes.Cursor(telegram.ConsumerName)
	if !ok {
		b, err := s.changes.ChangeBounds(ctx)
		if err != nil {
			return 0, err
		}
		after = b.Last
		s.changes.SetCursor(telegram.ConsumerName, after)
	}
	es, err := s.changes.Changes(ctx, after, limit)
	if err != nil {
		return 0, err
	}
	// deliver sends d; a blocked chat turns its notifications off.
	deliver := func(d telegram.Delivery) error {
		err := send(ctx, d)
		if errors.Is(err, telegram.ErrBlocked) {
			s.telegramBlocked(d.Entry.UserID, d.ChatID)
			return nil
		}
		return err
	}
	for i, e := range es {
		switch {
		case e.Type == changelog.Notification:
			if chat, lang, ok := s.telegramRecipient(e.UserID); ok {
				if err := deliver(telegram.Delivery{Entry: e, ChatID: chat, Language: lang}); err != nil {
					return i, err
				}
			}
		case e.Type == changelog.MarketResolved && e.UserID == 0:
			ds, err := telegram.ResolutionDeliveries(ctx, e, s.telegramRecipients(), s, s.marketName)
			if err != nil {
				return i, err
			}
			for _, d := range ds {
				if err := deliver(d); err != nil {
					return i, err
				}
			}
		}
		s.changes.SetCursor(telegram.ConsumerName, e.Seq)
	}
	return len(es), nil
}
