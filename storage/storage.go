// Package storage holds what every store of predictkit reports in the
// same way, whatever it wraps: the failures of the storage itself, as
// opposed to the refusals of a domain. The stores are its sub-packages:
// storage/memory and storage/postgres; storage/storagetest is the suite
// every store passes.
package storage

import "errors"

// Errors of the storage's availability rather than of a domain. The server
// answers both with 503; a store never retries an operation by itself once
// its commit may have reached the storage.
var (
	// ErrUnavailable: the storage could not be reached (a refused or
	// failed connection, a database starting up or shutting down, too many
	// connections, none within the caller's deadline) or the connection
	// broke before the operation asked to commit. Nothing was written, so
	// the same request may simply be sent again later.
	ErrUnavailable = errors.New("storage: unavailable")
	// ErrOutcomeUnknown: the connection broke after the operation asked to
	// commit and before the storage confirmed it, so it may have taken
	// effect or not. The store does not run it again (that could execute a
	// trade twice). A partner learns the outcome by sending the same
	// client_bet_id again: the original receipt comes back if it took
	// effect, and the bet runs now if it did not. A user reads their
	// trades, positions and balance.
	ErrOutcomeUnknown = errors.New("storage: connection lost while committing, outcome unknown")
)
