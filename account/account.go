// Package account holds users, their credentials and access tokens, and the
// double-entry ledger that every balance in predictkit lives in.
//
// Money is int64 kopecks. A balance is never stored on its own: it is the
// running sum of the postings into and out of a ledger account, and every
// posting moves an amount from one account to another, so the sum over all
// accounts is always zero.
package account

import (
	"time"
)

// User is a person (or a partner's sub-account) on the platform.
type User struct {
	ID               int64
	Email            string
	Name             string
	Nickname         *string
	ProfileHidden    bool
	ReferralCode     string
	Language         string // "en" or "ru"
	Theme            string
	Level            int
	AvatarURL        *string
	TelegramVerified bool
	// TelegramNotifications: the user's notifications go to the linked
	// Telegram chat too (telegram package); only a linked user has it.
	TelegramNotifications bool
	IsCreator             bool
	IsStatsViewer         bool
	TronAddress           string
	BscAddress            string
	PolygonAddress        string
	EthereumAddress       string
	// PartnerID and ExternalID are set on a partner's sub-account: a user
	// that has no credentials and is reached only through the partner API.
	PartnerID  int64
	ExternalID string
	CreatedAt  time.Time
}

// DisplayName is what other people see of u: "Anonymous" when the profile
// is hidden.
func (u *User) DisplayName() string {
	if u.ProfileHidden {
		return "Anonymous"
	}
	return u.Name
}

// Balances are a user's two spendable balances, kopecks.
type Balances struct {
	Balance int64
	Bonus   int64
}

// Total is Balance + Bonus.
func (b Balances) Total() int64 { return b.Balance + b.Bonus }

// ProfilePatch is a partial update of a user's own profile; nil fields are
// left as they are. An empty Nickname or AvatarURL clears it.
type ProfilePatch struct {
	Name          *string
	Nickname      *string
	Language      *string
	Theme         *string
	ProfileHidden *bool
	AvatarURL     *string
	// TelegramNotifications turns notifications in the linked Telegram
	// chat on or off; on needs a linked chat (ErrTelegramNotLinked).
	TelegramNotifications *bool
}

// RolesPatch is an operator's change of a user's roles.
type RolesPatch struct {
	IsCreator     *bool
	IsStatsViewer *bool
}

// Languages a profile may use.
var Languages = []string{"en", "ru"}

// Themes a profile may use.
var Themes = []string{"light", "dark", "system"}
