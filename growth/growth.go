// Package growth keeps the profile's growth promises: levels that follow a
// user's lifetime trade volume, a reward in bonus money to whoever
// referred a user once that user has traded enough, and a sign-up bonus.
//
// Volumes are counted from the change log, as the leaderboard's are, by a
// consumer whose cursor moves in the same transaction as what it applied
// (storage/memory, storage/postgres): a crash neither loses a level-up nor
// pays a reward twice, and the trade path does no work of its own for it.
package growth

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Defaults of Rules (docs/referrals-and-levels.md).
const (
	// DefaultQualifyKopecks is the lifetime trade volume past which a
	// referred user earns the referrer a reward: 1,000 RUB.
	DefaultQualifyKopecks = 100_000
	// DefaultRewardKopecks is the referrer's reward, in bonus money: 100
	// RUB.
	DefaultRewardKopecks = 10_000
)

// DefaultLevels are the lifetime volumes, in kopecks, at which levels 1
// to 5 start: 0, 1,000, 10,000, 100,000 and 1,000,000 RUB.
var DefaultLevels = []int64{0, 100_000, 1_000_000, 10_000_000, 100_000_000}

// Rules are the operator's growth settings.
type Rules struct {
	// Levels are ascending lifetime-volume thresholds in kopecks; the
	// first is 0. A user whose volume is at least Levels[i] (and less
	// than Levels[i+1]) is at level i+1.
	Levels []int64
	// QualifyKopecks is the lifetime trade volume at which a referred
	// user qualifies; RewardKopecks is what the referrer then gets in
	// bonus money (0: referrals are recorded, nobody is rewarded).
	QualifyKopecks, RewardKopecks int64
	// SignupBonusKopecks is credited to every new user's bonus balance
	// (0: none).
	SignupBonusKopecks int64
}

// DefaultRules returns the defaults of every rule.
func DefaultRules() Rules {
	return Rules{Levels: slices.Clone(DefaultLevels), QualifyKopecks: DefaultQualifyKopecks, RewardKopecks: DefaultRewardKopecks}
}

// Level returns the level of a user whose lifetime trade volume is
// volume: 1 below the second threshold, len(Levels) at or past the last.
func (r Rules) Level(volume int64) int {
	n, _ := slices.BinarySearch(r.Levels, volume+1) // thresholds <= volume
	return max(n, 1)
}

// Qualified reports whether a referred user whose lifetime volume is
// volume has qualified their referrer for the reward. The stores pay a
// referral the first time it holds, once: a referee already past a
// threshold the operator lowered qualifies at their next trade.
func (r Rules) Qualified(volume int64) bool {
	return volume >= r.QualifyKopecks
}

// ErrLevels is returned by ParseLevels for a list that is not ascending
// kopeck thresholds starting at 0.
var ErrLevels = errors.New("growth: levels must be ascending kopeck thresholds starting at 0, such as 0,100000,1000000")

// MaxLevels bounds how many levels a platform may have.
const MaxLevels = 100

// ParseLevels parses a comma-separated list of thresholds, as
// PREDICTKIT_LEVELS gives it.
func ParseLevels(s string) ([]int64, error) {
	parts := strings.Split(s, ",")
	if len(parts) > MaxLevels {
		return nil, fmt.Errorf("%w (at most %d levels)", ErrLevels, MaxLevels)
	}
	levels := make([]int64, 0, len(parts))
	for _, p := range parts {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: %q is not a kopeck amount", ErrLevels, strings.TrimSpace(p))
		}
		levels = append(levels, v)
	}
	if err := CheckLevels(levels); err != nil {
		return nil, err
	}
	return levels, nil
}

// CheckLevels reports whether levels are usable as Rules.Levels.
func CheckLevels(levels []int64) error {
	if len(levels) == 0 || levels[0] != 0 {
		return ErrLevels
	}
	if len(levels) > MaxLevels {
		return fmt.Errorf("%w (at most %d levels)", ErrLevels, MaxLevels)
	}
	for i := 1; i < len(levels); i++ {
		if levels[i] <= levels[i-1] {
			return fmt.Errorf("%w: %d does not follow %d", ErrLevels, levels[i], levels[i-1])
		}
	}
	return nil
}
