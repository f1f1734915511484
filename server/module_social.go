package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// SocialModule provides the social service and its routes: an event's
// comments, posting comments and replies, replies, reactions, and the
// caller's notifications (the unread ones, all of them, marking them
// read).
var SocialModule = fx.Module("social",
	fx.Provide(newSocialService, socialRoutes),
)

func newSocialService(store Store) *social.Service {
	return social.NewService(store, store)
}

// lenientInt reads a paging parameter of the comment and notification
// lists: a value that is not a non-negative integer is def; one too large for an int32
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
	// Link is the app's page of what the notification is about ("" when
	// unknown): a comment_reply's is the event page at the comment.
	Link string `json:"link"`
}

// notificationViews renders ns in lang, the reader's profile language.
func notificationViews(ns []*social.Notification, lang string) []notificationJSON {
	out := make([]notificationJSON, 0, len(ns))
	for _, n := range ns {
		title, msg := n.Render(lang)
		out = append(out, notificationJSON{ID: n.ID, UserID: n.UserID, Type: n.Type, Title: title, Message: msg,
			Read: n.Read, CreatedAt: ts(n.CreatedAt), RelatedID: n.RelatedID, RelatedType: n.RelatedType, Link: n.Link()})
	}
	return out
}

// socialHandlers serves the comment and notification routes.
type socialHandlers struct {
	social *social.Service
	auth   *Auth
}

// socialRoutes lists the comment and notification routes. Each handler
// below follows its error table, which says what the route answers and in
// which order. On these routes an id that is not an integer names
// nothing: 404 not_found, as an unknown event or comment is.
func socialRoutes(svc *social.Service, auth *Auth) RoutesOut {
	h := &socialHandlers{social: svc, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/events/:event_id/comments", Errors: errsEventComments, Handler: h.handleEventComments},
		{Method: http.MethodPost, Path: "/api/v1/events/:event_id/comments", Errors: errsPostComment, Handler: h.handlePostComment},
		{Method: http.MethodGet, Path: "/api/v1/comments/:id/replies", Errors: errsReplies, Handler: h.handleReplies},
		{Method: http.MethodPut, Path: "/api/v1/comments/:id/reaction", Errors: errsReaction, Handler: h.handleReaction},
		{Method: http.MethodGet, Path: "/api/v1/notifications/unread", Errors: errsNotifications, Handler: h.handleUnread},
		{Method: http.MethodGet, Path: "/api/v1/notifications", Errors: errsNotifications, Handler: h.handleNotifications},
		{Method: http.MethodPost, Path: "/api/v1/notifications/read-all", Errors: errsNotifications, Handler: h.handleReadAll},
		{Method: http.MethodPost, Path: "/api/v1/notifications/:id/read", Errors: errsNotificationRead, Handler: h.handleRead},
	}}
}

// GET /events/{event_id}/comments: an event's top-level comments, newest
// first. Checks run 404 not_found (id, event); a bad token reads
// anonymously and bad paging falls back to the defaults.
var errsEventComments = table("internal_error",
	on(errInvalidID, http.StatusNotFound, "not_found"),
	on(social.ErrEventNotFound, http.StatusNotFound, "not_found"),
)

// handleEventComments answers a page of an event's comments.
func (h *socialHandlers) handleEventComments(c *fiber.Ctx) error {
	return h.listComments(c, "event_id", h.social.EventComments)
}

// newCommentBody is the body of POST /events/{event_id}/comments.
type newCommentBody struct {
	Content  *string `json:"content" validate:"required"`
	ParentID *int64  `json:"parent_id" validate:"omitempty,gte=1"`
}

// POST /events/{event_id}/comments: comment on an event, or reply to one
// of its comments. Checks run 401, 404 (an event id that is not an
// integer), 400 (the body and the content), 404 (no such event or
// parent), 400 (a parent of another event, or a reply).
var errsPostComment = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(errInvalidID, http.StatusNotFound, "not_found"),
	on(social.ErrEventNotFound, http.StatusNotFound, "not_found"),
	on(social.ErrCommentNotFound, http.StatusNotFound, "not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
)

