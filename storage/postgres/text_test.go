package postgres_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
)

// TestTextTheDatabaseCannotHoldIsInvalidInput: the domains refuse NUL
// and invalid UTF-8 before any store sees them (the text rule, package
// input); should such text reach PostgreSQL anyway (a caller of the store
// itself, a field a domain forgot), PostgreSQL's refusal (SQLSTATE 22021
// or 22P05) is invalid input, which the server answers 400, never a
// storage failure answered 500.
func TestTextTheDatabaseCannotHoldIsInvalidInput(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx
	u := e.user("text", 0)
	invalid := func(t *testing.T, what string, err error) {
		t.Helper()
		var ie *input.Error
		if !errors.Is(err, input.ErrInvalid) || !errors.As(err, &ie) || ie.Field == "" || ie.Reason == "" {
			t.Fatalf("%s: got %v, want an *input.Error", what, err)
		}
	}
	t.Run("a NUL in a stored name is invalid input", func(t *testing.T) {
		invalid(t, "CreatePartner", e.store.CreatePartner(ctx, &partner.Partner{Name: "P\x00"}, []byte("key-hash-nul")))
	})
	t.Run("a NUL in a profile field is invalid input and changes nothing", func(t *testing.T) {
		url := "https://x.example/\x00"
		_, err := e.store.UpdateProfile(ctx, u.ID, account.ProfilePatch{AvatarURL: &url})
		invalid(t, "UpdateProfile", err)
		got, err := e.store.User(ctx, u.ID)
		if err != nil || got.AvatarURL != nil {
			t.Fatalf("user %+v, %v", got, err)
		}
	})
	t.Run("a NUL in a looked-up e-mail is invalid input", func(t *testing.T) {
		_, _, err := e.store.UserByEmail(ctx, "a\x00@example.com")
		invalid(t, "UserByEmail", err)
	})
	t.Run("a NUL in JSON data is invalid input", func(t *testing.T) {
		invalid(t, "CreateNotification", e.store.CreateNotification(ctx, &social.Notification{UserID: u.ID, Type: social.TypeCommentReply,
			Data: social.NotificationData{Excerpt: "a\x00b"}}))
	})
	t.Run("invalid UTF-8 in a looked-up id is invalid input", func(t *testing.T) {
		_, err := e.store.SubAccount(ctx, 1, "\xff")
		invalid(t, "SubAccount", err)
		_, err = e.store.ChatSessionByPublicID(ctx, "cs_\xed\xa0\x80")
		invalid(t, "ChatSessionByPublicID", err)
	})
}
