package reliability

import (
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/growth"
)

// Growth in the model: every account is opened with the sign-up bonus,
// users 1 to 5 are referred (user i by user (i-1)/2), and now and then
// the growth consumer runs, paying a referrer once per referee whose
// trade volume has reached the qualifying volume. The receipts credit
// the rewards the rules owe and no more: a reward paid twice leaves the
// referrer holding more bonus than the receipts say, and the referral
// rewards account more spent than the rewards owed.

// opGrowth runs the growth consumer until it has caught up, taking
// o.amount entries per apply.
const opGrowth opKind = 200

// modelGrowth are the model's growth rules: thresholds the model's few
// trades of up to 300 RUB pass now and then (on PostgreSQL too, in the few operations CI runs there).
var modelGrowth = growth.Rules{Levels: []int64{0, 20_000, 100_000, 400_000}, QualifyKopecks: 5_000, RewardKopecks: 5_000, SignupBonusKopecks: 2_500}

// referrerOf is the user who referred user i, -1 for nobody.
func referrerOf(i int) int {
	if i == 0 {
		return -1
	}
	return (i - 1) / 2
}

// shadowGrowth is what the receipts say of growth.
type shadowGrowth struct {
	// volume is each user's lifetime trade volume (the trades' cost).
	volume [modelUsers]int64
	// counted is volume as the consumer counted it at its last run.
	counted  [modelUsers]int64
	rewarded [modelUsers]bool
	rewards  int
}

// initGrowth opens every user's receipts with the sign-up bonus.
func (s *shadow) initGrowth() {
	for u := range modelUsers {
		s.bonus[holder{-1, u}] += modelGrowth.SignupBonusKopecks
	}
}

// growthOp fills a run of the consumer.
func (g *gen) growthOp(o *op) {
	o.kind, o.amount = opGrowth, 1+g.r.Int64N(8)
}

// countVolume adds an accepted trade of a user to their volume.
func (s *shadow) countVolume(o op, out outcome) {
	cost := out.Amount - out.Fee // a buy's charge is its cost and fee
	if o.kind == opSell {
		cost = out.Amount + out.Fee // a sale pays its refund less the fee
	}
	s.growth.volume[o.user] += cost
}

// recordGrowth pays, in the receipts, the referrer of every referee past
// the qualifying volume not paid before, and returns the referrers.
func (s *shadow) recordGrowth() []holder {
	var paid []holder
	s.growth.counted = s.growth.volume
	for u := range modelUsers {
		r := referrerOf(u)
		if r < 0 || s.growth.rewarded[u] || s.growth.volume[u] < modelGrowth.QualifyKopecks {
			continue
		}
		s.growth.rewarded[u] = true
		s.growth.rewards++
		s.bonus[holder{-1, r}] += modelGrowth.RewardKopecks
		paid = append(paid, holder{-1, r})
	}
	return paid
}

// registerAll registers the model's users, each with their referrer's
// code.
func (w *world) registerAll(password string) error {
	for i := range modelUsers {
		reg := account.Registration{Email: fmt.Sprintf("user%d@model.test", i), Password: password, Name: fmt.Sprintf("User %d", i)}
		if r := referrerOf(i); r >= 0 {
			reg.ReferralCode = w.users[r].ReferralCode
		}
		u, _, err := w.accounts.Register(w.ctx, reg)
		if err != nil {
			return fmt.Errorf("register user %d: %w", i, err)
		}
		w.users = append(w.users, u)
	}
	return nil
}

// applyGrowth runs the consumer until it has caught up.
func (w *world) applyGrowth(o op) (outcome, error) {
	gs, ok := w.store.(growth.Store)
	if !ok {
		return outcome{}, fmt.Errorf("%s keeps no growth tables", w.name)
	}
	for range 1_000_000 {
		n, err := gs.ApplyGrowth(w.ctx, modelGrowth, int(o.amount))
		if err != nil {
			return outcome{}, err
		}
		if n == 0 {
			return outcome{}, nil
		}
	}
	return outcome{}, fmt.Errorf("%s: the growth consumer never caught up", w.name)
}

// checkGrowth compares what growth did in w with the receipts: the
// promotional accounts spent exactly the bonuses and the rewards owed,
// each user's level is that of the volume the consumer counted, and each
// referrer's summary counts their qualified referees.
func checkGrowth(w *world, sh *shadow) error {
	signups := -int64(modelUsers+1) * modelGrowth.SignupBonusKopecks // the users and the creator
	if b, err := w.store.Balance(w.ctx, account.SignupBonuses); err != nil || b != signups {
		return fmt.Errorf("the sign-up bonuses account holds %d (%v), the receipts say %d", b, err, signups)
	}
	rewards := -int64(sh.growth.rewards) * modelGrowth.RewardKopecks
	if b, err := w.store.Balance(w.ctx, account.ReferralRewards); err != nil || b != rewards {
		return fmt.Errorf("the referral rewards account holds %d (%v), the receipts say %d rewards of %d", b, err, sh.growth.rewards, modelGrowth.RewardKopecks)
	}
	gs := w.store.(growth.Store)
	for i, u := range w.users {
		got, err := w.accounts.User(w.ctx, u.ID)
		if err != nil {
			return err
		}
		if want := modelGrowth.Level(sh.growth.counted[i]); got.Level != want {
			return fmt.Errorf("user %d is at level %d, the volume of %d puts them at %d", i, got.Level, sh.growth.counted[i], want)
		}
		sum, err := gs.Referrals(w.ctx, u.ID)
		if err != nil {
			return err
		}
		var referred, qualified int64
		for j := range modelUsers {
			if referrerOf(j) == i {
				referred++
				if sh.growth.rewarded[j] {
					qualified++
				}
			}
		}
		if sum.Referred != referred || sum.Qualified != qualified || sum.EarnedKopecks != qualified*modelGrowth.RewardKopecks {
			return fmt.Errorf("user %d's referrals are %+v, the receipts say %d referred, %d qualified", i, sum, referred, qualified)
		}
	}
	return nil
}
