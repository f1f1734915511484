package account

import "errors"

// Errors returned by the account service and its stores.
var (
	ErrUserNotFound       = errors.New("account: user not found")
	ErrEmailTaken         = errors.New("account: email already registered")
	ErrNicknameTaken      = errors.New("account: nickname already taken")
	ErrInvalidCredentials = errors.New("account: invalid email or password")
	ErrUnauthorized       = errors.New("account: missing, unknown or revoked access token")
	ErrInsufficientFunds  = errors.New("account: insufficient funds")
	ErrInvalidAmount      = errors.New("account: amount must be a positive number of kopecks")
	// ErrBalanceLimit refuses a posting that would take the treasury or
	// the outside world past MaxExposure, or any balance out of int64.
	ErrBalanceLimit = errors.New("account: a balance would pass the ledger's bound")
	// ErrInvalidToken refuses a password reset token that is unknown,
	// used already or expired.
	ErrInvalidToken = errors.New("account: unknown, used or expired password reset token")
	// ErrNoPassword: the user signs in through its partner and has no
	// password to change or reset (a partner's sub-account).
	ErrNoPassword = errors.New("account: the user has no password (a partner's sub-account)")
	// ErrTelegramNotLinked refuses Telegram notifications to a user who
	// has linked no Telegram chat.
	ErrTelegramNotLinked = errors.New("account: no Telegram chat is linked")
	// ErrInvalidReferralCode refuses a registration whose referral code
	// names nobody who may refer: no such code, or a partner's
	// sub-account's.
	ErrInvalidReferralCode = errors.New("account: unknown referral code")
	// ErrReferralCodeTaken: the code drawn for a new user is another's
	// already (Register draws another).
	ErrReferralCodeTaken = errors.New("account: referral code already taken")
)
