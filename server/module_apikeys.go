package server

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
)

// apiKeyHandlers serves a user's personal API keys: create, list,
// revoke. They are under /api/v1/auth/, so a key can never reach them
// (scopes.go): only a session's access token manages keys.
type apiKeyHandlers struct {
	accounts *account.Service
	auth     *Auth
}

// apiKeyRoutes lists the API key routes (part of AccountModule): the
// user's own, and the operator's list and revocation of any user's keys.
func apiKeyRoutes(accounts *account.Service, auth *Auth, admin *AdminAuth) RoutesOut {
	h := &apiKeyHandlers{accounts: accounts, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/api-keys", Errors: errsCreateAPIKey, Handler: h.handleCreate},
		{Method: http.MethodGet, Path: "/api/v1/auth/api-keys", Errors: errsAPIKeys, Handler: h.handleList},
		{Method: http.MethodDelete, Path: "/api/v1/auth/api-keys/:id", Errors: errsRevokeAPIKey, Handler: h.handleRevoke},
		{Method: http.MethodGet, Path: "/api/v1/admin/users/:id/api-keys", Errors: errsAdminAPIKeys, Handler: admin.guard(h.handleAdminList)},
		{Method: http.MethodDelete, Path: "/api/v1/admin/users/:id/api-keys/:key_id", Errors: errsAdminAPIKeys, Handler: admin.guard(h.handleAdminRevoke)},
	}}
}

// apiKeyJSON is a key as its owner sees it: never the secret.
type apiKeyJSON struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

// createdAPIKeyJSON is a new key with its secret, shown this once.
type createdAPIKeyJSON struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	Key       string   `json:"key"`
	CreatedAt string   `json:"created_at"`
}

func scopeNames(k *account.APIKey) []string {
	out := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		out[i] = string(s)
	}
	return out
}

func apiKeyView(k *account.APIKey) apiKeyJSON {
	v := apiKeyJSON{ID: k.ID, Name: k.Name, Scopes: scopeNames(k), CreatedAt: ts(k.CreatedAt)}
	if k.LastUsedAt != nil {
		t := ts(*k.LastUsedAt)
		v.LastUsedAt = &t
	}
	return v
}

type createAPIKeyBody struct {
	Name   string   `json:"name" validate:"required"`
	Scopes []string `json:"scopes" validate:"required"`
}

// The caller's account vanished under a valid token.
var goneUser = on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized")

// POST /auth/api-keys: a new key for the caller, its secret shown once
// (201). Checks run 401 (a session token; an API key is 403
// insufficient_scope), 400 invalid_request (the body, then name and
// scopes), 409 too_many_api_keys.
var errsCreateAPIKey = table("internal_error",
	unauthorized,
	goneUser,
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(account.ErrTooManyAPIKeys, http.StatusConflict, "too_many_api_keys").
		saying("a user may hold at most "+strconv.Itoa(account.MaxAPIKeys)+" API keys: revoke one first"),
)

// handleCreate makes a key.
func (h *apiKeyHandlers) handleCreate(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var b createAPIKeyBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	k, secret, err := h.accounts.CreateAPIKey(c.UserContext(), u.ID, b.Name, b.Scopes)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(createdAPIKeyJSON{ID: k.ID, Name: k.Name, Scopes: scopeNames(k), Key: secret, CreatedAt: ts(k.CreatedAt)})
}

// GET /auth/api-keys: the caller's keys, newest first, without their
// secrets. Checks run 401.
var errsAPIKeys = table("internal_error", unauthorized)

// handleList answers the caller's keys.
func (h *apiKeyHandlers) handleList(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	ks, err := h.accounts.APIKeys(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, 0, len(ks))
	for _, k := range ks {
		out = append(out, apiKeyView(k))
	}
	return c.JSON(fiber.Map{"keys": out})
}

// DELETE /auth/api-keys/{id}: revoke one of the caller's keys (204); it
// is refused at once, on every server. Checks run 401, 400 invalid_id,
// 404 api_key_not_found (also for another user's key, so that ids tell
// nothing).
var errsRevokeAPIKey = table("internal_error",
	unauthorized,
	on(account.ErrAPIKeyNotFound, http.StatusNotFound, "api_key_not_found"),
)

// handleRevoke deletes a key.
func (h *apiKeyHandlers) handleRevoke(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.accounts.RevokeAPIKey(c.UserContext(), u.ID, id); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// GET /admin/users/{id}/api-keys and DELETE
// /admin/users/{id}/api-keys/{key_id}: the operator lists and revokes a
// user's keys (a leaked key reported to support). Checks run as on every
// operator route (adminRules: 404 user_not_found for the list), then 404
// api_key_not_found.
var errsAdminAPIKeys = table("internal_error", append(slices.Clone(adminRules),
	on(account.ErrAPIKeyNotFound, http.StatusNotFound, "api_key_not_found"))...)

// handleAdminList answers a user's keys, as the user would see them.
func (h *apiKeyHandlers) handleAdminList(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ks, err := h.accounts.UserAPIKeys(c.UserContext(), id)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, 0, len(ks))
	for _, k := range ks {
		out = append(out, apiKeyView(k))
	}
	return c.JSON(fiber.Map{"keys": out})
}

// handleAdminRevoke revokes a user's key.
func (h *apiKeyHandlers) handleAdminRevoke(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	keyID, err := pathID(c, "key_id")
	if err != nil {
		return err
	}
	if err := h.accounts.RevokeAPIKey(c.UserContext(), id, keyID); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}
