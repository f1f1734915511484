package memory

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// Growth: the referral codes and referrals are written with the user,
// the volumes by ApplyGrowth, which reads the change log after its cursor
// as the PostgreSQL store's consumer does, so both stores level and
// reward at the same moments.

var _ growth.Store = (*Store)(nil)

// growthState is the memory store's growth tables.
type growthState struct {
	byCode    map[string]int64 // upper-cased referral code → user
	referrals map[int64]*referral
	// byReferrer lists the users each referrer referred.
	byReferrer map[int64][]int64
	volumes    map[int64]int64
}

type referral struct {
	referrer  int64
	created   time.Time
	qualified bool
	reward    int64
}

// made makes the tables on first use.
func (g *growthState) made() {
	if g.byCode == nil {
		g.byCode, g.referrals, g.byReferrer, g.volumes = map[string]int64{}, map[int64]*referral{}, map[int64][]int64{}, map[int64]int64{}
	}
}

// join records user id's code and who referred them (0: nobody).
func (g *growthState) join(code string, id, referrer int64, at time.Time) {
	g.made()
	if code != "" {
		g.byCode[code] = id
	}
	if referrer != 0 {
		g.referrals[id] = &referral{referrer: referrer, created: at}
		g.byReferrer[referrer] = append(g.byReferrer[referrer], id)
	}
}

// ApplyGrowth implements growth.Store.
func (s *Store) ApplyGrowth(ctx context.Context, rules growth.Rules, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.growth.made()
	after, ok := s.changes.Cursor(growth.Consumer)
	if !ok {
		// Entries are appended under s.mu, which is held: the trades
		// there are exactly those the log has up to its head.
		b, err := s.changes.ChangeBounds(ctx)
		if err != nil {
			return 0, err
		}
		s.backfillGrowth(rules)
		s.changes.SetCursor(growth.Consumer, b.Last)
		return 0, nil
	}
	es, err := s.changes.Changes(ctx, after, max(limit, 1))
	if err != nil || len(es) == 0 {
		return 0, err
	}
	added := map[int64]int64{}
	var traders []int64
	for _, e := range es {
		if e.Type != changelog.Trade {
			continue
		}
		var d struct {
			TradeID int64 `json:"trade_id"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil || d.TradeID == 0 {
			return 0, errors.New("memory: growth: a trade entry names no trade")
		}
		t := s.tradeByID(d.TradeID)
		if t == nil || t.PartnerID != 0 {
			continue
		}
		if _, ok := added[t.UserID]; !ok {
			traders = append(traders, t.UserID)
		}
		added[t.UserID] = addCapped(added[t.UserID], t.Cost)
	}
	slices.Sort(traders)
	at := s.now()
	var qualified []int64
	for _, user := range traders {
		v := addCapped(s.growth.volumes[user], added[user])
		s.growth.volumes[user] = v
		rec := s.users[user]
		if l := rules.Level(v); l > rec.u.Level {
			rec.u.Level = l
			s.logChanges(social.NotificationChange(s.addNotification(growth.LevelUp(user, l, at))))
		}
		if r := s.growth.referrals[user]; r != nil && !r.qualified && rules.Qualified(v) {
			qualified = append(qualified, user)
		}
	}
	if err := s.rewardReferrers(rules, qualified, at); err != nil {
		return 0, err
	}
	s.changes.SetCursor(growth.Consumer, es[len(es)-1].Seq)
	return len(es), nil
}

// rewardReferrers marks the referrals of referees qualified and pays
// their referrers. Callers hold s.mu.
func (s *Store) rewardReferrers(rules growth.Rules, referees []int64, at time.Time) error {
	amount := max(rules.RewardKopecks, 0)
	var ps []account.Posting
	for _, id := range referees {
		if amount > 0 {
			ps = append(ps, growth.Reward(s.growth.referrals[id].referrer, amount, at))
		}
	}
	before := s.balancesOf(ps)
	if err := s.post(ps); err != nil {
		return err
	}
	s.logChanges(account.BalanceChanges(before, ps, "", at)...)
	for _, id := range referees {
		r := s.growth.referrals[id]
		r.qualified, r.reward = true, amount
		if amount > 0 {
			u := s.users[id].u
			s.logChanges(social.NotificationChange(s.addNotification(growth.RewardNotification(r.referrer, amount, growth.PublicName(&u), at))))
		}
	}
	return nil
}

// backfillGrowth counts the volumes of the trades there are, raises
// levels silently and rewards the referred users already past the
// qualifying volume. Callers hold s.mu.
func (s *Store) backfillGrowth(rules growth.Rules) {
	clear(s.growth.volumes)
	for _, t := range s.trades {
		if t.PartnerID == 0 {
			s.growth.volumes[t.UserID] = addCapped(s.growth.volumes[t.UserID], t.Cost)
		}
	}
	var qualified []int64
	for user, v := range s.growth.volumes {
		if rec := s.users[user]; rec != nil && rules.Level(v) > rec.u.Level {
			rec.u.Level = rules.Level(v)
		}
		if r := s.growth.referrals[user]; r != nil && !r.qualified && rules.Qualified(v) {
			qualified = append(qualified, user)
		}
	}
	slices.Sort(qualified)
	_ = s.rewardReferrers(rules, qualified, s.now()) // only a balance past int64 could fail
}

// tradeByID is trade id, or nil. Callers hold s.mu.
func (s *Store) tradeByID(id int64) *market.Trade {
	i, ok := slices.BinarySearchFunc(s.trades, id, func(t *market.Trade, id int64) int {
		switch {
		case t.ID < id:
			return -1
		case t.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return s.trades[i]
}

// addCapped is a + b, stopping at MaxInt64 as volumes do.
func addCapped(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// Referrals implements growth.Store.
func (s *Store) Referrals(_ context.Context, userID int64) (growth.Summary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[userID]
	if !ok {
		return growth.Summary{}, account.ErrUserNotFound
	}
	sum := growth.Summary{Code: rec.u.ReferralCode}
	for _, id := range s.growth.byReferrer[userID] {
		r := s.growth.referrals[id]
		sum.Referred++
		if r.qualified {
			sum.Qualified++
			sum.EarnedKopecks += r.reward
		}
	}
	return sum, nil
}

// GrowthCursor is the last change-log entry the volumes count (0 before
// they were first counted).
func (s *Store) GrowthCursor(ctx context.Context) (int64, error) {
	return s.ChangeCursor(ctx, growth.Consumer)
}
