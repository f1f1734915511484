package memory_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Stores {
		s := memory.New()
		return storagetest.Stores{Accounts: s, Markets: s, Partners: s, P2P: s, Chat: s, Changes: s, Webhooks: s, Board: s, Withdrawals: s, Deposits: s, Stats: s, Growth: s, Telegram: s}
	})
}
