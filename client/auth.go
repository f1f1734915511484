package client

import (
	"context"
	"net/http"
)

// BearerToken returns a request editor that sends token as
// "Authorization: Bearer <token>": a user's access token from Register or
// Login, or the operator's admin token (the server's
// PREDICTKIT_ADMIN_TOKEN). Passed to one call, it overrides the client's
// own WithBearerToken, since a call's editors run after the client's.
func BearerToken(token string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// PartnerKey returns a request editor that sends a partner's key in
// X-Partner-Key, which the partner API (/api/v1/partner/...) takes.
func PartnerKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("X-Partner-Key", key)
		return nil
	}
}

// WithBearerToken makes every request of the client carry token; see
// BearerToken.
func WithBearerToken(token string) ClientOption {
	return WithRequestEditorFn(BearerToken(token))
}

// WithPartnerKey makes every request of the client carry a partner's key;
// see PartnerKey.
func WithPartnerKey(key string) ClientOption {
	return WithRequestEditorFn(PartnerKey(key))
}
