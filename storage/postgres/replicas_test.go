package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// replicaReads counts the reads that went to the replica and to the
// primary so far.
func replicaReads(s *postgres.Store) (replica, primary uint64) {
	st, p := s.Replicas()
	return st[0].Reads, p
}

// found reports whether a search for email, in ctx's name, finds it, and
// where the search went.
func found(t *testing.T, ctx context.Context, s *postgres.Store, email string) (ok bool, where string) {
	t.Helper()
	r0, p0 := replicaReads(s)
	us, err := s.SearchUsers(ctx, account.UserQuery{Text: email, Limit: 10})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	r1, p1 := replicaReads(s)
	switch {
	case r1 == r0+1 && p1 == p0:
		where = "replica"
	case p1 == p0+1 && r1 == r0:
		where = "primary"
	default:
		t.Fatalf("one read counted %d on the replica and %d on the primary", r1-r0, p1-p0)
	}
	return len(us) == 1, where
}

// eventually polls cond for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("after 20 s: %s", what)
		}
	}
}

var replicaSeq int

func newUser(t testing.TB, s *postgres.Store) *account.User {
	t.Helper()
	replicaSeq++
	u := &account.User{Email: fmt.Sprintf("replica-%d-%d@test.predictkit", time.Now().UnixNano(), replicaSeq), Name: "r"}
	if err := s.CreateUser(context.Background(), u, "h"); err != nil {
		t.Fatalf("create user: %v", err)
	}
	return u
}

func TestReplicaRoutesReadsThatMayLag(t *testing.T) {
	rp := pgtest.NewReplica(t)
	s := rp.New(t, postgres.ReplicaConfig{MaxWait: 50 * time.Millisecond, MaxLag: time.Minute, Check: 20 * time.Millisecond})
	ctx := context.Background()

	t.Run("a read without a user goes to the replica and sees what it replayed", func(t *testing.T) {
		u := newUser(t, s)
		rp.CatchUp(t)
		if ok, where := found(t, ctx, s, u.Email); !ok || where != "replica" {
			t.Fatalf("found %v on the %s, want true on the replica", ok, where)
		}
	})

	t.Run("with replay paused, a write is not seen by reads that may lag, but is by its user's own read, from the primary", func(t *testing.T) {
		rp.Pause(t)
		u := newUser(t, s)
		s.AfterWrite(ctx, u.ID)
		if ok, where := found(t, ctx, s, u.Email); ok || where != "replica" {
			t.Errorf("a read without a user: found %v on the %s, want not found on the replica", ok, where)
		}
		if ok, where := found(t, postgres.ForUser(ctx, u.ID+1_000_000), s, u.Email); ok || where != "replica" {
			t.Errorf("another user's read: found %v on the %s, want not found on the replica", ok, where)
		}
		if ok, where := found(t, postgres.ForUser(ctx, u.ID), s, u.Email); !ok || where != "primary" {
			t.Errorf("the user's own read: found %v on the %s, want found on the primary", ok, where)
		}
		rp.Resume(t)
		eventually(t, "the user's own read is not served by the resumed replica", func() bool {
			ok, where := found(t, postgres.ForUser(ctx, u.ID), s, u.Email)
			return ok && where == "replica"
		})
	})

	t.Run("a replica that stops answering is skipped, and used again when it is back", func(t *testing.T) {
		u := newUser(t, s)
		rp.CatchUp(t)
		rp.Stop(t)
		if ok, where := found(t, ctx, s, u.Email); !ok || where != "primary" {
			t.Errorf("with the replica down: found %v on the %s, want found on the primary", ok, where)
		}
		eventually(t, "the replica is not reported down", func() bool {
			st, _ := s.Replicas()
			return !st[0].Up && !st[0].OK && st[0].Error != ""
		})
		rp.Start(t)
		eventually(t, "the replica is not used again", func() bool {
			st, _ := s.Replicas()
			if !st[0].OK {
				return false
			}
			ok, where := found(t, ctx, s, u.Email)
			return ok && where == "replica"
		})
	})
}

func TestReplicaFurtherBehindThanMaxLagIsSkipped(t *testing.T) {
	rp := pgtest.NewReplica(t)
	s := rp.New(t, postgres.ReplicaConfig{MaxWait: 50 * time.Millisecond, MaxLag: time.Second, Check: 20 * time.Millisecond})
	ctx := context.Background()
	rp.Pause(t)
	u := newUser(t, s)
	eventually(t, "the paused replica is still used", func() bool {
		st, _ := s.Replicas()
		return st[0].Up && !st[0].OK && st[0].LagSeconds > 1
	})
	if ok, where := found(t, ctx, s, u.Email); !ok || where != "primary" {
		t.Errorf("found %v on the %s, want found on the primary", ok, where)
	}
	rp.Resume(t)
	eventually(t, "the resumed replica is not used again", func() bool {
		ok, where := found(t, ctx, s, u.Email)
		return ok && where == "replica"
	})
}
