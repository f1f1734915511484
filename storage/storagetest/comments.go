package storagetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// ReactionCounter is what the suite needs of a comment store besides
// social.CommentStore to check reaction counts: the stored reactions of a
// comment counted one by one, not read from the comment's counts.
type ReactionCounter interface {
	ReactionCounts(ctx context.Context, id int64) (likes, dislikes int64, err error)
}

// socialEnv is a social service on the env's store.
type socialEnv struct {
	*env
	store social.CommentStore
	notes social.NotificationStore
	svc   *social.Service
	ev    *market.Event
	clock time.Time
}

func newSocialEnv(t *testing.T, newStores func(*testing.T) Stores) *socialEnv {
	t.Helper()
	e := newEnv(t, newStores)
	store := e.stores.Markets.(social.CommentStore)
	notes := e.stores.Markets.(social.NotificationStore)
	se := &socialEnv{env: e, store: store, notes: notes, svc: social.NewService(store, notes),
		clock: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	// A clock that moves only when told to, so that ties happen on
	// purpose.
	se.svc.Now = func() time.Time { return se.clock }
	se.ev = e.event(e.creator(), 0.02, 10000, 0.5)
	return se
}

func (se *socialEnv) tick() { se.clock = se.clock.Add(time.Second) }

func (se *socialEnv) post(u *account.User, eventID int64, content string, parentID int64) *social.Comment {
	se.t.Helper()
	c, err := se.svc.Post(se.ctx, u, eventID, content, parentID)
	if err != nil {
		se.t.Fatalf("post %q: %v", content, err)
	}
	return c
}

func (se *socialEnv) list(viewer, eventID int64, limit, offset int) []*social.Comment {
	se.t.Helper()
	cs, err := se.svc.EventComments(se.ctx, viewer, eventID, limit, offset)
	if err != nil {
		se.t.Fatal(err)
	}
	return cs
}

func (se *socialEnv) comment(id, viewer int64) *social.Comment {
	se.t.Helper()
	c, err := se.store.Comment(se.ctx, id, viewer)
	if err != nil {
		se.t.Fatal(err)
	}
	return c
}

func (se *socialEnv) notifications(u *account.User) []*social.Notification {
	se.t.Helper()
	ns, err := se.notes.Notifications(se.ctx, u.ID, false, 100, 0)
	if err != nil {
		se.t.Fatal(err)
	}
	return ns
}

func commentIDs(cs []*social.Comment) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func sameIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testComments(t *testing.T, newStores func(*testing.T) Stores) {
	st := newStores(t).Markets
	if _, ok := st.(social.CommentStore); !ok {
		t.Skip("this market store keeps no comments")
	}
	if _, ok := st.(social.NotificationStore); !ok {
		t.Skip("this market store keeps no notifications")
	}

	t.Run("top-level comments list newest first with ties by id, and page", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		u := se.user("ann", 0, 0)
		var posted []int64
		for i := range 5 {
			if i != 2 { // comments 1 and 2 share a timestamp
				se.tick()
			}
			posted = append(posted, se.post(u, se.ev.ID, "comment "+itoa(i), 0).ID)
		}
		want := []int64{posted[4], posted[3], posted[2], posted[1], posted[0]}
		if got := commentIDs(se.list(0, se.ev.ID, 0, 0)); !sameIDs(got, want) {
			t.Fatalf("order = %v, want %v", got, want)
		}
		cases := []struct {
			name          string
			limit, offset int
			want          []int64
		}{
			{"a limit of 2 is the two newest", 2, 0, want[:2]},
			{"an offset skips the newest", 2, 2, want[2:4]},
			{"a page at the end is short", 2, 4, want[4:]},
			{"an offset past the end is empty", 10, 5, []int64{}},
			{"a limit of 0 is the default page", 0, 0, want},
			{"a negative limit and offset are the defaults", -3, -1, want},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := se.list(0, se.ev.ID, c.limit, c.offset)
				if got == nil || !sameIDs(commentIDs(got), c.want) {
					t.Fatalf("got %v, want %v", commentIDs(got), c.want)
				}
			})
		}
		t.Run("a limit over 100 is 100", func(t *testing.T) {
			for i := range 101 {
				se.post(u, se.ev.ID, "more "+itoa(i), 0)
			}
			if got := se.list(0, se.ev.ID, 1000, 0); len(got) != social.MaxPageSize {
				t.Fatalf("%d comments, want %d", len(got), social.MaxPageSize)
			}
			if got := se.list(0, se.ev.ID, 0, 0); len(got) != social.DefaultPageSize {
				t.Fatalf("%d comments by default, want %d", len(got), social.DefaultPageSize)
			}
		})
	})

	t.Run("a comment is stored trimmed, as written, with its author", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		nick, avatar := "annie", "https://example.com/a.png"
		u := se.user("Ann", 0, 0)
		if _, err := se.accounts.UpdateProfile(se.ctx, u.ID, account.ProfilePatch{Nickname: &nick, AvatarURL: &avatar}); err != nil {
			t.Fatal(err)
		}
		u, _ = se.accounts.User(se.ctx, u.ID)
		content := "<script>alert('x')</script> & «ёлка» 🎄\n\tsecond line"
		c := se.post(u, se.ev.ID, "  \n"+content+"\t \n", 0)
		got := se.comment(c.ID, 0)
		if got.Content != content || c.Content != content {
			t.Fatalf("content = %q (answered %q), want %q", got.Content, c.Content, content)
		}
		if got.EventID != se.ev.ID || got.ParentID != 0 || got.UserID != u.ID || got.LikesCount != 0 || got.RepliesCount != 0 ||
			!got.CreatedAt.Equal(se.clock) || got.UserReaction != social.ReactionNone {
			t.Fatalf("comment = %+v", got)
		}
		if a := got.Author; a.ID != u.ID || a.Name != "Ann" || a.Nickname != nick || a.AvatarURL != avatar || a.ProfileHidden {
			t.Fatalf("author = %+v", a)
		}
		long := strings.Repeat("ж", social.MaxContentChars)
		if c := se.post(u, se.ev.ID, long, 0); se.comment(c.ID, 0).Content != long {
			t.Fatal("a comment of exactly 2000 characters was not kept whole")
		}
	})

	t.Run("invalid content is refused and nothing is stored", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		u := se.user("ann", 0, 0)
		cases := []struct{ name, content string }{
			{"empty content", ""},
			{"white space only", " \n\t "},
			{"2001 characters", strings.Repeat("я", social.MaxContentChars+1)},
			{"a NUL character", "a\x00b"},
			{"invalid UTF-8", "abc\xff"},
		}
		for _, c := range cases {
			t.Run(c.name+" is invalid", func(t *testing.T) {
				if _, err := se.svc.Post(se.ctx, u, se.ev.ID, c.content, 0); !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
			})
		}
		if got := se.list(0, se.ev.ID, 0, 0); len(got) != 0 {
			t.Fatalf("stored %d comments", len(got))
		}
	})

	t.Run("an unknown event or comment is not found", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		u := se.user("ann", 0, 0)
		top := se.post(u, se.ev.ID, "hello", 0)
		cases := []struct {
			name string
			do   func() error
			want error
		}{
			{"listing the comments of an unknown event", func() error { _, err := se.svc.EventComments(se.ctx, 0, 987654, 0, 0); return err }, social.ErrEventNotFound},
			{"commenting on an unknown event", func() error { _, err := se.svc.Post(se.ctx, u, 987654, "hi", 0); return err }, social.ErrEventNotFound},
			{"replying on an unknown event", func() error { _, err := se.svc.Post(se.ctx, u, 987654, "hi", top.ID); return err }, social.ErrEventNotFound},
			{"replying to an unknown comment", func() error { _, err := se.svc.Post(se.ctx, u, se.ev.ID, "hi", 987654); return err }, social.ErrCommentNotFound},
			{"listing the replies of an unknown comment", func() error { _, err := se.svc.Replies(se.ctx, 0, 987654, 0, 0); return err }, social.ErrCommentNotFound},
			{"reacting to an unknown comment", func() error { _, err := se.svc.React(se.ctx, u.ID, 987654, social.ReactionLike); return err }, social.ErrCommentNotFound},
			{"reading an unknown comment", func() error { _, err := se.store.Comment(se.ctx, 987654, 0); return err }, social.ErrCommentNotFound},
		}
		for _, c := range cases {
			t.Run(c.name+" is refused", func(t *testing.T) {
				if err := c.do(); !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
			})
		}
		if got := se.list(0, se.ev.ID, 0, 0); len(got) != 1 || got[0].RepliesCount != 0 {
			t.Fatalf("after the refusals: %+v", got)
		}
		t.Run("an event without comments lists none", func(t *testing.T) {
			other := se.event(se.creator(), 0.02, 10000, 0.5)
			if got := se.list(0, other.ID, 0, 0); got == nil || len(got) != 0 {
				t.Fatalf("got %v", got)
			}
		})
	})

	t.Run("replies are one level deep, oldest first, and counted on their parent", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		ann, bob := se.user("ann", 0, 0), se.user("bob", 0, 0)
		top := se.post(ann, se.ev.ID, "top", 0)
		var replies []int64
		for i := range 3 {
			if i != 1 {
				se.tick()
			}
			replies = append(replies, se.post(bob, se.ev.ID, "reply "+itoa(i), top.ID).ID)
		}
		got, err := se.svc.Replies(se.ctx, 0, top.ID, 0, 0)
		if err != nil || !sameIDs(commentIDs(got), replies) {
			t.Fatalf("replies = %v, %v; want %v", commentIDs(got), err, replies)
		}
		if got[0].ParentID != top.ID || got[0].EventID != se.ev.ID {
			t.Fatalf("reply = %+v", got[0])
		}
		if page, _ := se.svc.Replies(se.ctx, 0, top.ID, 1, 1); !sameIDs(commentIDs(page), replies[1:2]) {
			t.Fatalf("page 2 of 1 = %v", commentIDs(page))
		}
		if c := se.comment(top.ID, 0); c.RepliesCount != 3 {
			t.Fatalf("replies_count = %d, want 3", c.RepliesCount)
		}
		list := se.list(0, se.ev.ID, 0, 0)
		if !sameIDs(commentIDs(list), []int64{top.ID}) || list[0].RepliesCount != 3 {
			t.Fatalf("top-level list = %+v: replies must not be listed", list)
		}
		if rs, err := se.svc.Replies(se.ctx, 0, replies[0], 0, 0); err != nil || len(rs) != 0 {
			t.Fatalf("replies of a reply = %v, %v", rs, err)
		}

		other := se.event(se.creator(), 0.02, 10000, 0.5)
		refusals := []struct {
			name    string
			eventID int64
			parent  int64
			want    error
		}{
			{"a reply to a reply", se.ev.ID, replies[0], social.ErrParentIsReply},
			{"a reply to a comment of another event", other.ID, top.ID, social.ErrParentOtherEvent},
		}
		for _, r := range refusals {
			t.Run(r.name+" is invalid and stores nothing", func(t *testing.T) {
				before := len(se.notifications(ann)) + len(se.notifications(bob))
				_, err := se.svc.Post(se.ctx, ann, r.eventID, "nope", r.parent)
				if !errors.Is(err, r.want) || !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("err = %v, want %v", err, r.want)
				}
				// The store refuses it as well when asked directly.
				err = se.store.CreateComment(se.ctx, &social.Comment{EventID: r.eventID, ParentID: r.parent, UserID: ann.ID, Content: "nope"}, nil)
				if !errors.Is(err, r.want) {
					t.Fatalf("store: err = %v, want %v", err, r.want)
				}
				if c := se.comment(top.ID, 0); c.RepliesCount != 3 {
					t.Fatalf("replies_count = %d, want 3", c.RepliesCount)
				}
				if c := se.comment(replies[0], 0); c.RepliesCount != 0 {
					t.Fatalf("the reply's replies_count = %d", c.RepliesCount)
				}
				if got := se.list(0, other.ID, 0, 0); len(got) != 0 {
					t.Fatalf("the other event has %v", commentIDs(got))
				}
				if after := len(se.notifications(ann)) + len(se.notifications(bob)); after != before {
					t.Fatalf("%d notifications, were %d", after, before)
				}
			})
		}
	})

	t.Run("a reply notifies the parent's author only, and not when replying to oneself", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		ann, bob, cat := se.user("Ann", 0, 0), se.user("Bob", 0, 0), se.user("Cat", 0, 0)
		top := se.post(ann, se.ev.ID, "what do you think?", 0)
		long := strings.Repeat("ы", 200)
		reply := se.post(bob, se.ev.ID, long, top.ID)
		ns := se.notifications(ann)
		if len(ns) != 1 {
			t.Fatalf("ann has %d notifications, want 1: %+v", len(ns), ns)
		}
		n := ns[0]
		wantExcerpt := strings.Repeat("ы", social.ExcerptChars) + "…"
		if n.Type != social.TypeCommentReply || n.RelatedType != social.RelatedComment || n.RelatedID != top.ID || n.Read ||
			n.Data.Author != "Bob" || n.Data.Excerpt != wantExcerpt || !n.CreatedAt.Equal(reply.CreatedAt) {
			t.Fatalf("notification = %+v", n)
		}
		if got := se.notifications(bob); len(got) != 0 {
			t.Fatalf("the replier was notified: %+v", got)
		}
		if got := se.notifications(cat); len(got) != 0 {
			t.Fatalf("a bystander was notified: %+v", got)
		}
		se.post(ann, se.ev.ID, "answering myself", top.ID)
		if got := se.notifications(ann); len(got) != 1 {
			t.Fatalf("a self-reply notified: %+v", got)
		}
		hidden := true
		if _, err := se.accounts.UpdateProfile(se.ctx, cat.ID, account.ProfilePatch{ProfileHidden: &hidden}); err != nil {
			t.Fatal(err)
		}
		cat, _ = se.accounts.User(se.ctx, cat.ID)
		se.post(cat, se.ev.ID, "psst", top.ID)
		if ns := se.notifications(ann); len(ns) != 2 || ns[0].Data.Author != social.AnonymousName || ns[0].Data.Excerpt != "psst" {
			t.Fatalf("a hidden replier's notification = %+v", ns[0])
		}
	})

	t.Run("a reply whose notification cannot be written stores nothing", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		ann := se.user("ann", 0, 0)
		top := se.post(ann, se.ev.ID, "top", 0)
		c := &social.Comment{EventID: se.ev.ID, ParentID: top.ID, UserID: ann.ID, Content: "reply"}
		n := &social.Notification{UserID: 987654, Type: social.TypeCommentReply, RelatedType: social.RelatedComment, RelatedID: top.ID}
		if err := se.store.CreateComment(se.ctx, c, n); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("err = %v, want ErrUserNotFound", err)
		}
		if got := se.comment(top.ID, 0); got.RepliesCount != 0 {
			t.Fatalf("replies_count = %d after a failed reply", got.RepliesCount)
		}
		if rs, _ := se.svc.Replies(se.ctx, 0, top.ID, 0, 0); len(rs) != 0 {
			t.Fatalf("the failed reply was stored: %+v", rs[0])
		}
	})

	t.Run("a hidden author is Anonymous to everyone but themself", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		nick, avatar, hidden := "ghost", "https://example.com/g.png", true
		ghost, other := se.user("Casper", 0, 0), se.user("other", 0, 0)
		if _, err := se.accounts.UpdateProfile(se.ctx, ghost.ID, account.ProfilePatch{Nickname: &nick, AvatarURL: &avatar, ProfileHidden: &hidden}); err != nil {
			t.Fatal(err)
		}
		ghost, _ = se.accounts.User(se.ctx, ghost.ID)
		top := se.post(ghost, se.ev.ID, "boo", 0)
		se.post(ghost, se.ev.ID, "boo again", top.ID)
		anon := social.Author{ID: ghost.ID, Name: social.AnonymousName, ProfileHidden: true}
		self := social.Author{ID: ghost.ID, Name: "Casper", Nickname: nick, AvatarURL: avatar, ProfileHidden: true}
		for _, c := range []struct {
			name   string
			viewer int64
			want   social.Author
		}{{"an anonymous reader", 0, anon}, {"another user", other.ID, anon}, {"the author", ghost.ID, self}} {
			t.Run(c.name+" sees "+c.want.Name, func(t *testing.T) {
				list := se.list(c.viewer, se.ev.ID, 0, 0)
				replies, _ := se.svc.Replies(se.ctx, c.viewer, top.ID, 0, 0)
				if len(list) != 1 || list[0].Author != c.want || len(replies) != 1 || replies[0].Author != c.want {
					t.Fatalf("list %+v, replies %+v; want author %+v", list, replies, c.want)
				}
				if c.viewer == 0 {
					return // anonymous readers do not react
				}
				r, err := se.svc.React(se.ctx, c.viewer, top.ID, social.ReactionNone)
				if err != nil || r.Author != c.want {
					t.Fatalf("reacting answered %+v, %v", r, err)
				}
			})
		}
	})

	t.Run("one reaction per user per comment, counted, and shown to that user only", func(t *testing.T) {
		se := newSocialEnv(t, newStores)
		ann, bob, cat := se.user("ann", 0, 0), se.user("bob", 0, 0), se.user("cat", 0, 0)
		top := se.post(ann, se.ev.ID, "top", 0)
		reply := se.post(ann, se.ev.ID, "reply", top.ID)
		steps := []struct {
			name            string
			user            *account.User
			comment         int64
			r               social.Reaction
			likes, dislikes int64
		}{
			{"a like counts one like", bob, top.ID, social.ReactionLike, 1, 0},
			{"the same like again changes nothing", bob, top.ID, social.ReactionLike, 1, 0},
			{"another user's dislike counts one dislike", cat, top.ID, social.ReactionDislike, 1, 1},
			{"turning a like into a dislike moves it", bob, top.ID, social.ReactionDislike, 0, 2},
			{"none removes the reaction", cat, top.ID, social.ReactionNone, 0, 1},
			{"none without a reaction changes nothing", cat, top.ID, social.ReactionNone, 0, 1},
			{"the author may react to their own comment", ann, top.ID, social.ReactionLike, 1, 1},
			{"a reply takes reactions too", bob, reply.ID, social.ReactionLike, 1, 0},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				c, err := se.svc.React(se.ctx, s.user.ID, s.comment, s.r)
				if err != nil {
					t.Fatal(err)
				}
				if c.ID != s.comment || c.LikesCount != s.likes || c.DislikesCount != s.dislikes || c.UserReaction != s.r {
					t.Fatalf("answered %+v, want %d likes, %d dislikes, reaction %q", c, s.likes, s.dislikes, s.r)
				}
				if rc, ok := se.stores.Markets.(ReactionCounter); ok {
					l, d, err := rc.ReactionCounts(se.ctx, s.comment)
					if err != nil || l != s.likes || d != s.dislikes {
						t.Fatalf("stored reactions: %d likes, %d dislikes, %v", l, d, err)
					}
				}
			})
		}
		t.Run("each reader sees their own reaction and nobody else's", func(t *testing.T) {
			for _, v := range []struct {
				viewer int64
				want   social.Reaction
			}{{0, social.ReactionNone}, {ann.ID, social.ReactionLike}, {bob.ID, social.ReactionDislike}, {cat.ID, social.ReactionNone}} {
				list := se.list(v.viewer, se.ev.ID, 0, 0)
				if len(list) != 1 || list[0].UserReaction != v.want {
					t.Fatalf("viewer %d sees %q, want %q", v.viewer, list[0].UserReaction, v.want)
				}
			}
			rs, _ := se.svc.Replies(se.ctx, bob.ID, top.ID, 0, 0)
			if len(rs) != 1 || rs[0].UserReaction != social.ReactionLike || rs[0].LikesCount != 1 {
				t.Fatalf("bob's view of the replies = %+v", rs)
			}
		})
		t.Run("an unknown reaction is invalid and changes nothing", func(t *testing.T) {
			if _, err := se.store.SetReaction(se.ctx, top.ID, bob.ID, "love"); !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("store: err = %v", err)
			}
			if _, err := se.svc.React(se.ctx, bob.ID, top.ID, "LIKE"); !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("service: err = %v", err)
			}
			if c := se.comment(top.ID, bob.ID); c.LikesCount != 1 || c.DislikesCount != 1 || c.UserReaction != social.ReactionDislike {
				t.Fatalf("comment = %+v", c)
			}
		})
	})

	// 100 goroutines toggle like, dislike and none on one comment many
	// times: first one user each, then two at once per user (two tabs),
	// where only the counts against the stored reactions can be checked.
	for _, c := range []struct {
		name    string
		perUser int
	}{
		{"reaction counts equal the stored reactions under 100 concurrent togglers", 1},
		{"reaction counts equal the stored reactions when two togglers share each user", 2},
	} {
		t.Run(c.name, func(t *testing.T) { testReactionRace(t, newStores, 100, c.perUser) })
	}
}

