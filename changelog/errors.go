package changelog

import (
	"errors"
	"fmt"
)

// ErrPruned is the error of a reader that wants entries the log no longer
// holds.
var ErrPruned = errors.New("changelog: entries were pruned")

// PrunedError says which entries a reader missed. It is ErrPruned.
type PrunedError struct {
	// After is where the reader stood; Pruned the last entry pruned.
	After, Pruned int64
}

func (e *PrunedError) Error() string {
	return fmt.Sprintf("changelog: the entries after %d up to %d were pruned", e.After, e.Pruned)
}

// Is reports whether target is ErrPruned.
func (e *PrunedError) Is(target error) bool { return target == ErrPruned }
