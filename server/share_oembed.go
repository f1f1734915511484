package server

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The embed's size in an oEmbed answer, unless maxwidth or maxheight ask
// for less.
const (
	embedWidth  = 400
	embedHeight = 190
)

// GET /api/v1/oembed?url=&maxwidth=&maxheight=&format=: oEmbed 1.0 for
// an event page or a market embed of this server. Checks run 400
// invalid_request (url missing; maxwidth or maxheight not a positive
// integer), 501 not_implemented (format not json: handleOEmbed), 404
// not_found (a URL of another host or of another page, or an event or
// market not shared).
var errsOEmbed = table("internal_error",
	on(errNotShared, http.StatusNotFound, "not_found"),
)

// oEmbedJSON is the answer: a rich type, whose html is an iframe of the
// market's embed page.
type oEmbedJSON struct {
	Version         string `json:"version"`
	Type            string `json:"type"`
	ProviderName    string `json:"provider_name"`
	ProviderURL     string `json:"provider_url"`
	Title           string `json:"title"`
	HTML            string `json:"html"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
	CacheAge        int    `json:"cache_age"`
	ThumbnailURL    string `json:"thumbnail_url"`
	ThumbnailWidth  int    `json:"thumbnail_width"`
	ThumbnailHeight int    `json:"thumbnail_height"`
}

// handleOEmbed answers the oEmbed of the page url names.
func (h *shareHandlers) handleOEmbed(c *fiber.Ctx) error {
	raw := c.Query("url")
	if strings.TrimSpace(raw) == "" {
		return badRequest("url", "required: the URL of an event page (/events/{id}) or a market embed (/embed/markets/{id})")
	}
	width, err := oEmbedMax(c, "maxwidth", embedWidth)
	if err != nil {
		return err
	}
	height, err := oEmbedMax(c, "maxheight", embedHeight)
	if err != nil {
		return err
	}
	if f := c.Query("format"); f != "" && f != "json" {
		// oEmbed 1.0, section 2.3.4: "501 Not Implemented - The provider
		// cannot return a response in the requested format". Answered
		// here, not as an error: a 5xx error is logged as the server's
		// failure, and this is the client's choice of format.
		return c.Status(http.StatusNotImplemented).JSON(errorBody{Error: "not_implemented"})
	}
	base := h.baseURL(c)
	kind, id, ok := ownPage(base, raw)
	if !ok {
		return errNotShared
	}
	var title string
	var eventID, marketID int64
	switch kind {
	case eventPrefix:
		card, err := h.sharedEvent(c.UserContext(), id)
		if err != nil {
			return err
		}
		if card.FirstMarket == 0 {
			return errNotShared
		}
		title, eventID, marketID = card.Title, card.EventID, card.FirstMarket
	default:
		m, e, err := h.sharedMarket(c.UserContext(), id)
		if err != nil {
			return err
		}
		title, eventID, marketID = e.Name+" — "+m.Name, e.ID, m.ID
	}
	src := embedURL(base, marketID)
	return c.JSON(oEmbedJSON{
		Version: "1.0", Type: "rich", ProviderName: shareSiteName, ProviderURL: base + "/", Title: title,
		HTML: fmt.Sprintf(`<iframe src="%s" width="%d" height="%d" title="%s" loading="lazy" style="border:0"></iframe>`,
			html.EscapeString(src), width, height, html.EscapeString(title)),
		Width: width, Height: height, CacheAge: 60,
		ThumbnailURL: ogImageURL(base, eventID), ThumbnailWidth: cardWidth, ThumbnailHeight: cardHeight,
	})
}

// oEmbedMax reads maxwidth or maxheight: def, or less when the
// parameter asks for less.
func oEmbedMax(c *fiber.Ctx, name string, def int) (int, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, badRequest(name, "must be a positive integer")
	}
	return min(n, def), nil
}

// ownPage reads raw as a URL of this server under base: an event page
// (kind eventPrefix) or a market embed (kind embedPrefix) and its id.
// Another scheme, host or port, or any other path, is not.
func ownPage(base, raw string) (kind string, id int64, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0, false
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", 0, false
	}
	if o := normalizeOrigin(u.Scheme + "://" + u.Host); o == "" || o != normalizeOrigin(b.Scheme+"://"+b.Host) {
		return "", 0, false
	}
	p, ok := strings.CutPrefix(u.Path, strings.TrimRight(b.Path, "/"))
	if !ok {
		return "", 0, false
	}
	for _, k := range []string{eventPrefix, embedPrefix} {
		if rest, ok := strings.CutPrefix(p, k); ok {
			if id, ok := parseID(rest); ok {
				return k, id, true
			}
		}
	}
	return "", 0, false
}
