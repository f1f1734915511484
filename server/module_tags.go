package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/market"
)

// tagHandlers serves the tags: the public list and the operator's edits.
type tagHandlers struct {
	markets *market.Service
}

// tagRoutes lists the tag routes.
func tagRoutes(markets *market.Service, admin *AdminAuth) RoutesOut {
	h := &tagHandlers{markets: markets}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/tags", Errors: errsTags, Handler: h.handleTags},
		{Method: http.MethodPut, Path: "/api/v1/admin/tags/:slug", Errors: errsAdminTag, Handler: admin.guard(h.handlePutTag)},
	}}
}

// tagJSON is a Tag: events counts the listed (active) events carrying it.
type tagJSON struct {
	Slug   string `json:"slug"`
	Name   string `json:"name"`
	NameRu string `json:"name_ru"`
	Events int64  `json:"events"`
}

func tagView(t *market.Tag) tagJSON {
	return tagJSON{Slug: t.Slug, Name: t.Name, NameRu: t.NameRu, Events: t.Events}
}

// GET /tags: every tag, by slug. Public; only the common rules apply.
var errsTags = table("internal_error")

// handleTags answers the list.
func (h *tagHandlers) handleTags(c *fiber.Ctx) error {
	tags, err := h.markets.Tags(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]tagJSON, 0, len(tags))
	for i := range tags {
		out = append(out, tagView(&tags[i]))
	}
	return c.JSON(fiber.Map{"tags": out})
}

// PUT /admin/tags/{slug}: the operator creates a tag or renames it.
// Checks run as adminRules (404 when disabled, 401, then 400
// invalid_request: the body, a slug or a name that breaks its rule).
var errsAdminTag = table("internal_error", adminRules...)

type tagBody struct {
	Name   string `json:"name" validate:"required"`
	NameRu string `json:"name_ru"`
}

// handlePutTag answers the tag, 200 whether it was created or renamed,
// as the API's other PUTs do: the request sets the tag to what it says
// either way.
func (h *tagHandlers) handlePutTag(c *fiber.Ctx) error {
	var b tagBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	t, _, err := h.markets.PutTag(c.UserContext(), c.Params("slug"), b.Name, b.NameRu)
	if err != nil {
		return err
	}
	return c.JSON(tagView(t))
}
