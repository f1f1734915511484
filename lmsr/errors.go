package lmsr

import "errors"

// Sentinel errors. Functions may wrap them with detail, so compare with
// errors.Is, not ==.
var (
	// ErrInvalidLiquidity reports a liquidity parameter b (or α of the
	// liquidity-sensitive maker) that is not positive, not finite or above
	// MaxQuantity.
	ErrInvalidLiquidity = errors.New("lmsr: invalid liquidity")
	// ErrInvalidQuantity reports a quantity or trade size that is NaN,
	// infinite, outside ±MaxQuantity, or negative where a size is expected;
	// also a trade whose result would leave that range.
	ErrInvalidQuantity = errors.New("lmsr: invalid quantity")
	// ErrInvalidAmount reports a kopeck amount or share count that is not
	// positive where a positive one is required.
	ErrInvalidAmount = errors.New("lmsr: invalid amount")
	// ErrInvalidProbability reports a probability outside (0, 1), a vector
	// of them that does not sum to 1, or a MinPrice outside [0, 0.5).
	ErrInvalidProbability = errors.New("lmsr: invalid probability")
	// ErrInvalidMargin reports a fee fraction that is NaN, negative or at
	// least 1.
	ErrInvalidMargin = errors.New("lmsr: invalid margin")
	// ErrPriceLimit reports a trade refused because it would push a price
	// outside [MinPrice, 1−MinPrice].
	ErrPriceLimit = errors.New("lmsr: trade would push a price past its limit")
	// ErrTooSmall reports a budget too small to buy a single share once
	// rounding and the fee are taken into account.
	ErrTooSmall = errors.New("lmsr: amount too small to buy a share")
	// ErrInvalidSide reports a Side other than Yes or No.
	ErrInvalidSide = errors.New("lmsr: invalid side")
	// ErrDimension reports an outcome index out of range, a vector whose
	// length does not match the market, or a market with fewer than two
	// outcomes.
	ErrDimension = errors.New("lmsr: dimension mismatch")
)
