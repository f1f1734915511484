package input_test

import (
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/input"
)

// A domain refuses a field with input.Invalid; any caller tells invalid
// input from other failures with errors.Is and reads the field with
// errors.As, whichever package refused it.
func Example() {
	err := fmt.Errorf("creating the event: %w", input.Invalid("pools[0].margin", "must be 0 to 0.2"))

	fmt.Println(errors.Is(err, input.ErrInvalid))
	var ie *input.Error
	if errors.As(err, &ie) {
		fmt.Println(ie.Field+":", ie.Reason)
	}
	// Output:
	// true
	// pools[0].margin: must be 0 to 0.2
}

// A bound is checked where the domain keeps it, with one wording.
func ExampleInRange() {
	fmt.Println(input.InRange("amount_kopecks", 0, 1, 1000))
	fmt.Println(input.InRange("amount_kopecks", 5000, 1, 1000))
	fmt.Println(input.InRange("amount_kopecks", 500, 1, 1000))
	// Output:
	// invalid amount_kopecks: must be at least 1
	// invalid amount_kopecks: must be at most 1000
	// <nil>
}
