package social

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/internal/jsonenc"
)

// changeTime writes a time as the API does: RFC 3339 in UTC with the
// nanoseconds it has.
func changeTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// notificationData is the data of a notification entry: the notification
// as the notification list shows it (its title and message rendered in
// English), and what it says as data, from which a reader renders it in
// another language (Notification.Render).
type notificationData struct {
	ID          int64            `json:"id"`
	UserID      int64            `json:"user_id"`
	Type        string           `json:"type"`
	Title       string           `json:"title"`
	Message     string           `json:"message"`
	Read        bool             `json:"read"`
	CreatedAt   string           `json:"created_at"`
	RelatedID   int64            `json:"related_id"`
	RelatedType string           `json:"related_type"`
	Link        string           `json:"link"`
	Data        NotificationData `json:"data"`
}

// NotificationChange is the change-log entry of new notification n, for
// its user alone. n.ID must be set. Every store builds notification
// entries with it, so they read the same whatever the store.
func NotificationChange(n *Notification) changelog.Entry {
	e, rest := PrepareNotificationChange(n)
	b := strconv.AppendInt(append(make([]byte, 0, 26+len(rest)), `{"id":`...), n.ID, 10)
	e.Data = append(b, rest...)
	return e
}

// PrepareNotificationChange is NotificationChange before n has an id: the
// entry without its data, and what of the data follows the id (the data
// is {"id":, the id, then rest).
func PrepareNotificationChange(n *Notification) (e changelog.Entry, rest []byte) {
	return AppendNotificationChange(nil, n)
}

// AppendNotificationChange is PrepareNotificationChange with rest
// appended to buf, which it returns, so that a batch's entries can share
// one buffer.
func AppendNotificationChange(buf []byte, n *Notification) (changelog.Entry, []byte) {
	title, msg := n.Render("en")
	d := notificationData{ID: n.ID, UserID: n.UserID, Type: n.Type, Title: title, Message: msg,
		Read: n.Read, CreatedAt: changeTime(n.CreatedAt), RelatedID: n.RelatedID, RelatedType: n.RelatedType, Link: n.Link(), Data: n.Data}
	return changelog.Entry{Type: changelog.Notification, UserID: n.UserID, At: n.CreatedAt}, d.appendRest(buf)
}

// json is encoding/json's encoding of d, appended by hand: every trade
// notifies its trader, and reflection was most of the cost of the entry
// (TestNotificationEntryIsEncodingJSONs checks the bytes).
func (d *notificationData) json() json.RawMessage {
	return d.appendRest(strconv.AppendInt([]byte(`{"id":`), d.ID, 10))
}

// appendRest appends what follows the notification's id.
func (d *notificationData) appendRest(b []byte) []byte {
	x := &d.Data
	if b == nil {
		b = make([]byte, 0, 192+len(d.Title)+len(d.Link)+len(d.Message)+len(x.EventName)+len(x.MarketName)+len(x.Author)+len(x.Excerpt)+len(x.Other)+len(x.Proposed)+len(x.Until))
	}
	b = strconv.AppendInt(append(b, `,"user_id":`...), d.UserID, 10)
	b = jsonenc.AppendString(append(b, `,"type":`...), d.Type)
	b = jsonenc.AppendString(append(b, `,"title":`...), d.Title)
	b = jsonenc.AppendString(append(b, `,"message":`...), d.Message)
	b = strconv.AppendBool(append(b, `,"read":`...), d.Read)
	b = jsonenc.AppendString(append(b, `,"created_at":`...), d.CreatedAt)
	b = strconv.AppendInt(append(b, `,"related_id":`...), d.RelatedID, 10)
	b = jsonenc.AppendString(append(b, `,"related_type":`...), d.RelatedType)
	b = jsonenc.AppendString(append(b, `,"link":`...), d.Link)
	return append(d.Data.AppendJSON(append(b, `,"data":`...)), '}')
}

// AppendJSON appends encoding/json's encoding of x to b, without its
// reflection: every trade stores and logs a notification's data
// (TestNotificationEntryIsEncodingJSONs checks the bytes).
func (x *NotificationData) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	// The fields are omitempty: each one present begins with a comma but
	// the first.
	first := len(b)
	str := func(name, v string) {
		if v == "" {
			return
		}
		if len(b) > first {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(append(b, name...), v)
	}
	num := func(name string, v int64) {
		if v == 0 {
			return
		}
		if len(b) > first {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, name...), v, 10)
	}
	str(`"event_name":`, x.EventName)
	str(`"market_name":`, x.MarketName)
	str(`"side":`, x.Side)
	str(`"action":`, x.Action)
	num(`"shares":`, x.Shares)
	num(`"amount":`, x.Amount)
	str(`"won":`, x.Won)
	str(`"author":`, x.Author)
	str(`"excerpt":`, x.Excerpt)
	str(`"other":`, x.Other)
	str(`"event_name_ru":`, x.EventNameRu)
	str(`"excerpt_ru":`, x.ExcerptRu)
	str(`"proposed":`, x.Proposed)
	str(`"until":`, x.Until)
	if x.Following {
		if len(b) > first {
			b = append(b, ',')
		}
		b = append(b, `"following":true`...)
	}
	str(`"market_name_ru":`, x.MarketNameRu)
	str(`"other_ru":`, x.OtherRu)
	num(`"event_id":`, x.EventID)
	str(`"chain":`, x.Chain)
	str(`"token_amount":`, x.TokenAmount)
	num(`"level":`, int64(x.Level))
	return append(b, '}')
}

// commentData is the data of a comment entry: the comment as an
// anonymous reader of the comment list sees it.
type commentData struct {
	ID            int64           `json:"id"`
	EventID       int64           `json:"event_id"`
	ParentID      *int64          `json:"parent_id"`
	UserID        int64           `json:"user_id"`
	Content       string          `json:"content"`
	LikesCount    int64           `json:"likes_count"`
	DislikesCount int64           `json:"dislikes_count"`
	RepliesCount  int64           `json:"replies_count"`
	CreatedAt     string          `json:"created_at"`
	User          commentUserData `json:"user"`
	UserReaction  *string         `json:"user_reaction"`
}

type commentUserData struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Nickname      string `json:"nickname"`
	ProfileHidden bool   `json:"profile_hidden"`
	AvatarURL     string `json:"avatar_url"`
}

// CommentChange is the public change-log entry of new comment c, whose ID
// and Author are set: a hidden author is masked, as for any reader but
// the author, and it carries no reader's reaction. Every store builds
// comment entries with it.
func CommentChange(c *Comment) changelog.Entry {
	a := c.Author.masked(0)
	v := commentData{ID: c.ID, EventID: c.EventID, UserID: c.UserID, Content: c.Content,
		LikesCount: c.LikesCount, DislikesCount: c.DislikesCount, RepliesCount: c.RepliesCount, CreatedAt: changeTime(c.CreatedAt),
		User: commentUserData{ID: a.ID, Name: a.Name, Nickname: a.Nickname, ProfileHidden: a.ProfileHidden, AvatarURL: a.AvatarURL}}
	if c.ParentID != 0 {
		p := c.ParentID
		v.ParentID = &p
	}
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and numbers always marshal
	}
	return changelog.Entry{Type: changelog.Comment, EventID: c.EventID, Data: data, At: c.CreatedAt}
}
