package memory_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/storagetest"
)

func TestStreamConformance(t *testing.T) {
	storagetest.RunStream(t, func(t *testing.T) storagetest.Stores {
		s := memory.New()
		return storagetest.Stores{Accounts: s, Markets: s}
	})
}
