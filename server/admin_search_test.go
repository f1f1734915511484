package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

type apiAdminUser struct {
	ID            int64   `json:"id"`
	Email         string  `json:"email"`
	Name          string  `json:"name"`
	Nickname      *string `json:"nickname"`
	IsCreator     bool    `json:"is_creator"`
	IsStatsViewer bool    `json:"is_stats_viewer"`
	CreatedAt     string  `json:"created_at"`
}

type apiUserPage struct {
	Users      []apiAdminUser `json:"users"`
	NextCursor *string        `json:"next_cursor"`
}

func (h *harness) searchUsers(t *testing.T, query string, limit int, cursor string) apiUserPage {
	t.Helper()
	v := url.Values{}
	if query != "" {
		v.Set("query", query)
	}
	if limit != 0 {
		v.Set("limit", fmt.Sprint(limit))
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/users?" + v.Encode(), token: adminToken})
	expect(t, r, http.StatusOK, "")
	if strings.Contains(string(r.body), "password") || strings.Contains(string(r.body), "$2a$") {
		t.Fatalf("the user search shows a password hash: %s", r)
	}
	var p apiUserPage
	r.decode(t, &p)
	return p
}

func pageIDs(p apiUserPage) []int64 {
	out := []int64{}
	for _, u := range p.Users {
		out = append(out, u.ID)
	}
	return out
}

// TestAdminUserSearch: an operator finds a user by e-mail, name,
// nickname or id, and pages through every user with the cursor.
func TestAdminUserSearch(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		anna := h.register(t, "Anna")
		boris := h.register(t, "Boris")
		olga := h.register(t, "Ольга")
		r := h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: boris.token, body: map[string]any{"nickname": "Bobby_50", "name": "Boris 50%"}})
		expect(t, r, http.StatusOK, "")

		t.Run("a search by part of an e-mail in another case finds its user", func(t *testing.T) {
			p := h.searchUsers(t, strings.ToUpper(anna.email[:8]), 0, "")
			if !slices.Equal(pageIDs(p), []int64{anna.id}) || !strings.EqualFold(p.Users[0].Email, anna.email) || p.NextCursor != nil {
				t.Fatalf("found %+v", p)
			}
		})
		t.Run("a search by name finds its user, Cyrillic too", func(t *testing.T) {
			if p := h.searchUsers(t, "ольга", 0, ""); !slices.Equal(pageIDs(p), []int64{olga.id}) || p.Users[0].Name != "Ольга" {
				t.Fatalf("found %+v", p)
			}
		})
		t.Run("a search by nickname or name finds its user, with % and _ taken literally", func(t *testing.T) {
			for _, q := range []string{"bobby", "Y_5", "_5", "50%", "%"} {
				p := h.searchUsers(t, q, 0, "")
				if !slices.Equal(pageIDs(p), []int64{boris.id}) || p.Users[0].Nickname == nil || *p.Users[0].Nickname != "Bobby_50" {
					t.Fatalf("%q found %+v", q, p)
				}
			}
		})
		t.Run("a search by id finds its user", func(t *testing.T) {
			if p := h.searchUsers(t, fmt.Sprint(olga.id), 0, ""); !slices.Contains(pageIDs(p), olga.id) {
				t.Fatalf("found %+v", p)
			}
		})
		t.Run("a search that matches nobody answers an empty list", func(t *testing.T) {
			if p := h.searchUsers(t, "no such person", 0, ""); len(p.Users) != 0 || p.NextCursor != nil {
				t.Fatalf("found %+v", p)
			}
		})
		t.Run("pages of two walk every user once, newest first", func(t *testing.T) {
			var all []int64
			cursor := ""
			for range 10 {
				p := h.searchUsers(t, "", 2, cursor)
				if len(p.Users) > 2 {
					t.Fatalf("a page of %d users, limit 2", len(p.Users))
				}
				all = append(all, pageIDs(p)...)
				if p.NextCursor == nil {
					break
				}
				cursor = *p.NextCursor
			}
			if want := []int64{olga.id, boris.id, anna.id}; !slices.Equal(all, want) {
				t.Fatalf("paged through %v, want %v", all, want)
			}
		})
	})
}

