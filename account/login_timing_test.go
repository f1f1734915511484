package account_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
)

// TestLoginTimeTellsNothing: a log-in with an unknown e-mail costs what a
// wrong password for a registered one does, so that the answer's time
// does not tell which e-mails are registered. The unknown e-mail's
// password is compared with a stand-in hash made at the configured cost.
func TestLoginTimeTellsNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("the stand-in hash has the configured cost, whichever it is", func(t *testing.T) {
		// A cost below bcrypt's minimum hashes at bcrypt's default, for
		// registrations as for the stand-in.
		for _, c := range []struct{ configured, want int }{{bcrypt.MinCost, bcrypt.MinCost}, {5, 5}, {6, 6}, {0, bcrypt.DefaultCost}} {
			s := account.NewService(memory.New())
			s.BcryptCost = c.configured
			if _, _, err := s.Login(ctx, "nobody@example.com", "password123"); !errors.Is(err, account.ErrInvalidCredentials) {
				t.Fatalf("log-in of nobody: %v", err)
			}
			got, err := bcrypt.Cost(account.StandIn(s))
			if err != nil || got != c.want {
				t.Errorf("configured cost %d: the stand-in hash has cost %d (%v), want %d", c.configured, got, err, c.want)
			}
		}
	})

	t.Run("an unknown e-mail and a wrong password take the same median time", func(t *testing.T) {
		const cost, samples = 8, 17
		s := account.NewService(memory.New())
		s.BcryptCost = cost
		if _, _, err := s.Register(ctx, account.Registration{Email: "known@example.com", Password: "password123", Name: "Known"}); err != nil {
			t.Fatal(err)
		}
		login := func(email string) time.Duration {
			start := time.Now()
			if _, _, err := s.Login(ctx, email, "wrong-password"); !errors.Is(err, account.ErrInvalidCredentials) {
				t.Fatalf("log-in of %s: %v", email, err)
			}
			return time.Since(start)
		}
		median := func(ds []time.Duration) time.Duration {
			slices.Sort(ds)
			return ds[len(ds)/2]
		}
		login("warm-up@example.com") // the stand-in hash is made on first use
		// The machine may be busy: a measurement that misses is taken
		// again, up to three times in all; the two kinds of log-in
		// alternate so that a slow spell falls on both.
		var known, unknown time.Duration
		for attempt := 1; attempt <= 3; attempt++ {
			var k, u []time.Duration
			for range samples {
				k = append(k, login("known@example.com"))
				u = append(u, login("unknown@example.com"))
			}
			known, unknown = median(k), median(u)
			ratio := float64(unknown) / float64(known)
			t.Logf("attempt %d: median %v for a wrong password, %v for an unknown e-mail (%.2f)", attempt, known, unknown, ratio)
			if ratio >= 0.8 && ratio <= 1.2 {
				return
			}
		}
		t.Fatalf("an unknown e-mail takes %v, a wrong password %v: more than 20%% apart", unknown, known)
	})
}
