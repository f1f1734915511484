package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/market"
)

// ShareModule makes events shareable (docs/sharing.md): the Open Graph
// and Twitter card tags of the event page (pageHead, which the web app's
// fallback adds to its page), the card image they point at
// (GET /og/events/{id}.png), a page any site may frame
// (GET /embed/markets/{id}) and the oEmbed answer that tells sites how
// (GET /api/v1/oembed).
var ShareModule = fx.Module("share",
	fx.Provide(newShareHandlers, shareRoutes, sharePageHead),
)

// shareHandlers serves the sharing routes.
type shareHandlers struct {
	markets *market.Service
	origins originPolicy
	// public is Config.PublicURL without its trailing slash; "" when
	// unset, and then links are made of the request's own scheme and
	// host (as a trusted proxy forwards them).
	public string
	cards  *cardCache
	embed  *embedPage
}

func newShareHandlers(cfg Config, markets *market.Service) (*shareHandlers, error) {
	embed, err := loadEmbedPage()
	if err != nil {
		return nil, err
	}
	return &shareHandlers{markets: markets, origins: newOriginPolicy(cfg),
		public: strings.TrimRight(cfg.PublicURL, "/"), cards: newCardCache(shareCardCacheSize), embed: embed}, nil
}

// The sharing paths.
const (
	ogImagePrefix = "/og/events/"
	ogImageSuffix = ".png"
	embedPrefix   = "/embed/markets/"
	eventPrefix   = "/events/"
)

// shareRoutes lists the sharing routes.
func shareRoutes(h *shareHandlers) RoutesOut {
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: ogImagePrefix + ":id" + ogImageSuffix, Errors: errsShareImage, Handler: h.handleImage},
		{Method: http.MethodGet, Path: embedPrefix + ":id", Errors: errsEmbed, Handler: h.handleEmbed},
		{Method: http.MethodGet, Path: "/api/v1/oembed", Errors: errsOEmbed, Handler: h.handleOEmbed},
	}}
}

// baseURL is what the sharing links start with: Config.PublicURL, or the
// origin the request was sent to.
func (h *shareHandlers) baseURL(c *fiber.Ctx) string {
	if h.public != "" {
		return h.public
	}
	return h.origins.requestOrigin(c)
}

// errNotShared: an unknown id, or one of an event not shared (shareable).
var errNotShared = errors.New("server: not shared")

// sharedEvent reads the card of event id: errNotShared unless it is
// shareable.
func (h *shareHandlers) sharedEvent(ctx context.Context, id int64) (*shareCard, error) {
	e, err := h.markets.Event(ctx, id)
	if errors.Is(err, market.ErrEventNotFound) {
		return nil, errNotShared
	}
	if err != nil {
		return nil, err
	}
	if !shareable(e) {
		return nil, errNotShared
	}
	return newShareCard(e), nil
}

// sharedMarket reads market id and its event: errNotShared unless the
// event is shareable.
func (h *shareHandlers) sharedMarket(ctx context.Context, id int64) (*market.Market, *market.Event, error) {
	m, err := h.markets.Market(ctx, id)
	if errors.Is(err, market.ErrMarketNotFound) {
		return nil, nil, errNotShared
	}
	if err != nil {
		return nil, nil, err
	}
	e, err := h.markets.Event(ctx, m.EventID)
	if errors.Is(err, market.ErrEventNotFound) {
		return nil, nil, errNotShared
	}
	if err != nil {
		return nil, nil, err
	}
	if !shareable(e) {
		return nil, nil, errNotShared
	}
	return m, e, nil
}

// GET /og/events/{id}.png: the event's card. Checks run 400 invalid_id,
// 404 event_not_found (unknown, or not shared).
var errsShareImage = table("internal_error",
	on(errNotShared, http.StatusNotFound, "event_not_found"),
)

// shareImageCache is the card's Cache-Control: the same for everyone,
// whatever the request carried (so it overrides the no-store of a request
// with a cookie: the image tells nothing of who asked). A minute, then
// revalidated by ETag, which changes when a trade changes the card.
const shareImageCache = "public, max-age=60"

// handleImage answers the card's PNG, drawn once per version.
func (h *shareHandlers) handleImage(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	card, err := h.sharedEvent(c.UserContext(), id)
	if err != nil {
		return err
	}
	version := card.Version()
	etag := `"` + version + `"`
	hd := &c.Response().Header
	hd.Set(fiber.HeaderCacheControl, shareImageCache)
	hd.Set(fiber.HeaderETag, etag)
	if etagMatch(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(http.StatusNotModified)
	}
	png, err := h.cards.get(id, version, func() ([]byte, error) { return renderCard(card) })
	if err != nil {
		return err
	}
	hd.Set(fiber.HeaderContentType, "image/png")
	return c.Send(png)
}

// eventPagePath reads the event id of an event page's path
// ("/events/42"); false for any other path.
func eventPagePath(p string) (int64, bool) {
	rest, ok := strings.CutPrefix(p, eventPrefix)
	if !ok {
		return 0, false
	}
	return parseID(rest)
}

// sharePageHead is the web app's pageHead: the Open Graph tags of a
// shared event's page.
func sharePageHead(h *shareHandlers) pageHead {
	return h.pageHead
}

// pageHead returns the tags of the page at path p and its title: nil
// but for the page of a shared event. A store that fails answers nil
// too: the page is served without them, and the app shows the API's
// error itself.
func (h *shareHandlers) pageHead(c *fiber.Ctx, p string) ([]byte, string) {
	id, ok := eventPagePath(p)
	if !ok {
		return nil, ""
	}
	card, err := h.sharedEvent(c.UserContext(), id)
	if err != nil {
		return nil, ""
	}
	return metaTags(card, h.baseURL(c)), card.Title
}

// oEmbedURL is where a page's oEmbed answer is asked for.
func oEmbedURL(base, pageURL string) string {
	return base + "/api/v1/oembed?format=json&url=" + url.QueryEscape(pageURL)
}

func eventURL(base string, id int64) string {
	return base + eventPrefix + strconv.FormatInt(id, 10)
}

func embedURL(base string, marketID int64) string {
	return base + embedPrefix + strconv.FormatInt(marketID, 10)
}

func ogImageURL(base string, eventID int64) string {
	return base + ogImagePrefix + strconv.FormatInt(eventID, 10) + ogImageSuffix
}
