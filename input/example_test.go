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
