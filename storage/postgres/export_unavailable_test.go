package postgres

// Internals of the availability errors that the external tests reach.
var (
	CommitFailed   = commitFailed
	ConnectionLost = connectionLost
)

// StmtError is the error of statement at of a batch whose last statement
// (COMMIT) is last.
func StmtError(at, last int, err error) error { return &stmtError{at: at, last: last, err: err} }
