package postgres_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/storage/storagetest"
)

func TestConformance(t *testing.T) {
	pgtest.URL(t) // skip (or fail) once, not in every subtest
	storagetest.Run(t, func(t *testing.T) storagetest.Stores {
		s := pgtest.New(t)
		return storagetest.Stores{Accounts: s, Markets: s, Partners: s, P2P: s, Chat: s, Changes: s, Webhooks: s, Board: s, Withdrawals: s, Deposits: s, Stats: s, Growth: s, Telegram: s}
	})
}