func testReactionRace(t *testing.T, newStores func(*testing.T) Stores, togglers, perUser int) {
	const each = 20
	se := newSocialEnv(t, newStores)
	users := make([]*account.User, togglers/perUser)
	for i := range users {
		users[i] = se.user("t"+itoa(i), 0, 0)
	}
	top := se.post(users[0], se.ev.ID, "react to me", 0)
	kinds := []social.Reaction{social.ReactionLike, social.ReactionDislike, social.ReactionNone}
	last := make([]social.Reaction, togglers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range togglers {
		u := users[i/perUser]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			for range each {
				r := kinds[rng.IntN(len(kinds))]
				c, err := se.svc.React(se.ctx, u.ID, top.ID, r)
				if err != nil {
					t.Errorf("toggler %d: %v", i, err)
					return
				}
				if c.LikesCount < 0 || c.DislikesCount < 0 || c.LikesCount+c.DislikesCount > int64(len(users)) ||
					perUser == 1 && c.UserReaction != r {
					t.Errorf("toggler %d set %q and got %+v", i, r, c)
					return
				}
				last[i] = r
			}
		}()
	}
	close(start)
	wg.Wait()
	// What each user's reaction is now, read back one by one.
	var likes, dislikes int64
	for i, u := range users {
		got := se.comment(top.ID, u.ID).UserReaction
		if perUser == 1 && got != last[i] {
			t.Fatalf("user %d's reaction is %q, last set %q", i, got, last[i])
		}
		switch got {
		case social.ReactionLike:
			likes++
		case social.ReactionDislike:
			dislikes++
		}
	}
	c := se.comment(top.ID, 0)
	if c.LikesCount != likes || c.DislikesCount != dislikes {
		t.Fatalf("counts %d likes, %d dislikes; the users' reactions make %d and %d", c.LikesCount, c.DislikesCount, likes, dislikes)
	}
	if rc, ok := se.stores.Markets.(ReactionCounter); ok {
		l, d, err := rc.ReactionCounts(se.ctx, top.ID)
		if err != nil || l != likes || d != dislikes {
			t.Fatalf("stored reactions: %d likes, %d dislikes (%v); want %d and %d", l, d, err, likes, dislikes)
		}
	}
}