// TestAdminListEndpointsRefuse: the operator's token, and what the list
// routes refuse.
func TestAdminListEndpointsRefuse(t *testing.T) {
	h := newHarness(t, memoryStore())
	u := h.register(t, "Nobody")
	t.Run("with no admin token configured both lists are 404 not_found", func(t *testing.T) {
		off := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.AdminToken = "" }))
		expect(t, off.do(t, req{method: "GET", path: "/api/v1/admin/users", token: "anything"}), http.StatusNotFound, "not_found")
		expect(t, off.do(t, req{method: "GET", path: "/api/v1/admin/partners"}), http.StatusNotFound, "not_found")
	})
	cases := []struct {
		name   string
		req    req
		status int
		code   string
	}{
		{"a user search without the token is 401", req{method: "GET", path: "/api/v1/admin/users"}, 401, "unauthorized"},
		{"a user search with a user's token is 401", req{method: "GET", path: "/api/v1/admin/users", token: u.token}, 401, "unauthorized"},
		{"the partner list without the token is 401", req{method: "GET", path: "/api/v1/admin/partners"}, 401, "unauthorized"},
		{"the partner list with a wrong token is 401", req{method: "GET", path: "/api/v1/admin/partners", token: "wrong"}, 401, "unauthorized"},
		{"a limit of 0 is 400", req{method: "GET", path: "/api/v1/admin/users?limit=0", token: adminToken}, 400, "invalid_request"},
		{"a limit over 100 is 400", req{method: "GET", path: "/api/v1/admin/users?limit=101", token: adminToken}, 400, "invalid_request"},
		{"a negative limit is 400", req{method: "GET", path: "/api/v1/admin/users?limit=-1", token: adminToken}, 400, "invalid_request"},
		{"a limit that is not a number is 400", req{method: "GET", path: "/api/v1/admin/users?limit=ten", token: adminToken}, 400, "invalid_request"},
		{"a cursor the server never gave is 400", req{method: "GET", path: "/api/v1/admin/users?cursor=bm90LWFuLWlk", token: adminToken}, 400, "invalid_request"},
		{"a cursor that is not base64 is 400", req{method: "GET", path: "/api/v1/admin/users?cursor=%25%25", token: adminToken}, 400, "invalid_request"},
		{"a query with a control character is 400", req{method: "GET", path: "/api/v1/admin/users?query=a%00b", token: adminToken}, 400, "invalid_request"},
		{"a query that is not UTF-8 is 400", req{method: "GET", path: "/api/v1/admin/users?query=%FF", token: adminToken}, 400, "invalid_request"},
		{"a query over 200 characters is 400", req{method: "GET", path: "/api/v1/admin/users?query=" + strings.Repeat("a", 201), token: adminToken}, 400, "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, h.do(t, c.req), c.status, c.code)
		})
	}
}

// TestAdminPartnerList: the operator lists every partner, oldest first,
// never with a key.
func TestAdminPartnerList(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		list := func(t *testing.T) []apiPartnerListed {
			t.Helper()
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/partners", token: adminToken})
			expect(t, r, http.StatusOK, "")
			if strings.Contains(string(r.body), "key") || strings.Contains(string(r.body), "pk_") {
				t.Fatalf("the partner list shows a key: %s", r)
			}
			var out struct {
				Partners []apiPartnerListed `json:"partners"`
			}
			r.decode(t, &out)
			return out.Partners
		}
		t.Run("with no partners the list is empty", func(t *testing.T) {
			if ps := list(t); len(ps) != 0 {
				t.Fatalf("partners %+v", ps)
			}
		})
		t.Run("partners are listed oldest first, a disabled one marked", func(t *testing.T) {
			a := h.createPartner(t, "Alpha Bets", 0)
			b := h.createPartner(t, "Beta Book", 0)
			r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/partners/%d", b.ID), token: adminToken, body: map[string]any{"disabled": true}})
			expect(t, r, http.StatusOK, "")
			ps := list(t)
			if len(ps) != 2 || ps[0].ID != a.ID || ps[0].Name != "Alpha Bets" || ps[0].Disabled || ps[1].ID != b.ID || !ps[1].Disabled || ps[0].CreatedAt == "" {
				t.Fatalf("partners %+v", ps)
			}
		})
	})
}

type apiPartnerListed struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Disabled  bool   `json:"disabled"`
	CreatedAt string `json:"created_at"`
}
