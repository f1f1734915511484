package postgres

// Internals of the availability errors that the external tests reach.
var (
	CommitFailed   = commitFailed
	ConnectionLost = connectionLost
)
