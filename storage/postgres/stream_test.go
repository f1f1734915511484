package postgres_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/storage/storagetest"
)

func TestStreamConformance(t *testing.T) {
	pgtest.URL(t)
	storagetest.RunStream(t, func(t *testing.T) storagetest.Stores {
		s := pgtest.New(t)
		return storagetest.Stores{Accounts: s, Markets: s}
	})
}
