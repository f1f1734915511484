package p2p

import (
	"errors"

	"github.com/predictkit/predictkit/account"
)

// Errors returned by the p2p service and its store.
var (
	// ErrNotFound: no ad has that id (or, publicly, it is not approved).
	ErrNotFound = errors.New("p2p: ad not found")
	// ErrUserNotFound: the user an ad or a stats record names does not
	// exist. It is account.ErrUserNotFound.
	ErrUserNotFound = account.ErrUserNotFound
)
