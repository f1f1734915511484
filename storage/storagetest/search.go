package storagetest

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
)

// searchFixture registers the users the search cases look for, in this
// order (so ids ascend down the list), and returns their ids by key.
func searchFixture(e *env) map[string]int64 {
	e.t.Helper()
	fixture := []struct {
		key, email, name, nick string
	}{
		{"anna", "Anna.Smith@Example.com", "Anna Smith", "annie"},
		{"boris", "boris@mail.example", "Борис Петров", "BORIS_P"},
		{"olga", "olga@example.org", "Ольга", ""},
		{"sale", "promo@example.com", "50%_off deals", "under_score"},
		{"slash", "back\\slash@example.com", "Back Slash", ""},
		{"plain", "zed@example.net", "Zed", "zzz"},
	}
	ids := map[string]int64{}
	for _, f := range fixture {
		u := &account.User{Email: f.email, Name: f.name}
		if f.nick != "" {
			u.Nickname = ptr(f.nick)
		}
		if err := e.stores.Accounts.CreateUser(e.ctx, u, "h"); err != nil {
			e.t.Fatal(err)
		}
		ids[f.key] = u.ID
	}
	return ids
}

func testSearchUsers(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a search finds users by e-mail, name or nickname in any case, newest first", func(t *testing.T) {
		e := newEnv(t, newStores)
		ids := searchFixture(e)
		cases := []struct {
			query string
			want  []string // newest first
		}{
			{"", []string{"plain", "slash", "sale", "olga", "boris", "anna"}},
			{"example.com", []string{"slash", "sale", "anna"}},
			{"ANNA.smith", []string{"anna"}},
			{"smith", []string{"anna"}},
			{"boris_p", []string{"boris"}},
			{"Annie", []string{"anna"}},
			{"ольга", []string{"olga"}},
			{"ПЕТРОВ", []string{"boris"}},
			{"%", []string{"sale"}},
			{"_", []string{"sale", "boris"}},
			{"50%_", []string{"sale"}},
			{"\\", []string{"slash"}},
			{"a%b", nil},
			{"nobody", nil},
		}
		for _, c := range cases {
			got, err := e.stores.Accounts.SearchUsers(e.ctx, account.UserQuery{Text: c.query, Limit: 100})
			if err != nil {
				t.Fatalf("%q: %v", c.query, err)
			}
			want := make([]int64, 0, len(c.want))
			for _, k := range c.want {
				want = append(want, ids[k])
			}
			if g := userIDs(got); !slices.Equal(g, want) {
				t.Errorf("search %q = %v, want %v", c.query, g, want)
			}
		}
	})
	t.Run("an integer query also finds the user with that id", func(t *testing.T) {
		e := newEnv(t, newStores)
		ids := searchFixture(e)
		id := ids["olga"]
		got, err := e.stores.Accounts.SearchUsers(e.ctx, account.UserQuery{Text: strconv.FormatInt(id, 10), ID: id, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if g := userIDs(got); !slices.Contains(g, id) {
			t.Fatalf("search by id %d = %v", id, g)
		}
		page, err := e.accounts.SearchUsers(e.ctx, strconv.FormatInt(ids["plain"]+1000, 10), 0, "")
		if err != nil || len(page.Users) != 0 {
			t.Fatalf("an unknown id finds %v, %v", page, err)
		}
	})
	t.Run("pages follow one another with the cursor, each user once", func(t *testing.T) {
		e := newEnv(t, newStores)
		ids := searchFixture(e)
		var all []int64
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("the cursor never ends")
			}
			page, err := e.accounts.SearchUsers(e.ctx, "", 4, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Users) > 4 {
				t.Fatalf("a page of %d users, limit 4", len(page.Users))
			}
			all = append(all, userIDs(page.Users)...)
			if page.Next == "" {
				break
			}
			cursor = page.Next
			// A user registered between pages is newer than the cursor: it
			// neither shifts nor repeats the pages after it.
			if pages == 0 {
				if err := e.stores.Accounts.CreateUser(e.ctx, &account.User{Email: "late@example.com", Name: "Late"}, "h"); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := []int64{ids["plain"], ids["slash"], ids["sale"], ids["olga"], ids["boris"], ids["anna"]}
		if !slices.Equal(all, want) {
			t.Fatalf("paged through %v, want %v", all, want)
		}
	})
	t.Run("a bad limit, cursor or query is invalid input", func(t *testing.T) {
		e := newEnv(t, newStores)
		for _, c := range []struct {
			query, cursor string
			limit         int
		}{
			{limit: -1}, {limit: account.MaxSearchLimit + 1},
			{cursor: "not base64!"}, {cursor: "YWJj"}, {cursor: "MA"}, {cursor: "LTU"},
			{query: "a\x00b"}, {query: "\xff"},
		} {
			if _, err := e.accounts.SearchUsers(e.ctx, c.query, c.limit, c.cursor); !errors.Is(err, input.ErrInvalid) {
				t.Errorf("SearchUsers(%q, %d, %q) = %v, want invalid input", c.query, c.limit, c.cursor, err)
			}
		}
	})
}

func userIDs(us []*account.User) []int64 {
	out := make([]int64, 0, len(us))
	for _, u := range us {
		out = append(out, u.ID)
	}
	return out
}

func testListPartners(t *testing.T, newStores func(*testing.T) Stores) {
	if newStores(t).Partners == nil {
		t.Skip("this store has no partner store")
	}
	t.Run("partners are listed oldest first with their state", func(t *testing.T) {
		e := newEnv(t, newStores)
		if ps, err := e.partners.Partners(e.ctx); err != nil || len(ps) != 0 {
			t.Fatalf("no partners yet: %v, %v", ps, err)
		}
		a := e.partner("Alpha Bets", 0)
		b := e.partner("Beta Book", 0)
		if err := e.partners.SetDisabled(e.ctx, a.ID, true); err != nil {
			t.Fatal(err)
		}
		ps, err := e.partners.Partners(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].ID != a.ID || ps[1].ID != b.ID {
			t.Fatalf("Partners = %+v", ps)
		}
		if ps[0].Name != "Alpha Bets" || !ps[0].Disabled || ps[1].Disabled || !within(ps[0].CreatedAt, a.CreatedAt) {
			t.Fatalf("Partners = %+v, %+v", ps[0], ps[1])
		}
	})
}
