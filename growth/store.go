package growth

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// Consumer is the name of the growth consumer's cursor in the change
// log's consumers (change_consumers on PostgreSQL).
const Consumer = "growth"

// Reasons of the growth postings, as the ledger and the balance entries
// tell them.
const (
	ReasonSignupBonus    = "signup_bonus"
	ReasonReferralReward = "referral_reward"
)

// Summary is what a user's invitations have brought.
type Summary struct {
	// Code is the user's referral code.
	Code string
	// Referred counts the users who registered with it; Qualified those
	// of them whose trade volume reached the qualifying volume.
	Referred, Qualified int64
	// EarnedKopecks is the bonus money the rewards paid.
	EarnedKopecks int64
}

// Store keeps referrals, lifetime volumes and levels (storage/memory,
// storage/postgres).
type Store interface {
	// ApplyGrowth applies the trades of the change log's entries after
	// the growth cursor, up to about limit entries, and moves the cursor
	// in the same transaction: it adds each trade's cost to its trader's
	// lifetime volume (partner sub-accounts have none), raises the
	// trader's level when a threshold of rules is passed (a level_up
	// notification), and pays the referrer of a referred user whose
	// volume reaches rules.QualifyKopecks rules.RewardKopecks, once ever
	// per referred user (a posting, a balance entry and a
	// referral_reward notification). It returns how many entries it
	// applied. The first call on a store counts the trades already
	// there silently, setting levels without notifying, and pays the
	// referrers of referred users already past the qualifying volume.
	ApplyGrowth(ctx context.Context, rules Rules, limit int) (int, error)
	// Referrals returns user userID's referral summary.
	// account.ErrUserNotFound.
	Referrals(ctx context.Context, userID int64) (Summary, error)
}

// SignupBonus is the posting of a new user's sign-up bonus.
func SignupBonus(userID, amount int64, at time.Time) account.Posting {
	return account.Posting{From: account.SignupBonuses, To: account.BonusAccount(userID), Amount: amount, Reason: ReasonSignupBonus, At: at}
}

// Reward is the posting of a referrer's reward.
func Reward(referrerID, amount int64, at time.Time) account.Posting {
	return account.Posting{From: account.ReferralRewards, To: account.BonusAccount(referrerID), Amount: amount, Reason: ReasonReferralReward, At: at}
}

// LevelUp is the notification of user userID reaching level.
func LevelUp(userID int64, level int, at time.Time) social.Notification {
	return social.Notification{UserID: userID, Type: social.TypeLevelUp, RelatedType: social.RelatedProfile,
		Data: social.NotificationData{Level: level}, CreatedAt: at}
}

// RewardNotification is the notification of a referrer rewarded with
// amount because the user called referee (their public name) qualified.
func RewardNotification(referrerID, amount int64, referee string, at time.Time) social.Notification {
	return social.Notification{UserID: referrerID, Type: social.TypeReferralReward, RelatedType: social.RelatedInvite,
		Data: social.NotificationData{Amount: amount, Other: referee}, CreatedAt: at}
}

// PublicName is the name a referrer's notification gives the referred
// user: the one other people see.
func PublicName(u *account.User) string { return u.DisplayName() }
