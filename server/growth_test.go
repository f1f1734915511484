package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/server"
)

type apiReferrals struct {
	Code           string `json:"code"`
	Link           string `json:"link"`
	Referred       int64  `json:"referred"`
	Qualified      int64  `json:"qualified"`
	EarnedKopecks  int64  `json:"earned_kopecks"`
	QualifyKopecks int64  `json:"qualify_kopecks"`
	RewardKopecks  int64  `json:"reward_kopecks"`
}

// apiGrowthNote is a notification with the data growth gives it.
type apiGrowthNote struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Message string `json:"message"`
	Link    string `json:"link"`
}

// growthStore is what the tests wait on: the growth cursor and the log's
// head.
type growthStore interface {
	changelog.Reader
	GrowthCursor(ctx context.Context) (int64, error)
}

// grown waits until the server's growth consumer has applied every entry
// the log holds now.
func grown(t *testing.T, store server.Store) {
	t.Helper()
	gs := store.(growthStore)
	b, err := gs.ChangeBounds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := gs.GrowthCursor(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c >= b.Last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the growth consumer is at %d after 30 s, the log at %d", c, b.Last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// notificationData are the data of user's notification entries of type
// typ in the change log, oldest first.
func notificationData(t *testing.T, store server.Store, user int64, typ string) []string {
	t.Helper()
	var out []string
	for after := int64(0); ; {
		es, err := store.(growthStore).Changes(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			var n struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			if e.Type == changelog.Notification && e.UserID == user && json.Unmarshal(e.Data, &n) == nil && n.Type == typ {
				out = append(out, string(n.Data))
			}
			after = e.Seq
		}
		if len(es) < 1000 {
			return out
		}
	}
}

func (h *harness) referrals(t *testing.T, token string) apiReferrals {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/referrals", token: token})
	expect(t, r, http.StatusOK, "")
	var out apiReferrals
	r.decode(t, &out)
	return out
}

func (h *harness) growthNotes(t *testing.T, token, typ string) []apiGrowthNote {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Notifications []apiGrowthNote `json:"notifications"`
	}
	r.decode(t, &out)
	var ns []apiGrowthNote
	for _, n := range out.Notifications {
		if n.Type == typ {
			ns = append(ns, n)
		}
	}
	return ns
}

// registerWith signs a user up with a referral code and answers the
// response.
func (h *harness) registerWith(t *testing.T, name string, code any) *response {
	t.Helper()
	return h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/register",
		body: map[string]any{"email": fmt.Sprintf("%s-%d@test.predictkit", name, emailSeq.Add(1)), "password": "password-" + name, "name": name, "referral_code": code}})
}