// handlePostComment posts a comment and answers it (201).
func (h *socialHandlers) handlePostComment(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
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
	cm, err := h.social.Post(c.UserContext(), u, id, *b.Content, parent)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(commentView(cm))
}

// GET /comments/{id}/replies: the replies to a comment, oldest first.
// Checks run 404 not_found (id, comment); a bad token reads anonymously
// and bad paging falls back to the defaults.
var errsReplies = table("internal_error",
	on(errInvalidID, http.StatusNotFound, "not_found"),
	on(social.ErrCommentNotFound, http.StatusNotFound, "not_found"),
)

// handleReplies answers a page of a comment's replies.
func (h *socialHandlers) handleReplies(c *fiber.Ctx) error {
	return h.listComments(c, "id", h.social.Replies)
}

type reactionBody struct {
	Reaction string `json:"reaction" validate:"required"`
}

// PUT /comments/{id}/reaction: like or dislike a comment or a reply, or
// remove the caller's reaction. Checks run 401, 404 (id), 400 (body,
// reaction), 404 (no such comment).
var errsReaction = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(errInvalidID, http.StatusNotFound, "not_found"),
	on(social.ErrCommentNotFound, http.StatusNotFound, "not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
)

// handleReaction sets the caller's reaction and answers the comment.
func (h *socialHandlers) handleReaction(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
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
	cm, err := h.social.React(c.UserContext(), u.ID, id, r)
	if err != nil {
		return err
	}
	return c.JSON(commentView(cm))
}

// GET /notifications/unread, GET /notifications and POST
// /notifications/read-all: the caller's unread notifications, all of
// them (lenient paging), marking all read. Checks run 401.
var errsNotifications = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// handleUnread answers the caller's unread notifications in the
// profile's language.
func (h *socialHandlers) handleUnread(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	ns, err := h.social.Unread(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	return c.JSON(notificationViews(ns, u.Language))
}

// handleNotifications answers a page of the caller's notifications, read
// or not.
func (h *socialHandlers) handleNotifications(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, offset := lenientPage(c)
	ns, err := h.social.Notifications(c.UserContext(), u.ID, limit, offset)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"notifications": notificationViews(ns, u.Language)})
}

// handleReadAll marks all the caller's notifications read and answers how
// many it marked.
func (h *socialHandlers) handleReadAll(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	n, err := h.social.MarkAllRead(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok", "marked": n})
}

// POST /notifications/{id}/read: mark one of the caller's notifications
// read. Checks run 401, 404 not_found (id, notification): someone else's
// notification is not_found, like one that does not exist.
var errsNotificationRead = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(errInvalidID, http.StatusNotFound, "not_found"),
	on(social.ErrNotificationNotFound, http.StatusNotFound, "not_found"),
)

// handleRead marks one notification read.
func (h *socialHandlers) handleRead(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.social.MarkRead(c.UserContext(), u.ID, id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// viewer is the caller's id when a valid token is sent, 0 otherwise: a
// missing or invalid token reads the comments anonymously (their lists
// answer no 401).
func (h *socialHandlers) viewer(c *fiber.Ctx) (int64, error) {
	u, err := h.auth.Optional(c)
	if err != nil || u == nil {
		return 0, err
	}
	return u.ID, nil
}

// listComments answers a comment list (an event's top-level comments, or
// a comment's replies): the id in path param, the optional viewer for
// user_reaction, lenient paging, then list.
func (h *socialHandlers) listComments(c *fiber.Ctx, param string,
	list func(ctx context.Context, viewerID, id int64, limit, offset int) ([]*social.Comment, error)) error {
	id, err := pathID(c, param)
	if err != nil {
		return err
	}
	v, err := h.viewer(c)
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
