package storagetest

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/p2p"
)

//go:embed testdata/p2p.json
var p2pFixtureJSON []byte

// P2PFixture is the P2P board of testdata/p2p.json: users with their
// records, ads, and list cases with the ads each must return.
type P2PFixture struct {
	Users []struct {
		Label           string `json:"label"`
		Nickname        string `json:"nickname"`
		Hidden          bool   `json:"hidden"`
		CompletedOrders int64  `json:"completed_orders"`
		RatingSum       int64  `json:"rating_sum"`
		RatingCount     int64  `json:"rating_count"`
	} `json:"users"`
	Ads []struct {
		Label            string   `json:"label"`
		Owner            string   `json:"owner"`
		Type             string   `json:"type"`
		FiatCurrency     string   `json:"fiat_currency"`
		ExchangeRate     int64    `json:"exchange_rate"`
		MinAmount        int64    `json:"min_amount"`
		MaxAmount        int64    `json:"max_amount"`
		PaymentMethods   []string `json:"payment_methods"`
		PaymentDuration  int64    `json:"payment_duration"`
		Minute           int      `json:"minute"`
		IsActive         *bool    `json:"is_active"`
		ModerationStatus string   `json:"moderation_status"`
	} `json:"ads"`
	Cases []struct {
		Name  string   `json:"name"`
		Query string   `json:"query"`
		Want  []string `json:"want"`
	} `json:"cases"`
}

// LoadP2PFixture reads testdata/p2p.json (the server tests use it too).
func LoadP2PFixture() (*P2PFixture, error) {
	var f P2PFixture
	if err := json.Unmarshal(p2pFixtureJSON, &f); err != nil {
		return nil, fmt.Errorf("p2p fixture: %w", err)
	}
	return &f, nil
}

// P2PFixtureBase is the time the fixture's minutes count from.
var P2PFixtureBase = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// P2PBoard is the fixture loaded into a store: its users and ads by
// label.
type P2PBoard struct {
	Fixture *P2PFixture
	Users   map[string]*account.User
	Ads     map[string]int64 // label → id
	Labels  map[int64]string // id → label
	All     []int64          // every ad's id, in creation order
}

// SeedP2PFixture registers the fixture's users (nicknames, hidden
// profiles), sets their P2P records and creates its ads (then moderates
// them as the fixture says), through the services, with ads.Now set to
// each ad's time. Two stores seeded alike hold the same ids and times.
func SeedP2PFixture(ctx context.Context, accounts *account.Service, ads *p2p.Service) (*P2PBoard, error) {
	f, err := LoadP2PFixture()
	if err != nil {
		return nil, err
	}
	b := &P2PBoard{Fixture: f, Users: map[string]*account.User{}, Ads: map[string]int64{}, Labels: map[int64]string{}}
	for _, fu := range f.Users {
		u, _, err := accounts.Register(ctx, account.Registration{Email: "p2p-" + fu.Label + "@example.com", Password: "password123", Name: fu.Label})
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", fu.Label, err)
		}
		patch := account.ProfilePatch{ProfileHidden: ptr(fu.Hidden)}
		if fu.Nickname != "" {
			patch.Nickname = ptr(fu.Nickname)
		}
		if u, err = accounts.UpdateProfile(ctx, u.ID, patch); err != nil {
			return nil, err
		}
		b.Users[fu.Label] = u
		if fu.CompletedOrders > 0 {
			if _, err := ads.SetStats(ctx, p2p.UserStats{UserID: u.ID, CompletedOrders: fu.CompletedOrders, RatingSum: fu.RatingSum, RatingCount: fu.RatingCount}); err != nil {
				return nil, err
			}
		}
	}
	clock := ads.Now
	defer func() { ads.Now = clock }()
	for _, fa := range f.Ads {
		at := P2PFixtureBase.Add(time.Duration(fa.Minute) * time.Minute)
		ads.Now = func() time.Time { return at }
		ad, err := ads.Create(ctx, p2p.NewAd{
			UserID: b.Users[fa.Owner].ID, Type: fa.Type, FiatCurrency: fa.FiatCurrency, ExchangeRate: fa.ExchangeRate,
			MinAmount: fa.MinAmount, MaxAmount: fa.MaxAmount, PaymentMethods: fa.PaymentMethods, PaymentDuration: fa.PaymentDuration,
			Instructions: "Pay within the time, then press Paid.",
		})
		if err != nil {
			return nil, fmt.Errorf("create ad %s: %w", fa.Label, err)
		}
		m := p2p.Moderation{IsActive: fa.IsActive}
		if fa.ModerationStatus != "" {
			m.ModerationStatus = ptr(fa.ModerationStatus)
		}
		if m.IsActive != nil || m.ModerationStatus != nil {
			if _, err := ads.Moderate(ctx, ad.ID, m); err != nil {
				return nil, err
			}
		}
		b.Ads[fa.Label], b.Labels[ad.ID] = ad.ID, fa.Label
		b.All = append(b.All, ad.ID)
	}
	return b, nil
}