func TestGrowthOverHTTP(t *testing.T) {
	rules := growth.Rules{Levels: []int64{0, 20_000, 60_000, 10_000_000}, QualifyKopecks: 50_000, RewardKopecks: 10_000, SignupBonusKopecks: 5_000}
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			cfg := testConfig(store)
			cfg.Growth = rules
			h, _ := startServer(t, cfg) // started: the consumers run
			w := newWorld(t, h)
			alice := w.alice
			var ref apiReferrals
			t.Run("a user's referrals give their code, a link to the registration page and the rules", func(t *testing.T) {
				ref = h.referrals(t, alice.token)
				if len(ref.Code) != 8 || !strings.HasSuffix(ref.Link, "/register?ref="+ref.Code) || !strings.HasPrefix(ref.Link, "http") ||
					ref.Referred != 0 || ref.Qualified != 0 || ref.EarnedKopecks != 0 || ref.QualifyKopecks != 50_000 || ref.RewardKopecks != 10_000 {
					t.Fatalf("alice's referrals: %+v", ref)
				}
				expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/referrals"}), http.StatusUnauthorized, "unauthorized")
				key := h.createKey(t, alice.token, "reader", "read")
				if got := h.referrals(t, key.Key); got.Code != ref.Code {
					t.Fatalf("read with an API key: %+v", got)
				}
			})
			t.Run("registration without a code gets the sign-up bonus and refers nobody", func(t *testing.T) {
				u := h.register(t, "plain")
				if me := h.me(t, u.token); me.BonusBalance != 5_000 || me.Balance != 0 {
					t.Fatalf("a new user has %d/%d, want a bonus of 5000", me.Balance, me.BonusBalance)
				}
				if got := h.referrals(t, alice.token); got.Referred != 0 {
					t.Fatalf("alice has %d referred", got.Referred)
				}
			})
			t.Run("an unknown or malformed code is 400 invalid_referral_code and creates nothing", func(t *testing.T) {
				for _, code := range []string{"NOSUCH99", "not a code", strings.Repeat("Z", 100)} {
					email := fmt.Sprintf("refused-%d@test.predictkit", emailSeq.Add(1))
					body := map[string]any{"email": email, "password": "password-x", "name": "Refused", "referral_code": code}
					expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/register", body: body}), http.StatusBadRequest, "invalid_referral_code")
					expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": "password-x"}}),
						http.StatusUnauthorized, "invalid_credentials")
				}
				expect(t, h.registerWith(t, "typed", 12345678), http.StatusBadRequest, "invalid_request")
			})
			var bob apiUser
			t.Run("a code in lower case with spaces refers the new user", func(t *testing.T) {
				r := h.registerWith(t, "bob", " "+strings.ToLower(ref.Code)+" ")
				expect(t, r, http.StatusCreated, "")
				var out struct {
					User        apiProfile `json:"user"`
					AccessToken string     `json:"access_token"`
				}
				r.decode(t, &out)
				bob = apiUser{id: out.User.ID, token: out.AccessToken, name: "bob"}
				if got := h.referrals(t, alice.token); got.Referred != 1 || got.Qualified != 0 {
					t.Fatalf("alice's referrals after bob joined: %+v", got)
				}
				if me := h.me(t, bob.token); me.BonusBalance != 5_000 {
					t.Fatalf("bob's bonus is %d", me.BonusBalance)
				}
			})
			t.Run("once the referee trades past the threshold the referrer is rewarded once and notified, and levels rise", func(t *testing.T) {
				aliceBonus := h.me(t, alice.token).BonusBalance
				h.credit(t, bob.id, 1_000_000, false)
				h.buy(t, bob.token, w.a1.ID, "YES", 30_000)
				grown(t, store)
				if got := h.me(t, alice.token).BonusBalance; got != aliceBonus {
					t.Fatalf("alice was rewarded before bob qualified: %d", got)
				}
				h.buy(t, bob.token, w.a1.ID, "NO", 40_000)
				grown(t, store)
				if got := h.me(t, alice.token).BonusBalance; got != aliceBonus+10_000 {
					t.Fatalf("alice's bonus is %d, want %d", got, aliceBonus+10_000)
				}
				if got := h.referrals(t, alice.token); got.Referred != 1 || got.Qualified != 1 || got.EarnedKopecks != 10_000 {
					t.Fatalf("alice's referrals after bob qualified: %+v", got)
				}
				ns := h.growthNotes(t, alice.token, "referral_reward")
				if len(ns) != 1 || ns[0].Link != "/invite" || ns[0].Title != "Referral reward" ||
					ns[0].Message != "bob, whom you invited, has traded enough: 100.00 RUB was added to your bonus balance." {
					t.Fatalf("alice's referral_reward notifications: %+v", ns)
				}
				h.setProfile(t, alice.token, map[string]any{"language": "ru"})
				if ns := h.growthNotes(t, alice.token, "referral_reward"); ns[0].Title != "Бонус за приглашение" || !strings.Contains(ns[0].Message, "100,00 ₽") {
					t.Fatalf("in Russian: %+v", ns[0])
				}
				ups := h.growthNotes(t, bob.token, "level_up")
				if len(ups) != 2 || ups[0].Title != "Level up" || ups[0].Link != "/profile" ||
					!strings.Contains(ups[0].Message, "level 3") || !strings.Contains(ups[1].Message, "level 2") {
					t.Fatalf("bob's level_up notifications: %+v", ups)
				}
				// The stream's messages (the change log's entries) carry
				// the data a client renders them from.
				data := notificationData(t, store, bob.id, "level_up")
				if len(data) != 2 || data[0] != `{"level":2}` || data[1] != `{"level":3}` {
					t.Fatalf("bob's level_up entries carry %q", data)
				}
				if data := notificationData(t, store, alice.id, "referral_reward"); len(data) != 1 || data[0] != `{"amount":10000,"other":"bob"}` {
					t.Fatalf("alice's referral_reward entries carry %q", data)
				}
				if me := h.me(t, bob.token); me.Level != 3 {
					t.Fatalf("bob's profile says level %d", me.Level)
				}
				h.buy(t, bob.token, w.a2.ID, "YES", 50_000)
				grown(t, store)
				if got := h.me(t, alice.token).BonusBalance; got != aliceBonus+10_000 || len(h.growthNotes(t, alice.token, "referral_reward")) != 1 {
					t.Fatalf("bob's further trades paid alice again: her bonus is %d", got)
				}
			})
			t.Run("leaderboard rows carry the trader's level", func(t *testing.T) {
				caughtUp(t, store)
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/leaderboard?by=volume&period=all"})
				expect(t, r, http.StatusOK, "")
				var board struct {
					Entries []struct {
						UserID *int64 `json:"user_id"`
						Level  int    `json:"level"`
					} `json:"entries"`
				}
				r.decode(t, &board)
				found := false
				for _, e := range board.Entries {
					if e.UserID != nil && *e.UserID == bob.id {
						found = true
						if e.Level != 3 {
							t.Fatalf("bob's row says level %d", e.Level)
						}
					} else if e.Level < 1 {
						t.Fatalf("a row has level %d", e.Level)
					}
				}
				if !found {
					t.Fatalf("bob is not on the board: %s", r)
				}
			})
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the ledger is not sound: %v", problems)
			}
		})
	}
}
