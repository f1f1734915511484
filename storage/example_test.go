package storage_test

import (
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/storage"
)

// A caller decides what to do about a failed operation by which of the two
// it is, whichever store reported it.
func Example() {
	for _, err := range []error{
		fmt.Errorf("buy: %w", storage.ErrUnavailable),
		fmt.Errorf("buy: %w", storage.ErrOutcomeUnknown),
	} {
		switch {
		case errors.Is(err, storage.ErrUnavailable):
			fmt.Println("nothing happened: send it again")
		case errors.Is(err, storage.ErrOutcomeUnknown):
			fmt.Println("it may have happened: look before sending it again")
		}
	}
	// Output:
	// nothing happened: send it again
	// it may have happened: look before sending it again
}
