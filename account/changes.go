package account

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/internal/jsonenc"
)

// balanceData is the data of a balance entry: the user's balances after
// the change, as the profile shows them, and what moved them.
type balanceData struct {
	UserID       int64  `json:"user_id"`
	Balance      int64  `json:"balance"`
	BonusBalance int64  `json:"bonus_balance"`
	TotalBalance int64  `json:"total_balance"`
	Reason       string `json:"reason"`
}

// BalanceChange is the change-log entry telling user userID that its
// balances are now b, moved by reason ("trade", "deposit", …). Every
// store builds balance entries with it, so they read the same whatever
// the store.
func BalanceChange(userID int64, b Balances, reason string, at time.Time) changelog.Entry {
	return changelog.Entry{Type: changelog.Balance, UserID: userID, Data: (&balanceData{UserID: userID, Balance: b.Balance,
		BonusBalance: b.Bonus, TotalBalance: b.Total(), Reason: reason}).json(), At: at}
}

// json is encoding/json's encoding of d, appended by hand: a hot market
// writes a balance entry for every trade, and reflection was most of
// its cost (TestBalanceEntryIsEncodingJSONs checks the bytes).
func (d *balanceData) json() json.RawMessage {
	b := make([]byte, 0, 96+len(d.Reason))
	b = strconv.AppendInt(append(b, `{"user_id":`...), d.UserID, 10)
	b = strconv.AppendInt(append(b, `,"balance":`...), d.Balance, 10)
	b = strconv.AppendInt(append(b, `,"bonus_balance":`...), d.BonusBalance, 10)
	b = strconv.AppendInt(append(b, `,"total_balance":`...), d.TotalBalance, 10)
	b = jsonenc.AppendString(append(b, `,"reason":`...), d.Reason)
	return append(b, '}')
}

// BalanceChanges returns the balance entries of a transaction that
// applied postings to the balances before: one for every user whose
// balance or bonus balance a posting moved, in ascending user id, with
// the balances after all of them (one entry per user, the last state, not
// one per posting). before must hold both accounts of each such user as
// the transaction locked them (an absent one counts as 0). reason is the
// entries' reason; "" takes that of the last posting that moved the
// user's money.
func BalanceChanges(before map[Ref]int64, postings []Posting, reason string, at time.Time) []changelog.Entry {
	var moved map[int64]string
	for _, p := range postings {
		for _, ref := range [2]Ref{p.From, p.To} {
			if ref.Kind != KindUser && ref.Kind != KindUserBonus {
				continue
			}
			if moved == nil {
				moved = make(map[int64]string, len(postings))
			}
			moved[ref.Owner] = p.Reason
		}
	}
	if len(moved) == 0 {
		return nil
	}
	after := make(map[Ref]int64, 2*len(moved))
	for _, u := range [2]Kind{KindUser, KindUserBonus} {
		for id := range moved {
			r := Ref{Kind: u, Owner: id}
			after[r] = before[r]
		}
	}
	for _, p := range postings {
		if _, ok := after[p.From]; ok {
			after[p.From] -= p.Amount
		}
		if _, ok := after[p.To]; ok {
			after[p.To] += p.Amount
		}
	}
	out := make([]changelog.Entry, 0, len(moved))
	for _, id := range slices.Sorted(maps.Keys(moved)) {
		why := reason
		if why == "" {
			why = moved[id]
		}
		b := Balances{Balance: after[UserAccount(id)], Bonus: after[BonusAccount(id)]}
		out = append(out, BalanceChange(id, b, why, at))
	}
	return out
}
