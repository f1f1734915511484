package storagetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/telegram"
)

// testTelegram checks Telegram's links and the notification sender's
// cursor. Times are given, so that expiry is checked on the test's own
// clock.
func testTelegram(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Telegram == nil {
		t.Skip("no Telegram store")
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var updates int64
	update := func() int64 { updates++; return updates }
	// link makes a token for u at now and returns its hash.
	link := func(e *env, u *account.User, now time.Time) []byte {
		e.t.Helper()
		_, hash := telegram.NewToken()
		if err := e.stores.Telegram.CreateTelegramLinkToken(e.ctx, u.ID, hash, now, now.Add(telegram.TokenTTL)); err != nil {
			e.t.Fatal(err)
		}
		return hash
	}
	reread := func(e *env, u *account.User) *account.User {
		e.t.Helper()
		got, err := e.stores.Accounts.User(e.ctx, u.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		return got
	}
	linked := func(e *env, u *account.User, want bool) {
		e.t.Helper()
		if got := reread(e, u); got.TelegramVerified != want || got.TelegramNotifications != want {
			e.t.Fatalf("user %d: verified %v, notifications %v; want both %v", u.ID, got.TelegramVerified, got.TelegramNotifications, want)
		}
	}

	t.Run("a link token links its user's chat once", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("tanya", 0, 0)
		hash := link(e, u, t0)
		got, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hash, 555, t0.Add(time.Minute))
		if err != nil || got.ID != u.ID || !got.TelegramVerified || !got.TelegramNotifications {
			t.Fatalf("link: %+v, %v", got, err)
		}
		linked(e, u, true)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hash, 999, t0.Add(2*time.Minute)); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatalf("the token used again: %v, want ErrInvalidLinkToken", err)
		}
		// The used token moved nothing: the account's chat is still 555,
		// which a new link from chat 999 shows by unlinking nobody else.
		linked(e, u, true)
	})

	t.Run("a token expires after fifteen minutes", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("ulya", 0, 0)
		hash := link(e, u, t0)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hash, 556, t0.Add(telegram.TokenTTL)); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatalf("at its expiry: %v, want ErrInvalidLinkToken", err)
		}
		linked(e, u, false)
		hash = link(e, u, t0)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hash, 556, t0.Add(telegram.TokenTTL-time.Microsecond)); err != nil {
			t.Fatalf("just before its expiry: %v", err)
		}
		linked(e, u, true)
	})

	t.Run("an unknown token links nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("vera", 0, 0)
		link(e, u, t0)
		_, other := telegram.NewToken()
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), other, 557, t0); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatalf("unknown token: %v", err)
		}
		linked(e, u, false)
	})

	t.Run("a new token replaces the user's unused one", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("wanda", 0, 0)
		first := link(e, u, t0)
		second := link(e, u, t0.Add(time.Minute))
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), first, 558, t0.Add(2*time.Minute)); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatalf("the older token: %v, want ErrInvalidLinkToken", err)
		}
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), second, 558, t0.Add(2*time.Minute)); err != nil {
			t.Fatalf("the newer token: %v", err)
		}
		if err := e.stores.Telegram.CreateTelegramLinkToken(e.ctx, 1<<40, first, t0, t0.Add(time.Minute)); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("a token for nobody: %v, want ErrUserNotFound", err)
		}
	})

	t.Run("a redelivered update does nothing twice", func(t *testing.T) {
		e := newEnv(t, newStores)
		a, b := e.user("xena", 0, 0), e.user("yana", 0, 0)
		id := update()
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, id, link(e, a, t0), 559, t0); err != nil {
			t.Fatal(err)
		}
		hb := link(e, b, t0)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, id, hb, 560, t0); !errors.Is(err, telegram.ErrUpdateSeen) {
			t.Fatalf("the same update again: %v, want ErrUpdateSeen", err)
		}
		linked(e, b, false)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hb, 560, t0); err != nil {
			t.Fatalf("the token the seen update did not take: %v", err)
		}
		// An invalid token's update is recorded too.
		bad := update()
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, bad, []byte("nothing"), 561, t0); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatal(err)
		}
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, bad, []byte("nothing"), 561, t0); !errors.Is(err, telegram.ErrUpdateSeen) {
			t.Fatalf("an invalid token's update again: %v, want ErrUpdateSeen", err)
		}
		other := update()
		for i, want := range []bool{true, false} {
			fresh, err := e.stores.Telegram.MarkTelegramUpdate(e.ctx, other, t0)
			if err != nil || fresh != want {
				t.Fatalf("mark %d: %v, %v; want %v", i, fresh, err, want)
			}
		}
	})

	t.Run("a chat is linked to one account at a time", func(t *testing.T) {
		e := newEnv(t, newStores)
		a, b := e.user("zoya", 0, 0), e.user("alla", 0, 0)
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), link(e, a, t0), 562, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), link(e, b, t0), 562, t0); err != nil {
			t.Fatal(err)
		}
		linked(e, a, false)
		linked(e, b, true)
	})

	t.Run("unlinking turns notifications off, and they need a link", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("bella", 0, 0)
		name := "Bella"
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{Name: &name, TelegramNotifications: ptr(true)}); !errors.Is(err, account.ErrTelegramNotLinked) {
			t.Fatalf("notifications on without a link: %v, want ErrTelegramNotLinked", err)
		}
		if got := reread(e, u); got.Name == name || got.TelegramNotifications {
			t.Fatalf("a refused patch changed the user: %+v", got)
		}
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{TelegramNotifications: ptr(false)}); err != nil {
			t.Fatalf("notifications off without a link: %v", err)
		}
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), link(e, u, t0), 563, t0); err != nil {
			t.Fatal(err)
		}
		got, err := e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{TelegramNotifications: ptr(false)})
		if err != nil || got.TelegramNotifications || !got.TelegramVerified {
			t.Fatalf("notifications off: %+v, %v", got, err)
		}
		if got, err = e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{TelegramNotifications: ptr(true)}); err != nil || !got.TelegramNotifications {
			t.Fatalf("notifications on: %+v, %v", got, err)
		}
		unused := link(e, u, t0)
		if err := e.stores.Telegram.UnlinkTelegram(e.ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		linked(e, u, false)
		if err := e.stores.Telegram.UnlinkTelegram(e.ctx, u.ID); err != nil {
			t.Fatalf("unlinking again: %v", err)
		}
		if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), unused, 563, t0); !errors.Is(err, telegram.ErrInvalidLinkToken) {
			t.Fatalf("a token from before the unlink: %v, want ErrInvalidLinkToken", err)
		}
		if err := e.stores.Telegram.UnlinkTelegram(e.ctx, 1<<40); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("unlinking nobody: %v", err)
		}
	})

	testTelegramSender(t, newStores, update)
}