// p2pBoard is a P2PBoard in a test.
type p2pBoard struct{ *P2PBoard }

func seedP2P(t *testing.T, e *env, svc *p2p.Service) p2pBoard {
	t.Helper()
	b, err := SeedP2PFixture(e.ctx, e.accounts, svc)
	if err != nil {
		t.Fatal(err)
	}
	return p2pBoard{b}
}

// Names are the labels of ads.
func (b *P2PBoard) Names(ads []*p2p.Ad) []string {
	out := []string{}
	for _, ad := range ads {
		out = append(out, b.Labels[ad.ID])
	}
	return out
}

// reference answers q from every ad of the board read one by one, through
// p2p.Query.Select: what a store's list must equal.
func (b p2pBoard) reference(t *testing.T, ctx context.Context, st p2p.Store, q p2p.Query) []*p2p.Ad {
	t.Helper()
	var all []*p2p.Ad
	for _, id := range b.All {
		ad, err := st.P2PAd(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ad)
	}
	return q.Select(all)
}

func testP2P(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).P2P == nil {
		t.Skip("this store has no P2P store")
	}
	setup := func(t *testing.T) (*env, *p2p.Service, p2p.Store) {
		e := newEnv(t, newStores)
		return e, p2p.NewService(e.stores.P2P), e.stores.P2P
	}

	t.Run("every list case of the fixture returns its ads in order", func(t *testing.T) {
		e, svc, st := setup(t)
		b := seedP2P(t, e, svc)
		for _, c := range b.Fixture.Cases {
			t.Run(c.Name, func(t *testing.T) {
				v, err := url.ParseQuery(c.Query)
				if err != nil {
					t.Fatal(err)
				}
				q, err := p2p.ParseQuery(v)
				if err != nil {
					t.Fatalf("parse %q: %v", c.Query, err)
				}
				got, err := svc.List(e.ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if names := b.Names(got); !slices.Equal(names, c.Want) {
					t.Fatalf("%q: got %v, want %v", c.Query, names, c.Want)
				}
				if ref := b.Names(b.reference(t, e.ctx, st, q)); !slices.Equal(ref, c.Want) {
					t.Fatalf("%q: the reference answers %v, the fixture says %v", c.Query, ref, c.Want)
				}
			})
		}
	})

	t.Run("random combinations of every filter and sort agree with the reference", func(t *testing.T) {
		e, svc, st := setup(t)
		b := seedP2P(t, e, svc)
		rng := rand.New(rand.NewPCG(6, 2))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		for i := range 300 {
			v := url.Values{}
			set := func(k, val string) {
				if val != "" {
					v.Set(k, val)
				}
			}
			set("type", pick("", "", "buy", "sell"))
			set("fiat_currency", pick("", "", "RUB", "usd", "EUR"))
			set("amount", pick("", "", "", "0", "999", "1000", "1001", "2000", "5000", "50000", "100000"))
			set("payment_method", pick("", "", "", "SBP", "sberbank", "Tinkoff", "wise", "Cash", "PayPal"))
			set("max_payment_duration", pick("", "", "", "0", "10", "15", "30", "60", "90"))
			set("is_active", pick("", "", "true", "false"))
			set("author_nickname", pick("", "", "", "anna_p2p", "BORIS", "clara", "ghost", "none"))
			set("sort_by", pick("", "rating", "orders_count", "best_price"))
			set("limit", pick("", "", "1", "3", "0", "500"))
			set("offset", pick("", "", "", "1", "4", "9", "50"))
			q, err := p2p.ParseQuery(v)
			if err != nil {
				t.Fatalf("parse %s: %v", v.Encode(), err)
			}
			got, err := svc.List(e.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := b.Names(got), b.Names(b.reference(t, e.ctx, st, q)); !slices.Equal(g, w) {
				t.Fatalf("query %d %q: got %v, the reference %v", i, v.Encode(), g, w)
			}
		}
	})

	t.Run("an ad carries its owner with the owner's record", func(t *testing.T) {
		e, svc, _ := setup(t)
		b := seedP2P(t, e, svc)
		ad, err := svc.Ad(e.ctx, b.Ads["s1"])
		if err != nil {
			t.Fatal(err)
		}
		o := ad.Owner
		if o.ID != b.Users["anna"].ID || o.Name != "anna" || o.Nickname != "Anna_P2P" || o.Stats.CompletedOrders != 120 || o.Stats.AvgRating() != 4.8 {
			t.Fatalf("owner = %+v", o)
		}
		if ad.Type != "sell" || ad.FiatCurrency != "RUB" || ad.ExchangeRate != 101 || ad.MinAmount != 1000 || ad.MaxAmount != 50000 ||
			ad.RemainingAmount != 50000 || !slices.Equal(ad.PaymentMethods, []string{"Sberbank", "SBP"}) || ad.PaymentDuration != 15 ||
			!ad.IsActive || ad.ModerationStatus != p2p.StatusApproved || ad.Instructions == "" ||
			!ad.CreatedAt.Equal(P2PFixtureBase.Add(time.Minute)) || !ad.UpdatedAt.Equal(ad.CreatedAt) {
			t.Fatalf("ad = %+v", ad)
		}
		hidden, err := svc.Ad(e.ctx, b.Ads["s5"])
		if err != nil {
			t.Fatal(err)
		}
		if hidden.Owner.Name != "Anonymous" || hidden.Owner.Nickname != "" || hidden.Owner.AvatarURL != "" || hidden.Owner.Stats.AvgRating() != 5 {
			t.Fatalf("a hidden owner shows %+v", hidden.Owner)
		}
		none, err := svc.Ad(e.ctx, b.Ads["s4"])
		if err != nil {
			t.Fatal(err)
		}
		if none.Owner.Stats != (p2p.UserStats{UserID: b.Users["dmitri"].ID}) || none.Owner.Stats.AvgRating() != 0 {
			t.Fatalf("an owner with no record shows %+v", none.Owner.Stats)
		}
	})

	t.Run("the public sees approved ads only, the operator every ad", func(t *testing.T) {
		e, svc, _ := setup(t)
		b := seedP2P(t, e, svc)
		for _, label := range []string{"p1", "r1", "r2"} {
			if _, err := svc.Ad(e.ctx, b.Ads[label]); !errors.Is(err, p2p.ErrNotFound) {
				t.Errorf("%s publicly: %v", label, err)
			}
			if ad, err := svc.AdForOperator(e.ctx, b.Ads[label]); err != nil || ad.ID != b.Ads[label] {
				t.Errorf("%s for the operator: %v", label, err)
			}
		}
		if ad, err := svc.Ad(e.ctx, b.Ads["x1"]); err != nil || ad.IsActive {
			t.Errorf("an inactive approved ad is public and says inactive: %+v, %v", ad, err)
		}
		for _, id := range []int64{0, -1, 999999} {
			if _, err := svc.Ad(e.ctx, id); !errors.Is(err, p2p.ErrNotFound) {
				t.Errorf("ad %d: %v", id, err)
			}
		}
	})

	t.Run("moderation moves ads in and out of the lists", func(t *testing.T) {
		e, svc, _ := setup(t)
		b := seedP2P(t, e, svc)
		list := func(query string) []string {
			v, _ := url.ParseQuery(query)
			q, err := p2p.ParseQuery(v)
			if err != nil {
				t.Fatal(err)
			}
			ads, err := svc.List(e.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return b.Names(ads)
		}
		later := P2PFixtureBase.Add(time.Hour)
		svc.Now = func() time.Time { return later }
		ad, err := svc.Moderate(e.ctx, b.Ads["p1"], p2p.Moderation{ModerationStatus: ptr(p2p.StatusApproved)})
		if err != nil || ad.ModerationStatus != p2p.StatusApproved || !ad.IsActive || !ad.UpdatedAt.Equal(later) {
			t.Fatalf("approve: %+v, %v", ad, err)
		}
		if got := list("type=sell&sort_by=best_price"); !slices.Equal(got, []string{"p1", "s2", "s3", "s5", "s1", "s4"}) {
			t.Fatalf("after approval: %v", got)
		}
		if _, err := svc.Moderate(e.ctx, b.Ads["s2"], p2p.Moderation{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if got := list("is_active=false"); !slices.Equal(got, []string{"x2", "x1", "s2"}) {
			t.Fatalf("after deactivation: %v", got)
		}
		if _, err := svc.Moderate(e.ctx, b.Ads["s1"], p2p.Moderation{ModerationStatus: ptr(p2p.StatusRejected), IsActive: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if got := list("author_nickname=anna_p2p"); !slices.Equal(got, []string{"b1"}) {
			t.Fatalf("after rejection: %v", got)
		}
		if _, err := svc.Moderate(e.ctx, b.Ads["s1"], p2p.Moderation{ModerationStatus: ptr("banned")}); !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("an unknown status: %v", err)
		}
		if _, err := svc.Moderate(e.ctx, 999999, p2p.Moderation{IsActive: ptr(true)}); !errors.Is(err, p2p.ErrNotFound) {
			t.Fatalf("an unknown ad: %v", err)
		}
		if ad, err := svc.Moderate(e.ctx, b.Ads["b1"], p2p.Moderation{}); err != nil || ad.ID != b.Ads["b1"] {
			t.Fatalf("an empty moderation: %+v, %v", ad, err)
		}
	})

	t.Run("a changed record re-sorts the list", func(t *testing.T) {
		e, svc, _ := setup(t)
		b := seedP2P(t, e, svc)
		if _, err := svc.SetStats(e.ctx, p2p.UserStats{UserID: b.Users["dmitri"].ID, CompletedOrders: 500, RatingSum: 1000, RatingCount: 200}); err != nil {
			t.Fatal(err)
		}
		v := url.Values{"sort_by": {"orders_count"}, "limit": {"2"}}
		q, _ := p2p.ParseQuery(v)
		ads, err := svc.List(e.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Names(ads); !slices.Equal(got, []string{"s4", "b4"}) {
			t.Fatalf("got %v", got)
		}
		st, err := svc.Stats(e.ctx, b.Users["dmitri"].ID)
		if err != nil || st.CompletedOrders != 500 || st.AvgRating() != 5 {
			t.Fatalf("stats %+v, %v", st, err)
		}
	})

	t.Run("records and ads refuse unknown users and broken records", func(t *testing.T) {
		e, svc, st := setup(t)
		u := e.user("trader", 0, 0)
		cases := []struct {
			name string
			st   p2p.UserStats
			want error
		}{
			{"an unknown user", p2p.UserStats{UserID: 999999, CompletedOrders: 1}, p2p.ErrUserNotFound},
			{"negative orders", p2p.UserStats{UserID: u.ID, CompletedOrders: -1}, input.ErrInvalid},
			{"more ratings than orders", p2p.UserStats{UserID: u.ID, CompletedOrders: 1, RatingCount: 2, RatingSum: 10}, input.ErrInvalid},
			{"an average over five stars", p2p.UserStats{UserID: u.ID, CompletedOrders: 2, RatingCount: 2, RatingSum: 11}, input.ErrInvalid},
			{"an average under one star", p2p.UserStats{UserID: u.ID, CompletedOrders: 2, RatingCount: 2, RatingSum: 1}, input.ErrInvalid},
		}
		for _, c := range cases {
			t.Run(c.name+" is refused", func(t *testing.T) {
				if _, err := svc.SetStats(e.ctx, c.st); !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
			})
		}
		if _, err := st.P2PStats(e.ctx, 999999); !errors.Is(err, p2p.ErrUserNotFound) {
			t.Fatalf("stats of nobody: %v", err)
		}
		if got, err := st.P2PStats(e.ctx, u.ID); err != nil || got != (p2p.UserStats{UserID: u.ID}) {
			t.Fatalf("stats of a user with none: %+v, %v", got, err)
		}
		if _, err := svc.Create(e.ctx, p2p.NewAd{UserID: 999999, Type: "buy", FiatCurrency: "RUB", ExchangeRate: 100, MinAmount: 1, MaxAmount: 2,
			PaymentMethods: []string{"SBP"}, PaymentDuration: 15}); !errors.Is(err, p2p.ErrUserNotFound) {
			t.Fatalf("an ad of nobody: %v", err)
		}
	})

	t.Run("limit is capped at 100 and paging reaches every ad once", func(t *testing.T) {
		e, svc, _ := setup(t)
		u := e.user("bulk", 0, 0)
		const n = 105
		for i := range n {
			if _, err := svc.Create(e.ctx, p2p.NewAd{UserID: u.ID, Type: "sell", FiatCurrency: "RUB", ExchangeRate: int64(100 + i%7),
				MinAmount: 100, MaxAmount: 1000, PaymentMethods: []string{"SBP"}, PaymentDuration: 15}); err != nil {
				t.Fatal(err)
			}
		}
		count := func(query string) int {
			v, _ := url.ParseQuery(query)
			q, err := p2p.ParseQuery(v)
			if err != nil {
				t.Fatal(err)
			}
			ads, err := svc.List(e.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return len(ads)
		}
		for _, c := range []struct {
			query string
			want  int
		}{{"", 20}, {"limit=0", 20}, {"limit=100", 100}, {"limit=101", 100}, {"limit=1000000", 100}, {"offset=100&limit=100", 5}, {"offset=104", 1}, {"offset=105", 0}} {
			t.Run(fmt.Sprintf("%q returns %d ads", c.query, c.want), func(t *testing.T) {
				if got := count(c.query); got != c.want {
					t.Fatalf("got %d", got)
				}
			})
		}
		seen := map[int64]bool{}
		for off := 0; off < n; off += 10 {
			q, _ := p2p.ParseQuery(url.Values{"sort_by": {"best_price"}, "limit": {"10"}, "offset": {fmt.Sprint(off)}})
			ads, err := svc.List(e.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, ad := range ads {
				if seen[ad.ID] {
					t.Fatalf("ad %d on two pages", ad.ID)
				}
				seen[ad.ID] = true
			}
		}
		if len(seen) != n {
			t.Fatalf("paging reached %d of %d ads", len(seen), n)
		}
	})

	t.Run("an ad keeps the payment methods as written and the store keeps no caller string", func(t *testing.T) {
		e, svc, _ := setup(t)
		u := e.user("writer", 0, 0)
		methods := []string{" Tinkoff ", "ЮMoney"}
		ad, err := svc.Create(e.ctx, p2p.NewAd{UserID: u.ID, Type: "buy", FiatCurrency: "eur", ExchangeRate: 10500, MinAmount: 100, MaxAmount: 100,
			RemainingAmount: ptr(int64(0)), PaymentMethods: methods, PaymentDuration: 1440, Instructions: "  line one\nline two  ", IsPlatformAd: true})
		if err != nil {
			t.Fatal(err)
		}
		methods[1] = "changed"
		got, err := svc.Ad(e.ctx, ad.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.PaymentMethods, []string{"Tinkoff", "ЮMoney"}) || got.FiatCurrency != "EUR" || got.RemainingAmount != 0 ||
			got.Instructions != "line one\nline two" || !got.IsPlatformAd || got.PaymentDuration != 1440 {
			t.Fatalf("ad = %+v", got)
		}
		q, _ := p2p.ParseQuery(url.Values{"payment_method": {"юmoney"}})
		ads, err := svc.List(e.ctx, q)
		if err != nil || len(ads) != 1 || ads[0].ID != ad.ID {
			t.Fatalf("a Cyrillic method compared case-insensitively: %v, %v", ads, err)
		}
		if strings.Contains(fmt.Sprint(got.PaymentMethods), "changed") {
			t.Fatal("the store kept the caller's slice")
		}
	})
}
