package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/social"
)

// SocialModule provides the social service and its routes: an event's
// comments (contract endpoint 11), posting comments and replies, replies,
// reactions, and the caller's notifications (contract endpoint 12 and the
// extension routes to list and mark them read).
var SocialModule = fx.Module("social",
	fx.Provide(newSocialService, socialRoutes),
)

func newSocialService(store Store) *social.Service {
	return social.NewService(store, store)
}

// Request bodies of the social routes.
type newCommentBody struct {
	Content  *string `json:"content" validate:"required"`
	ParentID *int64  `json:"parent_id" validate:"omitempty,gte=1"`
}

type reactionBody struct {
	Reaction string `json:"reaction" validate:"required"`
}

// lenientInt reads a query parameter the way endpoint 11 asks: a value
// that is not a non-negative integer is def; one too large for an int32
// is math.MaxInt32 (a limit is capped anyway; such an offset is past the
// end).
func lenientInt(raw string, def int) int {
	if raw == "" || strings.TrimLeft(raw, "0123456789") != "" {
		return def
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// lenientPage reads limit and offset leniently; the service brings them to
// range (0 is the default page size, over 100 is 100).
func lenientPage(c *fiber.Ctx) (limit, offset int) {
	return lenientInt(c.Query("limit"), 0), lenientInt(c.Query("offset"), 0)
}

// The social answers.

type commentUserJSON struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Nickname      string `json:"nickname"`
	ProfileHidden bool   `json:"profile_hidden"`
	AvatarURL     string `json:"avatar_url"`
}

type commentJSON struct {
	ID            int64           `json:"id"`
	EventID       int64           `json:"event_id"`
	ParentID      *int64          `json:"parent_id"`
	UserID        int64           `json:"user_id"`
	Content       string          `json:"content"`
	LikesCount    int64           `json:"likes_count"`
	DislikesCount int64           `json:"dislikes_count"`
	RepliesCount  int64           `json:"replies_count"`
	CreatedAt     string          `json:"created_at"`
	User          commentUserJSON `json:"user"`
	UserReaction  *string         `json:"user_reaction"`
}

func commentView(c *social.Comment) commentJSON {
	v := commentJSON{
		ID: c.ID, EventID: c.EventID, UserID: c.UserID, Content: c.Content,
		LikesCount: c.LikesCount, DislikesCount: c.DislikesCount, RepliesCount: c.RepliesCount, CreatedAt: ts(c.CreatedAt),
		User: commentUserJSON{ID: c.Author.ID, Name: c.Author.Name, Nickname: c.Author.Nickname,
			ProfileHidden: c.Author.ProfileHidden, AvatarURL: c.Author.AvatarURL},
	}
	if c.ParentID != 0 {
		p := c.ParentID
		v.ParentID = &p
	}
	if c.UserReaction != social.ReactionNone {
		r := string(c.UserReaction)
		v.UserReaction = &r
	}
	return v
}

func commentViews(cs []*social.Comment) []commentJSON {
	out := make([]commentJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, commentView(c))
	}
	return out
}

type notificationJSON struct {
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

// notificationViews renders ns in lang, the reader's profile language.
func notificationViews(ns []*social.Notification, lang string) []notificationJSON {
	out := make([]notificationJSON, 0, len(ns))
	for _, n := range ns {
		title, msg := n.Render(lang)
		out = append(out, notificationJSON{ID: n.ID, UserID: n.UserID, Type: n.Type, Title: title, Message: msg,
			Read: n.Read, CreatedAt: ts(n.CreatedAt), RelatedID: n.RelatedID, RelatedType: n.RelatedType})
	}
	return out
}

func socialRoutes(svc *social.Service, auth *Auth) RoutesOut {
	// viewer is the caller's id when a valid token is sent, 0 otherwise: a
	// missing or invalid token reads anonymously (the contract lists no
	// 401 for endpoint 11).
	viewer := func(c *fiber.Ctx) (int64, error) {
		u, err := auth.Optional(c)
		if err != nil || u == nil {
			return 0, err
		}
		return u.ID, nil
	}
	return RoutesOut{Routes: []Route{
		// Contract 11.
		{Method: http.MethodGet, Path: "/api/v1/events/:event_id/comments", Errors: errsEventComments, Handler: listComments("event_id", viewer, svc.EventComments)},
		// Extension API. Checks run 401, 404 (an event id that is not an
		// integer), 400 (the body and the content), 404 (no such event or
		// parent), 400 (a parent of another event, or a reply).
		{Method: http.MethodPost, Path: "/api/v1/events/:event_id/comments", Errors: errsPostComment, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			id, b, err := idAndBody[newCommentBody](c, "event_id")
			if err != nil {
				return err
			}
			var parent int64
			if b.ParentID != nil {
				parent = *b.ParentID
			}
			cm, err := svc.Post(c.UserContext(), u, id, *b.Content, parent)
			if err != nil {
				return err
			}
			return c.Status(http.StatusCreated).JSON(commentView(cm))
		}},
		{Method: http.MethodGet, Path: "/api/v1/comments/:id/replies", Errors: errsReplies, Handler: listComments("id", viewer, svc.Replies)},
		{Method: http.MethodPut, Path: "/api/v1/comments/:id/reaction", Errors: errsReaction, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			id, b, err := idAndBody[reactionBody](c, "id")
			if err != nil {
				return err
			}
			r, err := social.ParseReaction(b.Reaction)
			if err != nil {
				return err
			}
			cm, err := svc.React(c.UserContext(), u.ID, id, r)
			if err != nil {
				return err
			}
			return c.JSON(commentView(cm))
		}},
		// Contract 12.
		{Method: http.MethodGet, Path: "/api/v1/notifications/unread", Errors: errsNotifications, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			ns, err := svc.Unread(c.UserContext(), u.ID)
			if err != nil {
				return err
			}
			return c.JSON(notificationViews(ns, u.Language))
		}},
		{Method: http.MethodGet, Path: "/api/v1/notifications", Errors: errsNotifications, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			limit, offset := lenientPage(c)
			ns, err := svc.Notifications(c.UserContext(), u.ID, limit, offset)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"notifications": notificationViews(ns, u.Language)})
		}},
		{Method: http.MethodPost, Path: "/api/v1/notifications/read-all", Errors: errsNotifications, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			n, err := svc.MarkAllRead(c.UserContext(), u.ID)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"status": "ok", "marked": n})
		}},
		{Method: http.MethodPost, Path: "/api/v1/notifications/:id/read", Errors: errsNotificationRead, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			id, err := pathID(c, "id")
			if err != nil {
				return err
			}
			if err := svc.MarkRead(c.UserContext(), u.ID, id); err != nil {
				return err
			}
			return c.JSON(fiber.Map{"status": "ok"})
		}},
	}}
}

// listComments is the handler of a comment list (an event's top-level
// comments, or a comment's replies): the id in path param, the optional
// viewer for user_reaction, lenient paging, then list.
func listComments(param string, viewer func(*fiber.Ctx) (int64, error),
	list func(ctx context.Context, viewerID, id int64, limit, offset int) ([]*social.Comment, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, param)
		if err != nil {
			return err
		}
		v, err := viewer(c)
		if err != nil {
			return err
		}
		limit, offset := lenientPage(c)
		cs, err := list(c.UserContext(), v, id, limit, offset)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"comments": commentViews(cs)})
	}
}