// testTelegramSender checks DeliverTelegram: what it sends, once, and
// where its cursor stops.
func testTelegramSender(t *testing.T, newStores func(*testing.T) Stores, update func() int64) {
	t0 := time.Now().UTC()
	type sent struct {
		chat int64
		lang string
		typ  string
	}
	setup := func(t *testing.T) (*env, social.NotificationStore, func(*account.User, int64)) {
		e := newEnv(t, newStores)
		notes, ok := e.stores.Markets.(social.NotificationStore)
		if !ok || e.stores.Changes == nil {
			t.Skip("no notifications or change log")
		}
		linkChat := func(u *account.User, chat int64) {
			_, hash := telegram.NewToken()
			if err := e.stores.Telegram.CreateTelegramLinkToken(e.ctx, u.ID, hash, t0, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.stores.Telegram.LinkTelegram(e.ctx, update(), hash, chat, t0); err != nil {
				t.Fatal(err)
			}
		}
		return e, notes, linkChat
	}
	notify := func(e *env, notes social.NotificationStore, u *account.User, typ string) {
		e.t.Helper()
		if err := notes.CreateNotification(e.ctx, &social.Notification{UserID: u.ID, Type: typ, Data: social.NotificationData{Author: "x", Excerpt: "y"}}); err != nil {
			e.t.Fatal(err)
		}
	}
	deliver := func(e *env, fail func(d telegram.Delivery) error) ([]sent, int, error) {
		var out []sent
		n, err := e.stores.Telegram.DeliverTelegram(e.ctx, 100, func(_ context.Context, d telegram.Delivery) error {
			if fail != nil {
				if err := fail(d); err != nil {
					return err
				}
			}
			var v struct{ Type string }
			_ = json.Unmarshal(d.Entry.Data, &v)
			out = append(out, sent{d.ChatID, d.Language, v.Type})
			return nil
		})
		return out, n, err
	}

	t.Run("the sender starts at the log's end and sends each linked user's notification once", func(t *testing.T) {
		e, notes, linkChat := setup(t)
		a, b := e.user("cora", 0, 0), e.user("dina", 0, 0)
		linkChat(a, 700)
		notify(e, notes, a, social.TypeSupportReply) // before the sender's first run: not owed
		if got, _, err := deliver(e, nil); err != nil || len(got) != 0 {
			t.Fatalf("first run: %v, %v", got, err)
		}
		lang := "ru"
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, a.ID, account.ProfilePatch{Language: &lang}); err != nil {
			t.Fatal(err)
		}
		notify(e, notes, a, social.TypeCommentReply)
		notify(e, notes, b, social.TypeCommentReply)
		notify(e, notes, a, social.TypeSupportReply)
		got, n, err := deliver(e, nil)
		want := []sent{{700, "ru", social.TypeCommentReply}, {700, "ru", social.TypeSupportReply}}
		if err != nil || n != 3 || !slices.Equal(got, want) {
			t.Fatalf("sent %v (%d entries, %v), want %v", got, n, err, want)
		}
		if got, n, err := deliver(e, nil); err != nil || n != 0 || len(got) != 0 {
			t.Fatalf("again: %v (%d entries, %v), want nothing", got, n, err)
		}
		bounds, err := e.stores.Changes.ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := e.stores.Changes.ChangeCursor(e.ctx, telegram.ConsumerName); err != nil || c != bounds.Last {
			t.Fatalf("cursor %d (%v), want the log's end %d", c, err, bounds.Last)
		}
	})

	t.Run("a failed send stops the sender, and only it is sent again", func(t *testing.T) {
		e, notes, linkChat := setup(t)
		a := e.user("ella", 0, 0)
		linkChat(a, 701)
		if _, _, err := deliver(e, nil); err != nil {
			t.Fatal(err)
		}
		notify(e, notes, a, social.TypeCommentReply)
		notify(e, notes, a, social.TypeSupportReply)
		down := errors.New("down")
		got, _, err := deliver(e, func(d telegram.Delivery) error {
			if bytes.Contains(d.Entry.Data, []byte(social.TypeSupportReply)) {
				return down
			}
			return nil
		})
		if !errors.Is(err, down) || len(got) != 1 || got[0].typ != social.TypeCommentReply {
			t.Fatalf("with the second send failing: %v, %v", got, err)
		}
		got, _, err = deliver(e, nil)
		if err != nil || len(got) != 1 || got[0].typ != social.TypeSupportReply {
			t.Fatalf("after the failure: %v, %v; want the failed one alone", got, err)
		}
	})

	t.Run("a chat that blocked the bot has its notifications turned off", func(t *testing.T) {
		e, notes, linkChat := setup(t)
		a := e.user("faina", 0, 0)
		linkChat(a, 702)
		if _, _, err := deliver(e, nil); err != nil {
			t.Fatal(err)
		}
		notify(e, notes, a, social.TypeCommentReply)
		notify(e, notes, a, social.TypeSupportReply)
		calls := 0
		got, n, err := deliver(e, func(telegram.Delivery) error { calls++; return telegram.ErrBlocked })
		if err != nil || calls != 1 || len(got) != 0 || n != 2 {
			t.Fatalf("blocked: %d calls, %v, %d entries, %v; want one call and both entries handled", calls, got, n, err)
		}
		u, err := e.stores.Accounts.User(e.ctx, a.ID)
		if err != nil || u.TelegramNotifications || !u.TelegramVerified {
			t.Fatalf("after the block: %+v, %v; want linked with notifications off", u, err)
		}
	})
}
