package stats

import (
	"encoding/json"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/withdrawal"
)

// Money is what a change-log entry of type t with data adds to the
// statistics' deposits or withdrawals: a deposit's entry telling it was
// credited counts its kopecks on the day of its crediting, a
// withdrawal's telling it was paid its kopecks on the day it was paid.
// Each is told once (a deposit is credited, a withdrawal paid, only from
// pending), so counting entries counts each once. ok is false for every
// other entry. Both stores count with it, so they agree.
func Money(t changelog.Type, data []byte) (day time.Time, deposits, withdrawals int64, ok bool) {
	var v struct {
		Status        string  `json:"status"`
		AmountKopecks int64   `json:"amount_kopecks"`
		CreditedAt    *string `json:"credited_at"`
		DecidedAt     *string `json:"decided_at"`
	}
	switch t {
	case changelog.Deposit, changelog.Withdrawal:
	default:
		return
	}
	if json.Unmarshal(data, &v) != nil {
		return
	}
	var at *string
	switch {
	case t == changelog.Deposit && v.Status == deposit.StatusCredited:
		at, deposits = v.CreditedAt, v.AmountKopecks
	case t == changelog.Withdrawal && v.Status == withdrawal.StatusPaid:
		at, withdrawals = v.DecidedAt, v.AmountKopecks
	default:
		return time.Time{}, 0, 0, false
	}
	if at == nil {
		return time.Time{}, 0, 0, false
	}
	ts, err := time.Parse(time.RFC3339Nano, *at)
	if err != nil {
		return time.Time{}, 0, 0, false
	}
	return DayOf(ts), deposits, withdrawals, true
}
