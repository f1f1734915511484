package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

func TestLoginFailuresMemory(t *testing.T) {
	newFailures := func(now *time.Time) *loginFailures {
		l := newLoginFailures(Config{LoginFailuresPerAccount: 3, Now: func() time.Time { return *now }})
		l.max = 1000
		return l
	}
	failOnce := func(l *loginFailures, key string) bool {
		at, ok, _ := l.begin(key)
		if ok {
			l.end(key, at, account.ErrInvalidCredentials)
		}
		return ok
	}

	t.Run("a flood of made-up e-mails stays within the bound and does not free a limited account", func(t *testing.T) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := newFailures(&now)
		for range 3 {
			failOnce(l, "target@example.com")
		}
		for i := range 10 * l.max {
			failOnce(l, "flood-"+strconv.Itoa(i)+"@example.com")
			if l.size() > l.max {
				t.Fatalf("%d accounts remembered after %d e-mails, past the bound %d", l.size(), i+1, l.max)
			}
		}
		if _, ok, wait := l.begin("target@example.com"); ok || wait != loginFailureWindow {
			t.Fatalf("after the flood the limited account's next attempt: ok %v, wait %v; want refused for %v", ok, wait, loginFailureWindow)
		}
	})

	t.Run("an account is forgotten once its failures leave the window", func(t *testing.T) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := newFailures(&now)
		for i := range 50 {
			failOnce(l, "a"+strconv.Itoa(i)+"@example.com")
		}
		now = now.Add(loginFailureWindow)
		failOnce(l, "late@example.com")
		if n := l.size(); n != 1 {
			t.Fatalf("%d accounts remembered a window later, want 1", n)
		}
	})

	t.Run("an attempt that is neither a success nor a wrong password is not counted", func(t *testing.T) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := newFailures(&now)
		for range 10 {
			at, ok, _ := l.begin("k@example.com")
			if !ok {
				t.Fatal("refused after attempts that were not failures")
			}
			l.end("k@example.com", at, errRateLimited)
		}
		if n := l.size(); n != 0 {
			t.Fatalf("%d accounts remembered, want 0", n)
		}
	})

	t.Run("attempts under way count, so concurrent ones cannot pass the limit together", func(t *testing.T) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		l := newFailures(&now)
		for range 3 {
			if _, ok, _ := l.begin("k@example.com"); !ok {
				t.Fatal("refused within the limit")
			}
		}
		if _, ok, _ := l.begin("k@example.com"); ok {
			t.Fatal("a fourth attempt began while three were under way")
		}
	})

	t.Run("0 is off", func(t *testing.T) {
		if l := newLoginFailures(Config{}); l != nil {
			t.Fatalf("newLoginFailures(0) = %v, want nil", l)
		}
	})
}
