package withdrawal

import "errors"

// Errors returned by the withdrawal service and its stores. A request
// for more than the balance is account.ErrInsufficientFunds.
var (
	// ErrInvalidAddress: an address that is malformed, fails its
	// checksum (EIP-55's letter case, TRON's base58check) or belongs to
	// another chain's family. It matches wallet.ErrInvalidAddress too.
	ErrInvalidAddress = errors.New("withdrawal: invalid address")
	// ErrNotFound: no such withdrawal, or not the user's.
	ErrNotFound = errors.New("withdrawal: not found")
	// ErrLimit: the request would take the user's withdrawals of the last
	// 24 hours past the daily limit.
	ErrLimit = errors.New("withdrawal: past the daily limit")
	// ErrInvalidState: the withdrawal is no longer pending (paid,
	// rejected or cancelled already), so it cannot be decided or
	// cancelled.
	ErrInvalidState = errors.New("withdrawal: not pending")
	// ErrTxHashUsed: the payout's transaction is recorded for another
	// withdrawal on the same chain already. One token transfer pays one
	// withdrawal, so a hash given twice is the operator's slip (a copy
	// of the wrong line) that would mark an unpaid withdrawal paid.
	ErrTxHashUsed = errors.New("withdrawal: the transaction pays another withdrawal")
)
