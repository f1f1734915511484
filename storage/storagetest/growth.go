package storagetest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
)

// grow applies the change log to the growth tables until nothing is
// left, one entry (PostgreSQL: one change-log row) at a time, as the
// server's consumer does with larger batches.
func (e *env) grow(rules growth.Rules) {
	e.t.Helper()
	for range 100_000 {
		n, err := e.stores.Growth.ApplyGrowth(e.ctx, rules, 1)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	e.t.Fatal("ApplyGrowth never caught up")
}

// referrals is u's referral summary.
func (e *env) referrals(u *account.User) growth.Summary {
	e.t.Helper()
	s, err := e.stores.Growth.Referrals(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// referred registers a user with code, credited with balance.
func (e *env) referred(name, code string, balance int64) *account.User {
	e.t.Helper()
	userSeq++
	u, _, err := e.accounts.Register(e.ctx, account.Registration{Email: name + "-" + itoa(userSeq) + "@example.com", Password: "password123", Name: name, ReferralCode: code})
	if err != nil {
		e.t.Fatalf("register %s with code %q: %v", name, code, err)
	}
	if balance > 0 {
		if _, err := e.accounts.Credit(e.ctx, u.ID, balance, false); err != nil {
			e.t.Fatal(err)
		}
	}
	return u
}

// volumeOf is the sum of the costs of u's trades on m, as the store
// recorded them.
func (e *env) volumeOf(u *account.User, m *market.Market) int64 {
	e.t.Helper()
	_, v, _ := e.figures(u, m)
	return v
}

// checkAudit fails unless the ledger's audit balances.
func (e *env) checkAudit() {
	e.t.Helper()
	r, err := e.accounts.Audit(e.ctx)
	if err != nil || !r.OK {
		e.failWithAudit("the audit does not balance")
	}
}

// level is u's level as the store reads it now.
func (e *env) level(u *account.User) int {
	e.t.Helper()
	got, err := e.accounts.User(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got.Level
}

// rewardEntries are the balance entries of the log after seq after that
// tell user of a referral reward.
func (e *env) rewardEntries(user, after int64) int {
	e.t.Helper()
	n := 0
	for _, en := range e.since(after) {
		if en.Type == changelog.Balance && en.UserID == user && strings.Contains(string(en.Data), `"reason":"`+growth.ReasonReferralReward+`"`) {
			n++
		}
	}
	return n
}

// checkLevelUps checks that u's level_up notifications rise one after
// the other and end at the level of u's volume on m.
func (e *env) checkLevelUps(rules growth.Rules, u *account.User, m *market.Market) {
	e.t.Helper()
	ns := e.notesOf(u, social.TypeLevelUp)
	want := rules.Level(e.volumeOf(u, m))
	if len(ns) == 0 || e.level(u) != want {
		e.t.Fatalf("%s is at level %d with %d level_up notifications, want level %d", u.Name, e.level(u), len(ns), want)
	}
	// Notifications read newest first.
	for i, n := range ns {
		if i == 0 && n.Data.Level != want || i > 0 && n.Data.Level >= ns[i-1].Data.Level {
			e.t.Fatalf("%s's level_up notifications are not one per rise, up to %d: %+v", u.Name, want, ns)
		}
	}
}

// growthRules are rules whose thresholds a test's few trades pass.
func growthRules() growth.Rules {
	return growth.Rules{Levels: []int64{0, 20_000, 60_000, 1_000_000}, QualifyKopecks: 50_000, RewardKopecks: 10_000}
}

func testGrowth(t *testing.T, newStores func(*testing.T) Stores) {
	if st := newStores(t); st.Growth == nil || st.Changes == nil {
		t.Skip("this store keeps no growth tables")
	}
	t.Run("a code given in any case, with spaces, records the referral and the referrer's summary counts it", func(t *testing.T) {
		e := newEnv(t, newStores)
		alice := e.user("Alice", 0, 0)
		e.referred("Bob", "  "+strings.ToLower(alice.ReferralCode)+" ", 0)
		e.referred("Cid", alice.ReferralCode, 0)
		got := e.referrals(alice)
		if got != (growth.Summary{Code: alice.ReferralCode, Referred: 2}) {
			t.Fatalf("alice's summary is %+v, want code %s and 2 referred", got, alice.ReferralCode)
		}
		if s := e.referrals(e.user("Dan", 0, 0)); s.Referred != 0 || s.Code == "" || s.Code == alice.ReferralCode {
			t.Fatalf("a user nobody named has %+v", s)
		}
		if _, err := e.stores.Growth.Referrals(e.ctx, 1<<40); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("an unknown user's referrals: %v, want ErrUserNotFound", err)
		}
	})

	t.Run("a referral code is one user's, told apart case-insensitively", func(t *testing.T) {
		e := newEnv(t, newStores)
		alice := e.user("Alice", 0, 0)
		twin := &account.User{Email: "twin@example.com", Name: "Twin", Language: "en", Theme: "light", Level: 1, ReferralCode: strings.ToLower(alice.ReferralCode)}
		if err := e.stores.Accounts.CreateUser(e.ctx, twin, "h"); !errors.Is(err, account.ErrReferralCodeTaken) {
			t.Fatalf("a second user with alice's code in lower case: %v, want ErrReferralCodeTaken", err)
		}
		if _, _, err := e.stores.Accounts.UserByEmail(e.ctx, "twin@example.com"); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("the refused user exists (%v)", err)
		}
	})

	t.Run("an unknown, malformed or partner sub-account's code is refused and nothing is created", func(t *testing.T) {
		e := newEnv(t, newStores)
		e.accounts.SignupBonus = 5_000
		codes := []string{"NOSUCH99", "AB-C!", strings.Repeat("A", 40)}
		if e.partners != nil {
			p := e.partner("Bookie", 0)
			sub := &account.User{Name: "sub", PartnerID: p.ID, ExternalID: "r1", Language: "en", Theme: "light", Level: 1, ReferralCode: "SUBREF01"}
			if err := e.stores.Accounts.CreateUser(e.ctx, sub, ""); err != nil {
				t.Fatal(err)
			}
			codes = append(codes, "subref01")
		}
		last := e.last()
		for _, code := range codes {
			_, _, err := e.accounts.Register(e.ctx, account.Registration{Email: "refused@example.com", Password: "password123", Name: "Refused", ReferralCode: code})
			if !errors.Is(err, account.ErrInvalidReferralCode) {
				t.Fatalf("code %q: %v, want ErrInvalidReferralCode", code, err)
			}
			if _, _, err := e.stores.Accounts.UserByEmail(e.ctx, "refused@example.com"); !errors.Is(err, account.ErrUserNotFound) {
				t.Fatalf("code %q was refused, yet the user exists (%v)", code, err)
			}
		}
		if b := e.accountBalance(account.SignupBonuses); b != 0 {
			t.Fatalf("refused registrations spent %d on sign-up bonuses", -b)
		}
		if es := e.since(last); len(es) != 0 {
			t.Fatalf("refused registrations wrote %d change-log entries", len(es))
		}
		e.referred("Refused", "", 0) // the e-mail is free
	})

	t.Run("a referee reaching the qualifying volume earns the referrer the reward once, with a balance entry and a notification", func(t *testing.T) {
		e := newEnv(t, newStores)
		rules := growthRules()
		e.grow(rules) // the consumer's first run: nothing to count yet
		m := e.event(e.creator(), 0.02, 100_000, 0.5).Pools[0].Markets[0]
		alice := e.user("Alice", 0, 0)
		bob := e.referred("Bob", alice.ReferralCode, 1_000_000)
		before := e.last()
		e.must(e.buy(bob, m, market.Yes, 30_000))
		e.grow(rules)
		if v := e.volumeOf(bob, m); v >= rules.QualifyKopecks {
			t.Fatalf("the first trade's volume %d already qualifies: the test proves nothing", v)
		}
		if b := e.balances(alice); b.Bonus != 0 || len(e.notesOf(alice, social.TypeReferralReward)) != 0 {
			t.Fatalf("alice was rewarded before bob qualified: %+v", b)
		}
		e.must(e.buy(bob, m, market.No, 30_000))
		e.grow(rules)
		if v := e.volumeOf(bob, m); v < rules.QualifyKopecks {
			t.Fatalf("bob's volume %d does not qualify: the test proves nothing", v)
		}
		check := func(when string) {
			t.Helper()
			if b := e.balances(alice); b.Bonus != rules.RewardKopecks || b.Balance != 0 {
				t.Fatalf("%s: alice's balances are %+v, want a bonus of %d", when, b, rules.RewardKopecks)
			}
			ns := e.notesOf(alice, social.TypeReferralReward)
			if len(ns) != 1 || ns[0].Data.Amount != rules.RewardKopecks || ns[0].Data.Other != "Bob" || ns[0].Link() != "/invite" {
				t.Fatalf("%s: alice's referral_reward notifications: %+v", when, ns)
			}
			if n := e.rewardEntries(alice.ID, before); n != 1 {
				t.Fatalf("%s: %d balance entries tell alice of a reward, want 1", when, n)
			}
			if s := e.referrals(alice); s.Referred != 1 || s.Qualified != 1 || s.EarnedKopecks != rules.RewardKopecks {
				t.Fatalf("%s: alice's summary is %+v", when, s)
			}
			if r := e.accountBalance(account.ReferralRewards); r != -rules.RewardKopecks {
				t.Fatalf("%s: the referral rewards account holds %d", when, r)
			}
			e.checkAudit()
		}
		check("after bob qualified")
		e.must(e.buy(bob, m, market.Yes, 80_000))
		e.grow(rules)
		check("after bob traded on")
	})

	t.Run("appliers racing over the qualifying trades, at the first run and after, pay each reward once", func(t *testing.T) {
		e := newEnv(t, newStores)
		rules := growthRules()
		m := e.event(e.creator(), 0.02, 100_000, 0.5).Pools[0].Markets[0]
		alice := e.user("Alice", 0, 0)
		var bobs []*account.User
		for i := range 4 {
			bobs = append(bobs, e.referred("Bob"+itoa(i), alice.ReferralCode, 1_000_000))
		}
		race := func() {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					for {
						n, err := e.stores.Growth.ApplyGrowth(e.ctx, rules, 1)
						if err != nil {
							errs <- err
							return
						}
						if n == 0 {
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			e.grow(rules)
		}
		// Two qualify before the consumer ever ran: its racing first
		// runs reward them; the two others qualify after.
		for i, b := range bobs {
			if i == 2 {
				race()
				if got := e.balances(alice).Bonus; got != 2*rules.RewardKopecks {
					t.Fatalf("after the first runs alice's bonus is %d, want 2 rewards", got)
				}
			}
			e.must(e.buy(b, m, market.Yes, 60_000))
			e.must(e.buy(b, m, market.No, 10_000))
		}
		race()
		want := int64(len(bobs)) * rules.RewardKopecks
		if b := e.balances(alice); b.Bonus != want {
			t.Fatalf("alice's bonus is %d after %d referees qualified, want %d", b.Bonus, len(bobs), want)
		}
		if ns := e.notesOf(alice, social.TypeReferralReward); len(ns) != len(bobs) {
			t.Fatalf("alice has %d referral_reward notifications, want %d", len(ns), len(bobs))
		}
		for _, b := range bobs[2:] {
			e.checkLevelUps(rules, b, m)
		}
		for _, b := range bobs[:2] {
			if l := e.level(b); l != rules.Level(e.volumeOf(b, m)) {
				t.Fatalf("%s is at level %d after the first run", b.Name, l)
			}
		}
		if s := e.referrals(alice); s.Qualified != int64(len(bobs)) || s.EarnedKopecks != want {
			t.Fatalf("alice's summary is %+v", s)
		}
		e.checkAudit()
	})

	t.Run("a reward of 0 marks the referee qualified and pays nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		rules := growthRules()
		rules.RewardKopecks = 0
		e.grow(rules)
		m := e.event(e.creator(), 0.02, 100_000, 0.5).Pools[0].Markets[0]
		alice := e.user("Alice", 0, 0)
		bob := e.referred("Bob", alice.ReferralCode, 1_000_000)
		e.must(e.buy(bob, m, market.Yes, 80_000))
		e.grow(rules)
		if s := e.referrals(alice); s.Referred != 1 || s.Qualified != 1 || s.EarnedKopecks != 0 {
			t.Fatalf("alice's summary is %+v, want 1 qualified and nothing earned", s)
		}
		// The reward, raised later, is not paid for a referee who
		// qualified already.
		rules.RewardKopecks = 10_000
		e.must(e.buy(bob, m, market.No, 10_000))
		e.grow(rules)
		if b := e.balances(alice); b.Total() != 0 || len(e.notesOf(alice, social.TypeReferralReward)) != 0 || e.accountBalance(account.ReferralRewards) != 0 {
			t.Fatalf("alice got %+v and %d notifications", b, len(e.notesOf(alice, social.TypeReferralReward)))
		}
		e.checkAudit()
	})

	t.Run("levels rise with the lifetime volume, each rise notified with its level, and never go down", func(t *testing.T) {
		e := newEnv(t, newStores)
		rules := growthRules()
		e.grow(rules)
		m := e.event(e.creator(), 0.02, 100_000, 0.5).Pools[0].Markets[0]
		u := e.user("Trader", 2_000_000, 0)
		e.must(e.buy(u, m, market.Yes, 25_000))
		e.grow(rules)
		if l := e.level(u); l != rules.Level(e.volumeOf(u, m)) || l != 2 {
			t.Fatalf("level %d after a volume of %d, want 2", l, e.volumeOf(u, m))
		}
		e.must(e.buy(u, m, market.No, 40_000))
		e.grow(rules)
		if l := e.level(u); l != 3 {
			t.Fatalf("level %d after a volume of %d, want 3", l, e.volumeOf(u, m))
		}
		ns := e.notesOf(u, social.TypeLevelUp)
		levels := []int{}
		for _, n := range ns {
			levels = append(levels, n.Data.Level)
			if n.Link() != "/profile" {
				t.Fatalf("a level_up links to %q", n.Link())
			}
		}
		if len(levels) != 2 || levels[0]+levels[1] != 5 {
			t.Fatalf("level_up notifications of levels %v, want 2 and 3", levels)
		}
		// Raised thresholds apply from the next trade, and take no level back.
		raised := rules
		raised.Levels = []int64{0, 10_000_000}
		e.must(e.buy(u, m, market.Yes, 1_000))
		e.grow(raised)
		if l := e.level(u); l != 3 || len(e.notesOf(u, social.TypeLevelUp)) != 2 {
			t.Fatalf("after the thresholds rose the level is %d with %d notifications, want 3 and 2", l, len(e.notesOf(u, social.TypeLevelUp)))
		}
		// A jump over several levels is one notification, of the last.
		deep := e.event(e.creator(), 0.02, 10_000_000, 0.5).Pools[0].Markets[0]
		w := e.user("Whale", 3_000_000, 0)
		e.must(e.buy(w, deep, market.Yes, 1_500_000))
		e.grow(rules)
		if ns := e.notesOf(w, social.TypeLevelUp); e.level(w) != 4 || len(ns) != 1 || ns[0].Data.Level != 4 {
			t.Fatalf("the whale is at level %d with notifications %+v, want one to level 4", e.level(w), ns)
		}
	})

	t.Run("a partner's sub-accounts have no volume, level or referral", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("this store has no partner store")
		}
		rules := growthRules()
		e.grow(rules)
		m := e.event(e.creator(), 0.02, 10_000_000, 0.5).Pools[0].Markets[0]
		p := e.partner("Bookie", 3_000_000)
		if _, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "x-1", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1_500_000, ClientBetID: "g1"}); err != nil {
			t.Fatal(err)
		}
		e.grow(rules)
		sub, err := e.stores.Partners.SubAccount(e.ctx, p.ID, "x-1")
		if err != nil {
			t.Fatal(err)
		}
		if sub, err = e.accounts.User(e.ctx, sub.ID); err != nil {
			t.Fatal(err)
		}
		if sub.Level != 1 || len(e.notesOf(sub, social.TypeLevelUp)) != 0 {
			t.Fatalf("a sub-account rose to level %d", sub.Level)
		}
	})

	t.Run("the sign-up bonus is posted with the account, once, and the audit balances", func(t *testing.T) {
		e := newEnv(t, newStores)
		e.accounts.SignupBonus = 7_500
		before := e.last()
		u := e.user("New", 0, 0)
		if b := e.balances(u); b.Bonus != 7_500 || b.Balance != 0 {
			t.Fatalf("a new user's balances are %+v, want a bonus of 7500", b)
		}
		n := 0
		for _, en := range e.since(before) {
			if en.Type == changelog.Balance && en.UserID == u.ID {
				var d struct {
					BonusBalance int64  `json:"bonus_balance"`
					Reason       string `json:"reason"`
				}
				if err := json.Unmarshal(en.Data, &d); err != nil || d.BonusBalance != 7_500 || d.Reason != growth.ReasonSignupBonus {
					t.Fatalf("the bonus's balance entry is %s", en.Data)
				}
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d balance entries for the new user, want 1", n)
		}
		alice := e.user("Alice", 0, 0)
		e.referred("Bob", alice.ReferralCode, 0)
		seeded, _, err := e.accounts.Register(e.ctx, account.Registration{Email: "seeded@example.com", Password: "password123", Name: "Seed", Seeded: true})
		if err != nil {
			t.Fatal(err)
		}
		if b := e.balances(seeded); b.Total() != 0 {
			t.Fatalf("a seeded account got %+v", b)
		}
		if s := e.accountBalance(account.SignupBonuses); s != -3*7_500 {
			t.Fatalf("the sign-up bonuses account holds %d after three bonuses of 7500", s)
		}
		e.checkAudit()
	})

	t.Run("the first run counts the trades already there without notifying, and rewards referees already past the threshold once", func(t *testing.T) {
		e := newEnv(t, newStores)
		rules := growthRules()
		m := e.event(e.creator(), 0.02, 100_000, 0.5).Pools[0].Markets[0]
		alice := e.user("Alice", 0, 0)
		bob := e.referred("Bob", alice.ReferralCode, 1_000_000)
		cid := e.referred("Cid", alice.ReferralCode, 1_000_000)
		e.must(e.buy(bob, m, market.Yes, 70_000))
		e.must(e.buy(cid, m, market.Yes, 5_000))
		e.grow(rules)
		if l := e.level(bob); l != 3 || len(e.notesOf(bob, social.TypeLevelUp)) != 0 {
			t.Fatalf("bob's history put him at level %d with %d notifications, want 3 and none", l, len(e.notesOf(bob, social.TypeLevelUp)))
		}
		if b := e.balances(alice); b.Bonus != rules.RewardKopecks || len(e.notesOf(alice, social.TypeReferralReward)) != 1 {
			t.Fatalf("alice's bonus is %d, want the one reward for bob", b.Bonus)
		}
		e.must(e.buy(cid, m, market.Yes, 60_000))
		e.must(e.buy(bob, m, market.No, 10_000))
		e.grow(rules)
		if s := e.referrals(alice); s.Qualified != 2 || s.EarnedKopecks != 2*rules.RewardKopecks || e.balances(alice).Bonus != 2*rules.RewardKopecks {
			t.Fatalf("alice's summary is %+v", s)
		}
		if ns := e.notesOf(cid, social.TypeLevelUp); len(ns) != 1 || ns[0].Data.Level != 3 {
			t.Fatalf("cid's level_up notifications: %+v", ns)
		}
		e.checkAudit()
	})
}
