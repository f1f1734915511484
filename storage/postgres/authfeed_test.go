package postgres_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func TestParseAuthChange(t *testing.T) {
	hash := account.HashToken("tok")
	cases := []struct {
		name    string
		payload string
		want    account.Invalidation
		ours    bool
	}{
		{"a revoked token of our schema names its hash", "s1:t:" + hex.EncodeToString(hash), account.Invalidation{TokenHash: hash}, true},
		{"a changed user of our schema names the user", "s1:u:42", account.Invalidation{UserID: 42}, true},
		{"a changed partner of our schema names the partner", "s1:p:7", account.Invalidation{PartnerID: 7}, true},
		{"a change in another schema is not ours", "s2:u:42", account.Invalidation{}, false},
		{"a schema whose name starts like ours is another", "s10:u:42", account.Invalidation{}, false},
		{"a payload of ours that does not parse drops everything", "s1:u:forty", account.Invalidation{All: true}, true},
		{"an unknown kind drops everything", "s1:x:1", account.Invalidation{All: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ours := postgres.ParseAuthChange(c.payload, "s1")
			if ours != c.ours || got.UserID != c.want.UserID || got.PartnerID != c.want.PartnerID || got.All != c.want.All || !bytes.Equal(got.TokenHash, c.want.TokenHash) {
				t.Fatalf("ParseAuthChange(%q) = %+v, %v; want %+v, %v", c.payload, got, ours, c.want, c.ours)
			}
		})
	}
}

// feed runs WatchAuth on s until the test ends and hands out what it
// reports.
type feed struct {
	live    chan error
	changes chan account.Invalidation
}

func watch(t *testing.T, s *postgres.Store) *feed {
	t.Helper()
	f := &feed{live: make(chan error, 16), changes: make(chan account.Invalidation, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.WatchAuth(ctx, func(err error) { f.live <- err }, func(inv account.Invalidation) { f.changes <- inv })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchAuth returned %v after its context ended, want nil", err)
		}
	})
	return f
}

// wait returns what ch sends next, failing the test after a generous
// limit (delivery is asynchronous; the limit only keeps a broken feed
// from hanging the test).
func wait[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s within 20s", what)
		panic("unreachable")
	}
}

func TestWatchAuth(t *testing.T) {
	ctx := context.Background()
	// Two stores on one schema stand for two servers; a third store is on
	// a schema of its own.
	schema := pgtest.Schema(t)
	open := func(schema string) *postgres.Store {
		s, err := postgres.New(ctx, pgtest.URL(t), postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	here, there, elsewhere := open(schema), open(schema), pgtest.New(t)
	f := watch(t, here)
	if err := wait(t, f.live, "report that it listens"); err != nil {
		t.Fatalf("WatchAuth could not listen: %v", err)
	}

	svc := func(s *postgres.Store) *account.Service {
		a := account.NewService(s)
		a.BcryptCost = bcrypt.MinCost
		return a
	}
	other, otherTok, err := svc(elsewhere).Register(ctx, account.Registration{Email: "o@example.com", Password: "password123", Name: "O"})
	if err != nil {
		t.Fatal(err)
	}
	ann, tok, err := svc(there).Register(ctx, account.Registration{Email: "ann@example.com", Password: "password123", Name: "Ann"})
	if err != nil {
		t.Fatal(err)
	}

	// Announcements arrive in commit order, so each step below first makes
	// a change that must not be announced, then one that must: the first
	// announcement has to be the second change.
	t.Run("a changed user is announced, and an update that changes nothing is not", func(t *testing.T) {
		if _, err := there.UpdateRoles(ctx, ann.ID, account.RolesPatch{}); err != nil {
			t.Fatal(err)
		}
		if _, err := elsewhere.UpdateRoles(ctx, other.ID, account.RolesPatch{IsCreator: ptrTo(true)}); err != nil {
			t.Fatal(err)
		}
		if _, err := there.UpdateRoles(ctx, ann.ID, account.RolesPatch{IsCreator: ptrTo(true)}); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, f.changes, "announcement"); got.UserID != ann.ID || got.TokenHash != nil || got.All {
			t.Fatalf("announced %+v, want user %d", got, ann.ID)
		}
	})
	t.Run("a revoked token is announced, and one of another schema is not", func(t *testing.T) {
		if err := svc(elsewhere).Logout(ctx, otherTok); err != nil {
			t.Fatal(err)
		}
		if err := svc(there).Logout(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, f.changes, "announcement"); !bytes.Equal(got.TokenHash, account.HashToken(tok)) || got.UserID != 0 {
			t.Fatalf("announced %+v, want the token's hash", got)
		}
	})
	t.Run("a disabled partner is announced, and one of another schema is not", func(t *testing.T) {
		mine, theirs := &partner.Partner{Name: "Mine"}, &partner.Partner{Name: "Theirs"}
		if err := there.CreatePartner(ctx, mine, account.HashToken("mine")); err != nil {
			t.Fatal(err)
		}
		if err := elsewhere.CreatePartner(ctx, theirs, account.HashToken("theirs")); err != nil {
			t.Fatal(err)
		}
		if err := elsewhere.SetPartnerDisabled(ctx, theirs.ID, true); err != nil {
			t.Fatal(err)
		}
		if err := there.SetPartnerDisabled(ctx, mine.ID, true); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, f.changes, "announcement"); got.PartnerID != mine.ID || got.UserID != 0 || got.All {
			t.Fatalf("announced %+v, want partner %d (creating one announces nothing)", got, mine.ID)
		}
	})
	t.Run("a change rolled back is not announced", func(t *testing.T) {
		tx, err := there.DB().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET name = 'Rolled back' WHERE id = $1`, ann.ID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := there.UpdateProfile(ctx, ann.ID, account.ProfilePatch{Name: ptrTo("Annie")}); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, f.changes, "announcement"); got.UserID != ann.ID {
			t.Fatalf("announced %+v, want user %d", got, ann.ID)
		}
		select {
		case got := <-f.changes:
			t.Fatalf("a second announcement %+v: the rolled-back change was announced", got)
		default:
		}
	})
	t.Run("a lost connection is reported, and the feed comes back by itself", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
			"predictkit auth changes "+schema).Scan(&n); err != nil || n != 1 {
			t.Fatalf("terminated %d listening connections (%v), want 1", n, err)
		}
		if err := wait(t, f.live, "report of the lost connection"); err == nil {
			t.Fatal("the feed reported that it listens, want the loss first")
		}
		if err := wait(t, f.live, "report that it listens again"); err != nil {
			t.Fatalf("the feed did not come back: %v", err)
		}
		if _, err := there.UpdateRoles(ctx, ann.ID, account.RolesPatch{IsCreator: ptrTo(false)}); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, f.changes, "announcement"); got.UserID != ann.ID {
			t.Fatalf("announced %+v after reconnecting, want user %d", got, ann.ID)
		}
	})
}

func TestWatchAuthRefusesASchemaWithoutTriggers(t *testing.T) {
	// A store on a schema that was never migrated: nothing would ever be
	// announced, so the feed must not say that it listens.
	s, err := postgres.New(context.Background(), pgtest.URL(t), postgres.WithSchema(pgtest.Schema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	f := watch(t, s)
	err = wait(t, f.live, "report")
	if err == nil || !strings.Contains(err.Error(), "migrations") {
		t.Fatalf("live(%v), want an error that says to run the migrations", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
