package storagetest_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/storagetest"
)

// A store proves itself by passing the suite; this is how storage/memory
// runs it. (Not run by go test on its own: Run needs a *testing.T.)
func ExampleRun() {
	var t *testing.T // in a TestConformance(t *testing.T) function
	storagetest.Run(t, func(t *testing.T) storagetest.Stores {
		s := memory.New()
		return storagetest.Stores{Accounts: s, Markets: s, Partners: s}
	})
}
