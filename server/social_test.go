package server_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
)

// The social API's shapes, as the tests read them.

type apiComment struct {
	ID            int64   `json:"id"`
	EventID       int64   `json:"event_id"`
	ParentID      *int64  `json:"parent_id"`
	UserID        int64   `json:"user_id"`
	Content       string  `json:"content"`
	LikesCount    int64   `json:"likes_count"`
	DislikesCount int64   `json:"dislikes_count"`
	RepliesCount  int64   `json:"replies_count"`
	CreatedAt     string  `json:"created_at"`
	UserReaction  *string `json:"user_reaction"`
	User          struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		Nickname      string `json:"nickname"`
		ProfileHidden bool   `json:"profile_hidden"`
		AvatarURL     string `json:"avatar_url"`
	} `json:"user"`
}

type apiNotification struct {
	ID          int64  `json:"id"`
	UserID      int64  `json:"user_id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Message     string `json:"message"`
	Read        bool   `json:"read"`
	CreatedAt   string `json:"created_at"`
	RelatedID   int64  `json:"related_id"`
	RelatedType string `json:"related_type"`
}

func commentsPath(eventID int64) string { return fmt.Sprintf("/api/v1/events/%d/comments", eventID) }

func (h *harness) postComment(t *testing.T, token string, eventID int64, content string, parentID int64) apiComment {
	t.Helper()
	body := map[string]any{"content": content}
	if parentID != 0 {
		body["parent_id"] = parentID
	}
	r := h.do(t, req{method: http.MethodPost, path: commentsPath(eventID), token: token, body: body})
	expect(t, r, http.StatusCreated, "")
	var c apiComment
	r.decode(t, &c)
	return c
}

// comments lists path (an event's comments or a comment's replies) with
// the query and token given.
func (h *harness) comments(t *testing.T, path, token string) []apiComment {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: path, token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Comments []apiComment `json:"comments"`
	}
	r.decode(t, &out)
	if out.Comments == nil {
		t.Fatalf("comments is not an array: %s", r)
	}
	return out.Comments
}

func (h *harness) react(t *testing.T, token string, commentID int64, reaction string) apiComment {
	t.Helper()
	r := h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/comments/%d/reaction", commentID), token: token,
		body: map[string]any{"reaction": reaction}})
	expect(t, r, http.StatusOK, "")
	var c apiComment
	r.decode(t, &c)
	return c
}

func (h *harness) unread(t *testing.T, token string) []apiNotification {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications/unread", token: token})
	expect(t, r, http.StatusOK, "")
	var ns []apiNotification
	r.decode(t, &ns)
	if ns == nil {
		t.Fatalf("unread is not an array: %s", r)
	}
	return ns
}

func (h *harness) allNotifications(t *testing.T, token, query string) []apiNotification {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications" + query, token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Notifications []apiNotification `json:"notifications"`
	}
	r.decode(t, &out)
	return out.Notifications
}

func (h *harness) setProfile(t *testing.T, token string, patch map[string]any) {
	t.Helper()
	expect(t, h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: token, body: patch}), http.StatusOK, "")
}

func commentIDs(cs []apiComment) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func reactionOf(c apiComment) string {
	if c.UserReaction == nil {
		return "null"
	}
	return *c.UserReaction
}

// TestCommentsContract answers GET /events/{event_id}/comments and the
// other comment routes with their documented codes, and refuses bad input storing
// nothing.
func TestCommentsContract(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		other := h.createEvent(t, w.creator.token, twoPoolEvent("Other"))
		top := h.postComment(t, w.alice.token, w.event.ID, "first!", 0)
		reply := h.postComment(t, w.bob.token, w.event.ID, "second", top.ID)
		path := commentsPath(w.event.ID)
		reactPath := fmt.Sprintf("/api/v1/comments/%d/reaction", top.ID)
		post := func(token, body string) req { return req{method: "POST", path: path, token: token, body: body} }

		cases := []struct {
			name   string
			req    req
			status int
			code   string
		}{
			// GET /events/{event_id}/comments.
			{"the comments of an unknown event are 404 not_found", req{method: "GET", path: commentsPath(987654321)}, 404, "not_found"},
			{"the comments of a non-integer event id are 404 not_found", req{method: "GET", path: "/api/v1/events/abc/comments"}, 404, "not_found"},
			{"the comments of event 0 are 404 not_found", req{method: "GET", path: commentsPath(0)}, 404, "not_found"},
			{"the comments are public", req{method: "GET", path: path}, 200, ""},
			{"an invalid token reads the comments anonymously", req{method: "GET", path: path, token: "nope"}, 200, ""},
			{"an inactive event's comments can be read", req{method: "GET", path: commentsPath(other.ID)}, 200, ""},
			// Posting.
			{"posting without a token is 401 unauthorized", post("", `{"content":"hi"}`), 401, "unauthorized"},
			{"posting with an invalid token is 401 unauthorized", post("nope", `{"content":"hi"}`), 401, "unauthorized"},
			{"posting without a token and with a bad body is still 401", post("", `{`), 401, "unauthorized"},
			{"posting on an unknown event is 404 not_found", req{method: "POST", path: commentsPath(987654321), token: w.bob.token, body: `{"content":"hi"}`}, 404, "not_found"},
			{"posting on a non-integer event id is 404 not_found", req{method: "POST", path: "/api/v1/events/x/comments", token: w.bob.token, body: `{"content":"hi"}`}, 404, "not_found"},
			{"empty content is 400 invalid_request", post(w.bob.token, `{"content":""}`), 400, "invalid_request"},
			{"white space only is 400 invalid_request", post(w.bob.token, `{"content":"  \n\t "}`), 400, "invalid_request"},
			{"2001 characters are 400 invalid_request", post(w.bob.token, `{"content":"`+strings.Repeat("ю", 2001)+`"}`), 400, "invalid_request"},
			{"a NUL character is 400 invalid_request", post(w.bob.token, `{"content":"a\u0000b"}`), 400, "invalid_request"},
			{"a body that is not UTF-8 is 400 invalid_request", req{method: "POST", path: path, token: w.bob.token, body: []byte("{\"content\":\"\xff\xfe\"}")}, 400, "invalid_request"},
			{"missing content is 400 invalid_request", post(w.bob.token, `{}`), 400, "invalid_request"},
			{"non-string content is 400 invalid_request", post(w.bob.token, `{"content":5}`), 400, "invalid_request"},
			{"an unknown field is 400 invalid_request", post(w.bob.token, `{"content":"hi","html":true}`), 400, "invalid_request"},
			{"malformed JSON is 400 invalid_request", post(w.bob.token, `{"content":`), 400, "invalid_request"},
			{"a parent_id of 0 is 400 invalid_request", post(w.bob.token, `{"content":"hi","parent_id":0}`), 400, "invalid_request"},
			{"a fractional parent_id is 400 invalid_request", post(w.bob.token, `{"content":"hi","parent_id":1.5}`), 400, "invalid_request"},
			{"a reply to an unknown comment is 404 not_found", post(w.bob.token, `{"content":"hi","parent_id":987654321}`), 404, "not_found"},
			{"a reply to a reply is 400 invalid_request", post(w.bob.token, fmt.Sprintf(`{"content":"hi","parent_id":%d}`, reply.ID)), 400, "invalid_request"},
			{"a reply to a comment of another event is 400 invalid_request", req{method: "POST", path: commentsPath(other.ID), token: w.bob.token,
				body: fmt.Sprintf(`{"content":"hi","parent_id":%d}`, top.ID)}, 400, "invalid_request"},
			{"a reply on an unknown event is 404 before the parent is looked at", req{method: "POST", path: commentsPath(987654321), token: w.bob.token,
				body: fmt.Sprintf(`{"content":"hi","parent_id":%d}`, top.ID)}, 404, "not_found"},
			// Replies.
			{"the replies of an unknown comment are 404 not_found", req{method: "GET", path: "/api/v1/comments/987654321/replies"}, 404, "not_found"},
			{"the replies of a non-integer comment id are 404 not_found", req{method: "GET", path: "/api/v1/comments/x/replies"}, 404, "not_found"},
			{"the replies are public", req{method: "GET", path: fmt.Sprintf("/api/v1/comments/%d/replies", top.ID)}, 200, ""},
			// Reactions.
			{"reacting without a token is 401 unauthorized", req{method: "PUT", path: reactPath, body: `{"reaction":"like"}`}, 401, "unauthorized"},
			{"reacting to an unknown comment is 404 not_found", req{method: "PUT", path: "/api/v1/comments/987654321/reaction", token: w.bob.token, body: `{"reaction":"like"}`}, 404, "not_found"},
			{"reacting to a non-integer comment id is 404 not_found", req{method: "PUT", path: "/api/v1/comments/x/reaction", token: w.bob.token, body: `{"reaction":"like"}`}, 404, "not_found"},
			{"an unknown reaction is 400 invalid_request", req{method: "PUT", path: reactPath, token: w.bob.token, body: `{"reaction":"love"}`}, 400, "invalid_request"},
			{"an upper-case reaction is 400 invalid_request", req{method: "PUT", path: reactPath, token: w.bob.token, body: `{"reaction":"LIKE"}`}, 400, "invalid_request"},
			{"a missing reaction is 400 invalid_request", req{method: "PUT", path: reactPath, token: w.bob.token, body: `{}`}, 400, "invalid_request"},
			{"no body is 400 invalid_request", req{method: "PUT", path: reactPath, token: w.bob.token}, 400, "invalid_request"},
			{"a content encoding is 415", req{method: "GET", path: path, header: map[string]string{"Content-Encoding": "gzip"}}, 415, "unsupported_content_encoding"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				expect(t, h.do(t, c.req), c.status, c.code)
			})
		}
		t.Run("nothing that was refused was stored", func(t *testing.T) {
			list := h.comments(t, path, "")
			if !slices.Equal(commentIDs(list), []int64{top.ID}) || list[0].RepliesCount != 1 || list[0].LikesCount != 0 || list[0].DislikesCount != 0 {
				t.Fatalf("comments = %+v", list)
			}
			if rs := h.comments(t, fmt.Sprintf("/api/v1/comments/%d/replies", top.ID), ""); !slices.Equal(commentIDs(rs), []int64{reply.ID}) {
				t.Fatalf("replies = %+v", rs)
			}
			if got := h.comments(t, commentsPath(other.ID), ""); len(got) != 0 {
				t.Fatalf("the other event has %+v", got)
			}
			if ns := h.unread(t, w.alice.token); len(ns) != 1 {
				t.Fatalf("alice has %d notifications, want the one reply: %+v", len(ns), ns)
			}
		})
		t.Run("a comment is answered as stored: trimmed, never interpreted", func(t *testing.T) {
			content := `<img src=x onerror="alert(1)"> & 'quotes' «ёлка» 🎄` + "\nline two"
			c := h.postComment(t, w.bob.token, other.ID, "\n  "+content+"  \t", 0)
			if c.Content != content || c.EventID != other.ID || c.UserID != w.bob.id || c.ParentID != nil || c.UserReaction != nil ||
				c.User.ID != w.bob.id || c.User.Name != "bob" || c.RepliesCount != 0 {
				t.Fatalf("posted %+v", c)
			}
			if _, err := time.Parse(time.RFC3339, c.CreatedAt); err != nil {
				t.Fatalf("created_at %q: %v", c.CreatedAt, err)
			}
			got := h.comments(t, commentsPath(other.ID), "")
			if len(got) != 1 || got[0].Content != content {
				t.Fatalf("listed %+v", got)
			}
			long := strings.Repeat("ж", 2000)
			if c := h.postComment(t, w.bob.token, other.ID, long, 0); c.Content != long {
				t.Fatal("2000 characters were not kept whole")
			}
		})
		t.Run("a reply carries its parent and is counted on it", func(t *testing.T) {
			r := h.postComment(t, w.alice.token, w.event.ID, "me too", top.ID)
			if r.ParentID == nil || *r.ParentID != top.ID || r.EventID != w.event.ID {
				t.Fatalf("reply = %+v", r)
			}
			if l := h.comments(t, path, ""); l[0].RepliesCount != 2 {
				t.Fatalf("replies_count = %d, want 2", l[0].RepliesCount)
			}
		})
	})
}

// TestCommentPaging checks the paging rules and order of GET
// /events/{event_id}/comments.
func TestCommentPaging(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		const n = 120
		// Eight authors, so that none of them meets the comment rate limit.
		authors := []string{w.alice.token, w.bob.token, w.creator.token}
		for len(authors) < 8 {
			authors = append(authors, h.register(t, "author").token)
		}
		var posted []int64
		for i := range n {
			posted = append(posted, h.postComment(t, authors[i%len(authors)], w.event.ID, fmt.Sprintf("comment %d", i), 0).ID)
		}
		newest := slices.Clone(posted)
		slices.Reverse(newest)
		path := commentsPath(w.event.ID)
		cases := []struct {
			name  string
			query string
			want  []int64
		}{
			{"no query is the 50 newest", "", newest[:50]},
			{"limit 10 is the 10 newest", "?limit=10", newest[:10]},
			{"limit 100 is 100", "?limit=100", newest[:100]},
			{"a limit over 100 is treated as 100", "?limit=101", newest[:100]},
			{"a huge limit is treated as 100", "?limit=99999999999999999999", newest[:100]},
			{"limit 0 is the default", "?limit=0", newest[:50]},
			{"limit abc falls back to 50", "?limit=abc", newest[:50]},
			{"limit -1 falls back to 50", "?limit=-1", newest[:50]},
			{"limit 1.5 falls back to 50", "?limit=1.5", newest[:50]},
			{"an empty limit falls back to 50", "?limit=", newest[:50]},
			{"offset 10 skips the 10 newest", "?limit=5&offset=10", newest[10:15]},
			{"offset abc falls back to 0", "?limit=5&offset=abc", newest[:5]},
			{"offset -1 falls back to 0", "?limit=5&offset=-1", newest[:5]},
			{"offset 1.5 falls back to 0", "?limit=5&offset=1.5", newest[:5]},
			{"the last page is short", "?limit=50&offset=100", newest[100:]},
			{"an offset past the end is empty", "?offset=120", []int64{}},
			{"a huge offset is empty", "?offset=99999999999999999999", []int64{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := h.comments(t, path+c.query, "")
				if !slices.Equal(commentIDs(got), c.want) {
					t.Fatalf("got %d comments %v..., want %d %v...", len(got), head(commentIDs(got)), len(c.want), head(c.want))
				}
			})
		}
		t.Run("comments are newest first by created_at, ties by id", func(t *testing.T) {
			got := h.comments(t, path+"?limit=100", "")
			for i := 1; i < len(got); i++ {
				a, _ := time.Parse(time.RFC3339Nano, got[i-1].CreatedAt)
				b, _ := time.Parse(time.RFC3339Nano, got[i].CreatedAt)
				if a.Before(b) || a.Equal(b) && got[i-1].ID < got[i].ID {
					t.Fatalf("comment %d (%s) before %d (%s)", got[i-1].ID, got[i-1].CreatedAt, got[i].ID, got[i].CreatedAt)
				}
			}
		})
		t.Run("replies page the same way, oldest first", func(t *testing.T) {
			var replies []int64
			for i := range 3 {
				replies = append(replies, h.postComment(t, w.bob.token, w.event.ID, fmt.Sprintf("reply %d", i), posted[0]).ID)
			}
			base := fmt.Sprintf("/api/v1/comments/%d/replies", posted[0])
			for _, c := range []struct{ query string }{{""}, {"?limit=abc&offset=-1"}, {"?limit=1.5"}} {
				if got := h.comments(t, base+c.query, ""); !slices.Equal(commentIDs(got), replies) {
					t.Fatalf("%s: got %v, want %v", c.query, commentIDs(got), replies)
				}
			}
			if got := h.comments(t, base+"?limit=1&offset=1", ""); !slices.Equal(commentIDs(got), replies[1:2]) {
				t.Fatalf("page 2 of 1: %v", commentIDs(got))
			}
			if got := h.comments(t, base+"?offset=3", ""); len(got) != 0 {
				t.Fatalf("past the end: %v", commentIDs(got))
			}
		})
	})
}

func head(ids []int64) []int64 { return ids[:min(3, len(ids))] }

// TestCommentReactionsAndAuthors: user_reaction is the caller's own, and
// a hidden author is Anonymous to everyone but themself.
func TestCommentReactionsAndAuthors(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		path := commentsPath(w.event.ID)
		c := h.postComment(t, w.alice.token, w.event.ID, "react to this", 0)
		t.Run("reactions count and are the caller's own", func(t *testing.T) {
			steps := []struct {
				name            string
				who             apiUser
				reaction        string
				likes, dislikes int64
				mine            string
			}{
				{"bob likes", w.bob, "like", 1, 0, "like"},
				{"bob likes again and nothing changes", w.bob, "like", 1, 0, "like"},
				{"the creator dislikes", w.creator, "dislike", 1, 1, "dislike"},
				{"bob turns his like into a dislike", w.bob, "dislike", 0, 2, "dislike"},
				{"the creator removes the dislike", w.creator, "none", 0, 1, "null"},
				{"alice likes her own comment", w.alice, "like", 1, 1, "like"},
			}
			for _, s := range steps {
				t.Run(s.name, func(t *testing.T) {
					got := h.react(t, s.who.token, c.ID, s.reaction)
					if got.ID != c.ID || got.LikesCount != s.likes || got.DislikesCount != s.dislikes || reactionOf(got) != s.mine {
						t.Fatalf("answered %+v (reaction %s), want %d/%d %s", got, reactionOf(got), s.likes, s.dislikes, s.mine)
					}
				})
			}
			for _, v := range []struct {
				name, token, want string
			}{
				{"an anonymous reader sees null", "", "null"},
				{"an invalid token sees null", "nope", "null"},
				{"alice sees her like", w.alice.token, "like"},
				{"bob sees his dislike", w.bob.token, "dislike"},
				{"the creator, who removed hers, sees null", w.creator.token, "null"},
			} {
				t.Run(v.name, func(t *testing.T) {
					got := h.comments(t, path, v.token)
					if len(got) != 1 || reactionOf(got[0]) != v.want || got[0].LikesCount != 1 || got[0].DislikesCount != 1 {
						t.Fatalf("got %+v (reaction %s)", got, reactionOf(got[0]))
					}
				})
			}
		})
		t.Run("a hidden author is Anonymous to everyone but themself", func(t *testing.T) {
			h.setProfile(t, w.alice.token, map[string]any{"profile_hidden": true, "nickname": "ali", "avatar_url": "https://example.com/ali.png"})
			r := h.postComment(t, w.alice.token, w.event.ID, "a reply in hiding", c.ID)
			if r.User.Name != "alice" || r.User.Nickname != "ali" || !r.User.ProfileHidden {
				t.Fatalf("the author's own answer hides her: %+v", r.User)
			}
			for _, v := range []struct {
				name, token string
				hidden      bool
			}{{"an anonymous reader", "", true}, {"another user", w.bob.token, true}, {"the author", w.alice.token, false}} {
				t.Run(v.name+" sees the right author", func(t *testing.T) {
					list := h.comments(t, path, v.token)
					replies := h.comments(t, fmt.Sprintf("/api/v1/comments/%d/replies", c.ID), v.token)
					for _, got := range []apiComment{list[0], replies[0]} {
						u := got.User
						if got.UserID != w.alice.id || u.ID != w.alice.id || !u.ProfileHidden {
							t.Fatalf("author %+v", u)
						}
						if v.hidden && (u.Name != "Anonymous" || u.Nickname != "" || u.AvatarURL != "") {
							t.Fatalf("a hidden author shows %+v", u)
						}
						if !v.hidden && (u.Name != "alice" || u.Nickname != "ali" || u.AvatarURL != "https://example.com/ali.png") {
							t.Fatalf("the author sees %+v", u)
						}
					}
				})
			}
			if got := h.react(t, w.bob.token, c.ID, "none"); got.User.Name != "Anonymous" {
				t.Fatalf("a reaction's answer shows %+v", got.User)
			}
		})
	})
}

// TestReactionCountsUnderConcurrentTogglers: 100 togglers, two per user
// (two tabs), toggle like, dislike and none on one comment at once, over
// the network; the counts end equal to the reactions stored.
func TestReactionCountsUnderConcurrentTogglers(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			h, _ := startServer(t, testConfig(store))
			w := newWorld(t, h)
			c := h.postComment(t, w.alice.token, w.event.ID, "toggle me", 0)
			const togglers, perUser, each = 100, 2, 8
			users := make([]apiUser, togglers/perUser)
			for i := range users {
				users[i] = h.register(t, fmt.Sprintf("toggler%d", i))
			}
			kinds := []string{"like", "dislike", "none"}
			type answer struct {
				r    req
				sent sent
			}
			answers := make([][]answer, togglers)
			path := fmt.Sprintf("/api/v1/comments/%d/reaction", c.ID)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range togglers {
				u := users[i/perUser]
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					rng := rand.New(rand.NewPCG(uint64(i), 99))
					for range each {
						k := kinds[rng.IntN(len(kinds))]
						r := req{method: http.MethodPut, path: path, body: fmt.Sprintf(`{"reaction":%q}`, k),
							header: map[string]string{"Authorization": "Bearer " + u.token}}
						answers[i] = append(answers[i], answer{r, send(h.base, r)})
					}
				}()
			}
			close(start)
			wg.Wait()
			for i := range togglers {
				for _, a := range answers[i] {
					if a.sent.err != nil || a.sent.status != http.StatusOK {
						t.Fatalf("toggler %d: %d %s %v", i, a.sent.status, a.sent.body, a.sent.err)
					}
					hr := httptest.NewRequest(a.r.method, a.r.path, nil)
					h.validate(t, a.r, hr, &response{status: a.sent.status, header: a.sent.header, body: a.sent.body})
				}
			}
			// Each user's reaction now, as they read it.
			var likes, dislikes int64
			for _, u := range users {
				switch reactionOf(h.comments(t, commentsPath(w.event.ID), u.token)[0]) {
				case "like":
					likes++
				case "dislike":
					dislikes++
				}
			}
			got := h.comments(t, commentsPath(w.event.ID), "")
			if got[0].LikesCount != likes || got[0].DislikesCount != dislikes {
				t.Fatalf("counts %d likes, %d dislikes; the users' reactions make %d and %d", got[0].LikesCount, got[0].DislikesCount, likes, dislikes)
			}
			rc, ok := store.(interface {
				ReactionCounts(context.Context, int64) (int64, int64, error)
			})
			if !ok {
				t.Fatalf("the %s store cannot count its reactions", sc.name)
			}
			l, d, err := rc.ReactionCounts(context.Background(), c.ID)
			if err != nil || l != likes || d != dislikes {
				t.Fatalf("stored reactions: %d likes, %d dislikes (%v); want %d and %d", l, d, err, likes, dislikes)
			}
		})
	}
}

// brokenSocial fails the reads behind an event's comments and the
// notifications.
type brokenSocial struct{ server.Store }

var errSocialBroken = errors.New("comment table on fire")

func (brokenSocial) EventComments(context.Context, int64, int64, int, int) ([]*social.Comment, error) {
	return nil, errSocialBroken
}

func (brokenSocial) Notifications(context.Context, int64, bool, int, int) ([]*social.Notification, error) {
	return nil, errSocialBroken
}

func TestSocialInternalErrorsKeepTheContractCodes(t *testing.T) {
	h := newHarness(t, brokenSocial{memory.New()})
	u := h.register(t, "victim")
	for _, c := range []struct {
		name string
		r    req
	}{
		{"a failing comment read is 500 internal_error", req{method: "GET", path: "/api/v1/events/1/comments"}},
		{"a failing notification read is 500 internal_error", req{method: "GET", path: "/api/v1/notifications/unread", token: u.token}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(t, c.r)
			expect(t, r, http.StatusInternalServerError, "internal_error")
			if strings.Contains(string(r.body), "fire") {
				t.Errorf("the answer leaks the cause: %s", r.body)
			}
		})
	}
}
